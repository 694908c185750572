package linalg

import (
	"errors"
	"fmt"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/lapack64"
)

// ErrNoConvergence is returned when the eigenvalue iteration fails to
// converge. It does not happen for finite symmetric input in practice, but a
// numerical routine that can fail says so.
var ErrNoConvergence = errors.New("linalg: symmetric eigensolver did not converge")

// SymEigensolver computes the eigenvalues (not the eigenvectors) of real
// symmetric matrices, reusing its workspace across calls of the same size.
// The zero value is ready to use.
type SymEigensolver struct {
	work    []float64
	iwork   []int32 // LAPACK's integer workspace (OpenBLAS backend)
	n       int     // size the workspace was made for
	backend Backend // backend the workspace was made for
	routine uint8   // LAPACK driver the workspace was made for (OpenBLAS backend)
}

// EigenvaluesInPlace writes the eigenvalues of the symmetric matrix a, in
// ascending order, to dst and returns dst. Only the triangle named by a.Uplo is
// read, and a's storage is destroyed: the caller keeps a scratch copy if it
// needs the matrix again. If dst is nil or too short a new slice is allocated.
//
// The backend in use (Current) does the work: gonum's Dsyev or OpenBLAS's
// LAPACK Dsyevd, both values-only (tridiagonal reduction, then the
// root-free QR iteration of Dsterf); their results agree to round-off. NaN
// or Inf in the matrix gives ErrNoConvergence on both.
func (s *SymEigensolver) EigenvaluesInPlace(dst []float64, a blas64.Symmetric) ([]float64, error) {
	n := a.N
	if n == 0 {
		return dst[:0], nil
	}
	if a.Uplo != blas.Upper && a.Uplo != blas.Lower {
		return nil, fmt.Errorf("linalg: invalid triangle %v", a.Uplo)
	}
	if len(dst) < n {
		dst = make([]float64, n)
	}
	dst = dst[:n]
	if Current() == OpenBLAS {
		return s.lapackeEigenvalues(dst, a)
	}
	return s.gonumEigenvalues(dst, a)
}

// gonumEigenvalues is EigenvaluesInPlace with gonum's LAPACK, for len(dst) = n
// > 0. gonum's LAPACK calls the BLAS through blas64, so it is pure Go only
// while blas64 is gonum's (as Use(Gonum) makes it).
func (s *SymEigensolver) gonumEigenvalues(dst []float64, a blas64.Symmetric) ([]float64, error) {
	if s.n != a.N || s.backend != Gonum || s.work == nil {
		query := []float64{0}
		lapack64.Syev(lapack.EVNone, a, dst, query, -1)
		s.work = make([]float64, int(query[0]))
		s.n, s.backend = a.N, Gonum
	}
	if ok := lapack64.Syev(lapack.EVNone, a, dst, s.work, len(s.work)); !ok {
		return nil, ErrNoConvergence
	}
	return dst, nil
}
