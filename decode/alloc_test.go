package decode_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Nothing leaks, in any format, whether the input is read to the end, to an
// error, or closed early (before or after the first block), once or twice,
// with and without Prefetch (whose goroutine may be reading when Close
// comes).
func TestNoLeaks(t *testing.T) {
	dir := t.TempDir()
	const rows, d = 1000, 4
	m := testMatrix(rows, d, 8)
	m[700*d+2] = 0 // kept finite; an invalid value is put in CSV text below
	names := []string{"a", "b", "c", "d"}
	paths := map[string]string{}
	for _, ext := range []string{".parquet", ".arrow", ".arrows", ".csv"} {
		path := filepath.Join(dir, "m"+ext)
		w, err := tablewriter.Create(path, dataset.Auto, names, tablewriter.Options{BatchRows: 128, RowGroupRows: 128})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m, rows)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths[ext] = path
	}
	text, err := os.ReadFile(paths[".csv"])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(text, []byte("\n"))
	lines[701] = []byte("1,2,,4\n") // row 700: a null in c
	paths["bad.csv"] = writeBytes(t, dir, "bad.csv", bytes.Join(lines, nil))

	for name, path := range paths {
		for _, tc := range []struct {
			what     string
			steps    int // blocks read before Close; -1: to the end
			y        []string
			prefetch bool
		}{
			{"to the end", -1, []string{"c"}, false},
			{"no block", 0, []string{"c"}, false},
			{"one block", 1, []string{"c"}, false},
			{"three blocks", 3, []string{"d", "c"}, false},
			{"prefetch to the end", -1, []string{"c"}, true},
			{"prefetch no block", 0, []string{"c"}, true},
			{"prefetch one block", 1, []string{"c"}, true},
			{"prefetch three blocks", 3, []string{"d", "c"}, true},
		} {
			t.Run(fmt.Sprintf("%s/%s", name, tc.what), func(t *testing.T) {
				mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer mem.AssertSize(t, 0)
				r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"b", "a"}, Y: tc.y}, BatchSize: 100, Allocator: mem, Prefetch: tc.prefetch})
				if err != nil {
					t.Fatal(err)
				}
				for i := 0; (tc.steps < 0 || i < tc.steps) && r.Next(); i++ {
				}
				if tc.steps < 0 && (name == "bad.csv") != (r.Err() != nil) {
					t.Errorf("error %v", r.Err())
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if err := r.Close(); err != nil {
					t.Fatal(err)
				}
				if r.Next() {
					t.Error("Next after Close")
				}
			})
		}
	}
	// The same from stdin.
	for _, ext := range []string{".arrows", ".csv"} {
		for _, prefetch := range []bool{false, true} {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			data, _ := os.ReadFile(paths[ext])
			r, err := decode.Open(context.Background(), "-", bytes.NewReader(data), decode.Options{
				Files:     dataset.Options{Format: map[string]dataset.Format{".arrows": dataset.IPCStream, ".csv": dataset.CSV}[ext]},
				Columns:   columns.Spec{X: []string{"a"}, Y: []string{"b"}},
				BatchSize: 100,
				Allocator: mem,
				Prefetch:  prefetch,
			})
			if err != nil {
				t.Fatal(err)
			}
			r.Next()
			r.Close()
			mem.AssertSize(t, 0)
		}
	}
}

// Prefetch gives the same blocks, counts and errors as reading in step, in
// every format, block by block: clean files, a file whose invalid rows are
// skipped, and one that stops with an invalid value.
func TestPrefetchSameBlocks(t *testing.T) {
	dir := t.TempDir()
	const rows, d = 1000, 4
	m := testMatrix(rows, d, 9)
	names := []string{"a", "b", "c", "d"}
	var paths []string
	for _, ext := range []string{".parquet", ".arrow", ".arrows", ".csv"} {
		path := filepath.Join(dir, "m"+ext)
		w, err := tablewriter.Create(path, dataset.Auto, names, tablewriter.Options{BatchRows: 96, RowGroupRows: 96})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(m, rows)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	text, err := os.ReadFile(paths[3])
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(text, []byte("\n"))
	for _, i := range []int{5, 300, 301, 640} {
		lines[i+1] = []byte("1,,3,4\n") // a null in b
	}
	paths = append(paths, writeBytes(t, dir, "nulls.csv", bytes.Join(lines, nil)))
	type step struct {
		rows              int
		x, y              []float64
		rowsRead, skipped int64
	}
	read := func(path string, skip, prefetch bool) ([]step, error) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"b", "a"}, Y: []string{"d"}}, Values: decode.Values{SkipInvalid: skip}, BatchSize: 70, Allocator: mem, Prefetch: prefetch})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var steps []step
		for r.Next() {
			steps = append(steps, step{r.Rows(), append([]float64(nil), r.X()...), append([]float64(nil), r.Y()...), r.RowsRead(), r.Skipped()})
		}
		steps = append(steps, step{rowsRead: r.RowsRead(), skipped: r.Skipped()})
		return steps, r.Err()
	}
	for _, path := range paths {
		for _, skip := range []bool{false, true} {
			want, wantErr := read(path, skip, false)
			got, gotErr := read(path, skip, true)
			name := fmt.Sprintf("%s skip=%v", filepath.Base(path), skip)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Errorf("%s: error %v with Prefetch, %v without", name, gotErr, wantErr)
			}
			if len(got) != len(want) {
				t.Errorf("%s: %d blocks with Prefetch, %d without", name, len(got)-1, len(want)-1)
				continue
			}
			for i := range want {
				g, w := got[i], want[i]
				_, okX := sameBits(g.x, w.x)
				_, okY := sameBits(g.y, w.y)
				if g.rows != w.rows || !okX || !okY || g.rowsRead != w.rowsRead || g.skipped != w.skipped {
					t.Errorf("%s: block %d: %d rows (read %d, skipped %d) with Prefetch, %d (%d, %d) without, or other values",
						name, i, g.rows, g.rowsRead, g.skipped, w.rows, w.rowsRead, w.skipped)
				}
			}
			if filepath.Base(path) == "nulls.csv" && (skip != (wantErr == nil) || (skip && want[len(want)-1].skipped != 4)) {
				t.Errorf("%s: error %v, skipped %d", name, wantErr, want[len(want)-1].skipped)
			}
		}
	}
}

