package exact

import (
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/dime-project/dime/internal/randstream"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// HSIC test defaults: at most DefaultHSICPermutations random pairings,
// stopping after DefaultHSICExceedances of them reach the statistic.
const (
	DefaultHSICPermutations = 999
	DefaultHSICExceedances  = 20
)

// HSICOptions are the parameters of HSICTest. The zero value means the
// defaults and seed 0.
type HSICOptions struct {
	// Permutations is the most random pairings B drawn (default 999): the
	// smallest p-value they can show is 1/(B + 1).
	Permutations int
	// Exceedances is h (default 20): drawing stops as soon as h pairings
	// give a statistic at least the observed one.
	Exceedances int
	// Seed drives the pairings.
	Seed uint64
	// NoSpectral skips the spectral tail below 1/(B + 1) (and its two
	// eigenproblems): the p-value is then never below 1/(B + 1).
	NoSpectral bool
}

// HSICResult is the HSIC test of independence on two Gram matrices (see
// HSICTest).
type HSICResult struct {
	// HSIC is the biased empirical HSIC, tr(K̃_X K̃_Y)/n² with K̃ = HKH the
	// centered Gram matrices (H = I − 11ᵀ/n).
	HSIC float64
	// Statistic is the test statistic n·HSIC = tr(K̃_X K̃_Y)/n.
	Statistic float64
	// NullMean and NullStdDev are the exact mean and standard deviation of
	// Statistic over uniformly random pairings of the rows (the permutation
	// distribution).
	NullMean, NullStdDev float64
	// Bound is Cantelli's bound 1/(1 + z²) on the exact permutation p-value,
	// z = (Statistic − NullMean)/NullStdDev (1 when z ≤ 0).
	Bound float64
	// Permutations is the number of random pairings drawn and Exceedances
	// the number of them whose statistic reached Statistic (both 0 when
	// Bound is at most 1/(B + 1): no pairing is drawn).
	Permutations, Exceedances int
	// SpectralPValue is the spectral tail (NaN unless no pairing reached
	// the statistic).
	SpectralPValue float64
	// PValue is the p-value (see HSICTest): in [1e-300, 1], NaN for fewer
	// than 4 rows.
	PValue float64
}

// HSICTest tests the independence of the views whose Gram matrices are kx
// and ky (both n×n of a normalized kernel, n ≥ 4) with the Hilbert–Schmidt
// Independence Criterion of the same kernels (Gretton et al. 2005,
// "Measuring statistical dependence with Hilbert–Schmidt norms"; Gretton et
// al. 2008, "A kernel statistical test of independence"). The matrices are
// not modified.
//
// With K̃ = HKH the centered Gram matrices (H = I − 11ᵀ/n), the statistic is
//
//	T = n·HSIC_b = tr(K̃_X K̃_Y) / n,
//
// and T_π = tr(K̃_X Π K̃_Y Πᵀ)/n the same for the rows of Y paired with the
// rows of X by a random permutation π: under independence T is one more draw
// from the distribution of T_π (exchangeability), and dependence makes T
// large. The p-value has two parts:
//
//   - A sequential Monte Carlo permutation test (Besag and Clifford 1991,
//     "Sequential Monte Carlo p-values", Biometrika 78): pairings are drawn
//     until h = Exceedances of them give T_π ≥ T, or B = Permutations have
//     been drawn. Stopped after L pairings, p = h/L; otherwise, with k < h
//     pairings at or above T, p = (k + 1)/(B + 1). This p-value is exact,
//     not asymptotic: P(p ≤ α) ≤ α for every α under independence, whatever
//     the data and n. Each pairing costs O(n²) (no eigenproblem); on
//     independent data drawing stops after about h(1 + ln(B/h)) ≈ 100
//     pairings on average, on clearly dependent data it takes all B.
//   - Below 1/(B + 1) = 0.001, where the permutations cannot resolve the
//     tail (k = 0), the p-value is the smaller of 1/(B + 1) and the
//     spectral tail, at the cost of two values-only eigenproblems: under
//     independence T converges in distribution to Σᵢⱼ λᵢ μⱼ Zᵢⱼ², with λ, μ
//     the eigenvalues of the centered kernel operators, estimated by those
//     of K̃_X/n and K̃_Y/n (Gretton et al. 2009, "A fast, consistent kernel
//     two-sample test"; Zhang et al. 2018, "Large-scale kernel methods for
//     independence testing"). T is standardized with its exact permutation
//     mean tr K̃_X·tr K̃_Y/(n(n − 1)) and variance (permutationVariance) and
//     read on the standardized spectral sum (productSurvival).
//     Levels of 0.001 and above stay exact; below, the value is an
//     approximation that says how far into the tail T lies.
//
// The spectral tail alone is not the default, though it needs no
// permutations: measured on held-out nulls of 256 rows, it is
// anticonservative at 0.01 when a kernel isolates some rows (Student-t(3)
// columns: 1.9% of p-values ≤ 0.01; columns 100 times wider than σ,
// where K ≈ I plus a few pairs: 4% to 9% ≤ 0.05), because T then depends on
// a few pairs of rows and its null is far from a smooth χ² sum.
//
// HSIC is zero in the population if and only if X and Y are independent when
// the kernel is characteristic (Gaussian and both Laplacians are), so the
// test is consistent against every alternative. It is not the permutation
// test of DiME's statistic, but both are functionals of the same Gram
// matrices.
func HSICTest(kx, ky *mat.SymDense, opts HSICOptions) (HSICResult, error) {
	if _, err := commonSize(kx, ky); err != nil {
		return HSICResult{}, err
	}
	x, y := kx.RawSymmetric(), ky.RawSymmetric()
	for _, g := range []blas64.Symmetric{x, y} {
		if err := checkFiniteUpper(g); err != nil {
			return HSICResult{}, err
		}
	}
	return hsicTest(x, y, mirrored(y), opts)
}

// mirrored returns the n×n row-major full storage of the symmetric matrix
// whose upper triangle a holds.
func mirrored(a blas64.Symmetric) []float64 {
	n := a.N
	full := make([]float64, n*n)
	for i := 0; i < n; i++ {
		copy(full[i*n+i:i*n+n], a.Data[i*a.Stride+i:i*a.Stride+n])
		for j := i + 1; j < n; j++ {
			full[j*n+i] = a.Data[i*a.Stride+j]
		}
	}
	return full
}

// mirrorInPlace copies the upper triangle of a to its lower triangle and
// returns a's storage as a full row-major n×n matrix (a new one if a's
// stride is not n). a keeps its value as a symmetric matrix.
func mirrorInPlace(a blas64.Symmetric) []float64 {
	n := a.N
	if a.Stride != n {
		return mirrored(a)
	}
	for i := 0; i < n; i++ {
		for j := i + 1; j < n; j++ {
			a.Data[j*n+i] = a.Data[i*n+j]
		}
	}
	return a.Data[:n*n]
}

// hsicTest is HSICTest on the upper triangles x and y, with yFull the full
// n×n storage of y (stride n).
func hsicTest(x, y blas64.Symmetric, yFull []float64, opts HSICOptions) (HSICResult, error) {
	n := x.N
	nf := float64(n)
	cx, cy := newCentring(x), newCentring(y)
	mx, my := cx.moments(), cy.moments()
	inner := centredInner(cx, cy)
	r := HSICResult{
		HSIC: inner / (nf * nf), Statistic: inner / nf,
		NullMean:       mx.trace * my.trace / (nf * (nf - 1)),
		NullStdDev:     math.Sqrt(permutationVariance(n, mx, my)) / nf,
		SpectralPValue: math.NaN(), PValue: math.NaN(),
	}
	if n < 4 {
		return r, nil
	}
	if !(r.NullStdDev > 1e-12*r.NullMean) {
		// No pairing of the rows changes the statistic (a constant view,
		// or K = I): no evidence of dependence.
		r.PValue = 1
		return r, nil
	}
	B, h := opts.Permutations, opts.Exceedances
	if B < 1 {
		B = DefaultHSICPermutations
	}
	if h < 1 {
		h = DefaultHSICExceedances
	}
	// Pairings that reproduce the data (swaps of identical rows) give T in
	// another order of summation: count T_π ≥ T up to round-off, measured
	// against the Cauchy–Schwarz bound √(tr K̃_X² · tr K̃_Y²) of |nT|.
	r.Bound = 1.0
	if z := (r.Statistic - r.NullMean) / r.NullStdDev; z > 0 {
		r.Bound = 1 / (1 + z*z)
	}
	if r.Bound <= 1/float64(B+1) {
		r.PValue = r.Bound
	} else {
		tol := 1e-12 * math.Sqrt(mx.frob2*my.frob2)
		observed := permutedInner(cx, cy, yFull, identity(n))
		r.Permutations, r.Exceedances = sequentialExceedances(n, B, h, opts.Seed, func(p []int) bool {
			return permutedInner(cx, cy, yFull, p) >= observed-tol
		})
		r.PValue = sequentialPValue(r.Permutations, r.Exceedances, B, h)
	}
	if r.Exceedances == 0 && !opts.NoSpectral {
		spectra, err := runSpectrumJobs(n, []func(dst blas64.Symmetric){
			func(dst blas64.Symmetric) { cx.fill(dst) },
			func(dst blas64.Symmetric) { cy.fill(dst) },
		})
		if err != nil {
			return HSICResult{}, err
		}
		r.SpectralPValue = spectralPValue(r, spectra[0], spectra[1], n)
		r.PValue = math.Min(r.PValue, r.SpectralPValue)
	}
	return r, nil
}

// sequentialPValue returns the p-value of Besag and Clifford's sequential
// test: h/drawn if hits reached h, else (hits + 1)/(B + 1).
func sequentialPValue(drawn, hits, B, h int) float64 {
	if hits >= h {
		return float64(h) / float64(drawn)
	}
	return float64(hits+1) / float64(B+1)
}

// identity returns the identity permutation of 0..n-1.
func identity(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// sequentialExceedances draws seeded random permutations of 0..n-1, one
// after the other, until h of them satisfy exceeds or B have been drawn,
// and returns the number drawn and the number that exceeded. The
// permutations are evaluated concurrently in batches on up to GOMAXPROCS
// goroutines, but the count stops at the same permutation whatever the
// number of goroutines.
func sequentialExceedances(n, B, h int, seed uint64, exceeds func(p []int) bool) (drawn, hits int) {
	r := rand.New(rand.NewPCG(seed, randstream.HSIC))
	workers := runtime.GOMAXPROCS(0)
	batch := 8 * workers
	perms := make([][]int, batch)
	results := make([]bool, batch)
	for drawn < B {
		m := min(batch, B-drawn)
		for k := range m {
			perms[k] = r.Perm(n)
		}
		var wg sync.WaitGroup
		next := make(chan int, m)
		for k := range m {
			next <- k
		}
		close(next)
		for range min(workers, m) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range next {
					results[k] = exceeds(perms[k])
				}
			}()
		}
		wg.Wait()
		for k := range m {
			drawn++
			if results[k] {
				hits++
				if hits == h {
					return drawn, hits
				}
			}
		}
	}
	return drawn, hits
}

