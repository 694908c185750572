package decode_test

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
)

// Every column type, read from the three Arrow formats: columns out of schema
// order, in both views, across record batches and Parquet row groups that do
// not line up with the read batches; values must come back bit for bit.
func TestReadAllTypes(t *testing.T) {
	const n = 1000
	tb := newTable(n, 1)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	recs := tb.records(mem, 300)
	dir := t.TempDir()
	paths := map[dataset.Format]string{
		dataset.Parquet:   writeRecords(t, dir, "all.parquet", dataset.Parquet, tableSchema(), recs),
		dataset.IPCFile:   writeRecords(t, dir, "all.arrow", dataset.IPCFile, tableSchema(), recs),
		dataset.IPCStream: writeRecords(t, dir, "all.arrows", dataset.IPCStream, tableSchema(), recs),
	}
	for _, r := range recs {
		r.Release()
	}
	xCols := []string{"e64", "u16", "f32", "i8", "u64"}
	yCols := []string{"i64", "e32", "f64", "i32", "u8", "i16", "u32", "f32"}
	wantX, wantY := tb.expectView(xCols, seq(0, n)), tb.expectView(yCols, seq(0, n))
	for _, format := range []dataset.Format{dataset.Parquet, dataset.IPCFile, dataset.IPCStream} {
		for _, tc := range []struct {
			timeCol string
			unit    arrow.TimeUnit
			times   func(i int) int64
		}{
			{"ts", arrow.Second, func(i int) int64 { return tb.ts[i] * 1e6 }}, // unit of the timestamp type wins
			{"epoch", arrow.Second, func(i int) int64 { return tb.epoch[i] * 1e9 }},
			{"epoch", arrow.Microsecond, func(i int) int64 { return tb.epoch[i] * 1e3 }},
		} {
			t.Run(fmt.Sprintf("%v/%s/%v", format, tc.timeCol, tc.unit), func(t *testing.T) {
				opts := decode.Options{Columns: columns.Spec{X: xCols, Y: yCols, TimeColumn: tc.timeCol, TimeUnit: tc.unit}, BatchSize: 128, Allocator: mem}
				x, y, times, r, err := readAll(t, paths[format], nil, opts)
				if err != nil {
					t.Fatal(err)
				}
				if r.DimX() != 2+1+1+1+1 || r.DimY() != 1+3+1+1+1+1+1+1 {
					t.Errorf("widths %d, %d, want 6, 10", r.DimX(), r.DimY())
				}
				sameViews(t, x, y, wantX, wantY)
				for i := 0; i < n; i++ {
					if i >= len(times) || times[i] != tc.times(i) {
						t.Fatalf("time %d: got %v, want %d", i, times[i:min(i+1, len(times))], tc.times(i))
					}
				}
				if r.RowsRead() != n || r.Skipped() != 0 {
					t.Errorf("RowsRead %d, Skipped %d, want %d, 0", r.RowsRead(), r.Skipped(), n)
				}
				wantTotal := int64(-1)
				if format == dataset.Parquet {
					wantTotal = n
				}
				if r.TotalRows() != wantTotal {
					t.Errorf("TotalRows %d, want %d", r.TotalRows(), wantTotal)
				}
			})
		}
	}
}

