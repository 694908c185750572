package rank

import (
	"cmp"
	"math"
	"slices"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/stream"
)

// PairResult is the estimate of one pair: what dime score reports for it
// (stream.Result, the same estimator), its Benjamini–Hochberg q-value over
// the pairs, and its rank.
type PairResult struct {
	// X and Y are the pair's views (indices into Plan.Views).
	X, Y int
	stream.Result
	// QValue is the Benjamini–Hochberg adjusted p-value over the pairs with
	// a p-value (NaN without one): rejecting every pair with q ≤ α controls
	// the false discovery rate at α when the p-values are independent or
	// positively dependent.
	QValue float64
	// Rank is the pair's place by DiME, 1 for the largest; pairs without
	// a DiME (NaN) come last.
	Rank int
}

// Results returns the estimate of every pair, in the plan's order, with
// their q-values and ranks. It flushes the rows waiting for their shuffle
// scope; it needs at least 2 rows. Each pair costs the eigenproblems of
// one stream.Estimator Result (2D×2D; about 60 at K = 4 with the normalized
// score).
func (a *Accumulator) Results() ([]PairResult, error) {
	if err := a.Flush(); err != nil {
		return nil, err
	}
	if a.rows < 2 || !a.started {
		return nil, invalidf("%d rows, want at least 2", a.rows)
	}
	out := make([]PairResult, len(a.pairs))
	terms := a.newViewTerms()
	// The pairs of one Y view one after the other, so that the sums of its
	// parts that the products of marginals read are kept for one view at a
	// time (stream.ViewTerms.DropSums).
	order := make([]int, len(a.pairs))
	for i := range order {
		order[i] = i
	}
	yKey := func(i int) viewKey { return viewKey{1, a.pairs[i].y, a.pairs[i].cyMap} }
	slices.SortStableFunc(order, func(i, j int) int {
		ki, kj := yKey(i), yKey(j)
		return cmp.Or(cmp.Compare(ki.part, kj.part), cmp.Compare(ki.copy, kj.copy))
	})
	for n, i := range order {
		r, err := a.pairResult(i, terms)
		if err != nil {
			return nil, err
		}
		out[i] = PairResult{X: a.plan.Pairs[i][0], Y: a.plan.Pairs[i][1], Result: r}
		if v := terms.terms[yKey(i)]; v != nil && (n+1 == len(order) || yKey(order[n+1]) != yKey(i)) {
			v.DropSums()
		}
	}
	p := make([]float64, len(out))
	for i := range out {
		p[i] = out[i].PValue
	}
	q := QValues(p)
	for i := range out {
		out[i].QValue = q[i]
	}
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int { return compareDiME(out[i].DiME, out[j].DiME) })
	for r, i := range order {
		out[i].Rank = r + 1
	}
	return out, nil
}

// compareDiME orders larger DiME first and NaN last.
func compareDiME(a, b float64) int {
	switch an, bn := math.IsNaN(a), math.IsNaN(b); {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	}
	return cmp.Compare(b, a)
}

// viewKey names the terms of a view in one role (stream.ViewTerms): its
// side (0: X, 1: Y), part map and copy map.
type viewKey struct{ side, part, copy int }

// viewTerms holds the terms of the views that are a side of several pairs,
// computed once (by the first such pair) for all of them.
type viewTerms struct {
	uses  map[viewKey]int
	terms map[viewKey]*stream.ViewTerms
}

// newViewTerms counts the pairs that share each view's terms; with
// noShare (tests), none is shared.
func (a *Accumulator) newViewTerms() *viewTerms {
	t := &viewTerms{uses: map[viewKey]int{}, terms: map[viewKey]*stream.ViewTerms{}}
	if a.cfg.SkipNormalized || a.noShare {
		return t
	}
	for _, pp := range a.pairs {
		t.uses[viewKey{0, pp.x, pp.cxMap}]++
		t.uses[viewKey{1, pp.y, pp.cyMap}]++
	}
	return t
}

