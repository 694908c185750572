// Package host makes the choices a dime program makes for its whole
// process, which no library package makes on import: the linear-algebra
// backend behind gonum's BLAS, and the Go runtime's soft memory limit.
// The main of each binary (cmd/dime and the Beam module's dimebeam) calls
// them first thing; code that uses dime as a library calls them only if it
// wants the same settings for its own process.
//
// Without them every result is correct: the library then runs on gonum's
// own BLAS with the pure-Go eigensolver (slower eigensolves, rounded off
// differently from a program that called UseBLAS), and the garbage
// collector has no memory limit beyond GOMEMLIMIT.
package host

import (
	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/internal/memlimit"
)

// UseBLAS makes the fastest linear-algebra backend compiled into the binary
// the backend of the whole process and returns its name: "openblas" in a
// build with the tag openblas (OpenBLAS's BLAS for every gonum blas64 call,
// LAPACK's eigensolver, one OpenBLAS thread per call unless
// OPENBLAS_NUM_THREADS is set), "gonum" otherwise (gonum's BLAS with
// dime's faster Dsymv, gonum's LAPACK). It changes gonum's blas64
// implementation, which is not synchronized: call it before any goroutine
// computes.
func UseBLAS() string { return linalg.Install().String() }

// LimitMemory sets the Go runtime's soft memory limit to 90% of the memory
// the process may use (the smallest of the machine's memory, the cgroup's
// limit and ulimit -v and -d), unless GOMEMLIMIT is set, so that the
// garbage collector works harder rather than let the heap grow past it. It
// returns the bound in bytes, 0 if none is known.
func LimitMemory() uint64 { return memlimit.Apply().Bytes }
