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
// BLAS with three kernels replaced (gonumBLAS):
//
//   - Dsyrk and Dsyr2k, the rank-k updates of the covariance accumulators,
//     of exact's Gram matrices and of LAPACK's tridiagonal reduction, run as
//     a packed, blocked update around a register-tiled micro-kernel, the way
//     BLIS and OpenBLAS compute a GEMM (gemm.go). The micro-kernels are
//     assembly (package asm: AVX-512 8×24 and AVX2+FMA 4×12, chosen at run
//     time with golang.org/x/sys/cpu, so GOAMD64=v1 builds use them too),
//     with a portable Go kernel where there is no assembly. On the
//     accumulators' call (256 rows of 512 features) the AVX-512 kernel
//     runs at 81–85% of the core's FMA peak, 5 times gonum's Dsyrk.
//   - Dsymv, which gonum's tridiagonal reduction calls with strided
//     vectors, where gonum's own version is scalar: this one gathers x and
//     runs each row of the triangle as one fused dot product and axpy
//     (assembly with AVX2 or AVX-512, gonum's Ddot and Daxpy otherwise).
//
// Together they make a values-only eigensolve 2.6 times as fast as gonum's
// (n = 1024) and change nothing but speed and round-off for other blas64
// callers of the process. The build tags purego (no assembly) and noasm
// (gonum's) give the portable paths.
//
// AddAtA adds AᵀA with float64 products, or with float32 products summed in
// float32 over blocks of 256 rows and added into float64 (Float32: twice
// the values per vector register), for the accumulators' precision setting.
// It runs the assembly kernels in both builds: on the accumulators' call
// they beat OpenBLAS's dsyrk (44–45 against 41 GFLOP/cpu-s in the same run),
// and both builds then sum the same features to the same bits.
// AddAtATriangle is the same update into a Triangle, the packed upper
// triangle (by strips of StripRows rows) that the accumulators store: about
// half the memory of a dense matrix, written in place by the same tiles, so
// that its entries are the same to the bit as AddAtA's. With the AVX-512
// float32 kernel, the tiles across the diagonal and the last of each strip
// are written in place too, under opmasks (masked kernels), with the bits
// of the scratch tile they replace.
// The float32 AVX-512 kernels prefetch their R panels 16 steps of k ahead
// (a tile's panels do not fit the L1 cache).
//
// SumRows adds rows of a matrix into a vector, column by column in the
// order of the rows (the bits of adding the rows one at a time), several
// rows per pass with AVX2 or AVX-512: the first moments of the covariance
// package's Mean.
//
// The build tag openblas switches, through cgo, to OpenBLAS (Debian: apt-get
// install libopenblas-dev liblapacke-dev):
//
//	go test -tags openblas ./...
//
// Importing the package changes nothing in the process. A program chooses
// its backend in main with Install, which makes the fastest one compiled in
// the backend of the whole process; with the tag openblas, that
//
//   - routes every gonum blas64 call of the process to OpenBLAS
//     (blas64.Use with gonum.org/v1/netlib/blas/netlib), including the Syrk of
//     exact.Gram and gonum's own LAPACK, which calls blas64;
//   - solves eigenproblems with LAPACK's dsyevd (values only) through
//     LAPACKE, about four times faster than the Gonum backend at n = 1024
//     (0.056 s against 0.24 s on 2 cores), and from n = 2048 with the
//     two-stage reduction dsyevd_2stage, which is slower below that size
//     (measurements in openblas.go);
//   - gives OpenBLAS one thread per call (unless OPENBLAS_NUM_THREADS is set),
//     because dime runs its eigenproblems concurrently on goroutines and
//     OpenBLAS threads on top of them oversubscribe the cores (measurements
//     in openblas.go).
//
// In the default build Install routes blas64 to gonum's BLAS with the
// faster Dsymv of the Gonum backend (gonumBLAS: gonum's own took 72% of
// exact DiME's time at n = 1024, see symv.go). Without Install, everything
// works: the backend is Gonum and blas64 is whatever the process has, by
// default gonum's own BLAS, so eigensolves are slower and round off
// differently; the package's own kernels are the same either way.
//
// Current reports the backend in use; Use switches it for the whole process,
// which only tests and benchmarks comparing the backends need. The two
// backends agree to round-off: eigenvalues within 1e-14 of the largest, and
// exact entropies, MI and DiME within 1e-14 nats, except at alpha < 1 on
// numerically low-rank matrices, where round-off eigenvalues count (1e-7).
package linalg
