package stream

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
)

// Result is an RFF estimate with every parameter that produced it. Entropies
// are in nats.
type Result struct {
	Rows, SkippedRows      int64
	XColumns, YColumns     []string
	Kernel                 exact.Kernel
	Alpha                  float64
	BandwidthX, BandwidthY exact.Bandwidth // the rules
	SigmaX, SigmaY         float64         // the bandwidths they gave
	Features               int             // D; the feature dimension is 2D
	Variant                rff.Variant
	Permutations           int
	Seed                   uint64
	ShuffleRows            int

	// EntropyX, EntropyY and EntropyJoint are the entropies of the X part,
	// Y part and joint covariance operators.
	EntropyX, EntropyY, EntropyJoint float64
	// MutualInformation is EntropyX + EntropyY − EntropyJoint.
	MutualInformation float64
	// DiME is the permutation estimate, mean(EntropyPermuted) − EntropyJoint,
	// and DiMEStdErr its standard error over the P permuted accumulators
	// (NaN for P = 1).
	DiME, DiMEStdErr float64
	// DiMEAnalytic is EntropyProduct − EntropyJoint, where EntropyProduct is
	// the entropy of the analytic product-of-marginals operator C⊥ (all pairs
	// of rows, no permutation noise; a small positive bias of order D/N at
	// independence).
	DiMEAnalytic float64
	// EntropyPermuted holds the entropy of each permuted accumulator.
	EntropyPermuted []float64
	EntropyProduct  float64
	// PValue tests independence (see PValue): NaN for P = 1.
	PValue float64
	// EffectiveRows is the total weight of the rows: Rows, or less with a
	// half-life.
	EffectiveRows float64
	HalfLife      float64
}

// PValue returns the p-value of the test of independence that the permuted
// accumulators allow: under independence the observed pairs are
// exchangeable with the permuted ones, so the joint entropy S_XY is one more
// draw from the distribution of the P permuted entropies S_k. With their mean
// m and standard deviation s, the statistic
//
//	t = (m − S_XY) / (s √(1 + 1/P))
//
// follows Student's t with P − 1 degrees of freedom if the S_k are normal (a
// prediction interval for one more draw), and the p-value is P(T ≥ t):
// dependence lowers S_XY, making t large. It is an approximation (normality),
// measured to be calibrated (TestPValueCalibrated); unlike the rank of S_XY
// among P + 1 values, which cannot go below 1/(P + 1) = 1/6 at P = 5, it can
// reach small values with few accumulators: it has no floor but the
// precision of the tail, and is reported as at least 1e-300. NaN when P < 2,
// or when the S_k are all equal.
func PValue(joint float64, permuted []float64) float64 {
	P := len(permuted)
	if P < 2 {
		return math.NaN()
	}
	var m float64
	for _, v := range permuted {
		m += v
	}
	m /= float64(P)
	var ss float64
	for _, v := range permuted {
		ss += (v - m) * (v - m)
	}
	s := math.Sqrt(ss / float64(P-1))
	if !(s > 0) {
		return math.NaN()
	}
	t := (m - joint) / (s * math.Sqrt(1+1/float64(P)))
	p := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(P - 1)}.Survival(t)
	return math.Max(p, 1e-300)
}

// Skip counts n rows that were dropped upstream (invalid values), so that
// Result can report them.
func (e *Estimator) Skip(n int64) { e.skipped += n }

// Result flushes the rows waiting in the shuffle buffer and returns the
// estimate over every row added so far. It needs at least 2 rows. The P + 4
// entropies (X, Y, joint, P permuted, product of marginals) are computed
// concurrently.
func (e *Estimator) Result() (Result, error) {
	if err := e.Flush(); err != nil {
		return Result{}, err
	}
	if e.rows < 2 {
		return Result{}, invalidf("%d rows, want at least 2", e.rows)
	}
	res, err := resultOf(e.cfg, e.sigmaX, e.sigmaY, e.rows, e.skipped, e.x, e.y, e.xy, e.perm)
	res.EffectiveRows = e.xy.Weight()
	return res, err
}

// resultOf computes a Result from a full set of accumulators.
func resultOf(cfg Config, sigmaX, sigmaY float64, rows, skipped int64, x, y, xy *covariance.Accumulator, perm []*covariance.Accumulator) (Result, error) {
	mats := []*mat.SymDense{x.Sum(), y.Sum(), xy.Sum()}
	for _, a := range perm {
		if !(a.Weight() > 0) {
			return Result{}, fmt.Errorf("stream: permuted accumulator %d has no rows", a.Description().Index)
		}
		mats = append(mats, a.Sum())
	}
	if !cfg.SkipAnalytic {
		product, err := covariance.ProductOfMarginals(nil, x, y)
		if err != nil {
			return Result{}, err
		}
		mats = append(mats, product)
	}
	s, err := exact.MatrixEntropies(cfg.Alpha, mats...)
	if err != nil {
		return Result{}, err
	}
	return assemble(cfg, sigmaX, sigmaY, rows, skipped, s), nil
}

// assemble builds a Result from the entropies of X, Y, the joint, the P
// permuted joints and, unless cfg.SkipAnalytic, the product of marginals, in
// that order.
func assemble(cfg Config, sigmaX, sigmaY float64, rows, skipped int64, s []float64) Result {
	permuted := s[3 : 3+cfg.Permutations]
	var mean float64
	for _, v := range permuted {
		mean += v
	}
	mean /= float64(len(permuted))
	stderr := math.NaN()
	if len(permuted) > 1 {
		var ss float64
		for _, v := range permuted {
			ss += (v - mean) * (v - mean)
		}
		stderr = math.Sqrt(ss/float64(len(permuted)-1)) / math.Sqrt(float64(len(permuted)))
	}
	product := math.NaN()
	if !cfg.SkipAnalytic {
		product = s[3+cfg.Permutations]
	}
	return Result{
		Rows: rows, SkippedRows: skipped,
		XColumns: cfg.XColumns, YColumns: cfg.YColumns,
		Kernel: cfg.Kernel, Alpha: cfg.Alpha,
		BandwidthX: cfg.BandwidthX, BandwidthY: cfg.BandwidthY, SigmaX: sigmaX, SigmaY: sigmaY,
		Features: cfg.Features, Variant: cfg.Variant, Permutations: cfg.Permutations,
		Seed: cfg.Seed, ShuffleRows: cfg.ShuffleRows,
		EntropyX: s[0], EntropyY: s[1], EntropyJoint: s[2],
		MutualInformation: s[0] + s[1] - s[2],
		DiME:              mean - s[2], DiMEStdErr: stderr,
		DiMEAnalytic:    product - s[2],
		EntropyPermuted: slices.Clone(permuted), EntropyProduct: product,
		PValue: PValue(s[2], permuted), EffectiveRows: float64(rows), HalfLife: cfg.HalfLife,
	}
}