// peakAllocator counts the bytes allocated and their maximum.
type peakAllocator struct {
	mem        memory.Allocator
	cur, peak  atomic.Int64
	allocs     atomic.Int64
	allocBytes atomic.Int64
}

func (p *peakAllocator) add(n int) {
	c := p.cur.Add(int64(n))
	for {
		pk := p.peak.Load()
		if c <= pk || p.peak.CompareAndSwap(pk, c) {
			return
		}
	}
}

func (p *peakAllocator) Allocate(size int) []byte {
	p.add(size)
	p.allocs.Add(1)
	p.allocBytes.Add(int64(size))
	return p.mem.Allocate(size)
}

func (p *peakAllocator) Reallocate(size int, b []byte) []byte {
	p.add(size - len(b))
	return p.mem.Reallocate(size, b)
}

func (p *peakAllocator) Free(b []byte) {
	p.add(-len(b))
	p.mem.Free(b)
}

// readPeaks reads path with the given batch size and returns the peak of
// Arrow memory, and the live Go heap after Open and at its peak while reading
// (after a collection, every 16 blocks).
func readPeaks(t testing.TB, path string, batch int) (arrowPeak, heapOpen, heapPeak, rows int64) {
	t.Helper()
	p := &peakAllocator{mem: memory.NewGoAllocator()}
	r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"c0", "c1", "c2", "c3"}, Y: []string{"c4", "c5", "c6", "c7"}}, BatchSize: batch, Allocator: p})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	live := func() int64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	heapOpen = live()
	heapPeak = heapOpen
	for i := 0; r.Next(); i++ {
		if i%16 == 0 {
			heapPeak = max(heapPeak, live())
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return p.peak.Load(), heapOpen, heapPeak, r.RowsRead()
}

// Memory does not grow with the number of rows: reading 10 times more rows
// in batches of 1024 takes the same peak of Arrow memory, and the live Go
// heap grows as little while reading.
func TestMemoryConstant(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 30 MB of files")
	}
	dir := t.TempDir()
	const d = 8
	names := tablewriter.ColumnNames("c", d)
	for _, ext := range []string{".parquet", ".arrow", ".arrows", ".csv"} {
		small, large := 20_000, 200_000
		if ext == ".csv" {
			small, large = 5_000, 50_000
		}
		var paths []string
		for _, n := range []int{small, large} {
			path := filepath.Join(dir, fmt.Sprintf("%d%s", n, ext))
			w, err := tablewriter.Create(path, dataset.Auto, names, tablewriter.Options{BatchRows: 4096, RowGroupRows: 4096})
			if err != nil {
				t.Fatal(err)
			}
			m := testMatrix(1000, d, 1)
			for i := 0; i < n; i += 1000 {
				w.Write(m, 1000)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			paths = append(paths, path)
		}
		a1, o1, h1, n1 := readPeaks(t, paths[0], 1024)
		a2, o2, h2, n2 := readPeaks(t, paths[1], 1024)
		t.Logf("%s: %d rows: Arrow peak %d B, heap %.2f MB after Open, +%.2f MB reading; %d rows: Arrow peak %d B, heap %.2f MB after Open, +%.2f MB reading",
			ext, n1, a1, float64(o1)/1e6, float64(h1-o1)/1e6, n2, a2, float64(o2)/1e6, float64(h2-o2)/1e6)
		if n1 != int64(small) || n2 != int64(large) {
			t.Fatalf("read %d and %d rows", n1, n2)
		}
		// Measured: equal Arrow peaks in every format.
		if a2 > a1+a1/10 {
			t.Errorf("%s: Arrow memory grows with rows: peak %d B for %d rows, %d B for %d", ext, a1, n1, a2, n2)
		}
		// Measured: under 1 MB of growth in every case; keeping one block
		// (64 kB) per batch would add 12 MB over the large file. (The heap
		// after Open grows with the number of Parquet row groups, whose
		// metadata the reader holds: 365 B per column and row group here.)
		if h2-o2 > h1-o1+2<<20 {
			t.Errorf("%s: heap grows while reading: +%d B for %d rows, +%d B for %d", ext, h1-o1, n1, h2-o2, n2)
		}
	}
}
