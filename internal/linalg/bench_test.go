package linalg

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dime-project/dime/internal/linalg/asm"
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

// BenchmarkFMAPeak measures the FMA peak of one core with register-only
// loops of twelve independent FMAs (kernel_amd64.s): the ceiling the
// micro-kernels are measured against.
func BenchmarkFMAPeak(b *testing.B) {
	for _, c := range []struct {
		name  string
		ok    bool
		f     func(int)
		flops float64 // per iteration
	}{
		{"avx2", asm.HasAVX2, asm.FMAPeakAVX2, 12 * 4 * 2},
		{"avx512", asm.HasAVX512, asm.FMAPeakAVX512, 12 * 8 * 2},
	} {
		b.Run(c.name, func(b *testing.B) {
			if !c.ok {
				b.Skip("not available on this CPU or build")
			}
			const iters = 1 << 20
			t := startCPU(b)
			for range b.N {
				c.f(iters)
			}
			t.stop(c.flops * iters * float64(b.N))
		})
	}
}

// rankImpl is one implementation of the Dsyrk of BenchmarkRankK.
type rankImpl struct {
	name string
	run  func(n, k int, a []float64, c []float64)
}

// extraRank and extraSyr2k are OpenBLAS's Dsyrk and Dsyr2k in a build with
// the tag openblas (openblas_test.go), nil otherwise.
var (
	extraRank  []rankImpl
	extraSyr2k func(ul blas.Uplo, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int)
)

// BenchmarkRankK measures the blocked rank-k update C += ΦᵀΦ (upper) with
// every micro-kernel, gonum's Dsyrk and OpenBLAS's (with the tag
// openblas, one thread) for reference, on the accumulators' call: 256 rows of 2D features, D = 128 and 256 (the default), and a
// taller Φ. GFLOP/s counts rows·n·(n+1) flops per call (the triangle).
func BenchmarkRankK(b *testing.B) {
	impls := []rankImpl{{"gonum", func(n, k int, a, c []float64) {
		gonum.Implementation{}.Dsyrk(blas.Upper, blas.Trans, n, k, 1, a, n, 1, c, n)
	}}}
	for _, kern := range kernels64 {
		impls = append(impls, rankImpl{kern.name, func(n, k int, a, c []float64) {
			withKernel64(kern, func() { gonumBLAS{}.Dsyrk(blas.Upper, blas.Trans, n, k, 1, a, n, 1, c, n) })
		}})
	}
	impls = append(impls, extraRank...)
	for _, sh := range [][2]int{{256, 256}, {256, 512}, {4096, 512}} {
		rows, n := sh[0], sh[1]
		r := rand.New(rand.NewPCG(uint64(n), 3))
		a := make([]float64, rows*n)
		for i := range a {
			a[i] = r.NormFloat64()
		}
		c := make([]float64, n*n)
		for _, im := range impls {
			b.Run(fmt.Sprintf("rows=%d/n=%d/%s", rows, n, im.name), func(b *testing.B) {
				t := startCPU(b)
				for range b.N {
					im.run(n, rows, a, c)
				}
				t.stop(float64(rows) * float64(n) * float64(n+1) * float64(b.N))
			})
		}
	}
}

// BenchmarkSyr2k measures the rank-2k update of LAPACK's tridiagonal
// reduction (NoTrans, k = 32 columns, strided blocks of an n×n matrix) with
// the blocked Dsyr2k and with gonum's. GFLOP/s counts 2·n·(n+1)·k flops.
func BenchmarkSyr2k(b *testing.B) {
	const n, k = 1024, 32
	r := rand.New(rand.NewPCG(5, 3))
	a := make([]float64, n*n)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	w := make([]float64, n*k)
	for i := range w {
		w[i] = r.NormFloat64()
	}
	c := make([]float64, n*n)
	run := map[string]func(){
		"gonum": func() {
			gonum.Implementation{}.Dsyr2k(blas.Upper, blas.NoTrans, n-k, k, -1, a[n-k:], n, w, k, 1, c, n)
		},
		"blocked": func() {
			gonumBLAS{}.Dsyr2k(blas.Upper, blas.NoTrans, n-k, k, -1, a[n-k:], n, w, k, 1, c, n)
		},
	}
	names := []string{"gonum", "blocked"}
	if extraSyr2k != nil {
		run["openblas"] = func() { extraSyr2k(blas.Upper, n-k, k, -1, a[n-k:], n, w, k, c, n) }
		names = append(names, "openblas")
	}
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			t := startCPU(b)
			for range b.N {
				run[name]()
			}
			t.stop(2 * float64(n-k) * float64(n-k+1) * k * float64(b.N))
		})
	}
}

