package linalg

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Benchmarks of the dense kernels on every backend compiled in (both with
// -tags openblas, gonum alone otherwise):
//
//	go test ./internal/linalg -run '^$' -bench .
//	go test -tags openblas ./internal/linalg -run '^$' -bench .

// forEachBackend runs f as a sub-benchmark per available backend, switching
// the process to it and back to the build's default afterwards.
func forEachBackend(b *testing.B, f func(b *testing.B)) {
	def := Current()
	defer Use(def)
	for _, be := range []Backend{Gonum, OpenBLAS} {
		if !be.Available() {
			continue
		}
		if err := Use(be); err != nil {
			b.Fatal(err)
		}
		b.Run("backend="+be.String(), f)
	}
}

// BenchmarkSymEigenvalues measures one values-only eigensolve of a random
// symmetric n×n matrix, the unit of work of the exact estimators.
func BenchmarkSymEigenvalues(b *testing.B) {
	forEachBackend(b, func(b *testing.B) {
		for _, n := range []int{256, 1024} {
			b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
				a := randomSym(n, 1).RawSymmetric()
				scratch := blas64.Symmetric{N: n, Stride: n, Uplo: blas.Upper, Data: make([]float64, n*n)}
				dst := make([]float64, n)
				var s SymEigensolver
				b.ResetTimer()
				for range b.N {
					copy(scratch.Data, a.Data)
					if _, err := s.EigenvaluesInPlace(dst, scratch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	})
}

// BenchmarkSyrk measures C += Φᵀ Φ (upper triangle) for Φ of 4096 rows and k
// columns through blas64, the kernel of Gram matrices and covariance
// accumulators, and reports GFLOP/s (4096·k·(k+1) flops per call).
func BenchmarkSyrk(b *testing.B) {
	const rows = 4096
	forEachBackend(b, func(b *testing.B) {
		for _, k := range []int{256, 512} {
			b.Run(fmt.Sprintf("rows=%d/k=%d", rows, k), func(b *testing.B) {
				r := rand.New(rand.NewPCG(uint64(k), 2))
				phi := blas64.General{Rows: rows, Cols: k, Stride: k, Data: make([]float64, rows*k)}
				for i := range phi.Data {
					phi.Data[i] = r.NormFloat64()
				}
				c := blas64.Symmetric{N: k, Stride: k, Uplo: blas.Upper, Data: make([]float64, k*k)}
				b.ResetTimer()
				for range b.N {
					blas64.Syrk(blas.Trans, 1, phi, 1, c)
				}
				flops := float64(rows) * float64(k) * float64(k+1)
				b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	})
}
