package exact

import (
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/internal/linalg"
)

// vonNeumannTolerance is the distance from 1 below which alpha is treated as
// exactly 1 (the von Neumann limit). With the expm1 form used near 1 the two
// sides of this threshold agree to about 1e-15, so the limit is continuous.
const vonNeumannTolerance = 1e-9

// nearOneWidth is the half-width of the interval of alpha around 1 in which
// the entropy is computed as log1p(Σ λ·expm1((α−1)·log λ))/(1−α), which keeps
// full precision as α → 1; outside it log(Σ λ^α)/(1−α) is used, which keeps
// full precision when Σ λ^α is far below 1 (large α, many eigenvalues).
const nearOneWidth = 0.25

// CheckAlpha returns an error matching ErrInvalidInput unless alpha is a
// finite number greater than zero.
func CheckAlpha(alpha float64) error {
	if !(alpha > 0) || math.IsInf(alpha, 0) {
		return invalidf("alpha must be finite and > 0, got %v", alpha)
	}
	return nil
}

// SpectrumEntropy returns the matrix-based Rényi entropy of order alpha, in
// nats, of a positive semidefinite matrix with the given eigenvalues.
//
// Eigenvalues ≤ 0 are round-off and are dropped; the rest are renormalized to
// sum 1 (so the matrix need not have unit trace). With λ the renormalized
// eigenvalues,
//
//	S_α = log(Σ λ^α) / (1 − α)   and   S_1 = −Σ λ log λ,
//
// the von Neumann limit being used when |α − 1| < 1e-9. The result lies in
// [0, log m] for m positive eigenvalues.
//
// For α < 1 the result is sensitive to round-off: an n×n matrix computed in
// floating point has eigenvalues of relative size up to ~nε (ε = 2⁻⁵²) where
// the exact ones are 0, and each that comes out positive adds up to (nε)^α
// to Σ λ^α. At α = 0.5 and n = 1000 that is ~5e-7 each. Entropies of low-rank
// matrices at α < 1 are therefore only good to that level, here as in any
// implementation that keeps the positive eigenvalues. Only eigenvalues are needed: the same
// function serves Gram matrices (package exact) and covariance operators
// (package covariance). The slice is not modified.
func SpectrumEntropy(eigenvalues []float64, alpha float64) (float64, error) {
	if err := CheckAlpha(alpha); err != nil {
		return 0, err
	}
	var total float64
	var positive int
	for _, v := range eigenvalues {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, invalidf("eigenvalue %v is not finite", v)
		}
		if v > 0 {
			total += v
			positive++
		}
	}
	if positive == 0 {
		return 0, invalidf("matrix has no positive eigenvalue")
	}
	switch {
	case math.Abs(alpha-1) < vonNeumannTolerance:
		var s float64
		for _, v := range eigenvalues {
			if v > 0 {
				l := v / total
				s -= l * math.Log(l)
			}
		}
		return clampEntropy(s, positive), nil
	case math.Abs(alpha-1) <= nearOneWidth:
		// Σλ^α − 1 = Σ λ(λ^(α−1) − 1), each term computed without cancellation.
		var t float64
		for _, v := range eigenvalues {
			if v > 0 {
				l := v / total
				t += l * math.Expm1((alpha-1)*math.Log(l))
			}
		}
		return clampEntropy(math.Log1p(t)/(1-alpha), positive), nil
	default:
		var p float64
		for _, v := range eigenvalues {
			if v > 0 {
				p += math.Pow(v/total, alpha)
			}
		}
		return clampEntropy(math.Log(p)/(1-alpha), positive), nil
	}
}

// clampEntropy removes the last-bit excursions of a computed entropy outside
// its exact range [0, log m]: the renormalized spectrum of a rank-one matrix
// gives −1e-17 rather than 0, for instance.
func clampEntropy(s float64, m int) float64 {
	if s < 0 {
		return 0
	}
	if hi := math.Log(float64(m)); s > hi {
		return hi
	}
	return s
}

// FrobeniusEntropy returns the matrix-based Rényi entropy of order 2 of the
// symmetric positive semidefinite matrix a, −log(‖A‖_F² / tr(A)²), which needs
// no eigenvalues. It equals SpectrumEntropy(eigenvalues of a, 2) up to the
// round-off eigenvalues ≤ 0 that SpectrumEntropy drops.
func FrobeniusEntropy(a *mat.SymDense) (float64, error) {
	return frobeniusEntropy(a.RawSymmetric())
}

func frobeniusEntropy(a blas64.Symmetric) (float64, error) {
	var trace, frob float64
	for i := 0; i < a.N; i++ {
		row := a.Data[i*a.Stride : i*a.Stride+a.N]
		d := row[i]
		if math.IsNaN(d) || math.IsInf(d, 0) {
			return 0, invalidf("matrix entry (%d, %d) is not finite", i, i)
		}
		trace += d
		frob += d * d
		var off float64
		if a.Uplo == blas.Upper {
			for _, v := range row[i+1:] {
				off += v * v
			}
		} else {
			for _, v := range row[:i] {
				off += v * v
			}
		}
		if math.IsNaN(off) || math.IsInf(off, 0) {
			return 0, invalidf("row %d of the matrix is not finite", i)
		}
		frob += 2 * off
	}
	if !(trace > 0) {
		return 0, invalidf("matrix trace %v is not positive", trace)
	}
	s := -math.Log(frob / (trace * trace))
	return clampEntropy(s, a.N), nil
}

