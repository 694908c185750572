package covariance

import (
	"fmt"
	"testing"

	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// BenchmarkAdd measures accumulator rows per second (one blocked Syrk per
// block of 256 feature rows) at 2D = 256 and 512, with float64 and float32
// products, and the GFLOP/s of the rank-k update (p² flops per row for the
// upper triangle, p = 2D).
//
//	go test ./covariance -run '^$' -bench .
func BenchmarkAdd(b *testing.B) {
	const n = 256
	for _, prec := range []Precision{Float64, Float32} {
		for _, D := range []int{128, 256} {
			b.Run(fmt.Sprintf("features=%d/%v", 2*D, prec), func(b *testing.B) {
				spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: D, Seed: 1, SigmaX: 1, SigmaY: 1, DimX: 1, DimY: 1}
				a, _ := New(Description{Map: spec, Part: PartJoint})
				if err := a.SetPrecision(prec); err != nil {
					b.Fatal(err)
				}
				phi := block(n, 2*D, 1)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					a.Add(phi, n)
				}
				rows := float64(b.N * n)
				p := float64(2 * D)
				b.ReportMetric(rows/b.Elapsed().Seconds(), "rows/s")
				b.ReportMetric(rows*p*p/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

// BenchmarkEntropy measures the entropy of one accumulator (an eigenproblem
// of size 2D).
func BenchmarkEntropy(b *testing.B) {
	for _, D := range []int{128, 256} {
		b.Run(fmt.Sprintf("features=%d", 2*D), func(b *testing.B) {
			spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: D, Seed: 1, SigmaX: 1, SigmaY: 1, DimX: 1, DimY: 1}
			a, _ := New(Description{Map: spec, Part: PartJoint})
			a.Add(block(4*D, 2*D, 1), 4*D)
			b.ResetTimer()
			for range b.N {
				a.Entropy(1.01)
			}
		})
	}
}

// BenchmarkMeanAdd measures Mean.Add on a block of 256 rows of 512
// features (D = 256), the first moment every part and joint accumulator of
// the analytic estimator keeps beside its rank-k update.
func BenchmarkMeanAdd(b *testing.B) {
	const n, D = 256, 256
	spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: D, Seed: 1, SigmaX: 1, SigmaY: 1, DimX: 1, DimY: 1}
	m, _ := NewMean(Description{Map: spec, Part: PartJoint})
	phi := block(n, 2*D, 1)
	b.ReportAllocs()
	for range b.N {
		m.Add(phi, n)
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "rows/s")
}
