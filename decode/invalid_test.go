package decode_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// dirty is data with invalid values at known rows:
//
//	row 2: a NaN          row 7: e element 1 null
//	row 3: b +Inf         row 8: e element 0 -Inf
//	row 5: c null         row 9: t null
//	row 6: e null list    row 11: a null and b NaN
type dirty struct {
	n     int
	a     []float64
	aNull []bool
	b     []float32
	c     []int32
	cNull []bool
	e     []float64 // n×2
	eNull []bool    // lists
	eElem []bool    // elements, n×2
	t     []int64   // seconds
	tNull []bool
}

func newDirty(parquetSafe bool) *dirty {
	const n = 13
	d := &dirty{n: n, aNull: make([]bool, n), cNull: make([]bool, n), eNull: make([]bool, n), eElem: make([]bool, 2*n), tNull: make([]bool, n)}
	for i := 0; i < n; i++ {
		d.a = append(d.a, float64(i)+0.25)
		d.b = append(d.b, float32(i)*2)
		d.c = append(d.c, int32(-i))
		d.e = append(d.e, float64(i)/3, -float64(i)/7)
		d.t = append(d.t, 1_700_000_000+int64(i))
	}
	d.a[2] = math.NaN()
	d.b[3] = float32(math.Inf(1))
	d.cNull[5] = true
	if parquetSafe {
		d.eElem[2*6] = true
	} else {
		d.eNull[6] = true
	}
	d.eElem[2*7+1] = true
	d.e[2*8] = math.Inf(-1)
	d.tNull[9] = true
	d.aNull[11] = true
	d.b[11] = float32(math.NaN())
	return d
}

func dirtySchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "b", Type: arrow.PrimitiveTypes.Float32, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
		{Name: "e", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "t", Type: &arrow.TimestampType{Unit: arrow.Second}, Nullable: true},
	}, nil)
}

func (d *dirty) record(mem memory.Allocator, lo, hi int) arrow.Record {
	b := array.NewRecordBuilder(mem, dirtySchema())
	defer b.Release()
	for i := lo; i < hi; i++ {
		if d.aNull[i] {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Float64Builder).Append(d.a[i])
		}
		b.Field(1).(*array.Float32Builder).Append(d.b[i])
		if d.cNull[i] {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append(d.c[i])
		}
		l := b.Field(3).(*array.FixedSizeListBuilder)
		if d.eNull[i] {
			l.AppendNull()
		} else {
			l.Append(true)
			l.ValueBuilder().(*array.Float64Builder).AppendValues(d.e[2*i:2*i+2], []bool{!d.eElem[2*i], !d.eElem[2*i+1]})
		}
		if d.tNull[i] {
			b.Field(4).AppendNull()
		} else {
			b.Field(4).(*array.TimestampBuilder).Append(arrow.Timestamp(d.t[i]))
		}
	}
	return b.NewRecord()
}

func (d *dirty) records(mem memory.Allocator, batch int) []arrow.Record {
	var recs []arrow.Record
	for lo := 0; lo < d.n; lo += batch {
		recs = append(recs, d.record(mem, lo, min(lo+batch, d.n)))
	}
	return recs
}

// csv writes columns a, b, c and t, with nulls as the given texts in turn.
func (d *dirty) csv(nulls ...string) []byte {
	var s strings.Builder
	s.WriteString("t,c,b,a\n")
	k := 0
	null := func() string { k++; return nulls[(k-1)%len(nulls)] }
	for i := 0; i < d.n; i++ {
		t, c, a := strconv.FormatInt(d.t[i], 10), strconv.Itoa(int(d.c[i])), strconv.FormatFloat(d.a[i], 'g', -1, 64)
		if d.tNull[i] {
			t = null()
		}
		if d.cNull[i] {
			c = null()
		}
		if d.aNull[i] {
			a = null()
		}
		fmt.Fprintf(&s, "%s,%s,%s,%s\n", t, c, strconv.FormatFloat(float64(d.b[i]), 'g', -1, 64), a)
	}
	return []byte(s.String())
}

// valid reports whether row i is valid in the given columns.
func (d *dirty) valid(i int, cols []string) bool {
	for _, c := range cols {
		switch c {
		case "a":
			if d.aNull[i] || math.IsNaN(d.a[i]) || math.IsInf(d.a[i], 0) {
				return false
			}
		case "b":
			if f := float64(d.b[i]); math.IsNaN(f) || math.IsInf(f, 0) {
				return false
			}
		case "c":
			if d.cNull[i] {
				return false
			}
		case "e":
			if d.eNull[i] || d.eElem[2*i] || d.eElem[2*i+1] || math.IsInf(d.e[2*i], 0) {
				return false
			}
		case "t":
			if d.tNull[i] {
				return false
			}
		}
	}
	return true
}

func (d *dirty) values(i int, cols []string) []float64 {
	var out []float64
	for _, c := range cols {
		switch c {
		case "a":
			out = append(out, d.a[i])
		case "b":
			out = append(out, float64(d.b[i]))
		case "c":
			out = append(out, float64(d.c[i]))
		case "e":
			out = append(out, d.e[2*i], d.e[2*i+1])
		}
	}
	return out
}

