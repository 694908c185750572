package linalg

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/lapack"
	"gonum.org/v1/gonum/lapack/gonum"
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

// EigenStride returns the row stride to give an n×n matrix that
// EigenvaluesInPlace will solve: n, or n + 8 when n is a multiple of 32.
// The tridiagonal reduction walks the matrix down its columns (Householder
// vectors, the panel's matrix-vector products); with rows a multiple of
// 256 bytes apart, those column walks hit few cache sets, and the reduction
// ran 20% slower at n = 512 (D = 256) than with the padding. The padding changes no arithmetic:
// the eigenvalues are the same to the bit (TestEigenStrideSameBits).
func EigenStride(n int) int {
	if n >= 32 && n%32 == 0 {
		return n + 8
	}
	return n
}

// NewEigenScratch returns an n×n upper symmetric matrix of zeros with the
// row stride EigenStride(n), for matrices that are filled and then handed to
// EigenvaluesInPlace.
func NewEigenScratch(n int) blas64.Symmetric {
	ld := EigenStride(n)
	size := 0
	if n > 0 {
		size = (n-1)*ld + n
	}
	return blas64.Symmetric{N: n, Stride: ld, Uplo: blas.Upper, Data: make([]float64, size)}
}

// EigenvaluesInPlace writes the eigenvalues of the symmetric matrix a, in
// ascending order, to dst and returns dst. Only the triangle named by a.Uplo is
// read, and a's storage is destroyed: the caller keeps a scratch copy if it
// needs the matrix again. If dst is nil or too short a new slice is allocated.
//
// The backend in use (Current) does the work: gonum's Dsyev or OpenBLAS's
// LAPACK Dsyevd, both values-only (tridiagonal reduction, then the
// root-free QR iteration of Dsterf); their results agree to round-off. NaN
// or Inf in the matrix gives ErrNoConvergence on both. A matrix of tiny
// entries (below 1e-100) is scaled by a power of two before and its
// eigenvalues after, so that any finite matrix is solved.
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
	// A matrix of tiny entries is scaled by a power of two (exactly) to
	// entries near 1 first: gonum's Dsyev, which scales such a matrix
	// itself, panics in Dsterf's rescaling below about 1e-146.
	exp := tinyExponent(a)
	if exp != 0 {
		ldexpTriangle(a, -exp)
	}
	var err error
	if Current() == OpenBLAS {
		dst, err = s.lapackeEigenvalues(dst, a)
	} else {
		dst, err = s.gonumEigenvalues(dst, a)
	}
	if err == nil && exp != 0 {
		for i := range dst {
			dst[i] = math.Ldexp(dst[i], exp)
		}
	}
	return dst, err
}

// tinyScale is the largest magnitude of a matrix that EigenvaluesInPlace
// scales up before solving: well above LAPACK's own threshold (the square
// root of the safe minimum over the machine epsilon, about 1e-146).
const tinyScale = 1e-100

// tinyExponent returns the binary exponent of the largest |entry| of a's
// triangle when it is positive and below tinyScale, and 0 otherwise (NaN and
// Inf included: the solver reports them).
func tinyExponent(a blas64.Symmetric) int {
	var m float64
	for i := 0; i < a.N; i++ {
		row := a.Data[i*a.Stride:]
		lo, hi := i, a.N
		if a.Uplo == blas.Lower {
			lo, hi = 0, i+1
		}
		for _, v := range row[lo:hi] {
			if !(math.Abs(v) <= m) {
				m = math.Abs(v)
			}
		}
	}
	if !(m > 0 && m < tinyScale) {
		return 0
	}
	_, exp := math.Frexp(m)
	return exp
}

// ldexpTriangle multiplies a's triangle by 2**exp, entry by entry (a factor
// 2**exp itself may not be a float64).
func ldexpTriangle(a blas64.Symmetric, exp int) {
	for i := 0; i < a.N; i++ {
		row := a.Data[i*a.Stride:]
		lo, hi := i, a.N
		if a.Uplo == blas.Lower {
			lo, hi = 0, i+1
		}
		for j := lo; j < hi; j++ {
			row[j] = math.Ldexp(row[j], exp)
		}
	}
}

// gonumEigenvalues is EigenvaluesInPlace with gonum's LAPACK, for len(dst) = n
// > 0. gonum's LAPACK calls the BLAS through blas64, so it is pure Go only
// while blas64 is gonum's (as Use(Gonum) makes it).
//
// It does what Dsyev does for eigenvalues only: Dsytrd, then Dsterf, the
// root-free QL/QR iteration of the tridiagonal matrix (as LAPACK's Dsyevd
// of the OpenBLAS backend does), about three times faster than Dsteqr's
// iteration with rotations (at n = 512 Dsteqr was a quarter of a solve).
// gonum's Dsterf panics ("insufficient length of a": it rescales a block
// as a matrix of the wrong shape) when a block of the tridiagonal matrix is
// small enough to be rescaled (below about 1e-122, as the Gram matrix of a
// nearly constant column has); that block's matrix is then solved again,
// from a copy, with Dsteqr, which rescales correctly. The two agree to
// round-off.
func (s *SymEigensolver) gonumEigenvalues(dst []float64, a blas64.Symmetric) ([]float64, error) {
	n := a.N
	var impl gonum.Implementation
	if s.n != n || s.backend != Gonum || s.work == nil {
		query := []float64{0}
		impl.Dsytrd(a.Uplo, n, a.Data, a.Stride, nil, nil, nil, query, -1)
		// e and tau (n-1 each), copies of d and e, then Dsytrd's
		// workspace.
		s.work = make([]float64, 4*n+max(1, int(query[0])))
		s.n, s.backend = n, Gonum
	}
	e, tau, d0, e0, work := s.work[:n], s.work[n:2*n], s.work[2*n:3*n], s.work[3*n:4*n], s.work[4*n:]
	impl.Dsytrd(a.Uplo, n, a.Data, a.Stride, dst, e, tau, work, len(work))
	copy(d0, dst)
	copy(e0, e)
	ok, rescaled := dsterf(impl, n, dst, e)
	if rescaled {
		copy(dst, d0)
		copy(e, e0)
		ok = impl.Dsteqr(lapack.EVCompNone, n, dst, e, nil, 1, nil)
	}
	if !ok {
		return nil, ErrNoConvergence
	}
	return dst, nil
}

// dsterf calls gonum's Dsterf and reports, as rescaled, the panic of its
// rescaling of a tiny block (d and e are then undefined); other panics
// propagate.
func dsterf(impl gonum.Implementation, n int, d, e []float64) (ok, rescaled bool) {
	defer func() {
		if r := recover(); r != nil {
			if msg, isString := r.(string); !isString || !strings.Contains(msg, "insufficient length of a") {
				panic(r)
			}
			rescaled = true
		}
	}()
	return impl.Dsterf(n, d, e), false
}
