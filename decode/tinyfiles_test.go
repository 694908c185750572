//go:build !dimefuzz

package decode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// TestTinyParquetFilesGarbage bounds the bytes allocated per file when a
// dataset of many two-row Parquet files is read: the read buffers of the
// pages and of the page-CRC verification are sized to the column chunks
// (a few hundred bytes here), not 64 KiB each. Measured: 203 KB per file
// (of which 128 KiB are Arrow's own: a 16 KiB look at each page header and
// a 16 KiB page buffer per column), against 464 KB before (a 64 KiB page
// buffer per column and one for the verification).
func TestTinyParquetFilesGarbage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes what the runtime allocates")
	}
	dir := t.TempDir()
	const files = 200
	for k := range files {
		m := []float64{float64(k), 1, 2, 3, 4, 5, float64(k), 7, 8, 9, 10, 11}
		writeMatrixFile(t, filepath.Join(dir, fmt.Sprintf("part-%04d.parquet", k)), m, tablewriter.Options{})
	}
	opts := decode.Options{Columns: columns.Spec{X: dsX[:2], Y: dsY[:2]}, Workers: 1}
	read := func() uint64 {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r, err := decode.OpenDataset(context.Background(), []string{dir}, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		rows := 0
		for r.Next() {
			rows += r.Rows()
		}
		if err := r.Err(); err != nil || rows != 2*files {
			t.Fatalf("%d rows, error %v", rows, err)
		}
		r.Close()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	read() // warm: the pools and the first file's schema
	perFile := read() / files
	t.Logf("%d two-row Parquet files: %d bytes allocated per file", files, perFile)
	if perFile > 256<<10 {
		t.Errorf("%d bytes allocated per two-row file, want at most %d", perFile, 256<<10)
	}
}
