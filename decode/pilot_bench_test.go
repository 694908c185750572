package decode_test

import (
	"context"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
)

// BenchmarkReadPilot measures the extra reading a sampled pilot costs: a
// pilot of 1,000 rows of a 2-million-row Parquet file (20 columns, 65,536-
// row groups; 2 columns per view selected) against one full reading of the
// same columns, which is what dime score does anyway. Run it on one core,
// where its time is its CPU time:
//
//	go test ./decode -run '^$' -bench ReadPilot -benchtime 5x -cpu 1
func BenchmarkReadPilot(b *testing.B) {
	path := writeBenchFile(b, b.TempDir(), ".parquet", 2_000_000)
	opts := decode.Options{Columns: columns.Spec{X: benchX[:2], Y: benchY[:2]}, Workers: 1}
	b.Run("pilot=1000", func(b *testing.B) {
		for i := range b.N {
			d, err := dataset.Resolve(context.Background(), []string{path}, opts.Files)
			if err != nil {
				b.Fatal(err)
			}
			p, err := decode.ReadPilot(context.Background(), d, opts, 1000, uint64(i))
			if err != nil || p.Rows != 1000 {
				b.Fatalf("%d rows: %v", p.Rows, err)
			}
		}
	})
	b.Run("full-read", func(b *testing.B) {
		for range b.N {
			r, err := decode.OpenDataset(context.Background(), []string{path}, nil, opts)
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for r.Next() {
				n += r.Rows()
			}
			r.Close()
			if err := r.Err(); err != nil || n != 2_000_000 {
				b.Fatalf("%d rows: %v", n, err)
			}
		}
	})
}