// spectralPValue returns the spectral tail of the statistic of r, given
// the eigenvalues of the centered Gram matrices: the spectral null
// Σ λᵢμⱼ Zᵢⱼ² with λ = eig(K̃_X)/n, μ = eig(K̃_Y)/n has mean Σλ·Σμ and
// variance 2·Σλ²·Σμ²; the statistic is standardized with the exact
// permutation moments of r and read on that scale.
func spectralPValue(r HSICResult, eigX, eigY []float64, n int) float64 {
	nf := float64(n)
	var s1x, s2x, s1y, s2y float64
	lam := make([]float64, len(eigX))
	mu := make([]float64, len(eigY))
	for i, v := range eigX {
		lam[i] = max(v, 0) / nf
		s1x += lam[i]
		s2x += lam[i] * lam[i]
	}
	for i, v := range eigY {
		mu[i] = max(v, 0) / nf
		s1y += mu[i]
		s2y += mu[i] * mu[i]
	}
	meanS, sdS := s1x*s1y, math.Sqrt(2*s2x*s2y)
	q := meanS + (r.Statistic-r.NullMean)*sdS/r.NullStdDev
	return productSurvival(q, lam, mu)
}

// centredMoments are the sums over a centered Gram matrix W that its
// permutation moments need.
type centredMoments struct {
	trace float64 // tr W
	frob2 float64 // tr W² = Σᵢⱼ Wᵢⱼ²
	diag2 float64 // Σᵢ Wᵢᵢ²
}

