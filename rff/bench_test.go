package rff

import (
	"fmt"
	"testing"

	"github.com/dime-project/dime/vocab"
)

// BenchmarkTransform measures feature rows per second (d = 10 input columns)
// at 2D = 256 and 512 features, in blocks of 256 rows.
//
//	go test ./rff -run '^$' -bench .
func BenchmarkTransform(b *testing.B) {
	const d, n = 10, 256
	for _, D := range []int{128, 256} {
		b.Run(fmt.Sprintf("features=%d", 2*D), func(b *testing.B) {
			m := mustNew(b, Spec{Kernel: vocab.Gaussian, Sigma: 2, InputDim: d, Features: D, Seed: 1})
			x := randomBlock(n, d, 1)
			dst := make([]float64, n*2*D)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				m.Transform(dst, x, n)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkJoint measures joint feature rows per second from part features.
func BenchmarkJoint(b *testing.B) {
	const n = 256
	for _, D := range []int{128, 256} {
		b.Run(fmt.Sprintf("features=%d", 2*D), func(b *testing.B) {
			px, py := randomBlock(n, 2*D, 1), randomBlock(n, 2*D, 2)
			dst := make([]float64, n*2*D)
			b.ResetTimer()
			for range b.N {
				Joint(dst, px, py, n, D, nil)
			}
			b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
