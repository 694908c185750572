package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestDsymvMatchesGonum compares gonumBLAS.Dsymv with gonum's Dsymv on random
// inputs over both triangles, strides, increments, alpha and beta, below
// and above symvMinN. Both sum the same products in different orders, so
// they differ by round-off: measured, at most 3.7e-17 of the scale
// |alpha|·n·max|A|·max|x| + |beta|·max|y|. The bound is 1e-15 of that scale;
// a missing or misplaced product would be off by about 1e-3 of it.
func TestDsymvMatchesGonum(t *testing.T) {
	saved := dotAxpy
	defer func() { dotAxpy = saved }()
	for _, rk := range rowKernels {
		dotAxpy = rk
		t.Run(rk.name, testDsymvMatchesGonum)
	}
}

func testDsymvMatchesGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 5, symvMinN, 17, 24, 33, 200} {
		for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
			for _, pad := range []int{0, 3} {
				for _, inc := range [][2]int{{1, 1}, {3, 2}, {n + pad, 1}} {
					for _, ab := range [][2]float64{{1, 0}, {-0.5, 1}, {2, 0.3}, {0, 0.3}} {
						name := fmt.Sprintf("n=%d/%c/lda=n+%d/inc=%v/alpha,beta=%v", n, ul, pad, inc, ab)
						lda, incX, incY := n+pad, inc[0], inc[1]
						a := make([]float64, lda*n)
						for i := range a {
							a[i] = rng.NormFloat64()
						}
						x := make([]float64, (n-1)*incX+1)
						for i := range x {
							x[i] = rng.NormFloat64()
						}
						y := make([]float64, (n-1)*incY+1)
						for i := range y {
							y[i] = rng.NormFloat64()
						}
						if ab[1] == 0 {
							for i := range y {
								y[i] = math.NaN() // beta = 0: y must not be read
							}
						}
						want := append([]float64(nil), y...)
						got := append([]float64(nil), y...)
						gonum.Implementation{}.Dsymv(ul, n, ab[0], a, lda, x, incX, ab[1], want, incY)
						gonumBLAS{}.Dsymv(ul, n, ab[0], a, lda, x, incX, ab[1], got, incY)
						scale := (math.Abs(ab[0])*float64(n)*maxAbs(a)*maxAbs(x) + math.Abs(ab[1])*maxAbs(y)) + 1e-300
						for i := range got {
							if i%incY != 0 {
								if math.Float64bits(got[i]) != math.Float64bits(y[i]) && !(math.IsNaN(got[i]) && math.IsNaN(y[i])) {
									t.Fatalf("%s: y[%d] between the increments changed", name, i)
								}
								continue
							}
							if d := math.Abs(got[i] - want[i]); !(d <= 1e-15*scale) {
								t.Fatalf("%s: y[%d] = %v, gonum %v", name, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

func maxAbs(s []float64) float64 {
	m := 0.0
	for _, v := range s {
		if !math.IsNaN(v) {
			m = max(m, math.Abs(v))
		}
	}
	return m
}

// TestDsymvBadArguments checks that arguments breaking the BLAS contract
// reach gonum's checks (a panic, as every gonum BLAS call) rather than an
// index out of range in the fast path.
func TestDsymvBadArguments(t *testing.T) {
	n := 32
	a, x, y := make([]float64, n*n), make([]float64, n), make([]float64, n)
	for _, c := range []struct {
		name string
		f    func()
	}{
		{"short a", func() { gonumBLAS{}.Dsymv(blas.Upper, n, 1, a[:n*n-1], n, x, 1, 0, y, 1) }},
		{"short x", func() { gonumBLAS{}.Dsymv(blas.Upper, n, 1, a, n, x[:n-1], 1, 0, y, 1) }},
		{"lda < n", func() { gonumBLAS{}.Dsymv(blas.Lower, n, 1, a, n-1, x, 1, 0, y, 1) }},
		{"zero incY", func() { gonumBLAS{}.Dsymv(blas.Lower, n, 1, a, n, x, 1, 0, y, 0) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", c.name)
				}
			}()
			c.f()
		}()
	}
}