func (c centring) moments() centredMoments {
	n := c.g.N
	var m centredMoments
	for i := 0; i < n; i++ {
		row := c.g.Data[i*c.g.Stride : i*c.g.Stride+n]
		a := c.mean - c.rows[i]
		d := row[i] + a - c.rows[i]
		m.trace += d
		m.diag2 += d * d
		var off float64
		for j := i + 1; j < n; j++ {
			v := row[j] + a - c.rows[j]
			off += v * v
		}
		m.frob2 += 2 * off
	}
	m.frob2 += m.diag2
	return m
}

// permutationVariance returns the variance of T = tr(W_X Π W_Y Πᵀ) over
// uniformly random permutations Π, for doubly centered symmetric n×n W_X and
// W_Y (n ≥ 4; NaN otherwise). It is the variance of the RV coefficient under
// permutation (Kazi-Aoual, Hitier, Sabatier and Lebreton 1995, "Refined
// approximations to permutation tests for multivariate inference",
// Computational Statistics & Data Analysis 20; in the form of Josse, Pagès
// and Husson 2008, "Testing the significance of the RV coefficient", CSDA
// 53), times tr W_X² · tr W_Y²:
//
//	Var T = 2·tr W_X²·tr W_Y² / ((n+1)(n−1)²(n−2)) · (e_X e_Y + (n−1) g_X g_Y / (2n(n−3)))
//
// with β = (tr W)²/tr W², e = n − 1 − β and g = n(n+1)·Σᵢ Wᵢᵢ²/tr W² − (n−1)(β + 2)
// for each view (Josse et al.'s τ is (n−1)g/((n−3)e), multiplied out here so
// that e = 0, a statistic no permutation changes, gives 0 rather than 0/0).
// Checked against all n! permutations for n = 5 to 7 in TestPermutationVariance.
func permutationVariance(n int, x, y centredMoments) float64 {
	if n < 4 || !(x.frob2 > 0) || !(y.frob2 > 0) {
		return math.NaN()
	}
	nf := float64(n)
	parts := func(m centredMoments) (e, g float64) {
		beta := m.trace * m.trace / m.frob2
		return nf - 1 - beta, nf*(nf+1)*m.diag2/m.frob2 - (nf-1)*(beta+2)
	}
	ex, gx := parts(x)
	ey, gy := parts(y)
	v := 2 * x.frob2 * y.frob2 / ((nf + 1) * (nf - 1) * (nf - 1) * (nf - 2)) *
		(ex*ey + (nf-1)*gx*gy/(2*nf*(nf-3)))
	return max(v, 0)
}

