package columns_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
)

var fields = []arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Float64},
	{Name: "b1", Type: arrow.PrimitiveTypes.Int32},
	{Name: "b2", Type: arrow.PrimitiveTypes.Int32},
	{Name: "emb", Type: arrow.FixedSizeListOf(8, arrow.PrimitiveTypes.Float32)},
	{Name: "ts", Type: arrow.FixedWidthTypes.Timestamp_ms},
	{Name: "dup", Type: arrow.PrimitiveTypes.Float64},
	{Name: "dup", Type: arrow.PrimitiveTypes.Float64},
	{Name: "vl", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
}

// Select resolves names, globs (in schema order), slices of a fixed-size
// list (bounds from the list's size), whole lists, integer partition keys
// and the time column into one structured result.
func TestSelect(t *testing.T) {
	parts := []dataset.Partition{{Key: "day", Value: "3", Int: true}, {Key: "region", Value: "eu"}}
	sel, err := columns.Select("f", fields, parts, columns.Spec{
		X: []string{"b*", "emb[2:5]", "day"}, Y: []string{"emb", "emb[6:]", "a"}, TimeColumn: "ts"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := sel.X.Labels(), []string{"b1", "b2", "emb[2:5]", "day"}; !slices.Equal(got, want) {
		t.Errorf("X %q, want %q", got, want)
	}
	if got, want := sel.Y.Labels(), []string{"emb", "emb[6:8]", "a"}; !slices.Equal(got, want) {
		t.Errorf("Y %q, want %q", got, want)
	}
	if w := sel.X.Width(); w != 1+1+3+1 {
		t.Errorf("X width %d, want 6", w)
	}
	if w := sel.Y.Width(); w != 8+2+1 {
		t.Errorf("Y width %d, want 11", w)
	}
	if c := sel.X[2]; c.Name != "emb" || c.Field != 3 || c.Lo != 2 || c.Hi != 5 || !c.Slice {
		t.Errorf("emb[2:5]: %+v", c)
	}
	if c := sel.X[3]; c.Field != -1 || c.Partition == nil || c.Partition.Value != "3" {
		t.Errorf("day: %+v", c)
	}
	if sel.Time == nil || sel.Time.Name != "ts" || sel.Time.Field != 4 {
		t.Errorf("time column %+v", sel.Time)
	}
	// Overlaps: a slice and the whole list share elements; two disjoint
	// slices do not; a column does not overlap itself.
	emb, s25, s68 := sel.Y[0], sel.X[2], sel.Y[1]
	if !emb.Overlaps(s25) || !s25.Overlaps(emb) || s25.Overlaps(s68) || emb.Overlaps(emb) || sel.X[0].Overlaps(sel.X[1]) {
		t.Errorf("Overlaps: emb/[2:5] %v, [2:5]/[6:8] %v, emb/emb %v", emb.Overlaps(s25), s25.Overlaps(s68), emb.Overlaps(emb))
	}
}

// Every bad selection is an ErrColumn error naming the input and what is
// wrong.
func TestSelectErrors(t *testing.T) {
	parts := []dataset.Partition{{Key: "region", Value: "eu"}, {Key: "a", Value: "1", Int: true}}
	csv := []arrow.Field{{Name: "x"}, {Name: "y"}}
	for _, tc := range []struct {
		fields []arrow.Field
		spec   columns.Spec
		want   string
	}{
		{fields, columns.Spec{}, "no columns selected"},
		{fields, columns.Spec{X: []string{"nope"}}, `no column "nope"`},
		{fields, columns.Spec{X: []string{"z*"}}, `"z*" matches no column`},
		{fields, columns.Spec{X: []string{"dup"}}, `2 columns are named "dup"`},
		{fields, columns.Spec{X: []string{"emb[4:12]"}}, "ends at element 12"},
		{fields, columns.Spec{X: []string{"emb[5:5]"}}, "selects no element"},
		{fields, columns.Spec{X: []string{"a[0:1]"}}, "needs a fixed-size list"},
		{fields, columns.Spec{X: []string{"vl[0:1]"}}, "variable-size list"},
		{fields, columns.Spec{X: []string{"region"}}, "not integers"},
		{fields, columns.Spec{X: []string{"a"}, Y: []string{"b1"}, TimeColumn: "when"}, `no column "when"`},
		{csv, columns.Spec{X: []string{"x[0:2]"}}, "is a CSV number"},
	} {
		_, err := columns.Select("f.parquet", tc.fields, parts[:1], tc.spec)
		if !errors.Is(err, columns.ErrColumn) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "f.parquet") {
			t.Errorf("%+v: error %v, want ErrColumn naming f.parquet with %q", tc.spec, err, tc.want)
		}
	}
	// A partition key that is also a column of the file.
	if _, err := columns.Select("f", fields, parts, columns.Spec{X: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "both in the file and a partition key") {
		t.Errorf("a column and a partition key: %v", err)
	}
}
