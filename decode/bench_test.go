package decode_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Benchmarks of reading and extracting 20 float64 columns (10 per view), the
// shape of the project's target: a 10-million-row file at well over 100k
// rows/s with a peak RSS under 150 MB.
//
//	go test ./io -run '^$' -bench . -benchtime 3x

const benchCols = 20

var benchX, benchY = tablewriter.ColumnNames("c", benchCols)[:10], tablewriter.ColumnNames("c", benchCols)[10:]

// writeBenchFile writes rows×20 random doubles with the TableWriter's
// defaults (65536-row batches and Parquet row groups, Snappy).
func writeBenchFile(b *testing.B, dir, ext string, rows int) string {
	b.Helper()
	path := filepath.Join(dir, fmt.Sprintf("bench%d%s", rows, ext))
	w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", benchCols), tablewriter.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const block = 10_000
	m := testMatrix(block, benchCols, 1)
	for i := 0; i < rows; i += block {
		if err := w.Write(m, block); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkRead reads a whole file into blocks of X and Y.
func BenchmarkRead(b *testing.B) {
	dir := b.TempDir()
	for _, tc := range []struct {
		ext  string
		rows int
	}{
		{".parquet", 1_000_000},
		{".arrow", 1_000_000},
		{".arrows", 1_000_000},
		{".csv", 100_000},
	} {
		path := writeBenchFile(b, dir, tc.ext, tc.rows)
		b.Run(fmt.Sprintf("%s/rows=%d", tc.ext[1:], tc.rows), func(b *testing.B) {
			b.SetBytes(int64(tc.rows) * benchCols * 8)
			for range b.N {
				r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: benchX, Y: benchY}})
				if err != nil {
					b.Fatal(err)
				}
				var sum float64
				for r.Next() {
					sum += r.X()[0] + r.Y()[len(r.Y())-1]
				}
				if r.Err() != nil || r.RowsRead() != int64(tc.rows) || sum == 0 {
					b.Fatalf("%v, %d rows", r.Err(), r.RowsRead())
				}
				r.Close()
			}
			b.ReportMetric(float64(tc.rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkExtract copies 65536 rows of an in-memory record into a block:
// the cost of the Extractor alone, which allocates nothing.
func BenchmarkExtract(b *testing.B) {
	const rows = 65536
	m := testMatrix(rows, benchCols, 2)
	fields := make([]arrow.Field, benchCols)
	for j := range fields {
		fields[j] = arrow.Field{Name: fmt.Sprintf("c%d", j), Type: arrow.PrimitiveTypes.Float64}
	}
	fields = append(fields,
		arrow.Field{Name: "emb", Type: arrow.FixedSizeListOf(16, arrow.PrimitiveTypes.Float32)},
		arrow.Field{Name: "i", Type: arrow.PrimitiveTypes.Int32, Nullable: true})
	schema := arrow.NewSchema(fields, nil)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	for j := 0; j < benchCols; j++ {
		for i := 0; i < rows; i++ {
			bld.Field(j).(*array.Float64Builder).Append(m[i*benchCols+j])
		}
	}
	emb := bld.Field(benchCols).(*array.FixedSizeListBuilder)
	for i := 0; i < rows; i++ {
		emb.Append(true)
		for k := 0; k < 16; k++ {
			emb.ValueBuilder().(*array.Float32Builder).Append(float32(i%100+k) / 7)
		}
		if i%1000 == 999 {
			bld.Field(benchCols + 1).AppendNull()
		} else {
			bld.Field(benchCols + 1).(*array.Int32Builder).Append(int32(i))
		}
	}
	rec := bld.NewRecord()
	defer rec.Release()
	for _, tc := range []struct {
		name string
		opts decode.Options
	}{
		{"float64 10+10", decode.Options{Columns: columns.Spec{X: benchX, Y: benchY}}},
		{"float64 10+10 skip", decode.Options{Columns: columns.Spec{X: benchX, Y: benchY}, Values: decode.Values{SkipInvalid: true}}},
		{"list<float32>[16]+int32 with nulls, skip", decode.Options{Columns: columns.Spec{X: []string{"emb"}, Y: []string{"i", "c0"}}, Values: decode.Values{SkipInvalid: true}}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ex, err := decode.NewExtractor("bench", schema, tc.opts)
			if err != nil {
				b.Fatal(err)
			}
			var blk decode.Block
			ex.Extract(&blk, rec) // sizes the block
			want := blk.Rows
			b.ResetTimer()
			b.ReportAllocs()
			b.SetBytes(int64(rows * (ex.DimX() + ex.DimY()) * 8))
			for range b.N {
				if err := ex.Extract(&blk, rec); err != nil || blk.Rows != want {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkWrite writes 1e6 rows×20 columns in blocks of 10,000 rows.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	const rows, block = 1_000_000, 10_000
	m := testMatrix(block, benchCols, 3)
	for _, ext := range []string{".parquet", ".arrow", ".arrows", ".csv"} {
		b.Run(ext[1:], func(b *testing.B) {
			b.SetBytes(rows * benchCols * 8)
			for range b.N {
				w, err := tablewriter.Create(filepath.Join(dir, "w"+ext), dataset.Auto, tablewriter.ColumnNames("c", benchCols), tablewriter.Options{})
				if err != nil {
					b.Fatal(err)
				}
				for i := 0; i < rows; i += block {
					w.Write(m, block)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkReadPrefetch reads a Parquet file of 1e6 rows while the caller
// works on each block for about as long as decoding it takes (a stand-in for
// the estimator), in step and with Options.Prefetch: with two cores, the
// prefetching reader hides most of the decoding behind the work. It also
// reads without work, which shows the cost of the hand-over.
func BenchmarkReadPrefetch(b *testing.B) {
	const rows = 1_000_000
	path := writeBenchFile(b, b.TempDir(), ".parquet", rows)
	for _, work := range []int{0, 12} {
		for _, prefetch := range []bool{false, true} {
			b.Run(fmt.Sprintf("work=%d/prefetch=%v", work, prefetch), func(b *testing.B) {
				var sink float64
				for range b.N {
					r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: benchX, Y: benchY}, Prefetch: prefetch})
					if err != nil {
						b.Fatal(err)
					}
					for r.Next() {
						x := r.X()
						for range work { // work passes over the block's X
							for _, v := range x {
								sink += v * v
							}
						}
					}
					if r.Err() != nil || r.RowsRead() != rows {
						b.Fatalf("%v, %d rows", r.Err(), r.RowsRead())
					}
					r.Close()
				}
				b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
				if sink == 0 && work > 0 {
					b.Fatal("no work done")
				}
			})
		}
	}
}