var invalidCases = []struct {
	x, y    []string
	time    string
	col     string
	row     int64
	problem string
	csv     bool // the case applies to CSV (no list column)
}{
	{x: []string{"a"}, y: []string{"c"}, col: "a", row: 2, problem: "NaN", csv: true},
	{x: []string{"c"}, y: []string{"b"}, col: "b", row: 3, problem: "+Inf", csv: true},
	{x: []string{"c"}, y: []string{"c"}, col: "c", row: 5, problem: "null", csv: true},
	{x: []string{"e"}, y: []string{"c"}, col: "c", row: 5, problem: "null", csv: false}, // c at 5 before e at 6
	{x: []string{"e"}, col: "e", row: 6, problem: "null"},                               // null list, or element for Parquet
	{y: []string{"e"}, time: "t", col: "e", row: 6, problem: "null"},
	{x: []string{"c"}, time: "t", col: "c", row: 5, problem: "null", csv: true},
	{y: []string{"c"}, time: "t", col: "c", row: 5, problem: "null", csv: true},
}

// Invalid values in X, Y, lists and times, in every format: by default the
// first one (lowest row, then X before Y before time) stops the reading with
// its file, column and row; with SkipInvalid its row is dropped from both
// views and counted, and the other rows come through exactly. The same with
// Prefetch.
func TestInvalidValues(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	data := map[string]*dirty{}
	write := func(name string, format dataset.Format, d *dirty) {
		recs := d.records(mem, 5) // batches of rows 0-4, 5-9, 10-12
		defer func() {
			for _, r := range recs {
				r.Release()
			}
		}()
		data[writeRecords(t, dir, name, format, dirtySchema(), recs)] = d
	}
	d, pd := newDirty(false), newDirty(true)
	write("d.parquet", dataset.Parquet, pd)
	write("d.arrow", dataset.IPCFile, d)
	write("d.arrows", dataset.IPCStream, d)
	data[writeBytes(t, dir, "d.csv", d.csv("", "NA", "null"))] = d
	// Extra cases where the time is the first invalid value.
	cases := append(invalidCases[:len(invalidCases):len(invalidCases)],
		struct {
			x, y    []string
			time    string
			col     string
			row     int64
			problem string
			csv     bool
		}{x: []string{"a"}, y: []string{"b"}, time: "t", col: "a", row: 2, problem: "NaN", csv: true},
	)
	for path, d := range data {
		for k, tc := range cases {
			if strings.HasSuffix(path, ".csv") && !tc.csv {
				continue
			}
			for _, prefetch := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%d/prefetch=%v", filepath.Ext(path), k, prefetch), func(t *testing.T) {
					opts := decode.Options{Columns: columns.Spec{X: tc.x, Y: tc.y, TimeColumn: tc.time}, BatchSize: 4, Allocator: mem, Prefetch: prefetch}
					_, _, _, _, err := readAll(t, path, nil, opts)
					var ve *decode.ValueError
					if !errors.As(err, &ve) || !errors.Is(err, decode.ErrInvalidValue) {
						t.Fatalf("error %v, want a *ValueError", err)
					}
					if ve.Column != tc.col || ve.Row != tc.row || !strings.HasPrefix(ve.Problem, tc.problem) {
						t.Errorf("column %q row %d problem %q, want %q, %d, %q", ve.Column, ve.Row, ve.Problem, tc.col, tc.row, tc.problem)
					}
					mustContain(t, err.Error(), path, fmt.Sprintf("column %q", tc.col), fmt.Sprintf("row %d", tc.row))

					opts.Values.SkipInvalid = true
					x, y, times, r, err := readAll(t, path, nil, opts)
					if err != nil {
						t.Fatal(err)
					}
					all := append(append(append([]string{}, tc.x...), tc.y...), tc.time)
					var wantX, wantY []float64
					var wantT []int64
					for i := 0; i < d.n; i++ {
						if d.valid(i, all) {
							wantX = append(wantX, d.values(i, tc.x)...)
							wantY = append(wantY, d.values(i, tc.y)...)
							wantT = append(wantT, d.t[i]*1e9)
						}
					}
					if i, ok := sameBits(x, wantX); !ok {
						t.Errorf("X differs at %d: %v, want %v", i, x, wantX)
					}
					if i, ok := sameBits(y, wantY); !ok {
						t.Errorf("Y differs at %d: %v, want %v", i, y, wantY)
					}
					if tc.time != "" && fmt.Sprint(times) != fmt.Sprint(wantT) {
						t.Errorf("times %v, want %v", times, wantT)
					}
					kept := int64(len(wantT))
					if r.Skipped() != int64(d.n)-kept || r.RowsRead() != int64(d.n) {
						t.Errorf("Skipped %d, RowsRead %d, want %d, %d", r.Skipped(), r.RowsRead(), int64(d.n)-kept, d.n)
					}
				})
			}
		}
	}
}

