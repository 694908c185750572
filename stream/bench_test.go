package stream

import (
	"fmt"
	"testing"

	"github.com/dime-project/dime/synth"
)

// BenchmarkEstimatorAdd measures streaming rows per second: d = 10 columns
// per view, D = 128 frequencies (256 features), blocks of 4096 rows, P = 1
// and P = 5 permuted accumulators (the analytic estimate needs no work per
// row). Target (issue 6) for P = 1, pure Go, 2 cores: ≥ 25,000 rows/s.
//
//	go test ./stream -run '^$' -bench .
func BenchmarkEstimatorAdd(b *testing.B) {
	const d, n = 10, 4096
	x, y, _ := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 2, Seed: 1}, n)
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	for _, P := range []int{1, 5} {
		b.Run(fmt.Sprintf("P=%d", P), func(b *testing.B) {
			e, _ := New(d, d, testConfig(d, 128, P, 1))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.Add(xd, yd, n)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
