package decode_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Bad input of every kind gives a one-line error naming the file (and the
// column and row where there is one), matching the right sentinel, and
// never a panic.
func TestBadInputs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	tb := newTable(50, 5)
	recs := tb.records(mem, 20)
	pq := writeRecords(t, dir, "good.parquet", dataset.Parquet, tableSchema(), recs)
	ipcFile := writeRecords(t, dir, "good.arrow", dataset.IPCFile, tableSchema(), recs)
	ipcStream := writeRecords(t, dir, "good.arrows", dataset.IPCStream, tableSchema(), recs)
	for _, r := range recs {
		r.Release()
	}
	read := func(path string) []byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	pqBytes, fileBytes := read(pq), read(ipcFile)
	csvText := "x,y,name,t\n1,2,a,5\n3,4,b,6\n5,6,c,7\n7,abc,d,8\n"
	files := map[string]string{
		"empty.parquet":     writeBytes(t, dir, "empty.parquet", nil),
		"empty.arrow":       writeBytes(t, dir, "empty.arrow", nil),
		"empty.arrows":      writeBytes(t, dir, "empty.arrows", nil),
		"empty.csv":         writeBytes(t, dir, "empty.csv", nil),
		"blank.csv":         writeBytes(t, dir, "blank.csv", []byte("\n\n")),
		"csv.parquet":       writeBytes(t, dir, "csv.parquet", []byte(csvText)),
		"csv.arrow":         writeBytes(t, dir, "csv.arrow", []byte(csvText)),
		"csv.arrows":        writeBytes(t, dir, "csv.arrows", []byte(csvText)),
		"parquet.arrow":     writeBytes(t, dir, "parquet.arrow", pqBytes),
		"half.parquet":      writeBytes(t, dir, "half.parquet", pqBytes[:len(pqBytes)/2]),
		"nofooter.parquet":  writeBytes(t, dir, "nofooter.parquet", pqBytes[:len(pqBytes)-1]),
		"half.arrow":        writeBytes(t, dir, "half.arrow", fileBytes[:len(fileBytes)/2]),
		"header.csv":        writeBytes(t, dir, "header.csv", []byte("x,y,name,t\n")),
		"text.csv":          writeBytes(t, dir, "text.csv", []byte(csvText)),
		"ragged.csv":        writeBytes(t, dir, "ragged.csv", []byte("x,y\n1,2\n3\n")),
		"quote.csv":         writeBytes(t, dir, "quote.csv", []byte("x,y\n1,2\n\"3,4\n")),
		"dup.csv":           writeBytes(t, dir, "dup.csv", []byte("x,y,x\n1,2,3\n")),
		"data.txt":          writeBytes(t, dir, "data.txt", []byte(csvText)),
		"binary.csv":        writeBytes(t, dir, "binary.csv", pqBytes),
		"good.parquet":      pq,
		"good.arrow":        ipcFile,
		"good.arrows":       ipcStream,
		"missing.parquet":   dir + "/missing.parquet",
		"nonexistent.arrow": dir + "/nonexistent.arrow",
	}
	xy := decode.Options{Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}}
	tcs := []struct {
		file string
		opts decode.Options
		kind error    // sentinel, or nil for no error
		want []string // in the message, besides the path
	}{
		{"good.parquet", decode.Options{Columns: columns.Spec{X: []string{"f64", "nope"}}}, decode.ErrColumn, []string{`no column "nope"`, `available: "name", "i8", "u64"`, `"tags"`}},
		{"good.arrow", decode.Options{Columns: columns.Spec{Y: []string{"nope"}}}, decode.ErrColumn, []string{`no column "nope"`, `"epoch"`}},
		{"good.arrows", decode.Options{Columns: columns.Spec{X: []string{"f64"}, TimeColumn: "nope"}}, decode.ErrColumn, []string{`no column "nope"`}},
		{"text.csv", decode.Options{Columns: columns.Spec{X: []string{"x"}, Y: []string{"z"}}}, decode.ErrColumn, []string{`no column "z" (available: "x", "y", "name", "t")`}},
		{"good.parquet", decode.Options{Columns: columns.Spec{X: []string{"name"}}}, decode.ErrColumn, []string{`column "name" has type utf8`}},
		{"good.arrow", decode.Options{Columns: columns.Spec{X: []string{"f64"}, Y: []string{"tags"}}}, decode.ErrColumn, []string{`column "tags" is a variable-size list`}},
		{"good.parquet", decode.Options{Columns: columns.Spec{X: []string{"tags"}}}, decode.ErrColumn, []string{`column "tags" is a variable-size list`}},
		{"good.arrows", decode.Options{Columns: columns.Spec{X: []string{"f64"}, TimeColumn: "f32"}}, decode.ErrColumn, []string{`time column "f32" has type float32`}},
		{"good.arrows", decode.Options{Columns: columns.Spec{X: []string{"ts"}}}, decode.ErrColumn, []string{`column "ts" has type timestamp`}},
		{"good.parquet", decode.Options{}, decode.ErrColumn, []string{"no columns selected"}},
		{"text.csv", decode.Options{Columns: columns.Spec{TimeColumn: "t"}}, decode.ErrColumn, []string{"no columns selected"}},
		{"text.csv", decode.Options{Columns: columns.Spec{X: []string{"x", "t"}, TimeColumn: "t"}}, decode.ErrColumn, []string{`time column "t" cannot also be in X or Y`}},
		{"dup.csv", xy, decode.ErrColumn, []string{`2 columns are named "x"`}},
		{"empty.parquet", xy, decode.ErrFormat, []string{"empty file (0 bytes)"}},
		{"empty.arrow", xy, decode.ErrFormat, []string{"empty file (0 bytes)"}},
		{"empty.arrows", xy, decode.ErrFormat, []string{"empty file (0 bytes)"}},
		{"empty.csv", xy, decode.ErrFormat, []string{"empty file (0 bytes)"}},
		{"blank.csv", xy, decode.ErrFormat, []string{"empty CSV: no header row"}},
		{"csv.parquet", xy, decode.ErrFormat, []string{"not a Parquet file"}},
		{"csv.arrow", xy, decode.ErrFormat, []string{"not an Arrow IPC file"}},
		{"csv.arrows", xy, decode.ErrFormat, []string{"not an Arrow IPC stream"}},
		{"parquet.arrow", xy, decode.ErrFormat, []string{"not an Arrow IPC file"}},
		{"half.parquet", xy, decode.ErrFormat, []string{"not a Parquet file, or a truncated or corrupt one"}},
		{"nofooter.parquet", xy, decode.ErrFormat, []string{"not a Parquet file, or a truncated or corrupt one"}},
		{"half.arrow", xy, decode.ErrFormat, []string{"not an Arrow IPC file, or a truncated or corrupt one"}},
		{"header.csv", xy, nil, nil},
		{"text.csv", xy, decode.ErrInvalidValue, []string{`column "y", row 3: text "abc" is not a number`}},
		{"text.csv", decode.Options{Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}, Values: decode.Values{SkipInvalid: true}}, decode.ErrInvalidValue, []string{`column "y", row 3: text "abc" is not a number`}},
		{"text.csv", decode.Options{Columns: columns.Spec{X: []string{"name"}}}, decode.ErrInvalidValue, []string{`column "name", row 0: text "a" is not a number`}},
		{"text.csv", decode.Options{Columns: columns.Spec{X: []string{"x"}, TimeColumn: "name"}}, decode.ErrInvalidValue, []string{`column "name", row 0: text "a" is not an integer time or a date and time`}},
		{"ragged.csv", xy, decode.ErrFormat, []string{"reading the record batch at row 1", "line 3", "wrong number of fields"}},
		{"quote.csv", xy, decode.ErrFormat, []string{"extraneous or missing \" in quoted-field"}},
		{"binary.csv", xy, nil, nil}, // checked below: an error, whichever
		{"data.txt", xy, decode.ErrFormat, []string{"cannot tell the format from the extension"}},
		{"data.txt", decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}}}, decode.ErrInvalidValue, []string{`column "x"`}}, // reads, until row 3 of y? no: only x
		{"nonexistent.arrow", xy, fs.ErrNotExist, []string{"no such file"}},
		{"good.parquet", decode.Options{Columns: columns.Spec{X: []string{"f64"}, TimeUnit: 7}}, decode.ErrColumn, []string{"unknown time unit 7"}},
		{"good.parquet", decode.Options{Files: dataset.Options{Format: 9}, Columns: columns.Spec{X: []string{"f64"}}}, nil, []string{"unknown format Format(9)"}},
	}
	for _, tc := range tcs {
		t.Run(tc.file, func(t *testing.T) {
			path := files[tc.file]
			opts := tc.opts
			opts.Allocator = mem
			_, _, _, r, err := readAll(t, path, nil, opts)
			switch {
			case tc.file == "binary.csv":
				if err == nil {
					t.Fatalf("no error reading Parquet bytes as CSV")
				}
				mustContain(t, err.Error(), path)
				return
			case tc.file == "data.txt" && tc.opts.Files.Format == dataset.CSV:
				// The x column is all numbers: this must read cleanly.
				if err != nil || r.RowsRead() != 4 {
					t.Fatalf("reading data.txt as CSV: %v", err)
				}
				return
			case tc.kind == nil && len(tc.want) == 0:
				if err != nil {
					t.Fatalf("error %v, want none", err)
				}
				if r.RowsRead() != 0 {
					t.Errorf("read %d rows, want 0", r.RowsRead())
				}
				return
			case err == nil:
				t.Fatalf("no error, want %v %q", tc.kind, tc.want)
			}
			if tc.kind != nil && !errors.Is(err, tc.kind) {
				t.Errorf("error %q does not match %v", err, tc.kind)
			}
			mustContain(t, err.Error(), append([]string{"dimeio: ", path}, tc.want...)...)
		})
	}
}

