package decode

import (
	"testing"

	"github.com/dime-project/dime/dataset"
)

// planUnits cuts Parquet files with known row groups into ranges of at least
// minRows rows (a short tail joins the range before it), and leaves other
// inputs whole.
func TestPlanUnits(t *testing.T) {
	d := &dataset.Dataset{Inputs: []dataset.Input{
		{Path: "a", Format: dataset.Parquet, RowGroups: []int64{1500, 1500, 1500, 1500, 1500, 1000}},
		{Path: "b", Format: dataset.Parquet, RowGroups: []int64{100, 100}},
		{Path: "c", Format: dataset.CSV, Rows: -1},
		{Path: "d", Format: dataset.Parquet, RowGroups: []int64{5000, 5000}},
	}}
	got := planUnits(d, 2800)
	type u struct{ input, first, count int }
	want := []u{{0, 0, 2}, {0, 2, 4}, {1, -1, 0}, {2, -1, 0}, {3, 0, 1}, {3, 1, 1}}
	if len(got) != len(want) {
		t.Fatalf("%d units, want %d: %+v", len(got), len(want), got)
	}
	for i, g := range got {
		w := want[i]
		first, count := -1, 0
		if g.groups != nil {
			first, count = g.groups.first, g.groups.count
		}
		if g.input != w.input || first != w.first || count != w.count {
			t.Errorf("unit %d: input %d groups %d+%d, want %+v", i, g.input, first, count, w)
		}
		last := i == len(got)-1 || got[i+1].input != g.input
		if g.last != last {
			t.Errorf("unit %d: last %v", i, g.last)
		}
	}
}
