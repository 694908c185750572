// Package linalg is the linear-algebra seam of dime: the few dense kernels
// whose speed decides the cost of every estimator, behind one small API so
// that a faster backend can replace the pure-Go default without touching the
// callers.
//
// # Overview
//
// The default build uses gonum (pure Go, no cgo). The eigenvalue routine here
// is values-only: the matrix-based entropies of dime never need eigenvectors,
// and skipping them saves most of the cost of a symmetric eigensolve.
//
// A SymEigensolver owns its workspace, so repeated solves of the same size do
// not allocate. It is not safe for concurrent use; give each goroutine its own.
package linalg