// pairResult estimates pair i from its groups: the shared part, copy and
// self accumulators read under the pair's descriptions, and the terms of a
// view that other pairs share computed once (bit for bit the same:
// TestSharedViewTermsAreExact).
func (a *Accumulator) pairResult(i int, terms *viewTerms) (stream.Result, error) {
	pp := &a.pairs[i]
	K := a.cfg.GroupCount()
	groups := make([]stream.GroupParts, K)
	rel := func(acc *covariance.Accumulator, part covariance.Part, k int) (*covariance.Accumulator, error) {
		return acc.Relabel(covariance.Description{Map: pp.spec, Part: part, Index: k})
	}
	relMean := func(m *covariance.Mean, part covariance.Part, k int) (*covariance.Mean, error) {
		return m.Relabel(covariance.Description{Map: pp.spec, Part: part, Index: k})
	}
	px, py := a.partOf[pp.x], a.partOf[pp.y]
	for k := range K {
		g := &groups[k]
		var err error
		if g.X, err = rel(a.partAcc[px][k], covariance.PartX, k); err != nil {
			return stream.Result{}, err
		}
		if g.Y, err = rel(a.partAcc[py][k], covariance.PartY, k); err != nil {
			return stream.Result{}, err
		}
		if g.MeanX, err = relMean(a.partMean[px][k], covariance.PartX, k); err != nil {
			return stream.Result{}, err
		}
		if g.MeanY, err = relMean(a.partMean[py][k], covariance.PartY, k); err != nil {
			return stream.Result{}, err
		}
		g.Joint, g.MeanJoint = pp.joint[k], pp.jointMean[k]
		if !a.cfg.SkipNormalized {
			if g.CopyX, err = rel(a.copyAcc[pp.copyX][k], covariance.PartCopyX, k); err != nil {
				return stream.Result{}, err
			}
			if g.CopyY, err = rel(a.copyAcc[pp.copyY][k], covariance.PartCopyY, k); err != nil {
				return stream.Result{}, err
			}
			if g.SelfX, err = rel(a.selfAcc[pp.selfX][k], covariance.PartSelfX, k); err != nil {
				return stream.Result{}, err
			}
			if g.SelfY, err = rel(a.selfAcc[pp.selfY][k], covariance.PartSelfY, k); err != nil {
				return stream.Result{}, err
			}
		}
	}
	cfg := a.cfg
	cfg.BandwidthY = cfg.BandwidthX
	cfg.XColumns, cfg.YColumns = pp.xColumns, pp.yColumns
	cfg.Scaling = stream.Scaling{}
	var shared [2]*stream.ViewTerms
	for side, key := range []viewKey{{0, pp.x, pp.cxMap}, {1, pp.y, pp.cyMap}} {
		if terms.uses[key] < 2 {
			continue
		}
		v := terms.terms[key]
		if v == nil {
			var err error
			if v, err = stream.GroupViewTerms(cfg, groups, side == 1); err != nil {
				return stream.Result{}, err
			}
			terms.terms[key] = v
		}
		shared[side] = v
	}
	return stream.EstimateGroupsWith(cfg, pp.sigmaX, pp.sigmaY, a.rows, a.skipped, groups, shared[0], shared[1])
}

// QValues returns the Benjamini–Hochberg adjusted p-values of p: with the
// m finite p-values sorted, p_(1) ≤ … ≤ p_(m), q_(i) = min over j ≥ i of
// min(1, m·p_(j)/j). A NaN p-value gets a NaN q-value and does not count in m.
func QValues(p []float64) []float64 {
	q := make([]float64, len(p))
	var idx []int
	for i, v := range p {
		if math.IsNaN(v) {
			q[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	slices.SortStableFunc(idx, func(i, j int) int { return cmp.Compare(p[i], p[j]) })
	m := float64(len(idx))
	run := 1.0
	for r := len(idx) - 1; r >= 0; r-- {
		i := idx[r]
		run = math.Min(run, m*p[i]/float64(r+1))
		q[i] = run
	}
	return q
}
