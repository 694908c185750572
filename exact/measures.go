package exact

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// JointEntropy returns the matrix-based joint entropy of order alpha of two or
// more views, the entropy of the Hadamard product K₁ ∘ K₂ ∘ … of their Gram
// matrices. The matrices must all be n×n; they are not modified.
func JointEntropy(alpha float64, grams ...*mat.SymDense) (float64, error) {
	if err := CheckAlpha(alpha); err != nil {
		return 0, err
	}
	if len(grams) < 2 {
		return 0, invalidf("joint entropy needs at least 2 Gram matrices, got %d", len(grams))
	}
	n, err := commonSize(grams...)
	if err != nil {
		return 0, err
	}
	var w entropyWorker
	w.ensure(n)
	w.scratch.CopySym(grams[0])
	dst := w.scratch.RawSymmetric()
	for _, g := range grams[1:] {
		src := g.RawSymmetric()
		for i := 0; i < n; i++ {
			d := dst.Data[i*dst.Stride+i : i*dst.Stride+n]
			for j, v := range src.Data[i*src.Stride+i : i*src.Stride+n] {
				d[j] *= v
			}
		}
	}
	return w.entropyInPlace(alpha)
}

// ConditionalEntropy returns S_α(X | Y) = S_α(K_X ∘ K_Y) − S_α(K_Y).
func ConditionalEntropy(kx, ky *mat.SymDense, alpha float64) (float64, error) {
	joint, err := JointEntropy(alpha, kx, ky)
	if err != nil {
		return 0, err
	}
	sy, err := MatrixEntropy(ky, alpha)
	if err != nil {
		return 0, err
	}
	return joint - sy, nil
}

// MutualInformation returns the matrix-based mutual information
// I_α(X; Y) = S_α(K_X) + S_α(K_Y) − S_α(K_X ∘ K_Y), which lies in
// [0, min(S_α(K_X), S_α(K_Y))] (subadditivity).
func MutualInformation(kx, ky *mat.SymDense, alpha float64) (float64, error) {
	s, err := entropies(kx, ky, alpha, nil, entropyOptions{marginals: true})
	if err != nil {
		return 0, err
	}
	return s.x + s.y - s.joint, nil
}

// DiMEParts is DiME over a given set of permutations, with its parts.
type DiMEParts struct {
	// EntropyJoint is S_α(K_X ∘ K_Y).
	EntropyJoint float64
	// PermutedJoint[k] is S_α(K_X ∘ Π_k K_Y Π_kᵀ) for the k-th permutation.
	PermutedJoint []float64
	// MeanPermutedJoint is the mean of PermutedJoint.
	MeanPermutedJoint float64
	// DiME is MeanPermutedJoint − EntropyJoint.
	DiME float64
	// StdErr is the standard error of DiME over the permutations: the sample
	// standard deviation of PermutedJoint over √P. NaN when P = 1.
	StdErr float64
}

// DiME returns DiME between the views whose Gram matrices are kx and ky, over
// the given permutations: perms[k][i] = j pairs row i of X with row j of Y,
// that is (Π K_Y Πᵀ)[i][l] = K_Y[perms[k][i]][perms[k][l]]. The P + 1
// eigenproblems run concurrently on up to GOMAXPROCS goroutines.
func DiME(kx, ky *mat.SymDense, alpha float64, perms [][]int) (DiMEParts, error) {
	s, err := entropies(kx, ky, alpha, perms, entropyOptions{})
	if err != nil {
		return DiMEParts{}, err
	}
	return newDiMEParts(s.joint, s.permuted), nil
}

func newDiMEParts(joint float64, permuted []float64) DiMEParts {
	mean, se := meanStdErr(permuted)
	return DiMEParts{
		EntropyJoint:      joint,
		PermutedJoint:     permuted,
		MeanPermutedJoint: mean,
		DiME:              mean - joint,
		StdErr:            se,
	}
}