// BenchmarkMicroKernel runs each micro-kernel alone on packed panels that
// stay in the L1 cache (k = 64), adding into one tile: the ceiling of the
// blocked update with that kernel.
func BenchmarkMicroKernel(b *testing.B) {
	const k = 64
	for _, kern := range kernels64 {
		b.Run(kern.name, func(b *testing.B) {
			lp := make([]float64, k*kern.w)
			rp := make([]float64, k*kern.nr())
			c := make([]float64, kern.mr*kern.nr())
			t := startCPU(b)
			for range b.N {
				kern.fn(k, &lp[0], &rp[0], k*kern.w*8, &c[0], kern.nr(), 1)
			}
			t.stop(2 * float64(k*kern.mr*kern.nr()) * float64(b.N))
		})
	}
}

// BenchmarkAddAtA measures AddAtA, the accumulators' update, on 256 rows of
// 512 features with float64 and float32 products on every backend compiled
// in (and, with OpenBLAS, float32 through its ssyrk), into a dense matrix
// and (the -triangle variants) into the packed Triangle of the
// accumulators (float32-triangle-scratch: with the tiles across the
// diagonal through the scratch tile rather than the masked kernel).
// GFLOP/s counts rows·n·(n+1) flops per call, whatever the precision.
func BenchmarkAddAtA(b *testing.B) {
	const rows, n = 256, 512
	r := rand.New(rand.NewPCG(6, 3))
	a := blas64.General{Rows: rows, Cols: n, Stride: n, Data: make([]float64, rows*n)}
	for i := range a.Data {
		a.Data[i] = r.NormFloat64()
	}
	c := blas64.Symmetric{N: n, Stride: n, Uplo: blas.Upper, Data: make([]float64, n*n)}
	tri := NewTriangle(n)
	forEachBackend(b, func(b *testing.B) {
		for _, variant := range []string{"float64", "float64-triangle", "float64-dsyrk", "float32", "float32-triangle", "float32-triangle-scratch", "float32-scalar-packing", "float32-ssyrk"} {
			if (variant == "float32-ssyrk" || variant == "float64-dsyrk") && Current() != OpenBLAS {
				continue
			}
			prec := map[string]Precision{"float64": Float64, "float64-triangle": Float64, "float64-dsyrk": Float64,
				"float32": Float32, "float32-triangle": Float32, "float32-triangle-scratch": Float32, "float32-scalar-packing": Float32, "float32-ssyrk": Float32}[variant]
			packed := strings.Contains(variant, "-triangle")
			b.Run(variant, func(b *testing.B) {
				forceSsyrk32 = variant == "float32-ssyrk"
				forceDsyrk64 = variant == "float64-dsyrk"
				saved, savedKern := cvtGroups, kernel32
				if variant == "float32-scalar-packing" {
					cvtGroups = nil
				}
				if variant == "float32-triangle-scratch" {
					// The diagonal tiles through the scratch tile, as
					// before the masked kernel.
					kernel32.masked, kernel32.diagMasks, kernel32.colMasks = nil, nil, nil
				}
				defer func() { forceSsyrk32, forceDsyrk64, cvtGroups, kernel32 = false, false, saved, savedKern }()
				t := startCPU(b)
				for range b.N {
					var err error
					if packed {
						err = AddAtATriangle(prec, 1, a, tri)
					} else {
						err = AddAtA(prec, 1, a, c)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
				t.stop(float64(rows) * n * (n + 1) * float64(b.N))
			})
		}
	})
}

// BenchmarkMaskedKernel runs the float32 micro-kernels that have a masked
// variant on panels in the L1 cache, adding into one tile: the plain
// kernel, the masked one with every bit set (the cost of the masked store
// alone) and with the masks of a diagonal tile (d = 0), at k = 64 and 256.
func BenchmarkMaskedKernel(b *testing.B) {
	for _, kern := range maskedKernels32() {
		for _, k := range []int{64, 256} {
			lp := make([]float32, k*kern.w)
			rp := make([]float32, k*kern.nr())
			c := make([]float64, kern.mr*kern.nr())
			full := make([]uint16, kern.mr*kern.nr()/8)
			for i := range full {
				full[i] = 0xff
			}
			for _, v := range []string{"plain", "masked-full", "masked-diagonal"} {
				b.Run(fmt.Sprintf("%s/k=%d/%s", kern.name, k, v), func(b *testing.B) {
					mask := full
					masked := kern.masked[kern.np-1]
					if v == "masked-diagonal" {
						mask = kern.diagMasks[0]
					}
					t := startCPU(b)
					for range b.N {
						if v == "plain" {
							kern.fn(k, &lp[0], &rp[0], k*kern.w*4, &c[0], kern.nr(), 1)
						} else {
							masked(k, &lp[0], &rp[0], k*kern.w*4, &c[0], kern.nr(), 1, &mask[0])
						}
					}
					t.stop(2 * float64(k*kern.mr*kern.nr()) * float64(b.N))
				})
			}
		}
	}
}
