package decode_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// benchDatasetRows is the number of rows of BenchmarkDataset's datasets:
// DIME_BENCH_ROWS, or 10⁷ (the 1 file × 10⁷ rows against 100 files
// × 10⁵ rows, 20 float64 columns: 1.6 GB each, written once per run).
func benchDatasetRows() int {
	if n, err := strconv.Atoi(os.Getenv("DIME_BENCH_ROWS")); err == nil && n > 0 {
		return n
	}
	return 10_000_000
}

// writeBenchDataset writes rows×20 random doubles as files Parquet files of
// the TableWriter's defaults in hive directories part=K below dir.
func writeBenchDataset(b *testing.B, dir string, files, rows int) string {
	b.Helper()
	m := testMatrix(10_000, benchCols, 1)
	for k := 0; k < files; k++ {
		path := filepath.Join(dir, fmt.Sprintf("part=%05d", k), "part.parquet")
		os.MkdirAll(filepath.Dir(path), 0o755)
		w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", benchCols), tablewriter.Options{})
		if err != nil {
			b.Fatal(err)
		}
		for left := rows / files; left > 0; {
			n := min(left, 10_000)
			if err := w.Write(m[:n*benchCols], n); err != nil {
				b.Fatal(err)
			}
			left -= n
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkDataset reads the same rows from one file and from a directory
// of 100 files with a DatasetReader (default workers: GOMAXPROCS, at most 4),
// all 20 columns as X and Y: the rows/s of decoding, which a directory must
// match. Set DIME_BENCH_ROWS for smaller datasets.
func BenchmarkDataset(b *testing.B) {
	rows := benchDatasetRows()
	for _, files := range []int{1, 100} {
		dir := writeBenchDataset(b, b.TempDir(), files, rows)
		for _, workers := range []int{1, 0} {
			b.Run(fmt.Sprintf("files=%d/rows=%d/workers=%d", files, rows, workers), func(b *testing.B) {
				for range b.N {
					r, err := decode.OpenDataset(context.Background(), []string{dir}, nil, decode.Options{Columns: columns.Spec{X: benchX, Y: benchY}, Workers: workers})
					if err != nil {
						b.Fatal(err)
					}
					n := 0
					for r.Next() {
						n += r.Rows()
					}
					if r.Err() != nil || n != rows/files*files {
						b.Fatalf("%v, %d rows", r.Err(), n)
					}
					r.Close()
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
