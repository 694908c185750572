//go:build openblas

package linalg

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

func init() {
	// BenchmarkRankK and BenchmarkSyr2k compare with OpenBLAS on the same calls.
	extraRank = append(extraRank, rankImpl{"openblas", func(n, k int, a, c []float64) {
		netlib.Implementation{}.Dsyrk(blas.Upper, blas.Trans, n, k, 1, a, n, 1, c, n)
	}})
	extraSyr2k = func(ul blas.Uplo, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, c []float64, ldc int) {
		netlib.Implementation{}.Dsyr2k(ul, blas.NoTrans, n, k, alpha, a, lda, b, ldb, 1, c, ldc)
	}
}

// withRoutine runs f with r as the OpenBLAS backend's LAPACK driver.
func withRoutine(r lapackRoutine, f func()) {
	saved := eigenRoutine
	eigenRoutine = &r
	defer func() { eigenRoutine = saved }()
	f()
}

// TestLAPACKRoutinesAgree checks every LAPACK driver of the OpenBLAS
// backend against the pure-Go solver, as TestBackendsAgree does for the
// default one, on the same matrices and with the same bound, reusing one
// solver across drivers so that a workspace sized for one is never given to
// another. Measured largest difference over max|λ|: 1.3e-15, logged with
// -v for each.
func TestLAPACKRoutinesAgree(t *testing.T) {
	def := Current()
	defer Use(def)
	var s SymEigensolver
	for _, n := range []int{1, 2, 17, 200, 512} {
		for _, uplo := range []blas.Uplo{blas.Upper, blas.Lower} {
			a := poisonedSym(gaussianGram(n, 10, uint64(n)), n, uplo)
			want := eigenvaluesWith(t, Gonum, a)
			scale := max(math.Abs(want[0]), math.Abs(want[n-1]))
			for _, r := range []lapackRoutine{dsyevd, dsyevd2stage, dsyev2stage} {
				if err := Use(OpenBLAS); err != nil {
					t.Fatal(err)
				}
				var got []float64
				var err error
				withRoutine(r, func() {
					c := a
					c.Data = slices.Clone(a.Data)
					got, err = s.EigenvaluesInPlace(nil, c)
				})
				if err != nil {
					t.Fatalf("%v n=%d: %v", r, n, err)
				}
				var worst float64
				for i := range want {
					worst = max(worst, math.Abs(got[i]-want[i]))
				}
				if !slices.IsSorted(got) || !(worst <= 1e-12*scale) {
					t.Errorf("%v n=%d %c: max |Δλ| = %.3g (max|λ| %.3g), sorted %v", r, n, uplo, worst, scale, slices.IsSorted(got))
				}
				t.Logf("%v n=%d %c: max |Δλ| / max|λ| = %.2g", r, n, uplo, worst/scale)
			}
		}
	}
}

// BenchmarkLAPACKEigenvalues measures each LAPACK driver of the OpenBLAS
// backend (values only) on a random symmetric n×n matrix.
func BenchmarkLAPACKEigenvalues(b *testing.B) {
	def := Current()
	defer Use(def)
	if err := Use(OpenBLAS); err != nil {
		b.Fatal(err)
	}
	for _, n := range benchLAPACKSizes {
		a := randomSym(n, 1).RawSymmetric()
		scratch := blas64.Symmetric{N: n, Stride: n, Uplo: blas.Upper, Data: make([]float64, n*n)}
		dst := make([]float64, n)
		for _, r := range []lapackRoutine{dsyevd, dsyevd2stage, dsyev2stage} {
			b.Run(fmt.Sprintf("n=%d/%v", n, r), func(b *testing.B) {
				withRoutine(r, func() {
					var s SymEigensolver
					t := startCPU(b)
					for range b.N {
						copy(scratch.Data, a.Data)
						if _, err := s.EigenvaluesInPlace(dst, scratch); err != nil {
							b.Fatal(err)
						}
					}
					t.stopOp()
				})
			})
		}
	}
}

// benchLAPACKSizes are the orders BenchmarkLAPACKEigenvalues measures.
var benchLAPACKSizes = []int{256, 512, 1024, 1536, 2048}

func TestRoutineForSize(t *testing.T) {
	if routineFor(1024) != dsyevd || routineFor(twoStageMinN) != dsyevd2stage {
		t.Errorf("routineFor(1024) = %v, routineFor(%d) = %v", routineFor(1024), twoStageMinN, routineFor(twoStageMinN))
	}
}
