package linalg

import (
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// gonumBLAS is gonum's BLAS with a faster Dsymv, the BLAS of the Gonum
// backend.
//
// gonum's LAPACK reduces a symmetric matrix to tridiagonal form (Dsytrd, the
// bulk of a values-only eigensolve) with one Dsymv per column, and it passes
// x as a column of the row-major matrix and y as a column of its workspace:
// both strided. gonum's Dsymv takes its scalar path for strided vectors; in
// exact DiME at n = 1024 that path was 72% of the time (about 1.2 GFLOP/s).
// This Dsymv gathers x into a contiguous buffer, runs each row of the stored
// triangle as one dot product and one axpy, and scatters the result into y.
// With AVX2 or AVX-512 the dot product and the axpy of a row are one fused
// assembly loop (package asm's DotAxpy), which reads the row once; without,
// they are gonum's Ddot and Daxpy.
type gonumBLAS struct {
	gonum.Implementation
}

// symvMinN is the order below which Dsymv is left to gonum: the gather and
// scatter do not pay for themselves on tiny matrices.
const symvMinN = 16

// symvBuffers holds the contiguous x and A·x of Dsymv, 2n float64s.
var symvBuffers = sync.Pool{New: func() any { return new([]float64) }}

// Dsymv computes y = alpha·A·x + beta·y for the symmetric n×n matrix A whose
// ul triangle is stored row-major in a with stride lda. It follows the BLAS
// contract: with beta = 0, y is not read. Arguments that break the contract,
// negative increments and small n go to gonum's Dsymv, which checks them.
func (impl gonumBLAS) Dsymv(ul blas.Uplo, n int, alpha float64, a []float64, lda int, x []float64, incX int, beta float64, y []float64, incY int) {
	if n < symvMinN || alpha == 0 || incX <= 0 || incY <= 0 || lda < n ||
		(ul != blas.Upper && ul != blas.Lower) ||
		len(a) < lda*(n-1)+n || len(x) < (n-1)*incX+1 || len(y) < (n-1)*incY+1 {
		impl.Implementation.Dsymv(ul, n, alpha, a, lda, x, incX, beta, y, incY)
		return
	}
	bufp := symvBuffers.Get().(*[]float64)
	if cap(*bufp) < 2*n {
		*bufp = make([]float64, 2*n)
	}
	buf := (*bufp)[:2*n]
	xc, ax := buf[:n], buf[n:]
	for i := range xc {
		xc[i] = x[i*incX]
	}
	clear(ax)
	if ul == blas.Upper {
		// Row i holds A[i, i:n]: it gives A[i, i:]·x[i:] to ax[i] and, by
		// symmetry, x[i]·A[i, i+1:] to ax[i+1:].
		for i := range n {
			row := a[i*lda+i+1 : i*lda+n]
			ax[i] += a[i*lda+i]*xc[i] + dotAxpy.fn(row, xc[i+1:], ax[i+1:], xc[i])
		}
	} else {
		// Row i holds A[i, 0:i+1]: it gives A[i, :i+1]·x[:i+1] to ax[i] and
		// x[i]·A[i, :i] to ax[:i].
		for i := range n {
			row := a[i*lda : i*lda+i]
			ax[i] += dotAxpy.fn(row, xc[:i], ax[:i], xc[i]) + a[i*lda+i]*xc[i]
		}
	}
	for i, v := range ax {
		if beta == 0 {
			y[i*incY] = alpha * v
		} else {
			y[i*incY] = beta*y[i*incY] + alpha*v
		}
	}
	symvBuffers.Put(bufp)
}

// rowKernel is one implementation of a row of Dsymv: fn returns
// Σ a[j]·x[j] and adds xi·a[j] to y[j], for j < len(a) (x and y at least as
// long as a).
type rowKernel struct {
	name string
	fn   func(a, x, y []float64, xi float64) float64
}

// gonumDotAxpy is the row of Dsymv with gonum's Ddot and Daxpy (SSE2
// assembly on amd64), two passes over a.
var gonumDotAxpy = rowKernel{"gonum", func(a, x, y []float64, xi float64) float64 {
	impl := gonum.Implementation{}
	d := impl.Ddot(len(a), a, 1, x, 1)
	impl.Daxpy(len(a), xi, a, 1, y, 1)
	return d
}}

// asmDotAxpy wraps an assembly row kernel with the bounds checks it cannot
// make.
func asmDotAxpy(name string, f func(n int, a, x, y *float64, xi float64) float64) rowKernel {
	return rowKernel{name, func(a, x, y []float64, xi float64) float64 {
		n := len(a)
		if n == 0 {
			return 0
		}
		_, _ = x[n-1], y[n-1]
		return f(n, &a[0], &x[0], &y[0], xi)
	}}
}

// rowKernels lists the row kernels this CPU can run (gonum's first);
// dotAxpy is the one in use, the last (set by kernel_amd64.go; tests
// change it).
var (
	rowKernels = []rowKernel{gonumDotAxpy}
	dotAxpy    = gonumDotAxpy
)
