package covariance

import (
	"errors"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/rff"
)

// TestGroupsWithoutSums checks that the functions that read groups of
// accumulators without forming their sum (SumGroupsTo,
// ProductOfMarginalsGroups, SelfProductOfMarginalsGroups,
// IndependenceGroups) give what the same computations give on
// SumGroups, bit for bit: they add the groups in the same order.
func TestGroupsWithoutSums(t *testing.T) {
	const K, n = 3, 40
	spec := testMap
	pair, err := rff.NewPair(spec)
	if err != nil {
		t.Fatal(err)
	}
	copyX, err := rff.New(spec.CopyX())
	if err != nil {
		t.Fatal(err)
	}
	var xs, ys, cxs []*Accumulator
	var mxs, mys, mxys []*Mean
	for k := range K {
		x, y := block(n, spec.DimX, uint64(k)), block(n, spec.DimY, uint64(k+100))
		ax, ay, mx, my, mxy := accumulateTest(t, pair, x, y, n)
		ax.desc.Index, ay.desc.Index, mx.desc.Index, my.desc.Index, mxy.desc.Index = k, k, k, k, k
		pc, _ := copyX.Transform(nil, x, n)
		cx := mustNew(t, Description{Map: spec, Part: PartCopyX, Index: k})
		cx.Add(pc, n)
		xs, ys, cxs = append(xs, ax), append(ys, ay), append(cxs, cx)
		mxs, mys, mxys = append(mxs, mx), append(mys, my), append(mxys, mxy)
	}
	sum := func(accs []*Accumulator) *Accumulator {
		s, err := SumGroups(accs...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	sx, sy, scx := sum(xs), sum(ys), sum(cxs)
	same := func(what string, got, want *mat.SymDense) {
		t.Helper()
		p := want.SymmetricDim()
		for i := range p {
			for j := i; j < p; j++ {
				if got.At(i, j) != want.At(i, j) {
					t.Fatalf("%s (%d, %d) = %v, want %v", what, i, j, got.At(i, j), want.At(i, j))
				}
			}
		}
	}

	got, w, err := SumGroupsTo(nil, xs...)
	if err != nil || w != sx.Weight() {
		t.Fatalf("SumGroupsTo: weight %v, err %v; want %v", w, err, sx.Weight())
	}
	same("SumGroupsTo", got, sx.Sum())

	want, err := ProductOfMarginals(nil, sx, sy)
	if err != nil {
		t.Fatal(err)
	}
	got, err = ProductOfMarginalsGroups(nil, xs, ys)
	if err != nil {
		t.Fatal(err)
	}
	same("ProductOfMarginalsGroups", got, want)

	want, err = SelfProductOfMarginals(nil, sx, scx)
	if err != nil {
		t.Fatal(err)
	}
	got, err = SelfProductOfMarginalsGroups(nil, xs, cxs)
	if err != nil {
		t.Fatal(err)
	}
	same("SelfProductOfMarginalsGroups", got, want)

	smx, _ := SumMeanGroups(mxs...)
	smy, _ := SumMeanGroups(mys...)
	smxy, _ := SumMeanGroups(mxys...)
	wantTest, err := Independence(sx, sy, smx, smy, smxy)
	if err != nil {
		t.Fatal(err)
	}
	gotTest, err := IndependenceGroups(xs, ys, smx, smy, smxy)
	if err != nil {
		t.Fatal(err)
	}
	if gotTest != wantTest || math.IsNaN(gotTest.PValue) {
		t.Errorf("IndependenceGroups = %+v, want %+v", gotTest, wantTest)
	}

	// Mismatched groups are refused.
	if _, err := ProductOfMarginalsGroups(nil, append(xs[:1:1], ys[0]), ys); !errors.Is(err, ErrIncompatible) {
		t.Errorf("product of mixed parts: %v, want ErrIncompatible", err)
	}
	if _, _, err := SumGroupsTo(nil, xs[0], ys[0]); !errors.Is(err, ErrIncompatible) {
		t.Errorf("SumGroupsTo of mixed parts: %v, want ErrIncompatible", err)
	}
	if _, err := IndependenceGroups(nil, ys, smx, smy, smxy); !errors.Is(err, ErrInvalid) {
		t.Errorf("IndependenceGroups without X: %v, want ErrInvalid", err)
	}
}