// meanStdErr returns the mean of v and its standard error (unbiased standard
// deviation over √len(v)); the standard error is NaN for fewer than 2 values.
func meanStdErr(v []float64) (mean, stdErr float64) {
	for _, x := range v {
		mean += x
	}
	mean /= float64(len(v))
	if len(v) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, x := range v {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(v)-1)) / math.Sqrt(float64(len(v)))
}

// entropySet holds the entropies computed by one call of entropies.
type entropySet struct {
	x, y, joint float64
	permuted    []float64
	// selfX and selfY are the DiME of each view with a copy of itself.
	selfX, selfY DiMEParts
}

// entropyOptions says what entropies computes beyond the joint and permuted
// joint entropies.
type entropyOptions struct {
	marginals bool // S(K_X) and S(K_Y)
	// self is the number of permutations (the first ones) of the self terms
	// DiME(X;X′) and DiME(Y;Y′) of the normalized score: 2(self + 1)
	// eigenproblems; 0 for none.
	self int
}

// entropies computes, concurrently, S(K_X ∘ K_Y), S(K_X ∘ Π K_Y Πᵀ) for each
// permutation, and what opts asks. Each worker owns one n×n scratch matrix
// that it fills and then destroys in the eigensolver.
func entropies(kx, ky *mat.SymDense, alpha float64, perms [][]int, opts entropyOptions) (entropySet, error) {
	if err := CheckAlpha(alpha); err != nil {
		return entropySet{}, err
	}
	n, err := commonSize(kx, ky)
	if err != nil {
		return entropySet{}, err
	}
	for k, p := range perms {
		if err := checkPermutation(p, n); err != nil {
			return entropySet{}, invalidf("permutation %d: %v", k, err)
		}
	}
	x, y := kx.RawSymmetric(), ky.RawSymmetric()
	var jobs []gramJob
	add := func(f func(dst blas64.Symmetric)) { jobs = append(jobs, gramJob{fill: f}) }
	if opts.marginals {
		add(func(dst blas64.Symmetric) { copyUpper(dst, x) })
		add(func(dst blas64.Symmetric) { copyUpper(dst, y) })
	}
	// The self terms use the same code as the joint ones, so that with
	// K_Y = K_X they compute the same matrices, bit for bit.
	if opts.self > 0 {
		for _, v := range []blas64.Symmetric{x, y} {
			add(func(dst blas64.Symmetric) { hadamardPermuted(dst, v, v, nil) })
			for _, p := range perms[:opts.self] {
				add(func(dst blas64.Symmetric) { hadamardPermuted(dst, v, v, p) })
			}
		}
	}
	add(func(dst blas64.Symmetric) { hadamardPermuted(dst, x, y, nil) })
	for _, p := range perms {
		add(func(dst blas64.Symmetric) { hadamardPermuted(dst, x, y, p) })
	}
	values, _, err := runGramJobs(n, alpha, jobs)
	if err != nil {
		return entropySet{}, err
	}
	var s entropySet
	if opts.marginals {
		s.x, s.y, values = values[0], values[1], values[2:]
	}
	if k := opts.self; k > 0 {
		s.selfX = newDiMEParts(values[0], values[1:1+k])
		s.selfY = newDiMEParts(values[1+k], values[2+k:2+2*k])
		values = values[2+2*k:]
	}
	s.joint, s.permuted = values[0], values[1:]
	return s, nil
}

// runEntropyJobs fills an n×n scratch matrix with each job in turn and returns
// the entropy of each, in job order, using up to GOMAXPROCS workers.
func runEntropyJobs(n int, alpha float64, jobs []func(dst blas64.Symmetric)) ([]float64, error) {
	gj := make([]gramJob, len(jobs))
	for i, f := range jobs {
		gj[i] = gramJob{fill: f}
	}
	out, _, err := runGramJobs(n, alpha, gj)
	return out, err
}