// Parquet and IPC files need random access: not from stdin. Stdin needs a
// reader.
func TestStdinFormats(t *testing.T) {
	for _, f := range []dataset.Format{dataset.Parquet, dataset.IPCFile} {
		_, err := decode.Open(context.Background(), "-", strings.NewReader("x"), decode.Options{Files: dataset.Options{Format: f}, Columns: columns.Spec{X: []string{"x"}}})
		if err == nil || !strings.Contains(err.Error(), "stdin can only be read as an IPC stream or CSV") {
			t.Errorf("%v from stdin: error %v", f, err)
		}
	}
	if _, err := decode.Open(context.Background(), "-", nil, decode.Options{Columns: columns.Spec{X: []string{"x"}}}); err == nil {
		t.Error("no error for stdin without a reader")
	}
	for _, in := range []string{"", "\n", "not arrow at all, just some text that is long enough"} {
		_, err := decode.Open(context.Background(), "-", strings.NewReader(in), decode.Options{Columns: columns.Spec{X: []string{"x"}}})
		if !errors.Is(err, decode.ErrFormat) {
			t.Errorf("stdin %q: error %v, want ErrFormat", in, err)
		} else {
			mustContain(t, err.Error(), "dimeio: stdin: ")
		}
	}
	// CSV from stdin: the header only gives no rows and no error.
	_, _, _, r, err := readAll(t, "-", bytes.NewReader([]byte("x,y\n")), decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}}})
	if err != nil || r.RowsRead() != 0 {
		t.Errorf("CSV header on stdin: %v", err)
	}
}

