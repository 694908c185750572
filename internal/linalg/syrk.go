package linalg

import (
	"gonum.org/v1/gonum/blas"
)

// Dsyrk computes C = alpha·A·Aᵀ + beta·C (tA = NoTrans, A n×k) or
// C = alpha·Aᵀ·A + beta·C (tA = Trans or ConjTrans, A k×n) on the triangle ul
// of the n×n C, as gonum's, with the blocked update of gemm.go and the
// fastest micro-kernel of the CPU (or gonum's own where that is faster: see
// blocked64). It is what blas64.Syrk runs in the
// default build: the covariance accumulators' Add (tA = Trans, 256 rows of
// 2D features at a time) and exact's Gram matrices (NoTrans). With beta = 0,
// C is not read. Invalid arguments go to gonum's Dsyrk, which panics with
// its usual message.
func (impl gonumBLAS) Dsyrk(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, beta float64, c []float64, ldc int) {
	if !blocked64 || !syrkArgsValid(ul, tA, n, k, lda, ldc, len(a), len(c)) || n == 0 {
		impl.Implementation.Dsyrk(ul, tA, n, k, alpha, a, lda, beta, c, ldc)
		return
	}
	scaleTriangle(ul, n, beta, c, ldc)
	op := operandOf(tA, a, lda, k)
	ops := [1]operand{op}
	rankUpdate(kernel64, &pool64, ul, n, alpha, ops[:], ops[:], true, denseC(c, ldc))
}

// Dsyr2k computes C = alpha·(A·Bᵀ + B·Aᵀ) + beta·C (tA = NoTrans, A and B
// n×k) or C = alpha·(Aᵀ·B + Bᵀ·A) + beta·C (Trans, k×n) on the triangle ul,
// as gonum's, whose scalar loops were half of the time of a pure-Go
// eigensolve: LAPACK's tridiagonal reduction (Dsytrd) updates the trailing
// matrix with one Dsyr2k per block of 32 columns. Here the update is one
// blocked rank-2k update with L = [A B] and R = [B A] (see rankUpdate).
func (impl gonumBLAS) Dsyr2k(ul blas.Uplo, tA blas.Transpose, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int, beta float64, c []float64, ldc int) {
	if !blocked64 || !syrkArgsValid(ul, tA, n, k, lda, ldc, len(a), len(c)) || !syrkArgsValid(ul, tA, n, k, ldb, ldc, len(b), len(c)) || n == 0 {
		impl.Implementation.Dsyr2k(ul, tA, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
		return
	}
	scaleTriangle(ul, n, beta, c, ldc)
	opA, opB := operandOf(tA, a, lda, k), operandOf(tA, b, ldb, k)
	left, right := [2]operand{opA, opB}, [2]operand{opB, opA}
	rankUpdate(kernel64, &pool64, ul, n, alpha, left[:], right[:], false, denseC(c, ldc))
}

// syrkArgsValid reports whether the arguments of a Dsyrk (or one operand of
// a Dsyr2k) meet the BLAS contract, with gonum's checks.
func syrkArgsValid(ul blas.Uplo, tA blas.Transpose, n, k, lda, ldc, lenA, lenC int) bool {
	if (ul != blas.Upper && ul != blas.Lower) || n < 0 || k < 0 ||
		(tA != blas.NoTrans && tA != blas.Trans && tA != blas.ConjTrans) {
		return false
	}
	row, col := k, n
	if tA == blas.NoTrans {
		row, col = n, k
	}
	if lda < max(1, col) || ldc < max(1, n) {
		return false
	}
	if n == 0 {
		return true
	}
	return (row == 0 || lenA >= lda*(row-1)+col) && lenC >= ldc*(n-1)+n
}

// operandOf returns the n×k operand of a Syrk-like call: A itself (n×k,
// NoTrans) or Aᵀ (A k×n, Trans).
func operandOf(tA blas.Transpose, a []float64, lda, k int) operand {
	if tA == blas.NoTrans {
		return operand{data: a, rs: lda, cs: 1, k: k}
	}
	return operand{data: a, rs: 1, cs: lda, k: k}
}

// scaleTriangle multiplies the triangle ul of the n×n C by beta, writing
// zeros for beta = 0 (so that NaN in C does not survive, as the BLAS
// requires).
func scaleTriangle(ul blas.Uplo, n int, beta float64, c []float64, ldc int) {
	if beta == 1 {
		return
	}
	for i := range n {
		row := c[i*ldc+i : i*ldc+n]
		if ul == blas.Lower {
			row = c[i*ldc : i*ldc+i+1]
		}
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}
