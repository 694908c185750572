package exact

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/synth"
)

// denseCentred returns H K H with H = I − 11ᵀ/n, by matrix products.
func denseCentred(k *mat.SymDense) *mat.Dense {
	n := k.SymmetricDim()
	h := mat.NewDense(n, n, nil)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			h.Set(i, j, -1/float64(n))
		}
		h.Set(i, i, 1-1/float64(n))
	}
	var hk, hkh mat.Dense
	hk.Mul(h, k)
	hkh.Mul(&hk, h)
	return &hkh
}

// permutedStatistic returns tr(K̃_X Π K̃_Y Πᵀ)/n for the pairing p.
func permutedStatistic(kx, ky *mat.Dense, p []int) float64 {
	n, _ := kx.Dims()
	var s float64
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			s += kx.At(i, j) * ky.At(p[i], p[j])
		}
	}
	return s / float64(n)
}

// TestHSICStatistic checks the statistic and the null mean against dense
// matrix products (H K H formed explicitly), and the null mean against the
// average of the statistic over 4000 random pairings, whose exact value it
// is (the Monte Carlo standard error is the spread over √4000).
func TestHSICStatistic(t *testing.T) {
	x, y := toy(t, synth.Sine, 2, 0, 120, 3)
	kx := mustGram(t, Gaussian, 1, x)
	ky := mustGram(t, Gaussian, 1, y)
	r, err := HSICTest(kx, ky, HSICOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cx, cy := denseCentred(kx), denseCentred(ky)
	n := 120.0
	want := mat.Sum(elementwise(cx, cy)) / n
	if math.Abs(r.Statistic-want) > 1e-12*want || math.Abs(r.HSIC-want/n) > 1e-12*want/n {
		t.Errorf("statistic %v, HSIC %v; dense products give %v", r.Statistic, r.HSIC, want)
	}
	wantMean := mat.Trace(cx) * mat.Trace(cy) / (n * (n - 1))
	if math.Abs(r.NullMean-wantMean) > 1e-12*wantMean {
		t.Errorf("null mean %v, want tr·tr/(n(n−1)) = %v", r.NullMean, wantMean)
	}
	perms := Permutations(120, 4000, 9)
	var sum, sq float64
	for _, p := range perms {
		s := permutedStatistic(cx, cy, p)
		sum += s
		sq += s * s
	}
	mean := sum / 4000
	se := math.Sqrt((sq/4000-mean*mean)*4000/3999) / math.Sqrt(4000)
	if math.Abs(mean-r.NullMean) > 4*se {
		t.Errorf("mean over 4000 pairings %v ± %v, null mean %v", mean, se, r.NullMean)
	}
	// Sine data (z = 11: Cantelli's bound 0.0083 is above 1/1000): all 999
	// pairings are drawn, none reaches T (nor any of the 4000 above), and
	// the spectral tail takes over below 1/1000.
	z := (r.Statistic - r.NullMean) / r.NullStdDev
	if !(r.PValue < 1e-6) || r.Permutations != 999 || r.Exceedances != 0 || r.PValue != r.SpectralPValue ||
		math.Abs(r.Bound-1/(1+z*z)) > 1e-15 || !(r.Bound > 1.0/1000) {
		t.Errorf("sine data: %+v", r)
	}
	for _, p := range perms {
		if permutedStatistic(cx, cy, p) >= r.Statistic {
			t.Fatalf("a pairing reaches T = %v on sine data", r.Statistic)
		}
	}
	// With B = 99 the bound is below 1/(B + 1) = 0.01: no pairing is drawn,
	// and the p-value is the same spectral tail.
	r99, err := HSICTest(kx, ky, HSICOptions{Permutations: 99})
	if err != nil {
		t.Fatal(err)
	}
	if r99.Permutations != 0 || r99.Exceedances != 0 || r99.PValue != r.SpectralPValue || r99.Bound != r.Bound {
		t.Errorf("B = 99: %+v", r99)
	}
}

func elementwise(a, b *mat.Dense) *mat.Dense {
	var c mat.Dense
	c.MulElem(a, b)
	return &c
}

// spectralOnly returns the HSIC result with the spectral tail computed
// whatever the permutations say.
func spectralOnly(t *testing.T, kx, ky *mat.SymDense) HSICResult {
	t.Helper()
	r, err := HSICTest(kx, ky, HSICOptions{Permutations: 1, Exceedances: 1, NoSpectral: true})
	if err != nil {
		t.Fatal(err)
	}
	cx, cy := newCentring(kx.RawSymmetric()), newCentring(ky.RawSymmetric())
	spectra, err := runSpectrumJobs(kx.SymmetricDim(), []func(dst blas64.Symmetric){
		func(dst blas64.Symmetric) { cx.fill(dst) },
		func(dst blas64.Symmetric) { cy.fill(dst) },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.SpectralPValue = spectralPValue(r, spectra[0], spectra[1], kx.SymmetricDim())
	return r
}

// TestHSICMatchesPermutations compares the spectral tail (the p-value below
// 1/(B + 1)) with the permutation p-value of the same statistic (2000
// pairings) on datasets of 200 rows,
// independent and dependent, with p from 0.006 to 0.87. Measured with 4000
// pairings: differences of 0.0009 to 0.0099, each within 2 standard errors
// of the permutation p-value (in the tail: 0.0062 vs 0.0075, 0.0105 vs
// 0.0092, 0.0168 vs 0.0212, 0.0066 vs 0.0082). Tolerance: 4 standard errors
// of the permutation p-value plus 0.01.
func TestHSICMatchesPermutations(t *testing.T) {
	if testing.Short() {
		t.Skip("2000 permutations of 200×200 statistics per case")
	}
	const n, B = 200, 2000
	for _, c := range []struct {
		kind  synth.Kind
		d     int
		noise float64
		seed  uint64
	}{
		{synth.Independent, 2, 0, 31},
		{synth.StudentT, 3, 0, 32},
		{synth.Discrete, 1, 0, 33},
		{synth.Square, 1, 6, 34},
		{synth.Sine, 3, 2.5, 35},
		{synth.Square, 2, 3, 42},
		{synth.Sine, 2, 1, 40},
		{synth.Sine, 2, 1.5, 42},
		{synth.Circle, 2, 3, 42},
	} {
		x, y, err := synth.Generate(synth.Spec{Kind: c.kind, Dim: c.d, Noise: c.noise, Seed: c.seed}, n)
		if err != nil {
			t.Fatal(err)
		}
		kx := mustGram(t, Gaussian, FixedSigma(c.d), x)
		ky := mustGram(t, Gaussian, FixedSigma(c.d), y)
		r := spectralOnly(t, kx, ky)
		cx, cy := denseCentred(kx), denseCentred(ky)
		above := 1
		for _, p := range Permutations(n, B, c.seed) {
			if permutedStatistic(cx, cy, p) >= r.Statistic {
				above++
			}
		}
		perm := float64(above) / (B + 1)
		t.Logf("%v d=%d: spectral p %.4f, permutation p %.4f", c.kind, c.d, r.SpectralPValue, perm)
		if se := math.Sqrt(perm * (1 - perm) / B); math.Abs(r.SpectralPValue-perm) > 4*se+0.01 {
			t.Errorf("%v: spectral p %.4f, permutation p %.4f", c.kind, r.SpectralPValue, perm)
		}
	}
}

// allPermutations returns the n! permutations of 0..n-1.
func allPermutations(n int) [][]int {
	if n == 1 {
		return [][]int{{0}}
	}
	var out [][]int
	for _, p := range allPermutations(n - 1) {
		for pos := 0; pos <= len(p); pos++ {
			q := append(append(append([]int{}, p[:pos]...), n-1), p[pos:]...)
			out = append(out, q)
		}
	}
	return out
}

// TestPermutationVariance checks the closed-form permutation mean and
// variance of the statistic against all n! pairings of the rows, for n = 5
// to 7 and several kinds of data (agreement to round-off).
func TestPermutationVariance(t *testing.T) {
	for n := 5; n <= 7; n++ {
		for _, kind := range []synth.Kind{synth.Gaussian, synth.Discrete, synth.Square} {
			x, y, _ := synth.Generate(synth.Spec{Kind: kind, Dim: 2, MI: 1, Noise: 0.3, Seed: uint64(n)}, n)
			kx := mustGram(t, Gaussian, 1, x)
			ky := mustGram(t, Gaussian, 0.7, y)
			r, err := HSICTest(kx, ky, HSICOptions{})
			if err != nil {
				t.Fatal(err)
			}
			cx, cy := denseCentred(kx), denseCentred(ky)
			var sum, sq float64
			perms := allPermutations(n)
			for _, p := range perms {
				s := permutedStatistic(cx, cy, p)
				sum += s
				sq += s * s
			}
			m := sum / float64(len(perms))
			sd := math.Sqrt(sq/float64(len(perms)) - m*m)
			if math.Abs(m-r.NullMean) > 1e-12*m || math.Abs(sd-r.NullStdDev) > 1e-9*sd {
				t.Errorf("n = %d %v: mean %v sd %v over %d pairings, closed forms %v and %v",
					n, kind, m, sd, len(perms), r.NullMean, r.NullStdDev)
			}
		}
	}
}

// TestHSICEdges checks the cases without a usable null: fewer than 4 rows
// (NaN), a constant view (K = 11ᵀ, centered to 0: p = 1) and rows so far
// apart that K = I (every pairing gives the same statistic: p = 1).
func TestHSICEdges(t *testing.T) {
	x3 := mat.NewDense(3, 1, []float64{0, 1, 2})
	if r, err := HSICTest(mustGram(t, Gaussian, 1, x3), mustGram(t, Gaussian, 1, x3), HSICOptions{}); err != nil || !math.IsNaN(r.PValue) {
		t.Errorf("3 rows: p = %v, err %v", r.PValue, err)
	}
	x, y := toy(t, synth.Independent, 1, 0, 30, 4)
	constant := mat.NewDense(30, 1, nil)
	if r, err := HSICTest(mustGram(t, Gaussian, 1, x), mustGram(t, Gaussian, 1, constant), HSICOptions{}); err != nil || r.PValue != 1 || r.Statistic != 0 {
		t.Errorf("constant view: %+v, err %v", r, err)
	}
	if r, err := HSICTest(mustGram(t, Gaussian, 1e-6, x), mustGram(t, Gaussian, 1, y), HSICOptions{}); err != nil || r.PValue != 1 {
		t.Errorf("K = I: %+v, err %v", r, err)
	}
	if _, err := HSICTest(mustGram(t, Gaussian, 1, x), mustGram(t, Gaussian, 1, x3), HSICOptions{}); err == nil {
		t.Error("different sizes accepted")
	}
}

// TestSequentialPValueValid checks Besag and Clifford's p-value by
// simulation: with the observed statistic and the pairings' statistics iid
// (exchangeable, as under independence), P(p ≤ α) must not exceed α, and
// equals it at levels in the p-value's support (0.05 = 20/400 and
// 0.01 = 10/1000 with B = 999, h = 20). 40,000 repetitions: standard errors
// 0.0011 at 0.05 and 0.0005 at 0.01; tolerance 4 of them.
func TestSequentialPValueValid(t *testing.T) {
	const reps, B, h = 40000, 999, 20
	r := rand.New(rand.NewPCG(5, 6))
	var le05, le01, draws int
	for range reps {
		u := r.Float64()
		drawn, hits := 0, 0
		for drawn < B && hits < h {
			drawn++
			if r.Float64() >= u {
				hits++
			}
		}
		draws += drawn
		p := sequentialPValue(drawn, hits, B, h)
		if p <= 0.05 {
			le05++
		}
		if p <= 0.01 {
			le01++
		}
	}
	f05, f01 := float64(le05)/reps, float64(le01)/reps
	t.Logf("P(p ≤ 0.05) = %.4f, P(p ≤ 0.01) = %.4f, mean pairings %.0f", f05, f01, float64(draws)/reps)
	if math.Abs(f05-0.05) > 4*0.0011 || math.Abs(f01-0.01) > 4*0.0005 {
		t.Errorf("P(p ≤ 0.05) = %.4f, P(p ≤ 0.01) = %.4f", f05, f01)
	}
}

// TestHSICWorkersAgree checks that the sequential test stops at the same
// pairing, with the same p-value, whatever the number of goroutines.
func TestHSICWorkersAgree(t *testing.T) {
	x, y := toy(t, synth.Independent, 1, 0, 150, 6)
	kx, ky := mustGram(t, Gaussian, 1, x), mustGram(t, Gaussian, 1, y)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for seed := uint64(1); seed <= 3; seed++ {
		runtime.GOMAXPROCS(1)
		one, _ := HSICTest(kx, ky, HSICOptions{Seed: seed})
		runtime.GOMAXPROCS(3)
		three, _ := HSICTest(kx, ky, HSICOptions{Seed: seed})
		// %v prints NaN alike, which == does not compare equal.
		if fmt.Sprintf("%v", one) != fmt.Sprintf("%v", three) || one.Exceedances != DefaultHSICExceedances || one.Permutations >= DefaultHSICPermutations {
			t.Errorf("seed %d: 1 goroutine: %+v\n3 goroutines: %+v", seed, one, three)
		}
	}
}

// TestPermutedInner checks the statistic of a pairing, computed from the
// uncentered Grams, against dense products of the centered ones.
func TestPermutedInner(t *testing.T) {
	x, y := toy(t, synth.Sine, 2, 0, 50, 1)
	kx, ky := mustGram(t, Gaussian, 1, x), mustGram(t, Gaussian, 1, y)
	cx, cy := newCentring(kx.RawSymmetric()), newCentring(ky.RawSymmetric())
	full := mirrored(ky.RawSymmetric())
	dx, dy := denseCentred(kx), denseCentred(ky)
	for _, p := range append(Permutations(50, 5, 3), identity(50)) {
		a := permutedInner(cx, cy, full, p)
		b := permutedStatistic(dx, dy, p) * 50
		if math.Abs(a-b) > 1e-12*math.Abs(b) {
			t.Errorf("permutedInner %v, dense %v", a, b)
		}
	}
	if a, b := permutedInner(cx, cy, full, identity(50)), centredInner(cx, cy); math.Abs(a-b) > 1e-12*b {
		t.Errorf("identity: %v, centredInner %v", a, b)
	}
	if got := mirrorInPlace(ky.RawSymmetric()); !slicesEqual(got, full) {
		t.Error("mirrorInPlace and mirrored differ")
	}
}

func slicesEqual(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
