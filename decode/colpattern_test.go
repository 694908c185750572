package decode_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

func TestExpandColumns(t *testing.T) {
	names := []string{"id", "x0", "x1", "x2", "x10", "y0", "y1", "emb_0", "emb_1", "emb_2", "a*b", "w[1]", "Emb_9", "x-y"}
	for _, c := range []struct {
		sel  []string
		want []string
		err  string // a substring of the error, or "" for none
	}{
		{[]string{"x0", "y1"}, []string{"x0", "y1"}, ""},
		{[]string{"x*"}, []string{"x0", "x1", "x2", "x10", "x-y"}, ""},
		{[]string{"x?"}, []string{"x0", "x1", "x2"}, ""},
		{[]string{"x[0-9]"}, []string{"x0", "x1", "x2"}, ""},
		{[]string{"x[!0]"}, []string{"x1", "x2"}, ""},
		{[]string{"x[0-9]*"}, []string{"x0", "x1", "x2", "x10"}, ""},
		{[]string{"emb_*"}, []string{"emb_0", "emb_1", "emb_2"}, ""}, // case-sensitive: not Emb_9
		{[]string{"y*", "x1"}, []string{"y0", "y1", "x1"}, ""},       // the selectors' order
		{[]string{"x1", "x*"}, []string{"x1", "x0", "x1", "x2", "x10", "x-y"}, ""},
		{[]string{"a*b"}, []string{"a*b"}, ""},   // a name wins over the glob it looks like
		{[]string{"w[1]"}, []string{"w[1]"}, ""}, // likewise
		{[]string{"w\\[*"}, []string{"w[1]"}, ""},
		{[]string{`a\*b`}, []string{"a*b"}, ""},
		{[]string{"*"}, names, ""},
		{[]string{"emb_1[0:128]"}, []string{"emb_1[0:128]"}, ""},    // a slice of a column: kept for the reader
		{[]string{"x1[:2]", "x[1:]"}, []string{"x1[:2]", "x1"}, ""}, // x is no column: x[1:] is a glob
		{[]string{"q[0:2]"}, nil, `column pattern "q[0:2]" matches no column`},
		{[]string{"z*"}, nil, `column pattern "z*" matches no column`},
		{[]string{"x0", "q"}, nil, `no column "q"`},
		{[]string{"x[0"}, nil, `column pattern "x[0"`},
		{[]string{`x\`}, nil, `no column "x\\"`}, // no pattern character: a name
		{[]string{`x*\`}, nil, `column pattern "x*\\": ends with a lone \`},
	} {
		got, err := columns.Expand("t.parquet", names, c.sel)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.sel, err)
		case c.err != "" && (err == nil || !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "t.parquet")):
			t.Errorf("%q: error %v, want ErrColumn with %q", c.sel, err, c.err)
		case c.err == "" && !slices.Equal(got, c.want):
			t.Errorf("%q: %q, want %q", c.sel, got, c.want)
		}
	}
}

// TestColumnPatternsRead reads every format with globs in both views: the
// reader expands them against the schema (or the CSV header), reports the
// columns it picked, and yields their values.
func TestColumnPatternsRead(t *testing.T) {
	const n = 200
	tb := newTable(n, 3)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := tb.records(mem, 64)
	dir := t.TempDir()
	paths := []string{
		writeRecords(t, dir, "p.parquet", dataset.Parquet, tableSchema(), recs),
		writeRecords(t, dir, "p.arrow", dataset.IPCFile, tableSchema(), recs),
		writeBytes(t, dir, "p.csv", tb.csv()),
	}
	for _, r := range recs {
		r.Release()
	}
	for _, path := range paths {
		opts := decode.Options{Columns: columns.Spec{X: []string{"e??", "f[0-9]*"}, Y: []string{"u*"}}}
		wantX, wantY := []string{"e32", "e64", "f32", "f64"}, []string{"u64", "u8", "u16", "u32"}
		if strings.HasSuffix(path, ".csv") { // no list columns in CSV
			opts.Columns.X = []string{"i*"}
			wantX = []string{"i8", "i16", "i32", "i64"}
		}
		x, y, _, r, err := readAll(t, path, nil, opts)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sel := r.Columns()
		gx, gy := sel.X.Labels(), sel.Y.Labels()
		if !slices.Equal(gx, wantX) || !slices.Equal(gy, wantY) {
			t.Errorf("%s: columns %q %q, want %q %q", path, gx, gy, wantX, wantY)
		}
		if i, ok := sameBits(x, tb.expectView(wantX, seq(0, n))); !ok {
			t.Errorf("%s: X differs at %d", path, i)
		}
		if i, ok := sameBits(y, tb.expectView(wantY, seq(0, n))); !ok {
			t.Errorf("%s: Y differs at %d", path, i)
		}
		_, _, _, _, err = readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"emb_*"}, Y: []string{"u8"}}})
		if !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), `"emb_*" matches no column`) {
			t.Errorf("%s: pattern matching nothing: %v", path, err)
		}
	}
}

// TestListSlices reads slices name[lo:hi] of fixed-size list columns: the
// elements asked for, in order, beside whole columns and globs; and refuses
// a slice of a number, outside the list, empty, or of a CSV column, naming
// it.
func TestListSlices(t *testing.T) {
	const n = 150
	tb := newTable(n, 5)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := tb.records(mem, 64)
	dir := t.TempDir()
	paths := []string{
		writeRecords(t, dir, "s.parquet", dataset.Parquet, tableSchema(), recs),
		writeRecords(t, dir, "s.arrow", dataset.IPCFile, tableSchema(), recs),
	}
	for _, r := range recs {
		r.Release()
	}
	// expect returns the values of e32 elements lo to hi, and of e64's.
	slice := func(col string, lo, hi int) func(i int) []float64 {
		return func(i int) []float64 { return tb.expect(col, i)[lo:hi] }
	}
	for _, path := range paths {
		opts := decode.Options{Columns: columns.Spec{X: []string{"e32[1:3]", "f64", "e64[:1]"}, Y: []string{"e32[2:]", "e64[0:2]"}}}
		x, y, _, r, err := readAll(t, path, nil, opts)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if r.DimX() != 4 || r.DimY() != 3 {
			t.Fatalf("%s: widths %d, %d, want 4, 3", path, r.DimX(), r.DimY())
		}
		sel := r.Columns()
		gx, gy := sel.X.Labels(), sel.Y.Labels()
		if wx, wy := []string{"e32[1:3]", "f64", "e64[0:1]"}, []string{"e32[2:3]", "e64[0:2]"}; !slices.Equal(gx, wx) || !slices.Equal(gy, wy) {
			t.Errorf("%s: columns %q %q, want %q %q", path, gx, gy, wx, wy)
		}
		var wantX, wantY []float64
		for i := 0; i < n; i++ {
			wantX = append(append(append(wantX, slice("e32", 1, 3)(i)...), tb.expect("f64", i)...), slice("e64", 0, 1)(i)...)
			wantY = append(append(wantY, slice("e32", 2, 3)(i)...), tb.expect("e64", i)...)
		}
		if i, ok := sameBits(x, wantX); !ok {
			t.Errorf("%s: X differs at %d", path, i)
		}
		if i, ok := sameBits(y, wantY); !ok {
			t.Errorf("%s: Y differs at %d", path, i)
		}
		for _, c := range []struct{ sel, err string }{
			{"f64[0:1]", `column "f64" has type float64: a slice [0:1] needs a fixed-size list`},
			{"e32[1:4]", `column "e32", a fixed-size list of size 3: slice [1:4]: ends at element 4, past the list's 3`},
			{"e32[2:2]", `slice [2:2]: selects no element (2:2)`},
			{"e32[3:]", `slice [3:]: selects no element (3:3)`},
		} {
			_, _, _, _, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{c.sel}, Y: []string{"u8"}}})
			if !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: %s: %v, want ErrColumn with %q", path, c.sel, err, c.err)
			}
		}
	}
	csv := writeBytes(t, dir, "s.csv", tb.csv())
	_, _, _, _, err := readAll(t, csv, nil, decode.Options{Columns: columns.Spec{X: []string{"f64[0:1]"}, Y: []string{"u8"}}})
	if !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), `column "f64" is a CSV number: a slice [0:1] needs a fixed-size list`) {
		t.Errorf("CSV slice: %v", err)
	}
}

