package io_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	dimeio "github.com/dime-project/dime/io"
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
		{[]string{"z*"}, nil, `column pattern "z*" matches no column`},
		{[]string{"x0", "q"}, nil, `no column "q"`},
		{[]string{"x[0"}, nil, `column pattern "x[0"`},
		{[]string{`x\`}, nil, `no column "x\\"`}, // no pattern character: a name
		{[]string{`x*\`}, nil, `column pattern "x*\\": ends with a lone \`},
	} {
		got, err := dimeio.ExpandColumns("t.parquet", names, c.sel)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.sel, err)
		case c.err != "" && (err == nil || !errors.Is(err, dimeio.ErrColumn) || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "t.parquet")):
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
		writeRecords(t, dir, "p.parquet", dimeio.Parquet, tableSchema(), recs),
		writeRecords(t, dir, "p.arrow", dimeio.IPCFile, tableSchema(), recs),
		writeBytes(t, dir, "p.csv", tb.csv()),
	}
	for _, r := range recs {
		r.Release()
	}
	for _, path := range paths {
		opts := dimeio.Options{X: []string{"e??", "f[0-9]*"}, Y: []string{"u*"}}
		wantX, wantY := []string{"e32", "e64", "f32", "f64"}, []string{"u64", "u8", "u16", "u32"}
		if strings.HasSuffix(path, ".csv") { // no list columns in CSV
			opts.X = []string{"i*"}
			wantX = []string{"i8", "i16", "i32", "i64"}
		}
		x, y, _, r, err := readAll(t, path, nil, opts)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		gx, gy := r.Columns()
		if !slices.Equal(gx, wantX) || !slices.Equal(gy, wantY) {
			t.Errorf("%s: columns %q %q, want %q %q", path, gx, gy, wantX, wantY)
		}
		if i, ok := sameBits(x, tb.expectView(wantX, seq(0, n))); !ok {
			t.Errorf("%s: X differs at %d", path, i)
		}
		if i, ok := sameBits(y, tb.expectView(wantY, seq(0, n))); !ok {
			t.Errorf("%s: Y differs at %d", path, i)
		}
		_, _, _, _, err = readAll(t, path, nil, dimeio.Options{X: []string{"emb_*"}, Y: []string{"u8"}})
		if !errors.Is(err, dimeio.ErrColumn) || !strings.Contains(err.Error(), `"emb_*" matches no column`) {
			t.Errorf("%s: pattern matching nothing: %v", path, err)
		}
	}
}