// CSV: integer and float columns as text, read exactly; times as epoch
// milliseconds; header only and a BOM.
func TestReadCSV(t *testing.T) {
	const n = 700
	tb := newTable(n, 2)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	text := tb.csv()
	plain := writeBytes(t, dir, "t.csv", text)
	bom := writeBytes(t, dir, "bom.csv", append([]byte("\xEF\xBB\xBF"), text...))
	crlf := writeBytes(t, dir, "crlf.csv", bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n")))
	tsv := writeBytes(t, dir, "t.tsv", bytes.ReplaceAll(text, []byte(","), []byte("\t")))
	xCols := []string{"f64", "u16", "f32", "i8"}
	yCols := []string{"i64", "u64", "i32", "f64"}
	wantX, wantY := tb.expectView(xCols, seq(0, n)), tb.expectView(yCols, seq(0, n))
	for _, tc := range []struct {
		name, path string
		opts       decode.Options
	}{
		{"plain", plain, decode.Options{}},
		{"one batch", plain, decode.Options{BatchSize: 10000}},
		{"bom", bom, decode.Options{}},
		{"crlf", crlf, decode.Options{}},
		{"tsv", tsv, decode.Options{Files: dataset.Options{Format: dataset.CSV}, Comma: '\t'}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Columns.X, opts.Columns.Y, opts.Columns.TimeColumn, opts.Columns.TimeUnit, opts.Allocator = xCols, yCols, "ts", arrow.Millisecond, mem
			if opts.BatchSize == 0 {
				opts.BatchSize = 64
			}
			x, y, times, r, err := readAll(t, tc.path, nil, opts)
			if err != nil {
				t.Fatal(err)
			}
			sameViews(t, x, y, wantX, wantY)
			for i := range tb.ts {
				if i >= len(times) || times[i] != tb.ts[i]*1e6 {
					t.Fatalf("time %d: got %v, want %d", i, times[i:min(i+1, len(times))], tb.ts[i]*1e6)
				}
			}
			if r.RowsRead() != n || r.TotalRows() != -1 {
				t.Errorf("RowsRead %d, TotalRows %d, want %d, -1", r.RowsRead(), r.TotalRows(), n)
			}
		})
	}
}

// CSV times as dates and times (UTC unless a zone is given), and numbers
// with spaces around them.
func TestReadCSVTimes(t *testing.T) {
	text := "t,x\n" +
		"2024-03-01T12:00:00Z, 1.5\n" +
		"2024-03-01 12:00:01.25,2\n" +
		"2024-03-01T14:00:02+02:00,3 \n" +
		"1709294403,4\n"
	path := writeBytes(t, t.TempDir(), "times.csv", []byte(text))
	x, _, times, _, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"x"}, TimeColumn: "t"}})
	if err != nil {
		t.Fatal(err)
	}
	base := int64(1709294400) * 1e9 // 2024-03-01T12:00:00Z
	want := []int64{base, base + 1.25e9, base + 2e9, base + 3e9}
	if fmt.Sprint(times) != fmt.Sprint(want) || fmt.Sprint(x) != "[1.5 2 3 4]" {
		t.Errorf("times %v x %v, want %v [1.5 2 3 4]", times, x, want)
	}
}

// testMatrix returns rows×d values drawn from seed, with exact corner values
// (signed zeros, the smallest subnormal, the largest double) in the first
// rows.
func testMatrix(rows, d int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 11))
	v := make([]float64, rows*d)
	for i := range v {
		v[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(600)-300))
	}
	corners := []float64{0, math.Copysign(0, -1), 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 1.0 / 3, 0.1}
	copy(v, corners)
	return v
}

// columns picks the columns cols of a rows×d row-major matrix.
func pickColumns(m []float64, d int, cols []int) []float64 {
	var out []float64
	for i := 0; i < len(m)/d; i++ {
		for _, c := range cols {
			out = append(out, m[i*d+c])
		}
	}
	return out
}