// Records that do not match the Extractor's schema are errors, not panics.
func TestExtractMismatch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	a := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}, {Name: "y", Type: arrow.PrimitiveTypes.Float64}}, nil)
	b := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float32}}, nil)
	ex, err := decode.NewExtractor("mem", a, decode.Options{Columns: columns.Spec{X: []string{"y"}}})
	if err != nil {
		t.Fatal(err)
	}
	bld := array.NewRecordBuilder(mem, b)
	defer bld.Release()
	bld.Field(0).(*array.Float32Builder).AppendValues([]float32{1, 2}, nil)
	rec := bld.NewRecord()
	defer rec.Release()
	var blk decode.Block
	if err := ex.Extract(&blk, rec); !errors.Is(err, decode.ErrFormat) || blk.Rows != 0 {
		t.Errorf("error %v, %d rows, want ErrFormat and no rows", err, blk.Rows)
	}
	ex, _ = decode.NewExtractor("mem", a, decode.Options{Columns: columns.Spec{X: []string{"x"}}})
	if err := ex.Extract(&blk, rec); !errors.Is(err, decode.ErrFormat) {
		t.Errorf("error %v, want ErrFormat", err)
	} else {
		mustContain(t, err.Error(), `record batch column 0 is "x" of type float32, want "x" of type float64`)
	}
}

// Parquet and IPC files cut anywhere are errors naming the file.
func TestTruncatedFiles(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	var data = map[string][]byte{}
	for _, ext := range []string{".parquet", ".arrow"} {
		w, err := tablewriter.Create(dir+"/w"+ext, dataset.Auto, []string{"a", "b"}, tablewriter.Options{BatchRows: 50, RowGroupRows: 50})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(testMatrix(200, 2, 1), 200)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if data[ext], err = os.ReadFile(dir + "/w" + ext); err != nil {
			t.Fatal(err)
		}
	}
	for ext, b := range data {
		tried := 0
		for cut := 1; cut < len(b); cut++ {
			if cut%31 != 0 && cut < len(b)-40 {
				continue
			}
			tried++
			path := writeBytes(t, dir, "cut"+ext, b[:cut])
			_, _, _, _, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}, Allocator: mem})
			if !errors.Is(err, decode.ErrFormat) {
				t.Fatalf("%s cut at %d of %d: error %v, want ErrFormat", ext, cut, len(b), err)
			}
			mustContain(t, err.Error(), path)
		}
		if tried < 50 {
			t.Errorf("%s: only %d cuts", ext, tried)
		}
	}
}