// MatrixEntropy returns the matrix-based Rényi entropy of order alpha of the
// symmetric positive semidefinite matrix a (normalized by its trace). For
// alpha = 2 it uses FrobeniusEntropy; otherwise it computes the eigenvalues
// (never the eigenvectors) and calls SpectrumEntropy. a is not modified.
func MatrixEntropy(a *mat.SymDense, alpha float64) (float64, error) {
	if err := CheckAlpha(alpha); err != nil {
		return 0, err
	}
	var w entropyWorker
	n := a.SymmetricDim()
	w.ensure(n)
	w.scratch.CopySym(a)
	return w.entropyInPlace(alpha)
}

// MatrixEntropies returns the entropy of order alpha of each matrix, as
// MatrixEntropy does, computing them concurrently on up to GOMAXPROCS
// goroutines. The matrices must all have the same size; they are not modified.
func MatrixEntropies(alpha float64, mats ...*mat.SymDense) ([]float64, error) {
	if err := CheckAlpha(alpha); err != nil {
		return nil, err
	}
	if len(mats) == 0 {
		return nil, nil
	}
	n := -1
	for k, m := range mats {
		if m == nil || m.IsEmpty() {
			return nil, invalidf("matrix %d is empty", k)
		}
		if n < 0 {
			n = m.SymmetricDim()
		} else if m.SymmetricDim() != n {
			return nil, invalidf("matrix %d is %d×%d, want %d×%d", k, m.SymmetricDim(), m.SymmetricDim(), n, n)
		}
	}
	jobs := make([]func(dst blas64.Symmetric), len(mats))
	for k, m := range mats {
		src := m.RawSymmetric()
		jobs[k] = func(dst blas64.Symmetric) { copyUpper(dst, src) }
	}
	return runEntropyJobs(n, alpha, jobs)
}

// MatrixEntropiesOf returns the entropies of order alpha of n×n symmetric
// positive semidefinite matrices that are never held at once: fill k writes
// the upper triangle of matrix k to dst, a scratch matrix of the goroutine
// computing it (its other entries are undefined, and it is overwritten
// next). As MatrixEntropies does, it computes them concurrently on up to
// GOMAXPROCS goroutines, each holding one n×n scratch matrix and its
// eigensolver's workspace: that is all the O(n²) memory it allocates, so
// that a caller who can compute its matrices from smaller pieces (sums of
// accumulators, products of marginals) never forms them all. The first
// error of a fill, in their order, is returned.
func MatrixEntropiesOf(n int, alpha float64, fills ...func(dst *mat.SymDense) error) ([]float64, error) {
	if err := CheckAlpha(alpha); err != nil {
		return nil, err
	}
	if len(fills) == 0 {
		return nil, nil
	}
	if n < 1 {
		return nil, invalidf("matrices of size %d", n)
	}
	errs := make([]error, len(fills))
	jobs := make([]func(dst blas64.Symmetric), len(fills))
	for k, fill := range fills {
		jobs[k] = func(dst blas64.Symmetric) {
			var m mat.SymDense
			m.SetRawSymmetric(dst)
			errs[k] = fill(&m)
		}
	}
	values, err := runEntropyJobs(n, alpha, jobs)
	for _, ferr := range errs {
		if ferr != nil {
			return nil, ferr
		}
	}
	return values, err
}

// entropyWorker holds the scratch space of one goroutine that computes
// entropies of n×n matrices: the matrix to destroy, the eigenvalues and the
// eigensolver's workspace.
type entropyWorker struct {
	scratch *mat.SymDense
	values  []float64
	solver  linalg.SymEigensolver
}

func (w *entropyWorker) ensure(n int) {
	if w.scratch == nil || w.scratch.SymmetricDim() != n {
		// The eigensolver's stride (padded against cache-set conflicts).
		w.scratch = new(mat.SymDense)
		w.scratch.SetRawSymmetric(linalg.NewEigenScratch(n))
		w.values = make([]float64, n)
	}
}

// entropyInPlace returns the entropy of w.scratch and destroys it.
func (w *entropyWorker) entropyInPlace(alpha float64) (float64, error) {
	raw := w.scratch.RawSymmetric()
	if alpha == 2 {
		return frobeniusEntropy(raw)
	}
	if err := checkFiniteUpper(raw); err != nil {
		return 0, err
	}
	values, err := w.solver.EigenvaluesInPlace(w.values, raw)
	if err != nil {
		return 0, err
	}
	return SpectrumEntropy(values, alpha)
}

// spectrumInPlace returns a new slice with the eigenvalues of w.scratch, in
// ascending order, and destroys it.
func (w *entropyWorker) spectrumInPlace() ([]float64, error) {
	raw := w.scratch.RawSymmetric()
	if err := checkFiniteUpper(raw); err != nil {
		return nil, err
	}
	values, err := w.solver.EigenvaluesInPlace(w.values, raw)
	if err != nil {
		return nil, err
	}
	return append([]float64(nil), values...), nil
}

// checkFiniteUpper refuses a matrix with NaN or Inf in its upper triangle
// before it reaches the eigensolver, whose iterations would not converge.
func checkFiniteUpper(a blas64.Symmetric) error {
	for i := 0; i < a.N; i++ {
		for j, v := range a.Data[i*a.Stride+i : i*a.Stride+a.N] {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return invalidf("matrix entry (%d, %d) is not finite", i, i+j)
			}
		}
	}
	return nil
}
