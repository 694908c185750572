// Package linalg is the linear-algebra seam of dime: the few dense kernels
// whose speed decides the cost of every estimator, behind one small API so
// that a faster backend can replace the pure-Go default without touching the
// callers.
//
// # Overview
//
// The eigenvalue routine here is values-only: the matrix-based entropies of
// dime never need eigenvectors, and skipping them saves most of the cost of a
// symmetric eigensolve.
//
// A SymEigensolver owns its workspace, so repeated solves of the same size do
// not allocate. It is not safe for concurrent use; give each goroutine its own.
//
// # Backends
//
// The default build uses gonum (pure Go, no cgo), so that go build, go run and
// go test work on a bare machine. Its initialization routes blas64 to gonum's
// BLAS with one kernel replaced: Dsymv, which gonum's tridiagonal reduction
// calls with strided vectors, where gonum's own version is scalar. This
// makes a values-only eigensolve 2.5 times as fast (0.58 → 0.23 s at
// n = 1024; see symv.go) and changes nothing else for other blas64 callers
// of the process. The build tag openblas switches, through
// cgo, to OpenBLAS (Debian: apt-get install libopenblas-dev liblapacke-dev):
//
//	go test -tags openblas ./...
//
// With the tag, the package's init
//
//   - routes every gonum blas64 call of the process to OpenBLAS
//     (blas64.Use with gonum.org/v1/netlib/blas/netlib), including the Syrk of
//     exact.Gram and gonum's own LAPACK, which calls blas64;
//   - solves eigenproblems with LAPACK's dsyevd (values only) through
//     LAPACKE, about four times faster than the Gonum backend at n = 1024
//     (0.056 s against 0.24 s on 2 cores);
//   - gives OpenBLAS one thread per call (unless OPENBLAS_NUM_THREADS is set),
//     because dime runs its eigenproblems concurrently on goroutines and
//     OpenBLAS threads on top of them oversubscribe the cores (measurements
//     in openblas.go).
//
// The switch of blas64 happens when this package is initialized, so a package
// that relies on fast BLAS must import internal/linalg (calling any of its
// functions, such as a SymEigensolver, is enough). Package exact does.
//
// Current reports the backend in use; Use switches it for the whole process,
// which only tests and benchmarks comparing the backends need. The two
// backends agree to round-off: eigenvalues within 1e-14 of the largest, and
// exact entropies, MI and DiME within 1e-14 nats, except at alpha < 1 on
// numerically low-rank matrices, where round-off eigenvalues count (1e-7).
package linalg
