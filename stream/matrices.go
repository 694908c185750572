package stream

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
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
// approximation alone. It is the permutation estimator on one group of rows
// (no jackknife) without the normalized score; with fewer rows than
// features (n < 2D) it computes entropies from n×n Gram matrices, and
// cfg.SkipAnalytic then skips the test as well as the analytic estimate
// (each costs a 2D×2D eigenproblem).
func EstimateWithPermutations(x, y mat.Matrix, cfg Config, perms [][]int) (Result, error) {
	xd, yd, n, err := rowMajor(x, y)
	if err != nil {
		return Result{}, err
	}
	if len(perms) < 1 {
		return Result{}, invalidf("no permutations")
	}
	cfg.Permutations = len(perms)
	cfg.SkipNormalized = true
	if cfg.needsPilot() {
		// In memory, data-dependent bandwidths look at all the rows.
		sx, sy, err := exact.ResolveBandwidths(x, y, cfg.exactConfig())
		if err != nil {
			return Result{}, fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		cfg.BandwidthX, cfg.BandwidthY = vocab.Sigma(sx), vocab.Sigma(sy)
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
	// Every row goes to group 0: the permutation estimator has no
	// jackknife. The parts and the means are accumulated in any case (the
	// product of marginals and the test need them).
	g := &e.groups[0]
	joint, err := rff.Joint(nil, px, py, n, cfg.Features, nil)
	if err != nil {
		return Result{}, err
	}
	g.x.Add(px, n)
	g.y.Add(py, n)
	g.mx.Add(px, n)
	g.my.Add(py, n)
	g.mxy.Add(joint, n)
	e.rows = int64(n)
	p := 2 * cfg.Features
	if n >= p {
		// Few features: accumulate the 2D×2D covariance operators.
		g.xy.Add(joint, n)
		for k, perm := range perms {
			pj, err := rff.Joint(nil, px, py, n, cfg.Features, perm)
			if err != nil {
				return Result{}, invalidf("permutation %d: %v", k, err)
			}
			e.perm[k].Add(pj, n)
		}
		return e.Result()
	}
	// Few rows: the nonzero eigenvalues of a covariance ΦᵀΦ/n are those of
	// the n×n Gram matrix ΦΦᵀ/n, which is smaller; entropies come from it.
	grams := make([]*mat.SymDense, 0, 3+len(perms))
	gram := func(phi []float64) *mat.SymDense {
		g := mat.NewSymDense(n, nil)
		g.SymOuterK(1/float64(n), mat.NewDense(n, p, phi))
		return g
	}
	grams = append(grams, gram(px), gram(py), gram(joint))
	for k, perm := range perms {
		pj, err := rff.Joint(nil, px, py, n, cfg.Features, perm)
		if err != nil {
			return Result{}, invalidf("permutation %d: %v", k, err)
		}
		grams = append(grams, gram(pj))
	}
	nan := math.NaN()
	est := estimates{sperp: nan, jack: nan, jackSE: nan, selfX: nan, selfY: nan, groups: len(e.groups), weight: float64(n),
		test: covariance.IndependenceTest{Statistic: nan, NullMean: nan, PValue: nan}}
	if !cfg.SkipAnalytic {
		product, err := covariance.ProductOfMarginals(nil, g.x, g.y)
		if err != nil {
			return Result{}, err
		}
		if est.sperp, err = exact.MatrixEntropy(product, cfg.Alpha); err != nil {
			return Result{}, err
		}
	}
	sg, err := exact.MatrixEntropies(cfg.Alpha, grams...)
	if err != nil {
		return Result{}, err
	}
	est.sx, est.sy, est.sxy, est.perm = sg[0], sg[1], sg[2], sg[3:]
	if !cfg.SkipAnalytic {
		// Like the analytic estimate, the test costs a 2D×2D eigenproblem,
		// more than the Gram matrices' here.
		if t, err := covariance.Independence(g.x, g.y, g.mx, g.my, g.mxy); err == nil {
			est.test = t
		}
	}
	return assemble(cfg, e.sigmaX, e.sigmaY, int64(n), 0, est), nil
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