// Extracting a slice of a record (arrays with an offset, bitmaps not
// starting at a byte) gives the rows of the whole record.
func TestExtractSlice(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	d := newDirty(false)
	rec := d.record(mem, 0, d.n)
	defer rec.Release()
	opts := decode.Options{Columns: columns.Spec{X: []string{"e", "b"}, Y: []string{"c", "a"}, TimeColumn: "t"}, Values: decode.Values{SkipInvalid: true}}
	for lo := 0; lo < d.n; lo++ {
		for hi := lo; hi <= d.n; hi++ {
			ex, err := decode.NewExtractor("mem", rec.Schema(), opts)
			if err != nil {
				t.Fatal(err)
			}
			slice := rec.NewSlice(int64(lo), int64(hi))
			var blk decode.Block
			err = ex.Extract(&blk, slice)
			slice.Release()
			if err != nil {
				t.Fatal(err)
			}
			var wantX, wantY []float64
			var wantT []int64
			for i := lo; i < hi; i++ {
				if d.valid(i, []string{"a", "b", "c", "e", "t"}) {
					wantX = append(wantX, d.values(i, opts.Columns.X)...)
					wantY = append(wantY, d.values(i, opts.Columns.Y)...)
					wantT = append(wantT, d.t[i]*1e9)
				}
			}
			_, okX := sameBits(blk.X, wantX)
			_, okY := sameBits(blk.Y, wantY)
			if !okX || !okY || fmt.Sprint(blk.Times) != fmt.Sprint(wantT) || blk.Rows != len(wantT) {
				t.Fatalf("rows %d to %d: got %d rows X %v Y %v T %v, want X %v Y %v T %v", lo, hi, blk.Rows, blk.X, blk.Y, blk.Times, wantX, wantY, wantT)
			}
			if ex.RowsRead() != int64(hi-lo) || ex.Skipped() != int64(hi-lo-len(wantT)) {
				t.Fatalf("rows %d to %d: RowsRead %d Skipped %d", lo, hi, ex.RowsRead(), ex.Skipped())
			}
		}
	}
}

// Times out of the range of int64 nanoseconds are invalid values.
func TestTimeOutOfRange(t *testing.T) {
	sc := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "t", Type: arrow.PrimitiveTypes.Uint64}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	b.Field(0).(*array.Float64Builder).AppendValues([]float64{1, 2, 3, 4}, nil)
	b.Field(1).(*array.Uint64Builder).AppendValues([]uint64{1, 9_300_000_000, 1 << 63, 2}, nil)
	rec := b.NewRecord()
	defer rec.Release()
	for _, tc := range []struct {
		unit arrow.TimeUnit
		want string
		rows int
	}{
		{arrow.Second, "time 9300000000 seconds is out of range", 2},
		{arrow.Nanosecond, "time 9223372036854775808 nanoseconds is out of range", 3},
	} {
		ex, err := decode.NewExtractor("mem", sc, decode.Options{Columns: columns.Spec{X: []string{"x"}, TimeColumn: "t", TimeUnit: tc.unit}})
		if err != nil {
			t.Fatal(err)
		}
		var blk decode.Block
		err = ex.Extract(&blk, rec)
		if err == nil || !strings.Contains(err.Error(), tc.want) || blk.Rows != 0 {
			t.Errorf("%v: error %v, %d rows; want %q and no rows", tc.unit, err, blk.Rows, tc.want)
		}
		ex, _ = decode.NewExtractor("mem", sc, decode.Options{Columns: columns.Spec{X: []string{"x"}, TimeColumn: "t", TimeUnit: tc.unit}, Values: decode.Values{SkipInvalid: true}})
		if err := ex.Extract(&blk, rec); err != nil || blk.Rows != tc.rows {
			t.Errorf("%v, SkipInvalid: error %v, %d rows, want %d", tc.unit, err, blk.Rows, tc.rows)
		}
	}
}

// The problem of each kind of invalid list value, in rows counted from the
// first record the Extractor saw.
func TestExtractListProblems(t *testing.T) {
	d := newDirty(false)
	rec := d.record(memory.DefaultAllocator, 0, d.n)
	defer rec.Release()
	for _, tc := range []struct {
		lo   int64
		want string
	}{
		{6, `column "e", row 0: null list`},
		{7, `column "e", row 0: null in element 1`},
		{8, `column "e", row 0: -Inf in element 0`},
	} {
		ex, err := decode.NewExtractor("mem", rec.Schema(), decode.Options{Columns: columns.Spec{Y: []string{"e"}}})
		if err != nil {
			t.Fatal(err)
		}
		slice := rec.NewSlice(tc.lo, int64(d.n))
		var blk decode.Block
		err = ex.Extract(&blk, slice)
		slice.Release()
		if err == nil || err.Error() != "dimeio: mem: "+tc.want {
			t.Errorf("from row %d: error %v, want %q", tc.lo, err, tc.want)
		}
	}
}
