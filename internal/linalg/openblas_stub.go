//go:build !openblas

package linalg

import (
	"errors"

	"gonum.org/v1/gonum/blas/blas64"
)

// openblasCompiled reports whether the OpenBLAS backend is in this binary.
const openblasCompiled = false

// useOpenBLAS is never called in this build: Use refuses OpenBLAS first.
func useOpenBLAS() {}

// lapackeEigenvalues is never called in this build, where Current is always
// Gonum; it exists so that the dispatch in eigen.go compiles in both builds.
func (s *SymEigensolver) lapackeEigenvalues([]float64, blas64.Symmetric) ([]float64, error) {
	return nil, errors.New("linalg: OpenBLAS backend not compiled in (build with -tags openblas)")
}

// configureThreads is never called in this build: Install chooses Gonum.
func configureThreads() {}

// openblasThreads is 0: there is no OpenBLAS in this build.
func openblasThreads() int { return 0 }

// openblasAddAtA32 is never called in this build: Current is Gonum and
// forceSsyrk32 is only set by tests with OpenBLAS available.
func openblasAddAtA32(float64, blas64.General, cMatrix) {
	panic("linalg: OpenBLAS backend not compiled in")
}