// Column types that cannot be read are refused when the Extractor is built.
func TestExtractorColumnTypes(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ok", Type: arrow.PrimitiveTypes.Float64},
		{Name: "words", Type: arrow.FixedSizeListOf(2, arrow.BinaryTypes.String)},
		{Name: "flag", Type: arrow.FixedWidthTypes.Boolean},
		{Name: "half", Type: arrow.FixedWidthTypes.Float16},
		{Name: "cat", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.PrimitiveTypes.Float64}},
		{Name: "big", Type: arrow.LargeListOf(arrow.PrimitiveTypes.Float64)},
		{Name: "day", Type: arrow.FixedWidthTypes.Date32},
	}, nil)
	for col, want := range map[string]string{
		"words": `column "words" is a fixed-size list of utf8, want a list of numbers`,
		"flag":  `column "flag" has type bool`,
		"half":  `column "half" has type float16`,
		"cat":   `column "cat" has type dictionary<values=float64, indices=int8, ordered=false>`,
		"big":   `column "big" is a variable-size list`,
	} {
		_, err := decode.NewExtractor("s", schema, decode.Options{Columns: columns.Spec{X: []string{"ok"}, Y: []string{col}}})
		if !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", col, err, want)
		}
	}
	_, err := decode.NewExtractor("s", schema, decode.Options{Columns: columns.Spec{X: []string{"ok"}, TimeColumn: "day"}})
	if !errors.Is(err, decode.ErrColumn) || !strings.Contains(err.Error(), `time column "day" has type date32`) {
		t.Errorf("date32 time: error %v", err)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	if len(b) > w.n {
		k := w.n
		w.n = 0
		return k, errors.New("disk full")
	}
	w.n -= len(b)
	return len(b), nil
}

// Mistakes in calling the TableWriter and failures of the output are errors.
func TestTableWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	for _, tc := range []struct {
		format dataset.Format
		cols   []string
		want   string
	}{
		{dataset.Auto, []string{"a"}, "cannot write format auto"},
		{dataset.Format(9), []string{"a"}, "cannot write format Format(9)"},
		{dataset.CSV, nil, "no columns to write"},
		{dataset.Parquet, []string{"a", "b", "a"}, `column "a" given twice`},
	} {
		if _, err := tablewriter.New(&buf, tc.format, tc.cols, tablewriter.Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: error %v, want %q", tc.format, tc.cols, err, tc.want)
		}
	}
	dir := t.TempDir()
	if _, err := tablewriter.Create(dir+"/x.txt", dataset.Auto, []string{"a"}, tablewriter.Options{}); err == nil {
		t.Error("Create with an unknown extension: no error")
	}
	if _, err := tablewriter.Create(dir+"/x.csv", dataset.Auto, nil, tablewriter.Options{}); err == nil {
		t.Error("Create without columns: no error")
	} else if _, serr := os.Stat(dir + "/x.csv"); serr == nil {
		t.Error("Create left a file after an error")
	}

	for _, f := range []dataset.Format{dataset.Parquet, dataset.IPCFile, dataset.IPCStream, dataset.CSV} {
		w, err := tablewriter.New(&buf, f, []string{"a", "b"}, tablewriter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write([]float64{1, 2, 3}, 2); err == nil || !strings.Contains(err.Error(), "3 values for 2 rows of 2 columns") {
			t.Errorf("%v: wrong length: error %v", f, err)
		}
		w.Close()
		if err := w.Write([]float64{1, 2}, 1); err == nil {
			t.Errorf("%v: Write after Close: no error", f)
		}

		// An output that fails after 100 kB: the error comes from Write or
		// Close, and stays.
		w, err = tablewriter.New(&failingWriter{n: 100 << 10}, f, []string{"a", "b"}, tablewriter.Options{BatchRows: 1000, RowGroupRows: 1000})
		if err != nil {
			t.Fatal(err)
		}
		m := testMatrix(1000, 2, 1)
		var werr error
		for i := 0; i < 100 && werr == nil; i++ {
			werr = w.Write(m, 1000)
		}
		cerr := w.Close()
		if werr == nil && cerr == nil {
			t.Errorf("%v: no error writing to a failing output", f)
		} else if err := errors.Join(werr, cerr); !strings.Contains(err.Error(), "disk full") {
			t.Errorf("%v: error %v, want the output's", f, err)
		}
		if w.Close() == nil {
			t.Errorf("%v: the error does not stay", f)
		}
	}
}
