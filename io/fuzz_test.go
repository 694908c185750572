package io_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/memory"

	dimeio "github.com/dime-project/dime/io"
)

// FuzzReadCSV reads arbitrary bytes as CSV, from a file and from stdin: it
// may fail, but must not panic or leak. (The Arrow formats are not fuzzed
// here: bytes flipped inside Arrow IPC metadata or Parquet pages can make
// Arrow Go v15 itself allocate without bound or panic; see doc.go.)
//
//	go test ./io -run '^$' -fuzz FuzzReadCSV -fuzztime 60s
func FuzzReadCSV(f *testing.F) {
	f.Add(newTable(30, 9).csv())
	f.Add([]byte("x,y,t\n1,2,3\n,NA,\n\"4\",5e3,2024-01-01\n"))
	f.Add([]byte("\xEF\xBB\xBFx,y\r\n1,2\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		path := filepath.Join(t.TempDir(), "f.csv")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, opts := range []dimeio.Options{
			{X: []string{"x"}, Y: []string{"y"}, TimeColumn: "t", BatchSize: 2, Allocator: mem},
			{Format: dimeio.CSV, X: []string{"y", "x"}, Y: []string{"x"}, SkipInvalid: true, Allocator: mem},
		} {
			x, y, _, r, err := readAll(t, path, nil, opts)
			if err == nil && (len(x) != int(r.RowsRead()-r.Skipped())*len(opts.X) || len(y) != len(x)/len(opts.X)*len(opts.Y)) {
				t.Fatalf("%d X and %d Y values for %d rows", len(x), len(y), r.RowsRead()-r.Skipped())
			}
			readAll(t, "-", bytes.NewReader(data), dimeio.Options{Format: dimeio.CSV, X: opts.X, Y: opts.Y, Allocator: mem})
		}
	})
}
