package stream

import (
	"math"
	"sync"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
)

// ViewTerms are the estimates of a Result that depend on one view of the
// pair only: the entropy of the view's part over every row (EntropyX or
// EntropyY) and the entropies of its self term, DiME(X; X′) or DiME(Y; Y′),
// over every row and without each group. They are read from the view's
// part, copy and self-joint accumulators alone. A caller that scores many
// pairs sharing a view's accumulators over the same groups of rows (package
// rank: every candidate against one target) computes them once
// (GroupViewTerms) and gives them to EstimateGroupsWith for each pair: 17
// of the 106 eigenproblems of a Result at K = 7, the same numbers to the
// bit.
type ViewTerms struct {
	side     int // 0: X, 1: Y
	features int
	alpha    float64
	groups   int
	mask     uint64 // the groups left out in turn by the self term's jackknife
	norm     bool   // computed with the normalized score
	entropy  float64
	selfAll  bool      // the self term has rows over every group
	selfFull float64   // the self term's plug-in DiME over every row
	loo      []float64 // its plug-in DiME without group k (NaN outside mask)

	// Y's terms: the sums of Y's part accumulators over the sets of
	// groups that the products of marginals read, by the bit set of groups
	// left out, made when first read (partSum).
	mu   sync.Mutex
	sums map[uint64]*covariance.Accumulator
}

// partSum returns, for the products of marginals of a pair whose Y terms
// are v, the Y parts over every group but those in skip (ys, in group
// order) as one accumulator summed in the same order, which a product
// reads as it reads ys (covariance.ProductOfMarginalsGroups adds the
// groups to zero in order: the same numbers to the bit), without summing
// them again for each pair. Without Y terms (nil) it returns ys.
func (v *ViewTerms) partSum(skip uint64, ys []*covariance.Accumulator) []*covariance.Accumulator {
	if v == nil || len(ys) == 0 {
		return ys
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	sum, ok := v.sums[skip]
	if !ok {
		var err error
		if sum, err = covariance.SumGroups(ys...); err != nil {
			return ys // the product reports it
		}
		if v.sums == nil {
			v.sums = map[uint64]*covariance.Accumulator{}
		}
		v.sums[skip] = sum
	}
	rel, err := sum.Relabel(ys[0].Description())
	if err != nil {
		return ys
	}
	return []*covariance.Accumulator{rel}
}

// DropSums releases the sums of Y's parts that the pairs given these terms
// made (at most 36 accumulators at K = 7): call it after the last of them.
func (v *ViewTerms) DropSums() {
	v.mu.Lock()
	v.sums = nil
	v.mu.Unlock()
}

// GroupViewTerms returns the terms of view X (y false) or Y (y true) of
// the pair whose groups are given, as EstimateGroups computes them: the
// accumulators of the other view are not read but for the weights of the
// groups (which groups have rows, which fed the self terms), which must be
// those of every pair the terms are given for (EstimateGroupsWith checks).
func GroupViewTerms(cfg Config, groups []GroupParts, y bool) (*ViewTerms, error) {
	e, err := groupsEstimator(cfg, 0, 0, 2, groups)
	if err != nil {
		return nil, err
	}
	side, kind, get := 0, selfXPair, partX
	if y {
		side, kind, get = 1, selfYPair, partY
	}
	v := &ViewTerms{side: side, features: cfg.Features, alpha: cfg.Alpha, groups: len(e.groups), norm: !cfg.SkipNormalized,
		loo: make([]float64, len(e.groups)), selfFull: math.NaN()}
	parts, _ := e.parts(0, get)
	fills := []fill{sumFill(parts)}
	if v.norm {
		f := e.dimeFills(0, kind)
		v.selfAll = f != nil
		fills = append(fills, f...)
	}
	// The groups of the self term's jackknife, chosen as estimate chooses
	// them.
	var selfLive int
	for k := range e.groups {
		if v.norm && e.groups[k].cx.Weight() > 0 {
			selfLive++
		}
	}
	var left []int
	for k := range e.groups {
		g := &e.groups[k]
		v.loo[k] = math.NaN()
		if !(g.xy.Weight() > 0) || !(selfLive >= 2 && g.cx.Weight() > 0) {
			continue
		}
		f := e.dimeFills(1<<k, kind)
		if f == nil {
			return nil, invalidf("stream: group %d holds every row of a term: no jackknife", k)
		}
		fills = append(fills, f...)
		v.mask |= 1 << k
		left = append(left, k)
	}
	s, err := exact.MatrixEntropiesOf(2*cfg.Features, cfg.Alpha, fills...)
	if err != nil {
		return nil, err
	}
	v.entropy, s = s[0], s[1:]
	if v.selfAll {
		v.selfFull, s = s[1]-s[0], s[2:]
	}
	for _, k := range left {
		v.loo[k], s = s[1]-s[0], s[2:]
	}
	return v, nil
}

// check refuses terms computed for other settings or other groups of rows
// than those of the pair estimated with them.
func (v *ViewTerms) check(cfg Config, groups int, mask uint64, normalized bool) error {
	if v.features != cfg.Features || v.alpha != cfg.Alpha || v.groups != groups || v.norm != normalized {
		return invalidf("estimate of groups: view terms of other settings")
	}
	if v.mask != mask {
		return invalidf("estimate of groups: view terms of other groups of rows")
	}
	return nil
}

// EstimateGroupsWith is EstimateGroups with the terms of view X, view Y or
// both (nil: computed here) taken from GroupViewTerms of the same view's
// accumulators over the same groups of rows: the same Result to the bit,
// without their eigenproblems.
func EstimateGroupsWith(cfg Config, sigmaX, sigmaY float64, rows, skipped int64, groups []GroupParts, x, y *ViewTerms) (Result, error) {
	for i, v := range []*ViewTerms{x, y} {
		if v != nil && v.side != i {
			return Result{}, invalidf("estimate of groups: the terms of view %c given for view %c", "XY"[v.side], "XY"[i])
		}
	}
	e, err := groupsEstimator(cfg, sigmaX, sigmaY, rows, groups)
	if err != nil {
		return Result{}, err
	}
	e.shared = [2]*ViewTerms{x, y}
	est, err := e.estimate(false)
	if err != nil {
		return Result{}, err
	}
	return assemble(cfg, sigmaX, sigmaY, rows, skipped, est), nil
}
