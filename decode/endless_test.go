package decode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// endless serves prefix, then fill forever, and fails the test's read once
// it has served more than limit bytes (a reader that buffered the record
// whole would go on until the process runs out of memory).
type endless struct {
	prefix []byte
	fill   byte
	served int64
	limit  int64
}

var errTooMuch = errors.New("endless: the reader read more than its bound")

func (e *endless) Read(p []byte) (int, error) {
	if e.served > e.limit {
		return 0, errTooMuch
	}
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.served += int64(len(p))
	return len(p), nil
}

// TestCSVRecordsAreBounded: a CSV record that never ends (a quote never
// closed then endless text or line breaks, or bytes without a line break,
// as --format csv /dev/zero gives) is an error naming the row, after at most
// the bound and a buffer read. Before, the reader buffered the record whole
// and the process died out of memory.
func TestCSVRecordsAreBounded(t *testing.T) {
	const bound = 64 << 10
	defer decode.SetMaxCSVRecord(decode.SetMaxCSVRecord(bound))
	for _, c := range []struct {
		name   string
		prefix string
		fill   byte
		want   string
	}{
		{"unterminated quote, then text", "x,y\n1,2\n3,4\n\"5", 'a', "CSV row 2 is longer than 65536 bytes"},
		{"unterminated quote, then line breaks", "x,y\n1,2\n\"", '\n', "CSV row 1 is longer than 65536 bytes"},
		{"zeros", "", 0, "the CSV header is longer than 65536 bytes"},
		{"a header, then no line break", "x,y\n", '7', "CSV row 0 is longer than 65536 bytes"},
	} {
		for _, batch := range []int{4, 1000} {
			src := &endless{prefix: []byte(c.prefix), fill: c.fill, limit: 16 * bound}
			r, err := decode.Open(context.Background(), "-", src, decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}, BatchSize: batch})
			if err == nil {
				for r.Next() {
				}
				err = r.Err()
				r.Close()
			}
			if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, decode.ErrFormat) {
				t.Errorf("%s (batches of %d): %v, want an ErrFormat with %q", c.name, batch, err, c.want)
			}
			if src.served > 16*bound {
				t.Errorf("%s: read %d bytes for a bound of %d", c.name, src.served, bound)
			}
		}
	}
	// A quoted field with line breaks and "" is one record, and a record
	// just under the bound reads.
	long := "1." + strings.Repeat("0", bound-18)
	data := fmt.Sprintf("x,y,z\n\"1\",2,\"a\"\"\n\"\n%s,1,\n", long)
	r, err := decode.Open(context.Background(), "-", bytes.NewReader([]byte(data)), decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	if err := r.Err(); err != nil || r.RowsRead() != 2 {
		t.Errorf("%d rows, %v; want 2 rows", r.RowsRead(), err)
	}
}

// TestDanglingLinksSkipped: a dangling symbolic link in a directory or
// below a glob (an editor's .#notes.txt lock link, or any other) does not
// stop the reading of the data files beside it. Before, it aborted the
// whole read with "no such file or directory".
func TestDanglingLinksSkipped(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "a.csv"), []byte("x,y\n1,2\n3,4\n"), 0o644)
	os.Symlink("user@host.1234:1700000000", filepath.Join(sub, ".#notes.txt"))
	os.Symlink("gone.csv", filepath.Join(sub, "b.csv"))
	os.Symlink("nowhere", filepath.Join(dir, "dangling"))
	for _, arg := range []string{dir, sub, filepath.Join(dir, "**", "*.csv"), filepath.Join(dir, "**")} {
		d, err := dataset.Resolve(context.Background(), []string{arg}, dataset.Options{})
		if err != nil || len(d.Inputs) != 1 || filepath.Base(d.Inputs[0].Path) != "a.csv" {
			t.Errorf("%s: %v, %v; want a.csv alone", arg, d, err)
		}
	}
}

// TestWideRowsBoundedBatches: a batch of wide rows (a FixedSizeList column
// of 5,000 values, 1,000 rows) holds at most MaxBlockBytes of values, in the file's
// reader and in the dataset's blocks, and --batch-size 2000000000 reads a
// small file, from Parquet and from an Arrow IPC file of one record batch.
// Before, a batch had BatchSize rows whatever their width: a 100,000-wide
// column asked for a 13 GB block; and a block of an IPC file held its
// record batch's rows, whatever their number.
func TestWideRowsBoundedBatches(t *testing.T) {
	const width, rows = 5000, 1000
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.FixedSizeListOf(width, arrow.PrimitiveTypes.Float64), Nullable: true},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	lb := b.Field(0).(*array.FixedSizeListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	yb := b.Field(1).(*array.Float64Builder)
	for i := range rows {
		lb.Append(true)
		for j := range width {
			vb.Append(float64((i + j) % 3))
		}
		yb.Append(float64(i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	dir := t.TempDir()
	want := decode.MaxBlockBytes / (8 * (width + 1))
	for _, c := range []struct {
		path  string
		batch int
	}{
		{writeRecords(t, dir, "wide.parquet", dataset.Parquet, schema, []arrow.Record{rec}), 0},
		{filepath.Join(dir, "wide.parquet"), 2000000000},
		{writeRecords(t, dir, "wide.arrow", dataset.IPCFile, schema, []arrow.Record{rec}), 0},
		{filepath.Join(dir, "wide.arrow"), 2000000000},
	} {
		path, batch := c.path, c.batch
		opts := decode.Options{Columns: columns.Spec{X: []string{"emb"}, Y: []string{"y"}}, BatchSize: batch}
		r, err := decode.Open(context.Background(), path, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			if r.Rows() > want {
				t.Errorf("%s, batch size %d: a batch of %d rows of %d values, want at most %d", filepath.Base(path), batch, r.Rows(), width+1, want)
			}
			n += r.Rows()
		}
		if err := r.Err(); err != nil || n != rows {
			t.Errorf("batch size %d: %d rows, %v", batch, n, err)
		}
		r.Close()
		d, err := decode.OpenDataset(context.Background(), []string{path}, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		n = 0
		for d.Next() {
			if d.Rows() > want {
				t.Errorf("%s, batch size %d: a block of %d rows of %d values, want at most %d", filepath.Base(path), batch, d.Rows(), width+1, want)
			}
			n += d.Rows()
		}
		if err := d.Err(); err != nil || n != rows {
			t.Errorf("batch size %d: dataset of %d rows, %v", batch, n, err)
		}
		d.Close()
	}
}
