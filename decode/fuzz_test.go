package decode_test

import (
	"bytes"
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

// FuzzReadCSV reads arbitrary bytes as CSV, from a file and from stdin, and
// from stdin without their line breaks (records then end at the bound): it
// may fail, but must not panic or leak. (The Arrow formats are fuzzed
// by FuzzReadIPCStream, FuzzReadIPCFile and FuzzReadParquet.)
//
// Fuzz with the build tag dimefuzz, which leaves out the cloud bucket
// drivers (drivers.go): go test -fuzz instruments every package of the test
// binary for coverage and snapshots all the counters on every execution, and
// the cloud SDKs more than double them (432 KB of counters, 191 KB without).
// Without the tag the fuzzers run at a few hundred executions per second.
//
//	go test -tags dimefuzz ./io -run '^$' -fuzz FuzzReadCSV -fuzztime 60s
func FuzzReadCSV(f *testing.F) {
	f.Add(newTable(30, 9).csv())
	f.Add([]byte("x,y,t\n1,2,3\n,NA,\n\"4\",5e3,2024-01-01\n"))
	f.Add([]byte("\xEF\xBB\xBFx,y\r\n1,2\r\n"))
	f.Add([]byte("x,y\n1,2\n\"3"))
	file := newFuzzFile(f, "f.csv")
	rss := watchPeakRSS()
	// Records longer than 1 KiB are refused here, so that the bound is
	// reached by inputs of the fuzzer's sizes.
	defer decode.SetMaxCSVRecord(decode.SetMaxCSVRecord(1 << 10))
	f.Fuzz(func(t *testing.T, data []byte) {
		rss.start()
		defer rss.check(t, data)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		file.set(t, data)
		for _, opts := range []decode.Options{
			{Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}, TimeColumn: "t"}, BatchSize: 2, Allocator: mem},
			{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"y", "x"}, Y: []string{"x"}}, Values: decode.Values{SkipInvalid: true}, Allocator: mem},
		} {
			x, y, _, r, err := readAll(t, file.path, nil, opts)
			if err == nil && (len(x) != int(r.RowsRead()-r.Skipped())*len(opts.Columns.X) || len(y) != len(x)/len(opts.Columns.X)*len(opts.Columns.Y)) {
				t.Fatalf("%d X and %d Y values for %d rows", len(x), len(y), r.RowsRead()-r.Skipped())
			}
		}
		// Stdin once, with the first column selection (the file reads
		// above cover both selections; the stdin path differs from the
		// file's only in where the bytes come from).
		readAll(t, "-", bytes.NewReader(data), decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}, Allocator: mem})
		// The same bytes without line breaks, as from a stream that
		// never ends a line: one record, which the bound ends.
		flat := make([]byte, 0, len(data))
		for _, c := range data {
			if c != '\n' && c != '\r' {
				flat = append(flat, c)
			}
		}
		readAll(t, "-", bytes.NewReader(flat), decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}, Allocator: mem})
	})
}

// fuzzFile is a file that every execution of a fuzzer rewrites in place,
// for the readers that take a path. os.WriteFile opens with O_TRUNC, which
// frees the file's blocks: 0.29 ms a call on ext4 against 5 µs for writing
// over the old bytes and truncating to the new length, and the Parquet and
// IPC file fuzzers ran 2.5–3 times as many executions per second without it
// (BENCHMARKS.md, Fuzzers).
type fuzzFile struct {
	f    *os.File
	path string
}

func newFuzzFile(f *testing.F, name string) *fuzzFile {
	path := filepath.Join(f.TempDir(), name)
	file, err := os.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { file.Close() })
	return &fuzzFile{file, path}
}

// set makes data the file's content.
func (ff *fuzzFile) set(t *testing.T, data []byte) {
	if _, err := ff.f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := ff.f.Truncate(int64(len(data))); err != nil {
		t.Fatal(err)
	}
}

// ipcSeeds returns a small Arrow IPC file and stream of the columns c0, c1.
func ipcSeeds(f *testing.F) (file, stream []byte) {
	dir := f.TempDir()
	for _, ext := range []string{"arrow", "arrows"} {
		path := filepath.Join(dir, "seed."+ext)
		w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", 2), tablewriter.Options{BatchRows: 2})
		if err != nil {
			f.Fatal(err)
		}
		w.Write([]float64{1, 2, 3, 4, 5, 6}, 3)
		if err := w.Close(); err != nil {
			f.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if ext == "arrow" {
			file = b
		} else {
			stream = b
		}
	}
	return file, stream
}

// FuzzReadIPCStream reads arbitrary bytes as an Arrow IPC stream on stdin:
// rows or an error naming stdin, never a panic, an unbounded allocation or
// a leak (checkMetadata bounds what ipc.Reader would size from the input).
//
//	go test -tags dimefuzz ./io -run '^$' -fuzz FuzzReadIPCStream -fuzztime 60s
func FuzzReadIPCStream(f *testing.F) {
	_, stream := ipcSeeds(f)
	f.Add(stream)
	f.Add(stream[:len(stream)-8]) // without its end-of-stream marker
	f.Add(stream[:len(stream)/2])
	rss := watchPeakRSS()
	f.Fuzz(func(t *testing.T, data []byte) {
		rss.start()
		defer rss.check(t, data)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		for _, strict := range []bool{false, true} {
			_, _, _, _, err := readAll(t, "-", bytes.NewReader(data), decode.Options{Columns: columns.Spec{X: []string{"c0"}, Y: []string{"c1"}}, Strict: strict, Allocator: mem})
			if err != nil && !strings.Contains(err.Error(), "stdin") {
				t.Fatalf("error does not name stdin: %v", err)
			}
		}
	})
}

// FuzzReadIPCFile reads arbitrary bytes as an Arrow IPC file.
//
//	go test -tags dimefuzz ./io -run '^$' -fuzz FuzzReadIPCFile -fuzztime 60s
func FuzzReadIPCFile(f *testing.F) {
	seed, _ := ipcSeeds(f)
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	file := newFuzzFile(f, "f.arrow")
	rss := watchPeakRSS()
	f.Fuzz(func(t *testing.T, data []byte) {
		rss.start()
		defer rss.check(t, data)
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		file.set(t, data)
		_, _, _, _, err := readAll(t, file.path, nil, decode.Options{Columns: columns.Spec{X: []string{"c0"}, Y: []string{"c1"}}, Allocator: mem})
		if err != nil && !strings.Contains(err.Error(), file.path) {
			t.Fatalf("error does not name the file: %v", err)
		}
	})
}
