package decode_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// TestCorruptParquetNeverPanics flips every byte of a small Parquet file and
// reads each corrupted copy to the end: every outcome must be rows or an
// error, never a panic (Arrow Go v15 panics on some of these inside its
// decoders; the reader turns those panics into ErrFormat errors). Before the
// guard, 19 of 2808 flips of a similar file panicked.
func TestCorruptParquetNeverPanics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "small.parquet")
	w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", 3), tablewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]float64, 40*3)
	for i := range data {
		data[i] = float64(i%17) - 3.5
	}
	if err := w.Write(data, 40); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.parquet")
	var errs, oks int
	for i := range good {
		for _, flip := range []byte{0x01, 0x80} {
			corrupt := append([]byte(nil), good...)
			corrupt[i] ^= flip
			if err := os.WriteFile(bad, corrupt, 0o644); err != nil {
				t.Fatal(err)
			}
			func() {
				defer func() {
					if v := recover(); v != nil {
						t.Fatalf("byte %d ^ %#x: panic: %v", i, flip, v)
					}
				}()
				r, err := decode.Open(context.Background(), bad, nil, decode.Options{Columns: columns.Spec{X: []string{"c0", "c1"}, Y: []string{"c2"}}})
				if err != nil {
					errs++
					return
				}
				defer r.Close()
				for r.Next() {
				}
				if err := r.Err(); err != nil {
					var ve *decode.ValueError
					if !errors.Is(err, decode.ErrFormat) && !errors.As(err, &ve) {
						t.Errorf("byte %d ^ %#x: error %v matches neither ErrFormat nor ValueError", i, flip, err)
					}
					errs++
					return
				}
				oks++
			}()
		}
	}
	t.Logf("%d corrupted copies: %d read without error (flips in values or unused bytes), %d errors", 2*len(good), oks, errs)
}

// FuzzReadParquet reads arbitrary bytes as a Parquet file: the outcome must be
// rows or an error naming the file, never a panic, an unbounded allocation
// or a leak. (Run it with -tags dimefuzz, see FuzzReadCSV.)
//
//	go test -tags dimefuzz ./io -run '^$' -fuzz FuzzReadParquet -fuzztime 60s
func FuzzReadParquet(f *testing.F) {
	dir := f.TempDir()
	path := filepath.Join(dir, "seed.parquet")
	w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", 2), tablewriter.Options{})
	if err != nil {
		f.Fatal(err)
	}
	w.Write([]float64{1, 2, 3, 4, 5, 6}, 3)
	w.Close()
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	file := newFuzzFile(f, "f.parquet")
	rss := watchPeakRSS()
	f.Fuzz(func(t *testing.T, data []byte) {
		rss.start()
		defer rss.check(t, data)
		file.set(t, data)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		_, _, _, _, err := readAll(t, file.path, nil, decode.Options{Columns: columns.Spec{X: []string{"c0"}, Y: []string{"c1"}}, Allocator: mem})
		if err != nil && !strings.Contains(err.Error(), file.path) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
