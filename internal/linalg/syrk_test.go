package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/dime-project/dime/internal/linalg/asm"
)

// withKernel64 runs f with kern as the float64 micro-kernel of gonumBLAS.
func withKernel64(kern microKernel[float64], f func()) {
	saved, savedBlocked := kernel64, blocked64
	kernel64, blocked64 = kern, true
	defer func() { kernel64, blocked64 = saved, savedBlocked }()
	f()
}

// rankCase is one shape of a Dsyrk or Dsyr2k test.
type rankCase struct {
	ul          blas.Uplo
	tA          blas.Transpose
	n, k        int
	padA, padC  int
	alpha, beta float64
}

func (c rankCase) String() string {
	return fmt.Sprintf("%c%c/n=%d/k=%d/padA=%d/padC=%d/alpha=%g/beta=%g", c.ul, c.tA, c.n, c.k, c.padA, c.padC, c.alpha, c.beta)
}

// rankCases lists the shapes every kernel is tested on: odd sizes around
// the tile sizes (4, 6, 8, 12, 16, 32) and the block sizes (kcBlock = 256,
// mcRows = 128), k = 1, k across a block boundary, padded strides, both
// triangles and transposes, and alpha/beta cases including 0 (C not read
// when beta = 0). A seeded random subset of the full product keeps the test
// within a few seconds.
func rankCases(rng *rand.Rand) []rankCase {
	var cases []rankCase
	ns := []int{1, 2, 3, 5, 7, 12, 13, 16, 17, 31, 33, 64, 100, 131, 257}
	ks := []int{1, 2, 3, 8, 31, 64, 255, 256, 257, 520}
	if testing.Short() {
		// The race run: every tile and edge case still, and k across the
		// block boundary, but not the large products.
		ns = []int{1, 2, 3, 5, 7, 12, 13, 16, 17, 31, 33}
		ks = []int{1, 2, 3, 8, 31, 255, 257}
	}
	abs := [][2]float64{{1, 1}, {1, 0}, {-0.5, 2}, {0, 0.5}, {0, 0}, {2.5, 0}, {-1, 1}}
	for _, n := range ns {
		for _, k := range ks {
			for _, ul := range []blas.Uplo{blas.Upper, blas.Lower} {
				for _, tA := range []blas.Transpose{blas.NoTrans, blas.Trans} {
					if n*k > 2000 && rng.IntN(4) != 0 {
						continue // the larger shapes in a quarter of the combinations
					}
					ab := abs[rng.IntN(len(abs))]
					cases = append(cases, rankCase{ul, tA, n, k, rng.IntN(2) * 3, rng.IntN(2) * 5, ab[0], ab[1]})
				}
			}
		}
	}
	return cases
}

// randomOperand returns the data of an operand of c's shape (n×k for
// NoTrans, k×n for Trans) with its leading dimension, and NaN in the
// padding so that reading it shows.
func randomOperand(rng *rand.Rand, c rankCase) ([]float64, int) {
	row, col := c.n, c.k
	if c.tA != blas.NoTrans {
		row, col = c.k, c.n
	}
	ld := col + c.padA
	a := make([]float64, (row-1)*ld+col)
	for i := range a {
		if i%ld < col {
			a[i] = rng.NormFloat64()
		} else {
			a[i] = math.NaN()
		}
	}
	return a, ld
}

// randomC returns an n×n C with row stride n+padC: random values in the
// triangle (NaN when beta = 0, which must not be read) and NaN elsewhere,
// which must not be written.
func randomC(rng *rand.Rand, c rankCase) ([]float64, int) {
	ldc := c.n + c.padC
	data := make([]float64, (c.n-1)*ldc+c.n)
	for i := range data {
		data[i] = math.NaN()
	}
	for i := range c.n {
		for j := range c.n {
			if inTriangle(c.ul, i, j) && c.beta != 0 {
				data[i*ldc+j] = rng.NormFloat64()
			}
		}
	}
	return data, ldc
}

