package decode_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// table is test data of every supported column type, generated from a seed,
// with the values each column must yield. Columns (in schema order):
//
//	name utf8 (not numeric), i8, u64, f32, e32 fixed_size_list<float32, 3>,
//	i16, u8, f64, ts timestamp[ms, UTC], i32, u16, e64
//	fixed_size_list<float64, 2>, i64, u32, epoch int64 (seconds), tags
//	list<float64> (variable size)
type table struct {
	n     int
	name  []string
	i8    []int8
	i16   []int16
	i32   []int32
	i64   []int64
	u8    []uint8
	u16   []uint16
	u32   []uint32
	u64   []uint64
	f32   []float32
	f64   []float64
	e32   []float32 // n×3
	e64   []float64 // n×2
	ts    []int64   // milliseconds
	epoch []int64   // seconds
}

// The fixed-size list fields are nullable: the Parquet writer of Arrow Go
// v15 writes the values of a non-nullable fixed_size_list field as nulls
// (apache/arrow-go#584, fixed upstream after v15); the reader then rightly
// reports them as nulls.
func tableSchema() *arrow.Schema {
	return arrow.NewSchema([]arrow.Field{
		{Name: "name", Type: arrow.BinaryTypes.String},
		{Name: "i8", Type: arrow.PrimitiveTypes.Int8},
		{Name: "u64", Type: arrow.PrimitiveTypes.Uint64},
		{Name: "f32", Type: arrow.PrimitiveTypes.Float32},
		{Name: "e32", Type: arrow.FixedSizeListOf(3, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "i16", Type: arrow.PrimitiveTypes.Int16},
		{Name: "u8", Type: arrow.PrimitiveTypes.Uint8},
		{Name: "f64", Type: arrow.PrimitiveTypes.Float64},
		{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}},
		{Name: "i32", Type: arrow.PrimitiveTypes.Int32},
		{Name: "u16", Type: arrow.PrimitiveTypes.Uint16},
		{Name: "e64", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "i64", Type: arrow.PrimitiveTypes.Int64},
		{Name: "u32", Type: arrow.PrimitiveTypes.Uint32},
		{Name: "epoch", Type: arrow.PrimitiveTypes.Int64},
		{Name: "tags", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
	}, nil)
}

// newTable draws n rows. Floats are full-precision doubles of varied
// magnitude (and a few exact corner values); integers cover their ranges.
func newTable(n int, seed uint64) *table {
	r := rand.New(rand.NewPCG(seed, 7))
	t := &table{n: n}
	corners := []float64{0, math.Copysign(0, -1), 5e-324, math.MaxFloat64, -math.MaxFloat64, math.Pi, 1e-300}
	for i := 0; i < n; i++ {
		t.name = append(t.name, "row"+strconv.Itoa(i))
		t.i8 = append(t.i8, int8(r.Uint32()))
		t.i16 = append(t.i16, int16(r.Uint32()))
		t.i32 = append(t.i32, int32(r.Uint32()))
		t.i64 = append(t.i64, int64(r.Uint64()))
		t.u8 = append(t.u8, uint8(r.Uint32()))
		t.u16 = append(t.u16, uint16(r.Uint32()))
		t.u32 = append(t.u32, r.Uint32())
		t.u64 = append(t.u64, r.Uint64())
		t.f32 = append(t.f32, float32(r.NormFloat64()*1e3))
		f := r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
		if i < len(corners) {
			f = corners[i]
		}
		t.f64 = append(t.f64, f)
		t.e32 = append(t.e32, float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
		t.e64 = append(t.e64, r.NormFloat64(), r.NormFloat64()/3)
		t.ts = append(t.ts, 1_700_000_000_000+int64(i)*1500-int64(r.IntN(1000)))
		t.epoch = append(t.epoch, 1_600_000_000+int64(i))
	}
	return t
}

// expect returns the values column col must give in row i.
func (t *table) expect(col string, i int) []float64 {
	switch col {
	case "i8":
		return []float64{float64(t.i8[i])}
	case "i16":
		return []float64{float64(t.i16[i])}
	case "i32":
		return []float64{float64(t.i32[i])}
	case "i64", "epoch":
		if col == "epoch" {
			return []float64{float64(t.epoch[i])}
		}
		return []float64{float64(t.i64[i])}
	case "u8":
		return []float64{float64(t.u8[i])}
	case "u16":
		return []float64{float64(t.u16[i])}
	case "u32":
		return []float64{float64(t.u32[i])}
	case "u64":
		return []float64{float64(t.u64[i])}
	case "f32":
		return []float64{float64(t.f32[i])}
	case "f64":
		return []float64{t.f64[i]}
	case "e32":
		return []float64{float64(t.e32[3*i]), float64(t.e32[3*i+1]), float64(t.e32[3*i+2])}
	case "e64":
		return []float64{t.e64[2*i], t.e64[2*i+1]}
	}
	panic("no column " + col)
}

// expectView returns the row-major values of the columns cols for rows.
func (t *table) expectView(cols []string, rows []int) []float64 {
	var out []float64
	for _, i := range rows {
		for _, c := range cols {
			out = append(out, t.expect(c, i)...)
		}
	}
	return out
}

// records returns the table as record batches of at most batch rows.
func (t *table) records(mem memory.Allocator, batch int) []arrow.Record {
	var recs []arrow.Record
	for lo := 0; lo < t.n; lo += batch {
		recs = append(recs, t.record(mem, lo, min(lo+batch, t.n)))
	}
	return recs
}

func (t *table) record(mem memory.Allocator, lo, hi int) arrow.Record {
	b := array.NewRecordBuilder(mem, tableSchema())
	defer b.Release()
	for i := lo; i < hi; i++ {
		b.Field(0).(*array.StringBuilder).Append(t.name[i])
		b.Field(1).(*array.Int8Builder).Append(t.i8[i])
		b.Field(2).(*array.Uint64Builder).Append(t.u64[i])
		b.Field(3).(*array.Float32Builder).Append(t.f32[i])
		l := b.Field(4).(*array.FixedSizeListBuilder)
		l.Append(true)
		l.ValueBuilder().(*array.Float32Builder).AppendValues(t.e32[3*i:3*i+3], nil)
		b.Field(5).(*array.Int16Builder).Append(t.i16[i])
		b.Field(6).(*array.Uint8Builder).Append(t.u8[i])
		b.Field(7).(*array.Float64Builder).Append(t.f64[i])
		b.Field(8).(*array.TimestampBuilder).Append(arrow.Timestamp(t.ts[i]))
		b.Field(9).(*array.Int32Builder).Append(t.i32[i])
		b.Field(10).(*array.Uint16Builder).Append(t.u16[i])
		l = b.Field(11).(*array.FixedSizeListBuilder)
		l.Append(true)
		l.ValueBuilder().(*array.Float64Builder).AppendValues(t.e64[2*i:2*i+2], nil)
		b.Field(12).(*array.Int64Builder).Append(t.i64[i])
		b.Field(13).(*array.Uint32Builder).Append(t.u32[i])
		b.Field(14).(*array.Int64Builder).Append(t.epoch[i])
		tags := b.Field(15).(*array.ListBuilder)
		tags.Append(true)
		for k := 0; k < i%3; k++ {
			tags.ValueBuilder().(*array.Float64Builder).Append(float64(k))
		}
	}
	return b.NewRecord()
}

// csv returns the table's scalar columns as CSV text (lists and the string
// column cannot be CSV numbers; the name column is kept as text). Times are
// written as epoch milliseconds.
func (t *table) csv() []byte {
	var b bytes.Buffer
	b.WriteString("name,i8,u64,f32,i16,u8,f64,ts,i32,u16,i64,u32,epoch\n")
	for i := 0; i < t.n; i++ {
		fmt.Fprintf(&b, "%s,%d,%d,%s,%d,%d,%s,%d,%d,%d,%d,%d,%d\n", t.name[i], t.i8[i], t.u64[i],
			strconv.FormatFloat(float64(t.f32[i]), 'g', -1, 64), t.i16[i], t.u8[i],
			strconv.FormatFloat(t.f64[i], 'g', -1, 64), t.ts[i], t.i32[i], t.u16[i], t.i64[i], t.u32[i], t.epoch[i])
	}
	return b.Bytes()
}

// writeRecords writes recs (one Parquet row group or IPC batch each) to a
// new file of the given name and format in dir, and returns its path.
func writeRecords(t testing.TB, dir, name string, format dataset.Format, schema *arrow.Schema, recs []arrow.Record) string {
	return writeRecordsProps(t, dir, name, format, schema, recs, parquet.NewWriterProperties())
}

// writeRecordsProps is writeRecords with the Parquet writer's properties.
func writeRecordsProps(t testing.TB, dir, name string, format dataset.Format, schema *arrow.Schema, recs []arrow.Record, props *parquet.WriterProperties) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	switch format {
	case dataset.Parquet:
		w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case dataset.IPCFile:
		w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	case dataset.IPCStream:
		w := ipc.NewWriter(f, ipc.WithSchema(schema))
		for _, r := range recs {
			if err := w.Write(r); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("writeRecords: format %v", format)
	}
	return path
}

// writeBytes writes data to a new file of the given name in dir.
func writeBytes(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readAll reads the whole input and returns the concatenated blocks.
func readAll(t testing.TB, path string, stdin *bytes.Reader, opts decode.Options) (x, y []float64, times []int64, r *decode.Reader, err error) {
	t.Helper()
	var in interface{ Read([]byte) (int, error) }
	if stdin != nil {
		in = stdin
	}
	r, err = decode.Open(context.Background(), path, in, opts)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer r.Close()
	for r.Next() {
		if len(r.X()) != r.Rows()*r.DimX() || len(r.Y()) != r.Rows()*r.DimY() {
			t.Fatalf("block of %d rows has %d X and %d Y values for widths %d, %d", r.Rows(), len(r.X()), len(r.Y()), r.DimX(), r.DimY())
		}
		if opts.Columns.TimeColumn != "" && len(r.Times()) != r.Rows() {
			t.Fatalf("block of %d rows has %d times", r.Rows(), len(r.Times()))
		}
		x = append(x, r.X()...)
		y = append(y, r.Y()...)
		times = append(times, r.Times()...)
	}
	return x, y, times, r, r.Err()
}

// sameViews reports an error if x or y differ from wantX or wantY bit for
// bit.
func sameViews(t testing.TB, x, y, wantX, wantY []float64) {
	t.Helper()
	if i, ok := sameBits(x, wantX); !ok {
		t.Errorf("X differs at %d (%d values, want %d)", i, len(x), len(wantX))
	}
	if i, ok := sameBits(y, wantY); !ok {
		t.Errorf("Y differs at %d (%d values, want %d)", i, len(y), len(wantY))
	}
}

// sameBits reports the first index where got and want differ bit for bit
// (so -0 ≠ 0 and NaN = NaN of the same payload), or -1.
func sameBits(got, want []float64) (int, bool) {
	if len(got) != len(want) {
		return min(len(got), len(want)), false
	}
	for i := range got {
		if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
			return i, false
		}
	}
	return -1, true
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

func mustContain(t testing.TB, msg string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(msg, p) {
			t.Errorf("error %q does not contain %q", msg, p)
		}
	}
	if strings.ContainsAny(msg, "\r\n") {
		t.Errorf("error %q is not one line", msg)
	}
}
