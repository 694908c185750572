//go:build !dimefuzz

package stream

import (
	"fmt"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/dime-project/dime/synth"
)

// Benchmarks of the streaming estimator: d = 10 columns per view, read from
// in-memory Arrow record batches of decode.DefaultBatchSize rows (each its
// own shuffle scope, as dime score reads Parquet) through a decode.Extractor,
// added, and a Result (with the analytic estimate) at the end of each pass of
// 16 batches. Targets (issue 6), 2 cores, D = 128, P = 1: ≥ 100,000 rows/s
// with -tags openblas, ≥ 25,000 rows/s in pure Go, and at least 0.7 of the
// rate that the same accumulators reach with their rank-k updates alone.
//
//	go test ./stream -run '^$' -bench EstimatorAdd -benchtime 3x
//	go test -tags openblas ./stream -run '^$' -bench EstimatorAdd -benchtime 10x
//
// Metrics: rows/s of the estimator (extraction, features, joint features,
// rank-k updates, merges of the workers' accumulators, the Result);
// syrk-rows/s, the rate of the rank-k updates alone (the same P+3
// accumulators, the same chunks of chunkRows feature rows, shared out to the
// same workers; measured in the same iteration right after the estimator's
// pass); and ratio, the first over the second.
func BenchmarkEstimatorAdd(b *testing.B) {
	const d, batches = 10, 16
	const batchRows = decode.DefaultBatchSize
	recs := arrowBatches(b, d, batchRows, batches)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for _, c := range []struct{ D, P int }{{256, 0}, {256, 5}, {128, 1}} {
		b.Run(fmt.Sprintf("D=%d/P=%d", c.D, c.P), func(b *testing.B) {
			cfg := testConfig(d, c.D, c.P, 1)
			ex, err := decode.NewExtractor("bench", recs[0].Schema(), decode.Options{Columns: columns.Spec{X: tablewriter.ColumnNames("x", d), Y: tablewriter.ColumnNames("y", d)}})
			if err != nil {
				b.Fatal(err)
			}
			var blk decode.Block
			pass := func(e *Estimator) {
				for _, rec := range recs {
					if err := ex.Extract(&blk, rec); err != nil {
						b.Fatal(err)
					}
					if err := e.Add(blk.X, blk.Y, blk.Rows); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := e.Result(); err != nil {
					b.Fatal(err)
				}
			}
			e, _ := New(d, d, cfg)
			pass(e) // sizes the workers' accumulators and buffers
			rows := float64(batches * batchRows)
			var syrk time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.Reset()
				pass(e)
				b.StopTimer()
				syrk += syrkOnly(e, batchRows, batches)
				b.StartTimer()
			}
			rate := rows * float64(b.N) / b.Elapsed().Seconds()
			syrkRate := rows * float64(b.N) / syrk.Seconds()
			b.ReportMetric(rate, "rows/s")
			b.ReportMetric(syrkRate, "syrk-rows/s")
			b.ReportMetric(rate/syrkRate, "ratio")
			b.ReportMetric(float64(len(e.pool)), "workers")
		})
	}
}

// syrkOnly times the rank-k updates alone of scopes of scopeRows rows: the
// workers that the estimator uses for such a scope add, chunk by chunk, the
// same feature rows to the same accumulators as the estimator (their groups'
// without permutations, their slots' with), from their own buffers, without
// mapping features. The estimator's accumulators are then emptied.
func syrkOnly(e *Estimator, scopeRows, scopes int) time.Duration {
	K := len(e.groups)
	size := min(chunkRows, (scopeRows+K-1)/K)
	chunks := (scopeRows + size - 1) / size
	workers := e.pool[:e.workerCount(scopeRows, chunks)]
	W := len(workers)
	p := 2 * e.cfg.Features
	scope := func(w *worker, first int64) {
		for i := 0; i < chunks; i++ {
			rows := min(size, scopeRows-i*size)
			chunk := first + int64(i)
			g := &e.groups[chunk%int64(K)]
			self := e.isSelfChunk(chunk)
			phi := w.joint[:rows*p]
			if len(e.perm) == 0 {
				if int(chunk%int64(K))%W != w.index {
					continue
				}
				g.x.Add(phi, rows)
				g.y.Add(phi, rows)
				g.xy.Add(phi, rows)
				if self {
					g.cx.Add(phi, rows)
					g.cy.Add(phi, rows)
					g.sx.Add(phi, rows)
					g.sy.Add(phi, rows)
				}
				continue
			}
			P := len(e.perm)
			for j := w.index; j < e.slots(); j += W {
				switch {
				case j == 0:
					g.x.Add(phi, rows)
				case j == 1:
					g.y.Add(phi, rows)
				case j == 2:
					g.xy.Add(phi, rows)
				case j == 3+P && self:
					g.cx.Add(phi, rows)
					g.sx.Add(phi, rows)
				case j == 4+P && self:
					g.cy.Add(phi, rows)
					g.sy.Add(phi, rows)
				case j >= 3 && j < 3+P:
					e.perm[j-3].Add(phi, rows)
				}
			}
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for s := range scopes {
		first := int64(s * chunks)
		wg.Add(W - 1)
		for _, w := range workers[1:] {
			go func() {
				defer wg.Done()
				scope(w, first)
			}()
		}
		scope(workers[0], first)
		wg.Wait()
	}
	elapsed := time.Since(start)
	e.Reset()
	return elapsed
}

// (x0…x{d−1}, y0…y{d−1}, float64), as dime gen writes them.
func arrowBatches(b *testing.B, d, rows, n int) []arrow.Record {
	b.Helper()
	fields := make([]arrow.Field, 0, 2*d)
	for _, name := range append(tablewriter.ColumnNames("x", d), tablewriter.ColumnNames("y", d)...) {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64})
	}
	schema := arrow.NewSchema(fields, nil)
	src, err := synth.NewStream(synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 2, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	x, y := make([]float64, rows*d), make([]float64, rows*d)
	bld := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer bld.Release()
	recs := make([]arrow.Record, n)
	for i := range recs {
		src.Fill(x, y)
		for j := 0; j < 2*d; j++ {
			v, col := x, j
			if j >= d {
				v, col = y, j-d
			}
			fb := bld.Field(j).(*array.Float64Builder)
			for r := 0; r < rows; r++ {
				fb.Append(v[r*d+col])
			}
		}
		recs[i] = bld.NewRecord()
	}
	return recs
}