// TableWriter round trip in every format: written in blocks of varied sizes,
// read back with columns out of order, bit for bit.
func TestTableWriterRoundTrip(t *testing.T) {
	const rows, d = 1000, 5
	m := testMatrix(rows, d, 3)
	names := tablewriter.ColumnNames("c", d)
	xIdx, yIdx := []int{3, 0}, []int{4, 1, 2}
	opts := decode.Options{Columns: columns.Spec{X: []string{"c3", "c0"}, Y: []string{"c4", "c1", "c2"}}, BatchSize: 100}
	wantX, wantY := pickColumns(m, d, xIdx), pickColumns(m, d, yIdx)
	dir := t.TempDir()
	for _, ext := range []string{".parquet", ".pq", ".arrow", ".feather", ".ipc", ".arrows", ".csv"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(dir, "m"+ext)
			w, err := tablewriter.Create(path, dataset.Auto, names, tablewriter.Options{BatchRows: 128, RowGroupRows: 128, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			for lo, k := 0, 1; lo < rows; lo, k = lo+k, k*3 { // blocks of 1, 3, 9, … rows
				hi := min(lo+k, rows)
				if err := w.Write(m[lo*d:hi*d], hi-lo); err != nil {
					t.Fatal(err)
				}
			}
			if w.Rows() != rows {
				t.Errorf("Rows %d, want %d", w.Rows(), rows)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			o := opts
			o.Allocator = mem
			x, y, _, _, err := readAll(t, path, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			sameViews(t, x, y, wantX, wantY)
		})
	}
}

// TableWriter to a stream (stdout, a pipe) and back through stdin, in the two
// formats stdin can carry.
func TestTableWriterStdin(t *testing.T) {
	const rows, d = 300, 3
	m := testMatrix(rows, d, 4)
	for _, format := range []dataset.Format{dataset.IPCStream, dataset.CSV} {
		t.Run(format.String(), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := tablewriter.New(&buf, format, []string{"a", "b", "c"}, tablewriter.Options{BatchRows: 64})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(m, rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			opts := decode.Options{Columns: columns.Spec{X: []string{"c", "a"}, Y: []string{"b"}}}
			if format == dataset.CSV {
				opts.Files.Format = dataset.CSV
			}
			x, y, _, _, err := readAll(t, "-", bytes.NewReader(buf.Bytes()), opts)
			if err != nil {
				t.Fatal(err)
			}
			if i, ok := sameBits(x, pickColumns(m, d, []int{2, 0})); !ok {
				t.Errorf("X differs at %d", i)
			}
			if i, ok := sameBits(y, pickColumns(m, d, []int{1})); !ok {
				t.Errorf("Y differs at %d", i)
			}
		})
	}
}

// A file with a schema and no rows reads as zero rows without an error.
func TestZeroRows(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{".parquet", ".arrow", ".arrows", ".csv"} {
		t.Run(ext, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(dir, "empty"+ext)
			w, err := tablewriter.Create(path, dataset.Auto, []string{"a", "b"}, tablewriter.Options{Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			x, y, _, r, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if len(x) != 0 || len(y) != 0 || r.RowsRead() != 0 {
				t.Errorf("read %d, %d values, %d rows from an empty file", len(x), len(y), r.RowsRead())
			}
			if ext == ".parquet" && r.TotalRows() != 0 {
				t.Errorf("TotalRows %d, want 0", r.TotalRows())
			}
		})
	}
}

// The CSV writer must give the shortest text that reads back exactly.
func TestCSVWriterText(t *testing.T) {
	var buf bytes.Buffer
	w, err := tablewriter.New(&buf, dataset.CSV, []string{"a", "b,c"}, tablewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write([]float64{0.1, -2, 1e300, math.Copysign(0, -1)}, 2); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := "a,\"b,c\"\n0.1,-2\n1e+300,-0\n"
	if buf.String() != want {
		t.Errorf("CSV %q, want %q", buf.String(), want)
	}
	if _, err := strconv.ParseFloat("1e+300", 64); err != nil {
		t.Fatal(err)
	}
}

// Rows are gathered into record batches of BatchRows (IPC) and row groups of
// RowGroupRows (Parquet), whatever the size of the blocks written.
func TestWriterBatches(t *testing.T) {
	dir := t.TempDir()
	m := testMatrix(4500, 2, 5)
	for _, ext := range []string{".arrows", ".parquet"} {
		path := filepath.Join(dir, "b"+ext)
		w, err := tablewriter.Create(path, dataset.Auto, []string{"a", "b"}, tablewriter.Options{BatchRows: 1000, RowGroupRows: 1500})
		if err != nil {
			t.Fatal(err)
		}
		for lo := 0; lo < 4500; lo += 700 {
			hi := min(lo+700, 4500)
			if err := w.Write(m[2*lo:2*hi], hi-lo); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if ext == ".parquet" {
			pf, err := file.OpenParquetFile(path, false)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int64
			for i := 0; i < pf.NumRowGroups(); i++ {
				sizes = append(sizes, pf.RowGroup(i).NumRows())
			}
			pf.Close()
			if fmt.Sprint(sizes) != "[1500 1500 1500]" {
				t.Errorf("row groups of %v rows, want [1500 1500 1500]", sizes)
			}
			continue
		}
		r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}})
		if err != nil {
			t.Fatal(err)
		}
		var sizes []int
		for r.Next() {
			sizes = append(sizes, r.Rows())
		}
		r.Close()
		if fmt.Sprint(sizes) != "[1000 1000 1000 1000 500]" {
			t.Errorf("IPC batches of %v rows, want [1000 1000 1000 1000 500]", sizes)
		}
	}
}
