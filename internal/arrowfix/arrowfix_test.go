package arrowfix

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// The workarounds are written against one version of Arrow Go: every
// go.mod of the repository that requires Arrow must name ArrowVersion. An
// upgrade fails here until each workaround has been revisited.
func TestArrowVersion(t *testing.T) {
	for _, mod := range []string{"../../go.mod", "../../beam/go.mod"} {
		f, err := os.Open(filepath.FromSlash(mod))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
			if len(fields) >= 2 && fields[0] == ArrowModule {
				found = true
				if fields[1] != ArrowVersion {
					t.Errorf("%s requires %s %s, but internal/arrowfix works around the bugs of %s: revisit every workaround of the package (see its doc), then change ArrowVersion",
						mod, ArrowModule, fields[1], ArrowVersion)
				}
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
		if !found && mod == "../../go.mod" {
			t.Errorf("%s does not require %s: revisit internal/arrowfix", mod, ArrowModule)
		}
	}
}

// The pool must see Arrow's page reader on the stack of the allocations it
// makes for pages: if Arrow renamed or inlined serializedPageReader.Next,
// the pool would take those buffers back and reuse them under a live page,
// and the values read would be wrong with no error. Reading a file of
// plain pages of 32 KiB through the pooled allocator must find the page
// reader, under its full name, and pool none of its buffers.
func TestPageReaderRecognised(t *testing.T) {
	const rows = 50_000
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Float64}}, nil)
	b := array.NewFloat64Builder(mem)
	for i := range rows {
		b.Append(float64(i))
	}
	col := b.NewArray()
	defer col.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, rows)
	defer rec.Release()
	var buf bytes.Buffer
	w, err := pqarrow.NewFileWriter(schema, &buf, parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(32<<10)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	alloc := NewParquetAllocator(nil)
	defer alloc.Close()
	pf, err := file.NewParquetReader(bytes.NewReader(buf.Bytes()), file.WithReadProps(parquet.NewReaderProperties(alloc)))
	if err != nil {
		t.Fatal(err)
	}
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: 8192}, alloc)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, c := range tbl.Column(0).Data().Chunks() {
		for _, v := range c.(*array.Float64).Float64Values() {
			sum += v
		}
	}
	tbl.Release()
	if want := float64(rows) * (rows - 1) / 2; sum != want {
		t.Errorf("sum of the values read: %v, want %v", sum, want)
	}

	parquetPool.mu.Lock()
	defer parquetPool.mu.Unlock()
	recognised := 0
	for _, in := range parquetPool.sites {
		if in {
			recognised++
		}
	}
	if recognised == 0 {
		t.Fatalf("no allocation was recognised as made by Arrow's Parquet page reader (%q) among %d call sites: "+
			"Arrow renamed or inlined it, and the buffer pool would reuse buffers under live pages; fix bufferPool.pageReader before anything else",
			ArrowModule+"/"+pageReaderNext, len(parquetPool.sites))
	}
}
