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

// Current returns the backend in use: OpenBLAS in a build with the tag
// openblas, Gonum otherwise, unless Use chose another.
func Current() Backend { return Backend(current.Load()) }

// In the default build, the package's initialization installs the Gonum
// backend's BLAS (gonum's, with a faster Dsymv: see gonumBLAS); with the tag
// openblas, openblas.go's installs OpenBLAS.
func init() {
	if !openblasCompiled {
		blas64.Use(gonumBLAS{})
	}
}

// Use makes b the backend of the whole process: blas64.Use with b's BLAS, and
// b's eigensolver for every SymEigensolver. It returns an error, and changes
// nothing, if b is not compiled in.
//
// Use exists so that tests and benchmarks can compare the backends within
// one binary. It must not be called while other goroutines compute: gonum's
// blas64.Use is not synchronized. Programs choose their backend at build
// time and never need it.
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