// runSpectrumJobs fills an n×n scratch matrix with each job in turn and
// returns the eigenvalues of each, in job order, using up to GOMAXPROCS
// workers.
func runSpectrumJobs(n int, jobs []func(dst blas64.Symmetric)) ([][]float64, error) {
	gj := make([]gramJob, len(jobs))
	for i, f := range jobs {
		gj[i] = gramJob{fill: f, spectrum: true}
	}
	_, spectra, err := runGramJobs(n, 1, gj)
	return spectra, err
}

// gramJob is one eigenproblem: fill writes the upper triangle of an n×n
// matrix, whose entropy is wanted, or with spectrum its eigenvalues.
type gramJob struct {
	fill     func(dst blas64.Symmetric)
	spectrum bool
}

// runGramJobs runs the jobs on up to GOMAXPROCS workers, each with one n×n
// scratch matrix, and returns for each job in order its entropy of order
// alpha (entropy jobs) or its eigenvalues in ascending order (spectrum jobs).
func runGramJobs(n int, alpha float64, jobs []gramJob) ([]float64, [][]float64, error) {
	out := make([]float64, len(jobs))
	spectra := make([][]float64, len(jobs))
	errs := make([]error, len(jobs))
	next := make(chan int, len(jobs))
	for i := range jobs {
		next <- i
	}
	close(next)
	workers := min(runtime.GOMAXPROCS(0), len(jobs))
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var w entropyWorker
			w.ensure(n)
			for i := range next {
				jobs[i].fill(w.scratch.RawSymmetric())
				if jobs[i].spectrum {
					spectra[i], errs[i] = w.spectrumInPlace()
				} else {
					out[i], errs[i] = w.entropyInPlace(alpha)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	return out, spectra, nil
}

// copyUpper copies the upper triangle of src to dst (both n×n, upper).
func copyUpper(dst, src blas64.Symmetric) {
	for i := 0; i < src.N; i++ {
		copy(dst.Data[i*dst.Stride+i:i*dst.Stride+dst.N], src.Data[i*src.Stride+i:i*src.Stride+src.N])
	}
}

// hadamardPermuted writes the upper triangle of K_X ∘ Π K_Y Πᵀ to dst, with
// (Π K_Y Πᵀ)[i][j] = K_Y[p[i]][p[j]]; a nil p is the identity.
func hadamardPermuted(dst, kx, ky blas64.Symmetric, p []int) {
	n := kx.N
	for i := 0; i < n; i++ {
		d := dst.Data[i*dst.Stride : i*dst.Stride+n]
		xr := kx.Data[i*kx.Stride : i*kx.Stride+n]
		if p == nil {
			yr := ky.Data[i*ky.Stride : i*ky.Stride+n]
			for j := i; j < n; j++ {
				d[j] = xr[j] * yr[j]
			}
			continue
		}
		pi := p[i]
		for j := i; j < n; j++ {
			a, b := pi, p[j]
			if a > b {
				a, b = b, a
			}
			d[j] = xr[j] * ky.Data[a*ky.Stride+b]
		}
	}
}

// checkPermutation reports whether p is a permutation of 0..n-1.
func checkPermutation(p []int, n int) error {
	if len(p) != n {
		return fmt.Errorf("has length %d, want %d", len(p), n)
	}
	seen := make([]bool, n)
	for i, v := range p {
		if v < 0 || v >= n || seen[v] {
			return fmt.Errorf("entry %d = %d is out of range or repeated", i, v)
		}
		seen[v] = true
	}
	return nil
}

// commonSize returns the common size of square matrices, or an error.
func commonSize(grams ...*mat.SymDense) (int, error) {
	n := -1
	for k, g := range grams {
		if g == nil || g.IsEmpty() {
			return 0, invalidf("Gram matrix %d is empty", k)
		}
		if m := g.SymmetricDim(); n < 0 {
			n = m
		} else if m != n {
			return 0, invalidf("Gram matrices are %d×%d and %d×%d, want equal sizes", n, n, m, m)
		}
	}
	if n < 2 {
		return 0, invalidf("Gram matrices are %d×%d, want at least 2 rows", n, n)
	}
	return n, nil
}
