package decode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
)

// The Parquet decoder's buffers go back to a pool when it frees them and are
// reused for its next batches (the default allocator only). In the io tests
// the pool fills every freed buffer with 0xff before keeping it
// (export_test.go), so a buffer read after its Free would change the values
// read. Every column type, in files of plain, dictionary and compressed
// pages, small pages and several row groups, read in batches large enough
// for the pool (4 KiB and up) and not aligned with the row groups or pages,
// with and without Prefetch, one file at a time or the four as a dataset,
// must give the table's values bit for bit. (The pool recognises the page
// reader's buffers by its function's name, bufferPool.allocate: if an
// upgrade of Arrow renamed it, this test would fail.)
func TestParquetPoolNoUseAfterFree(t *testing.T) {
	const n = 20000
	tb := newTable(n, 5)
	mem := memory.NewGoAllocator()
	recs := tb.records(mem, 7000)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	dir := t.TempDir()
	files := map[string]*parquet.WriterProperties{
		"default":           parquet.NewWriterProperties(),
		"plain-small-pages": parquet.NewWriterProperties(parquet.WithDictionaryDefault(false), parquet.WithDataPageSize(8<<10)),
		"zstd-dictionary":   parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd), parquet.WithDataPageSize(32<<10)),
		"snappy-v1-pages":   parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDataPageVersion(parquet.DataPageV1), parquet.WithDictionaryDefault(false)),
	}
	xCols := []string{"e64", "u16", "f32", "i8", "u64"}
	yCols := []string{"i64", "e32", "f64", "i32", "u8", "i16", "u32", "f32"}
	wantX, wantY := tb.expectView(xCols, seq(0, n)), tb.expectView(yCols, seq(0, n))
	for name, props := range files {
		path := writeRecordsProps(t, dir, name+".parquet", dataset.Parquet, tableSchema(), recs, props)
		for _, batch := range []int{4096, 9999} {
			for _, prefetch := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/batch=%d/prefetch=%v", name, batch, prefetch), func(t *testing.T) {
					x, y, times, _, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: xCols, Y: yCols, TimeColumn: "ts"}, BatchSize: batch, Prefetch: prefetch})
					if err != nil {
						t.Fatal(err)
					}
					sameViews(t, x, y, wantX, wantY)
					for i := range n {
						if i >= len(times) || times[i] != tb.ts[i]*1e6 {
							t.Fatalf("time %d: got %v, want %d", i, times[i:min(i+1, len(times))], tb.ts[i]*1e6)
						}
					}
				})
			}
		}
	}
	// The four files as one dataset, read by 1 and 3 decoding goroutines:
	// the table four times, in the files' sorted order.
	var x4, y4 []float64
	for range files {
		x4, y4 = append(x4, wantX...), append(y4, wantY...)
	}
	for _, workers := range []int{1, 3} {
		r, err := decode.OpenDataset(context.Background(), []string{dir}, nil, decode.Options{Columns: columns.Spec{X: xCols, Y: yCols}, BatchSize: 5000, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		var x, y []float64
		for r.Next() {
			x, y = append(x, r.X()...), append(y, r.Y()...)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		sameViews(t, x, y, x4, y4)
	}
}

// With the default allocator the decoder's value and level buffers are
// reused from batch to batch: reading a file of 25 batches, the pool
// serves all but the first batch's from its free lists, and keeps nothing
// once the reader is closed (here at once; by default a second later). (Page buffers are not pooled: see
// bufferPool.allocate.) Measured: 6.6 MB served and 0.26 MB allocated anew
// by the pool; 8.4 MB allocated in all, against 15.8 MB with an allocator
// that is not pooled.
func TestParquetPoolReuses(t *testing.T) {
	const n, d, batch = 100_000, 4, 4096
	dir := t.TempDir()
	path := filepath.Join(dir, "m.parquet")
	names := []string{"a", "b", "c", "d"}
	w, err := tablewriter.Create(path, dataset.Auto, names, tablewriter.Options{RowGroupRows: 30_000})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(testMatrix(n, d, 11), n)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	allocated := func(mem memory.Allocator) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"a", "b"}, Y: []string{"c", "d"}}, BatchSize: batch, Allocator: mem})
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for r.Next() {
			rows += r.Rows()
		}
		if err := r.Close(); err != nil || rows != n {
			t.Fatalf("%d rows, error %v", rows, err)
		}
		if held := decode.ParquetPoolHeld(); mem == nil && held != 0 {
			t.Errorf("the pool keeps %d bytes after the reader was closed", held)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	defer decode.SetPoolIdle(decode.SetPoolIdle(0)) // drained at once when the reader closes
	plain := allocated(memory.NewGoAllocator())
	served0, fresh0 := decode.ParquetPoolBytes()
	pooled := allocated(nil)
	served1, fresh1 := decode.ParquetPoolBytes()
	served, fresh := served1-served0, fresh1-fresh0
	t.Logf("reading %d rows in batches of %d: %d bytes allocated with a GoAllocator, %d pooled; the pool served %d bytes and allocated %d", n, batch, plain, pooled, served, fresh)
	if want := int64(n * d * 8); served < want || fresh*10 > served {
		t.Errorf("the pool served %d bytes (want at least the %d of the values) and allocated %d anew (want under a tenth of that)", served, want, fresh)
	}
	if pooled >= plain {
		t.Errorf("pooled reading allocated %d bytes, not less than the %d without the pool", pooled, plain)
	}

	// With a delay, the buffers stay for the next reader, then go.
	decode.SetPoolIdle(50 * time.Millisecond)
	r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}, BatchSize: batch})
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	r.Close()
	if held := decode.ParquetPoolHeld(); held == 0 {
		t.Error("the pool kept nothing right after the reader closed, with a delay of 50 ms")
	}
	deadline := time.Now().Add(10 * time.Second)
	for decode.ParquetPoolHeld() != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if held := decode.ParquetPoolHeld(); held != 0 {
		t.Errorf("the pool keeps %d bytes 10 s after the reader closed, with a delay of 50 ms", held)
	}
}
