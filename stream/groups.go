package stream

import (
	"math/rand/v2"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/internal/randstream"
	"github.com/dime-project/dime/rff"
)

// Hooks for estimators of many pairs (package rank). An Estimator holds one
// pair of views; a caller that scores many pairs over the same rows shares
// each view's feature map and part accumulators between the pairs that
// contain it, and needs the Estimator's row plan (which rows go to which
// group, which chunks feed the self terms) and its Result from group
// accumulators. These functions expose exactly what the Estimator does, so
// that such a pair gives the Estimator's numbers.

// ChunkRows is the number of consecutive positions of a shuffle scope that
// form one chunk: chunk c of the stream goes to group c mod K.
const ChunkRows = chunkRows

// ScopeOrder returns, in order (reused if long enough), the random order of
// the n rows of a shuffle scope as an Estimator with cfg puts them before
// cutting them into chunks: seeded by cfg.Seed and a hash of the scope's
// size and of its first and last rows of x (n×dimX) and y (n×dimY,
// dimY may be 0), hashed rounded to float32 when standardized. Serial rows
// keep their order.
func ScopeOrder(order []int, cfg Config, x, y []float64, n, dimX, dimY int, standardized bool) []int {
	if cap(order) < n {
		order = make([]int, n)
	}
	order = order[:n]
	for i := range order {
		order[i] = i
	}
	if cfg.RowModel == SerialRows || n == 0 {
		return order
	}
	src := rand.NewPCG(cfg.Seed, randstream.Permutation)
	src.Seed(cfg.Seed, scopeStream(x, y, n, dimX, dimY, standardized))
	rand.New(src).Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order
}

// ScopeChunks returns the size of the chunks that a scope of n rows is cut
// into (ChunkRows, or n/K rounded up for a scope of fewer than ChunkRows·K
// rows, so that every group gets rows) and their number.
func ScopeChunks(cfg Config, n int) (size, chunks int) {
	K := cfg.groups()
	size = max(1, min(chunkRows, (n+K-1)/K))
	return size, (n + size - 1) / size
}

// SelfChunk reports whether chunk c of the stream (counted from the first
// chunk of the first scope) feeds the self terms of the normalized score.
func SelfChunk(cfg Config, c int64) bool {
	round := c / int64(cfg.groups())
	return !cfg.SkipNormalized && (round < selfFirstRounds || round%selfRounds == 0)
}

// GroupCount returns the number K of groups of rows of the jackknife that cfg
// asks for.
func (c Config) GroupCount() int { return c.groups() }

// PairSpec returns the description of the feature maps of a pair of views
// of the given widths and bandwidths, as an Estimator with c builds them.
func (c Config) PairSpec(dimX, dimY int, sigmaX, sigmaY float64) rff.PairSpec {
	return c.pairSpec(dimX, dimY, sigmaX, sigmaY)
}

// GroupParts are the accumulators of one group of rows of a pair: the X and
// Y parts, the joint, their first moments, and for the normalized score the
// copies' parts and the self joints (nil with SkipNormalized). Their
// descriptions are those an Estimator gives them (the pair's PairSpec, the
// part, the group's index).
type GroupParts struct {
	X, Y, Joint                *covariance.Accumulator
	MeanX, MeanY, MeanJoint    *covariance.Mean
	CopyX, CopyY, SelfX, SelfY *covariance.Accumulator
}

// EstimateGroups returns the Result of the analytic estimator (cfg with no
// permutations) from the accumulators of its K groups, as an Estimator
// whose groups hold them computes it: the same entropies, jackknife,
// self terms and test. rows and skipped are reported as they are; the lag-1
// autocorrelations are NaN.
func EstimateGroups(cfg Config, sigmaX, sigmaY float64, rows, skipped int64, groups []GroupParts) (Result, error) {
	return EstimateGroupsWith(cfg, sigmaX, sigmaY, rows, skipped, groups, nil, nil)
}

// groupsEstimator returns an Estimator whose groups hold the accumulators
// of groups, to estimate from.
func groupsEstimator(cfg Config, sigmaX, sigmaY float64, rows int64, groups []GroupParts) (*Estimator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Permutations != 0 || cfg.HalfLife != 0 {
		return nil, invalidf("estimate of groups: analytic estimator without decay only")
	}
	if len(groups) != cfg.groups() {
		return nil, invalidf("estimate of groups: %d groups, want %d", len(groups), cfg.groups())
	}
	if rows < 2 {
		return nil, invalidf("%d rows, want at least 2", rows)
	}
	e := &Estimator{cfg: cfg, sigmaX: sigmaX, sigmaY: sigmaY, groups: make([]group, len(groups))}
	for k, g := range groups {
		if g.X == nil || g.Y == nil || g.Joint == nil || g.MeanX == nil || g.MeanY == nil || g.MeanJoint == nil ||
			!cfg.SkipNormalized && (g.CopyX == nil || g.CopyY == nil || g.SelfX == nil || g.SelfY == nil) {
			return nil, invalidf("estimate of groups: group %d lacks an accumulator", k)
		}
		e.groups[k] = group{x: g.X, y: g.Y, xy: g.Joint, mx: g.MeanX, my: g.MeanY, mxy: g.MeanJoint, cx: g.CopyX, cy: g.CopyY, sx: g.SelfX, sy: g.SelfY}
	}
	return e, nil
}