// referenceC returns the C that gonum's reference routine is given: a copy
// of c0 with zeros instead of the NaN of the triangle when beta = 0. The BLAS
// contract says C is not read then, but gonum v0.17's Dsyrk reads it in the
// Lower, Trans case (0·NaN = NaN); our Dsyrk is checked on the NaN itself.
func referenceC(c0 []float64, c rankCase) []float64 {
	ref := append([]float64(nil), c0...)
	if c.beta == 0 {
		ldc := c.n + c.padC
		for i := range c.n {
			for j := range c.n {
				if inTriangle(c.ul, i, j) {
					ref[i*ldc+j] = 0
				}
			}
		}
	}
	return ref
}

func inTriangle(ul blas.Uplo, i, j int) bool {
	return (ul == blas.Upper && j >= i) || (ul == blas.Lower && j <= i)
}

// checkUpdate compares got with want (gonum's result) from the same initial
// C0: entries outside the triangle and in the padding must be untouched
// (bitwise), and entries in it within tol·scale(i, j), where scale is
// |alpha|·Σ_p |L_ip|·|R_jp| + |beta|·|C0_ij|. It returns the largest
// |got − want| / scale seen.
func checkUpdate(t *testing.T, name string, ul blas.Uplo, n, ldc int, c0, got, want []float64, scale func(i, j int) float64, tol float64) float64 {
	t.Helper()
	var worst float64
	for idx := range got {
		i, j := idx/ldc, idx%ldc
		if j >= n || !inTriangle(ul, i, j) {
			if math.Float64bits(got[idx]) != math.Float64bits(c0[idx]) {
				t.Fatalf("%s: C[%d,%d] outside the triangle changed from %v to %v", name, i, j, c0[idx], got[idx])
			}
			continue
		}
		s := scale(i, j)
		d := math.Abs(got[idx] - want[idx])
		if !(d <= tol*s) {
			t.Fatalf("%s: C[%d,%d] = %v, gonum %v (|Δ| = %.3g, scale %.3g)", name, i, j, got[idx], want[idx], d, s)
		}
		if s > 0 {
			worst = max(worst, d/s)
		}
	}
	return worst
}

// absDot returns Σ_p |x(i,p)|·|y(j,p)| for operands of the case's layout.
func absDot(tA blas.Transpose, k int, x []float64, ldx int, y []float64, ldy, i, j int) float64 {
	var s float64
	for p := range k {
		if tA == blas.NoTrans {
			s += math.Abs(x[i*ldx+p]) * math.Abs(y[j*ldy+p])
		} else {
			s += math.Abs(x[p*ldx+i]) * math.Abs(y[p*ldy+j])
		}
	}
	return s
}

// TestDsyrkMatchesGonum runs gonumBLAS.Dsyrk with every micro-kernel this
// CPU has (the portable Go one, AVX2+FMA, AVX-512) against gonum's reference
// Dsyrk on the shapes of rankCases.
//
// Both compute each entry as a sum of the same k products in different
// orders (and the kernels with FMA, rounding once per product-add), so they
// differ by round-off, which the standard bound of a k-term dot product
// limits to γ = (k+2)·ε (ε = 2⁻⁵³) times scale(i, j) = |alpha|·Σ_p |a_ip·a_jp|
// + |beta|·|C_ij| (Higham, Accuracy and Stability of Numerical Algorithms,
// §3.1): that is the bound. Measured: at most 2.1e-15 of scale(i, j) for k
// up to 520 (logged with -v), inside; a wrong product, a lost block of k or a
// tile added twice is off by O(1) of scale.
func TestDsyrkMatchesGonum(t *testing.T) {
	for _, kern := range kernels64 {
		t.Run(kern.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, 8))
			var worst float64
			for _, c := range rankCases(rng) {
				a, lda := randomOperand(rng, c)
				c0, ldc := randomC(rng, c)
				want := referenceC(c0, c)
				got := append([]float64(nil), c0...)
				gonum.Implementation{}.Dsyrk(c.ul, c.tA, c.n, c.k, c.alpha, a, lda, c.beta, want, ldc)
				withKernel64(kern, func() {
					gonumBLAS{}.Dsyrk(c.ul, c.tA, c.n, c.k, c.alpha, a, lda, c.beta, got, ldc)
				})
				scale := func(i, j int) float64 {
					s := math.Abs(c.alpha) * absDot(c.tA, c.k, a, lda, a, lda, i, j)
					if c.beta != 0 {
						s += math.Abs(c.beta) * math.Abs(c0[i*ldc+j])
					}
					return s
				}
				gamma := float64(c.k+2) * 0x1p-53
				worst = max(worst, checkUpdate(t, c.String(), c.ul, c.n, ldc, c0, got, want, scale, gamma))
			}
			t.Logf("%s: largest |Δ|/scale %.3g", kern.name, worst)
		})
	}
}

