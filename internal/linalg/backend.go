package linalg

import (
	"fmt"
	"sync/atomic"

	"gonum.org/v1/gonum/blas/blas64"
)

// Backend names an implementation of the dense kernels: the BLAS behind every
// gonum blas64 call of the process and the symmetric eigensolver.
type Backend uint8

const (
	// Gonum is pure Go (gonum's BLAS and LAPACK), the default build.
	Gonum Backend = iota
	// OpenBLAS is OpenBLAS's BLAS and LAPACK through cgo, compiled in with
	// the build tag openblas and used by default when compiled in.
	OpenBLAS
)

// String returns the backend's lower-case name.
func (b Backend) String() string {
	switch b {
	case Gonum:
		return "gonum"
	case OpenBLAS:
		return "openblas"
	}
	return fmt.Sprintf("Backend(%d)", uint8(b))
}

// Available reports whether b is compiled into this binary: Gonum always,
// OpenBLAS only with the build tag openblas.
func (b Backend) Available() bool {
	switch b {
	case Gonum:
		return true
	case OpenBLAS:
		return openblasCompiled
	}
	return false
}

// current is the backend in use. It is read on every eigensolve, so it is
// atomic; blas64's own switch is a plain variable (see Use).
var current atomic.Uint32

// Current returns the backend in use: Gonum until Install or Use chooses
// another.
func Current() Backend { return Backend(current.Load()) }

// Best returns the fastest backend compiled into this binary: OpenBLAS in a
// build with the tag openblas, Gonum otherwise.
func Best() Backend {
	if openblasCompiled {
		return OpenBLAS
	}
	return Gonum
}

// Install is what a program's main calls to choose its linear algebra: it
// makes Best the backend of the whole process (Use), and with OpenBLAS it
// first gives OpenBLAS one thread per call unless OPENBLAS_NUM_THREADS is
// set (see configureThreads). It returns the backend. Both binaries of dime
// call it first thing in main; a library never does.
//
// Importing the package changes nothing in the process. Without Install (or
// Use), the package's own kernels (AddAtA, SumRows and the rest) run as
// they do with it, Current is Gonum, and gonum's blas64 keeps the
// implementation it had, by default gonum's own BLAS: every result is
// correct, but eigensolves, whose tridiagonal reduction calls blas64.Dsymv,
// are slower (the faster Dsymv of gonumBLAS is not in use) and round off
// differently, and a build with the tag openblas does not use OpenBLAS.
func Install() Backend {
	b := Best()
	if b == OpenBLAS {
		configureThreads()
	}
	if err := Use(b); err != nil {
		panic(err) // Best is compiled in
	}
	return b
}

// Use makes b the backend of the whole process: blas64.Use with b's BLAS
// (gonumBLAS, or OpenBLAS through gonum's netlib package), and b's
// eigensolver for every SymEigensolver. It returns an error, and changes
// nothing, if b is not compiled in.
//
// Programs call Install rather than Use. Use exists so that tests and
// benchmarks can compare the backends within one binary. It must not be
// called while other goroutines compute: gonum's blas64.Use is not
// synchronized.
func Use(b Backend) error {
	if !b.Available() {
		return fmt.Errorf("linalg: backend %v is not compiled in (build with -tags openblas)", b)
	}
	switch b {
	case Gonum:
		blas64.Use(gonumBLAS{})
	case OpenBLAS:
		useOpenBLAS()
	}
	current.Store(uint32(b))
	return nil
}