// centring holds what centering a Gram matrix needs: K̃ᵢⱼ = Kᵢⱼ − rᵢ − rⱼ + m
// with rᵢ the mean of row i and m the mean of all entries.
type centring struct {
	g    blas64.Symmetric // upper triangle
	rows []float64
	mean float64
}

func newCentring(g blas64.Symmetric) centring {
	n := g.N
	rows := make([]float64, n)
	for i := 0; i < n; i++ {
		row := g.Data[i*g.Stride : i*g.Stride+n]
		rows[i] += row[i]
		for j := i + 1; j < n; j++ {
			rows[i] += row[j]
			rows[j] += row[j]
		}
	}
	var mean float64
	for i := range rows {
		rows[i] /= float64(n)
		mean += rows[i]
	}
	return centring{g: g, rows: rows, mean: mean / float64(n)}
}

// fill writes the upper triangle of the centered matrix to dst.
func (c centring) fill(dst blas64.Symmetric) {
	n := c.g.N
	for i := 0; i < n; i++ {
		src := c.g.Data[i*c.g.Stride : i*c.g.Stride+n]
		d := dst.Data[i*dst.Stride : i*dst.Stride+n]
		ri := c.mean - c.rows[i]
		for j := i; j < n; j++ {
			d[j] = src[j] + ri - c.rows[j]
		}
	}
}

// centredInner returns tr(K̃_X K̃_Y) = Σᵢⱼ K̃_X,ᵢⱼ K̃_Y,ᵢⱼ, from the upper
// triangles.
func centredInner(cx, cy centring) float64 {
	n := cx.g.N
	var diag, off float64
	for i := 0; i < n; i++ {
		xr := cx.g.Data[i*cx.g.Stride : i*cx.g.Stride+n]
		yr := cy.g.Data[i*cy.g.Stride : i*cy.g.Stride+n]
		ax, ay := cx.mean-cx.rows[i], cy.mean-cy.rows[i]
		diag += (xr[i] + ax - cx.rows[i]) * (yr[i] + ay - cy.rows[i])
		var s float64
		for j := i + 1; j < n; j++ {
			s += (xr[j] + ax - cx.rows[j]) * (yr[j] + ay - cy.rows[j])
		}
		off += s
	}
	return diag + 2*off
}