// TestDsyr2kMatchesGonum is TestDsyrkMatchesGonum for Dsyr2k: 2k products
// per entry, so the bound is (2k+2)·ε·scale with scale = |alpha|·Σ_p
// (|a_ip·b_jp| + |b_ip·a_jp|) + |beta|·|C_ij|. Measured: at most 5.3e-16 of
// scale.
func TestDsyr2kMatchesGonum(t *testing.T) {
	for _, kern := range kernels64 {
		t.Run(kern.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			var worst float64
			for _, c := range rankCases(rng) {
				a, lda := randomOperand(rng, c)
				bc := c
				bc.padA = 3 - c.padA // another stride for B
				b, ldb := randomOperand(rng, bc)
				c0, ldc := randomC(rng, c)
				want := referenceC(c0, c)
				got := append([]float64(nil), c0...)
				gonum.Implementation{}.Dsyr2k(c.ul, c.tA, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, want, ldc)
				withKernel64(kern, func() {
					gonumBLAS{}.Dsyr2k(c.ul, c.tA, c.n, c.k, c.alpha, a, lda, b, ldb, c.beta, got, ldc)
				})
				scale := func(i, j int) float64 {
					s := math.Abs(c.alpha) * (absDot(c.tA, c.k, a, lda, b, ldb, i, j) + absDot(c.tA, c.k, b, ldb, a, lda, i, j))
					if c.beta != 0 {
						s += math.Abs(c.beta) * math.Abs(c0[i*ldc+j])
					}
					return s
				}
				gamma := float64(2*c.k+2) * 0x1p-53
				worst = max(worst, checkUpdate(t, c.String(), c.ul, c.n, ldc, c0, got, want, scale, gamma))
			}
			t.Logf("%s: largest |Δ|/scale %.3g", kern.name, worst)
		})
	}
}

// TestSyrkInstalled checks that blas64.Syrk runs the blocked Dsyrk in the
// default build (the accumulators' and exact's calls go through it).
func TestSyrkInstalled(t *testing.T) {
	if Current() != Gonum {
		t.Skip("backend is", Current())
	}
	if _, ok := blas64.Implementation().(gonumBLAS); !ok {
		t.Fatalf("blas64 is %T", blas64.Implementation())
	}
	t.Logf("float64 micro-kernel in use: %s (available: %d)", kernel64.name, len(kernels64))
	if asm.HasAVX512 && (kernel64.name != "avx512-8x24" || !blocked64) {
		t.Errorf("AVX-512 CPU uses kernel %s (blocked: %v)", kernel64.name, blocked64)
	}
}

// TestRankBadArguments checks that arguments breaking the BLAS contract
// reach gonum's checks (a panic with gonum's message), not an index out of
// range in the blocked code.
func TestRankBadArguments(t *testing.T) {
	n, k := 20, 7
	a, c := make([]float64, n*k), make([]float64, n*n)
	for _, bad := range []struct {
		name string
		f    func()
	}{
		{"short a", func() { gonumBLAS{}.Dsyrk(blas.Upper, blas.NoTrans, n, k, 1, a[:n*k-1], k, 1, c, n) }},
		{"short c", func() { gonumBLAS{}.Dsyrk(blas.Upper, blas.Trans, k, n, 1, a, k, 1, c[:k*k-1], k) }},
		{"lda < k", func() { gonumBLAS{}.Dsyrk(blas.Lower, blas.NoTrans, n, k, 1, a, k-1, 1, c, n) }},
		{"bad uplo", func() { gonumBLAS{}.Dsyrk(blas.All, blas.NoTrans, n, k, 1, a, k, 1, c, n) }},
		{"negative k", func() { gonumBLAS{}.Dsyr2k(blas.Upper, blas.NoTrans, n, -1, 1, a, k, a, k, 1, c, n) }},
		{"short b", func() { gonumBLAS{}.Dsyr2k(blas.Upper, blas.NoTrans, n, k, 1, a, k, a[:5], k, 1, c, n) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", bad.name)
				}
			}()
			bad.f()
		}()
	}
}