// TestListSliceValues: only the elements of a slice are checked, so an
// invalid value outside it neither stops the reading nor drops its row, and
// an error names the element's index in the whole list.
func TestListSliceValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	d := newDirty(true) // e: row 6 element 0 null, row 7 element 1 null, row 8 element 0 -Inf
	recs := d.records(mem, 5)
	path := writeRecords(t, dir, "d.parquet", dataset.Parquet, dirtySchema(), recs)
	for _, r := range recs {
		r.Release()
	}
	_, _, _, _, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"e[1:]"}}})
	var ve *decode.ValueError
	if !errors.As(err, &ve) || ve.Column != "e" || ve.Row != 7 || ve.Problem != "null in element 1" {
		t.Fatalf("e[1:]: %v, want row 7's null in element 1", err)
	}
	x, _, _, r, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"e[1:]"}}, Values: decode.Values{SkipInvalid: true}})
	if err != nil {
		t.Fatal(err)
	}
	var want []float64
	for i := 0; i < d.n; i++ {
		if i != 7 {
			want = append(want, d.e[2*i+1])
		}
	}
	if r.Skipped() != 1 {
		t.Errorf("skipped %d rows, want 1 (row 7)", r.Skipped())
	}
	if i, ok := sameBits(x, want); !ok {
		t.Errorf("values differ at %d", i)
	}
}
