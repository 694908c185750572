package stream

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
)

// EstimateMatrices returns the RFF estimate for two in-memory views (row i of
// x paired with row i of y), all rows forming one shuffle scope.
func EstimateMatrices(x, y mat.Matrix, cfg Config) (Result, error) {
	xd, yd, n, err := rowMajor(x, y)
	if err != nil {
		return Result{}, err
	}
	cfg.ShuffleRows = n
	_, dx := x.Dims()
	_, dy := y.Dims()
	e, err := New(dx, dy, cfg)
	if err != nil {
		return Result{}, err
	}
	if err := e.Add(xd, yd, n); err != nil {
		return Result{}, err
	}
	return e.Result()
}

// EstimateWithPermutations is EstimateMatrices with given pairings: permuted
// accumulator k pairs row i of x with row perms[k][i] of y, as exact.DiME
// does. With perms = exact.Permutations(n, P, seed), the RFF and the exact
// estimates pair the same rows, so their difference is the feature
// approximation alone.
func EstimateWithPermutations(x, y mat.Matrix, cfg Config, perms [][]int) (Result, error) {
	xd, yd, n, err := rowMajor(x, y)
	if err != nil {
		return Result{}, err
	}
	if len(perms) < 1 {
		return Result{}, invalidf("no permutations")
	}
	cfg.Permutations = len(perms)
	if cfg.needsPilot() {
		// In memory, data-dependent bandwidths look at all the rows.
		ecfg := exact.Config{Kernel: cfg.Kernel, Alpha: cfg.Alpha, SigmaX: cfg.BandwidthX, SigmaY: cfg.BandwidthY,
			Permutations: cfg.Permutations, Seed: cfg.Seed}
		sx, sy, err := exact.ResolveBandwidths(x, y, ecfg)
		if err != nil {
			return Result{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		cfg.BandwidthX, cfg.BandwidthY = exact.Sigma(sx), exact.Sigma(sy)
	}
	_, dx := x.Dims()
	_, dy := y.Dims()
	e, err := New(dx, dy, cfg)
	if err != nil {
		return Result{}, err
	}
	if err := checkFinite("X", xd, dx, 0); err != nil {
		return Result{}, err
	}
	if err := checkFinite("Y", yd, dy, 0); err != nil {
		return Result{}, err
	}
	for k, perm := range perms {
		if len(perm) != n {
			return Result{}, invalidf("permutation %d has length %d, want %d", k, len(perm), n)
		}
	}
	pair, err := e.featureMaps()
	if err != nil {
		return Result{}, err
	}
	px, err := pair.X.Transform(nil, xd, n)
	if err != nil {
		return Result{}, err
	}
	py, err := pair.Y.Transform(nil, yd, n)
	if err != nil {
		return Result{}, err
	}
	p := 2 * cfg.Features
	if n >= p {
		// Few features: accumulate the 2D×2D covariance operators.
		e.x.Add(px, n)
		e.y.Add(py, n)
		for k := -1; k < len(perms); k++ {
			acc, perm := e.xy, []int(nil)
			if k >= 0 {
				acc, perm = e.perm[k], perms[k]
			}
			joint, err := rff.Joint(nil, px, py, n, cfg.Features, perm)
			if err != nil {
				return Result{}, invalidf("permutation %d: %v", k, err)
			}
			acc.Add(joint, n)
		}
		e.rows = int64(n)
		return resultOf(e.cfg, e.sigmaX, e.sigmaY, e.rows, 0, e.x, e.y, e.xy, e.perm)
	}
	// Few rows: the nonzero eigenvalues of a covariance ΦᵀΦ/n are those of
	// the n×n Gram matrix ΦΦᵀ/n, which is smaller; entropies come from it.
	grams := make([]*mat.SymDense, 0, 3+len(perms))
	gram := func(phi []float64) *mat.SymDense {
		g := mat.NewSymDense(n, nil)
		g.SymOuterK(1/float64(n), mat.NewDense(n, p, phi))
		return g
	}
	grams = append(grams, gram(px), gram(py))
	for k := -1; k < len(perms); k++ {
		var perm []int
		if k >= 0 {
			perm = perms[k]
		}
		joint, err := rff.Joint(nil, px, py, n, cfg.Features, perm)
		if err != nil {
			return Result{}, invalidf("permutation %d: %v", k, err)
		}
		grams = append(grams, gram(joint))
	}
	if !cfg.SkipAnalytic {
		e.x.Add(px, n)
		e.y.Add(py, n)
		product, err := covariance.ProductOfMarginals(nil, e.x, e.y)
		if err != nil {
			return Result{}, err
		}
		s, err := exact.MatrixEntropy(product, cfg.Alpha)
		if err != nil {
			return Result{}, err
		}
		sg, err := exact.MatrixEntropies(cfg.Alpha, grams...)
		if err != nil {
			return Result{}, err
		}
		return assemble(cfg, e.sigmaX, e.sigmaY, int64(n), 0, append(sg, s)), nil
	}
	sg, err := exact.MatrixEntropies(cfg.Alpha, grams...)
	if err != nil {
		return Result{}, err
	}
	return assemble(cfg, e.sigmaX, e.sigmaY, int64(n), 0, sg), nil
}

// rowMajor returns the data of two views as row-major slices, checking that
// they have the same number of rows (at least 2) and at least one column.
func rowMajor(x, y mat.Matrix) (xd, yd []float64, n int, err error) {
	if x == nil || y == nil {
		return nil, nil, 0, invalidf("a view is nil")
	}
	nx, dx := x.Dims()
	ny, dy := y.Dims()
	switch {
	case nx != ny:
		return nil, nil, 0, invalidf("X has %d rows and Y has %d, want the same number", nx, ny)
	case nx < 2:
		return nil, nil, 0, invalidf("%d rows, want at least 2", nx)
	case dx < 1 || dy < 1:
		return nil, nil, 0, invalidf("views need at least one column, got %d and %d", dx, dy)
	}
	return mat.DenseCopyOf(x).RawMatrix().Data, mat.DenseCopyOf(y).RawMatrix().Data, nx, nil
}
