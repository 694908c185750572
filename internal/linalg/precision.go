package linalg

import (
	"fmt"
	"sync"

	"github.com/dime-project/dime/vocab"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// Precision says in which floating-point type the products of a rank-k
// update are formed and summed (vocab.Precision): Float64 forms and sums
// them in float64 (blas64.Syrk), the default; Float32 rounds the operand to
// float32, sums its products in float32 over blocks of at most 256 rows,
// and adds each block's sums into the float64 result. The vector units hold
// twice as many float32 values, so the update can run up to twice as fast;
// the price is a relative error of order 1e-7 per block in the update,
// measured in covariance's tests for the entropies built on it.
type Precision = vocab.Precision

// The precisions.
const (
	Float64 = vocab.Float64
	Float32 = vocab.Float32
)

// block32 is the number of rows whose float32 products are summed in float32
// before they are added into the float64 result (kcBlock of the blocked
// update, applied to the OpenBLAS path too).
const block32 = kcBlock

// AddAtA adds alpha·AᵀA to the upper triangle of c, with the products in
// precision prec: C ← C + alpha·AᵀA, where A is a.Rows×a.Cols and c is
// a.Cols×a.Cols with c.Uplo = blas.Upper. This is the rank-k update of the
// covariance accumulators (A's rows are feature vectors). Both backends run
// it as the blocked update of gemm.go with the CPU's assembly micro-kernel
// (float64 or float32), so the accumulators get the same sums to the bit in
// both builds; without the assembly kernels (other CPUs, -tags purego),
// Float64 is blas64.Syrk(blas.Trans, alpha, a, 1, c) (gonum's or OpenBLAS's
// dsyrk) and Float32 with OpenBLAS is its ssyrk into a float32 scratch
// matrix, added into c, per block of 256 rows. On 256 rows of 512 features
// (BenchmarkAddAtA, AMD Zen 4) the AVX-512 float32 kernel ran 81–83 GFLOP
// per CPU-second, the ssyrk path 48–55 (converting A and adding the scratch
// cost it), float64 products 42–45 (ours) and 37–41 (OpenBLAS's dsyrk,
// whose packing of 256-row calls costs it: dgemm_otcopy was 10% of an
// OpenBLAS build's profile).
func AddAtA(prec Precision, alpha float64, a blas64.General, c blas64.Symmetric) error {
	n := a.Cols
	switch {
	case c.Uplo != blas.Upper || c.N != n:
		return fmt.Errorf("linalg: AddAtA of %d columns into a %d×%d matrix with triangle %c", n, c.N, c.N, c.Uplo)
	case c.Stride < max(1, n) || (n > 0 && len(c.Data) < (n-1)*c.Stride+n):
		return fmt.Errorf("linalg: AddAtA: data too short for its shape and stride")
	}
	return addAtA(prec, alpha, a, denseC(c.Data, c.Stride), func(f func(blas64.Symmetric)) { f(c) })
}

// AddAtATriangle is AddAtA into a Triangle: C ← C + alpha·AᵀA with C
// packed, a.Cols×a.Cols. Each entry of C receives the same additions in the
// same order as the upper triangle of a dense C in AddAtA, so the two give
// the same values to the bit (TestAddAtATriangle). Where AddAtA calls a
// BLAS (see AddAtA; not with the assembly kernels), the triangle is
// unpacked into a dense scratch matrix around the call.
func AddAtATriangle(prec Precision, alpha float64, a blas64.General, c Triangle) error {
	if c.N != a.Cols {
		return fmt.Errorf("linalg: AddAtA of %d columns into a %d×%d triangle", a.Cols, c.N, c.N)
	}
	if err := c.valid(); err != nil {
		return err
	}
	return addAtA(prec, alpha, a, triangleC(c), func(f func(blas64.Symmetric)) {
		s := poolDense.Get().(*[]float64)
		defer poolDense.Put(s)
		*s = grow(*s, c.N*c.N)
		d := blas64.Symmetric{Uplo: blas.Upper, N: c.N, Stride: c.N, Data: *s}
		c.Unpack(d, 1)
		f(d)
		c.Pack(d)
	})
}

// poolDense holds the dense scratch matrices of AddAtATriangle's BLAS path.
var poolDense = sync.Pool{New: func() any { return new([]float64) }}

// addAtA is AddAtA and AddAtATriangle once c is checked; dense runs f on
// c as a dense matrix (for the BLAS paths).
func addAtA(prec Precision, alpha float64, a blas64.General, c cMatrix, dense func(f func(blas64.Symmetric))) error {
	n := a.Cols
	switch {
	case !prec.Valid():
		return fmt.Errorf("linalg: invalid precision %v", prec)
	case a.Rows < 0 || a.Stride < max(1, n) || (a.Rows > 0 && len(a.Data) < (a.Rows-1)*a.Stride+n):
		return fmt.Errorf("linalg: AddAtA: data too short for its shape and stride")
	}
	if n == 0 || a.Rows == 0 || alpha == 0 {
		return nil
	}
	if prec == Float64 {
		if !blocked64 || forceDsyrk64 {
			dense(func(d blas64.Symmetric) { blas64.Syrk(blas.Trans, alpha, a, 1, d) })
			return nil
		}
		ops := [1]operand{{data: a.Data, rs: 1, cs: a.Stride, k: a.Rows}}
		rankUpdate(kernel64, &pool64, blas.Upper, n, alpha, ops[:], ops[:], true, c)
		return nil
	}
	if forceSsyrk32 || (Current() == OpenBLAS && kernel32.name == goKernel32.name) {
		openblasAddAtA32(alpha, a, c)
		return nil
	}
	ops := [1]operand{{data: a.Data, rs: 1, cs: a.Stride, k: a.Rows}}
	rankUpdate(kernel32, &pool32, blas.Upper, n, alpha, ops[:], ops[:], true, c)
	return nil
}

// forceDsyrk64 makes AddAtA's Float64 call blas64.Syrk (OpenBLAS's dsyrk
// with the OpenBLAS backend) even where the assembly kernel is there
// (benchmarks compare the two).
var forceDsyrk64 bool

// forceSsyrk32 makes AddAtA's Float32 use OpenBLAS's ssyrk whenever the
// backend is OpenBLAS (tests and benchmarks compare the two paths).
var forceSsyrk32 bool

// scratch32 holds the float32 copies of the OpenBLAS path of AddAtA.
type scratch32 struct{ a, c []float32 }

var pool32BLAS = sync.Pool{New: func() any { return new(scratch32) }}

// addUpper32 adds the upper triangle of the n×n float32 s (stride n) into
// the n×n c.
func addUpper32(c cMatrix, n int, s []float32) {
	for i := range n {
		off, _ := c.row(i)
		dst := c.data[off+i : off+n]
		for j, v := range s[i*n+i : i*n+n] {
			dst[j] += float64(v)
		}
	}
}
