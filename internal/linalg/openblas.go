//go:build openblas

package linalg

// Debian ships LAPACKE apart from OpenBLAS (liblapacke-dev), built against the
// generic liblapack.so.3; linking libopenblas directly puts it ahead in the
// symbol search, so LAPACKE's dsyevd_ is OpenBLAS's whatever liblapack.so.3
// the alternatives system selects (checked with LD_DEBUG=bindings).

/*
#cgo LDFLAGS: -llapacke -lopenblas
#include <lapacke.h>

// From OpenBLAS's cblas.h, declared here so that the build does not depend on
// which cblas.h the system's alternatives select.
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// openblasCompiled reports whether the OpenBLAS backend is in this binary.
const openblasCompiled = true

// The integer workspace is passed to LAPACKE as lapack_int, which is 32 bits
// unless LAPACKE was built for ILP64 (Debian's is not). A mismatch fails to
// compile here rather than corrupting memory.
var _ [unsafe.Sizeof(C.lapack_int(0)) - 4]struct{}
var _ [4 - unsafe.Sizeof(C.lapack_int(0))]struct{}

func useOpenBLAS() { blas64.Use(netlib.Implementation{}) }

// lapackRoutine names the LAPACK driver of the OpenBLAS backend's
// eigensolver. All three are values-only: a reduction to tridiagonal form,
// then dsterf's root-free QR iteration (dsyevd does divide and conquer only
// for eigenvectors).
type lapackRoutine uint8

const (
	// dsyevd reduces in one stage (dsytrd: half of its flops in
	// matrix-vector products, memory-bound).
	dsyevd lapackRoutine = iota
	// dsyevd2stage reduces in two stages (dsytrd_2stage): to a band by
	// blocked matrix-matrix updates, then to tridiagonal by bulge chasing
	// on the band.
	dsyevd2stage
	// dsyev2stage is dsyev's two-stage driver: the same work as
	// dsyevd2stage for eigenvalues only.
	dsyev2stage
)

func (r lapackRoutine) String() string {
	return [...]string{dsyevd: "dsyevd", dsyevd2stage: "dsyevd_2stage", dsyev2stage: "dsyev_2stage"}[r]
}

// twoStageMinN is the order from which the OpenBLAS backend uses the
// two-stage reduction (dsyevd_2stage); below it, dsyevd. Measured with
// BenchmarkLAPACKEigenvalues (CPU ms per solve on one thread, Debian 12's
// OpenBLAS 0.3.21 and LAPACK 3.11, AMD EPYC Zen 4, busy machine):
//
//	n      dsyevd     dsyevd_2stage   dsyev_2stage
//	256    2.4–2.6    4.7–5.0         5.0–5.1
//	512    15.0–15.2  22–24           22–25
//	1024   82–87      102–117         102–118
//	1536   252–272    287–310         267–276
//	2048   671–852    638–647         643–651
//	3072   3250       1831            —
//
// The second stage (bulge chasing on the band) is reference LAPACK code that
// OpenBLAS does not optimize, so the two-stage reduction only pays from
// about n = 2048, where the first stage's matrix-matrix updates save more
// than the bulge chasing costs. dsyev_2stage does the same work as
// dsyevd_2stage for eigenvalues only.
const twoStageMinN = 2048

// eigenRoutine, if set, forces the driver of the OpenBLAS backend (tests
// and benchmarks compare them); otherwise routineFor chooses by size.
var eigenRoutine *lapackRoutine

// routineFor returns the LAPACK driver for an n×n eigenproblem.
func routineFor(n int) lapackRoutine {
	switch {
	case eigenRoutine != nil:
		return *eigenRoutine
	case n >= twoStageMinN:
		return dsyevd2stage
	}
	return dsyevd
}

// lapackeEigenvalues is EigenvaluesInPlace with LAPACK (routineFor(n))
// through LAPACKE, for len(dst) = n > 0.
//
// a is row-major; LAPACKE's row-major interface would copy it into a
// transposed buffer (a malloc and two n² copies per call). The transpose of a
// symmetric matrix is itself, and a row-major triangle is the opposite
// column-major triangle, so a is passed as column-major with lda = a.Stride
// and the other triangle named.
func (s *SymEigensolver) lapackeEigenvalues(dst []float64, a blas64.Symmetric) ([]float64, error) {
	n := a.N
	if n > math.MaxInt32 || a.Stride > math.MaxInt32 {
		return nil, fmt.Errorf("linalg: matrix of size %d (stride %d) too large for 32-bit LAPACK", n, a.Stride)
	}
	if a.Stride < n || len(a.Data) < (n-1)*a.Stride+n {
		return nil, fmt.Errorf("linalg: matrix data of length %d with stride %d too short for %d×%d", len(a.Data), a.Stride, n, n)
	}
	uplo := C.char('L') // row-major upper = column-major lower
	if a.Uplo == blas.Lower {
		uplo = 'U'
	}
	routine := routineFor(n)
	if s.n != n || s.backend != OpenBLAS || s.routine != uint8(routine) || s.work == nil {
		var work C.double
		var iwork C.lapack_int = 1
		var info C.lapack_int
		switch routine {
		case dsyevd:
			info = C.LAPACKE_dsyevd_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
				nil, C.lapack_int(a.Stride), nil, &work, -1, &iwork, -1)
		case dsyevd2stage:
			info = C.LAPACKE_dsyevd_2stage_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
				nil, C.lapack_int(a.Stride), nil, &work, -1, &iwork, -1)
		case dsyev2stage:
			info = C.LAPACKE_dsyev_2stage_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
				nil, C.lapack_int(a.Stride), nil, &work, -1)
		}
		if info != 0 {
			return nil, fmt.Errorf("linalg: %v workspace query failed (info %d)", routine, int(info))
		}
		s.work = make([]float64, max(1, int(work)))
		s.iwork = make([]int32, max(1, int(iwork)))
		s.n, s.backend, s.routine = n, OpenBLAS, uint8(routine)
	}
	ap, wp := (*C.double)(&a.Data[0]), (*C.double)(&dst[0])
	work, lwork := (*C.double)(&s.work[0]), C.lapack_int(len(s.work))
	iwork, liwork := (*C.lapack_int)(unsafe.Pointer(&s.iwork[0])), C.lapack_int(len(s.iwork))
	var info C.lapack_int
	switch routine {
	case dsyevd:
		info = C.LAPACKE_dsyevd_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
			ap, C.lapack_int(a.Stride), wp, work, lwork, iwork, liwork)
	case dsyevd2stage:
		info = C.LAPACKE_dsyevd_2stage_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
			ap, C.lapack_int(a.Stride), wp, work, lwork, iwork, liwork)
	case dsyev2stage:
		info = C.LAPACKE_dsyev_2stage_work(C.LAPACK_COL_MAJOR, 'N', uplo, C.lapack_int(n),
			ap, C.lapack_int(a.Stride), wp, work, lwork)
	}
	switch {
	case info > 0:
		return nil, ErrNoConvergence
	case info < 0:
		return nil, fmt.Errorf("linalg: %v: argument %d is invalid", routine, -int(info))
	}
	return dst, nil
}

// configureThreads gives OpenBLAS one thread per call unless the user set
// OPENBLAS_NUM_THREADS, which OpenBLAS itself reads when it loads.
//
// dime parallelizes over goroutines (the P + 1 eigenproblems of DiME run on
// GOMAXPROCS workers), and OpenBLAS's own threads on top of that
// oversubscribe the cores: its callers spin while waiting for its thread
// pool. Measured on 2 cores, exact DiME n = 1024, d = 10, P = 5 (6 solves):
//
//	1 OpenBLAS thread,  2 concurrent solves   0.19–0.20 s   (this default)
//	2 OpenBLAS threads, 1 solve at a time     0.31 s
//	2 OpenBLAS threads, 2 concurrent solves   0.63–0.64 s
//
// The price is paid by single large calls: one n = 1024 eigensolve takes
// 0.056 s on 1 thread against 0.040 s on 2, and Syrk on a 4096×256 Φ runs at
// ~43 GFLOP/s against ~73. Code with one big call and nothing else to do can
// split it over goroutines, or the user can set OPENBLAS_NUM_THREADS.
func configureThreads() {
	if _, set := os.LookupEnv("OPENBLAS_NUM_THREADS"); set {
		return
	}
	C.openblas_set_num_threads(1)
}

// openblasThreads returns the number of threads OpenBLAS uses per call.
func openblasThreads() int { return int(C.openblas_get_num_threads()) }

// openblasAddAtA32 is AddAtA with Float32 on the OpenBLAS backend: each
// block of at most block32 rows of A is rounded to float32, OpenBLAS's
// ssyrk writes its AᵀA into a float32 scratch matrix (beta = 0), and the
// scratch's upper triangle, times alpha, is added into c.
func openblasAddAtA32(alpha float64, a blas64.General, c cMatrix) {
	n := a.Cols
	s := pool32BLAS.Get().(*scratch32)
	defer pool32BLAS.Put(s)
	s.a = grow(s.a, min(a.Rows, block32)*n)
	s.c = grow(s.c, n*n)
	for r0 := 0; r0 < a.Rows; r0 += block32 {
		rows := min(block32, a.Rows-r0)
		for r := range rows {
			src := a.Data[(r0+r)*a.Stride : (r0+r)*a.Stride+n]
			dst := s.a[r*n : r*n+n]
			for j, v := range src {
				dst[j] = float32(v)
			}
		}
		netlib.Implementation{}.Ssyrk(blas.Upper, blas.Trans, n, rows, float32(alpha), s.a[:rows*n], n, 0, s.c, n)
		addUpper32(c, n, s.c)
	}
}
