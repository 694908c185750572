package linalg

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/mat"
)

// TestEigenvaluesTinyMatrices: a symmetric matrix of tiny entries (what the
// RFF-HSIC test's null covariance is for a column of values near 1e-200)
// has the eigenvalues of the same matrix at scale 1, times the scale, on
// both triangles. Before, gonum's Dsyev panicked ("lapack: insufficient
// length of a") for entries below about 1e-146.
func TestEigenvaluesTinyMatrices(t *testing.T) {
	const n = 9
	unit := mat.NewSymDense(n, nil)
	for i := range n {
		for j := i; j < n; j++ {
			unit.SetSym(i, j, float64(i+j+1)/float64(1+i*j)-0.3)
		}
	}
	var s SymEigensolver
	base := mat.NewSymDense(n, nil)
	base.CopySym(unit)
	want, err := s.EigenvaluesInPlace(nil, base.RawSymmetric())
	if err != nil {
		t.Fatal(err)
	}
	for _, scale := range []float64{1e-120, 1e-150, 1e-200, 1e-300, 1e-305} {
		for _, uplo := range []blas.Uplo{blas.Upper, blas.Lower} {
			a := mat.NewSymDense(n, nil)
			a.CopySym(unit)
			a.ScaleSym(scale, a)
			raw := a.RawSymmetric()
			if uplo == blas.Lower { // the same matrix, lower triangle stored
				for i := range n {
					for j := 0; j < i; j++ {
						raw.Data[i*raw.Stride+j] = raw.Data[j*raw.Stride+i]
						raw.Data[j*raw.Stride+i] = math.NaN() // not read
					}
				}
				raw.Uplo = blas.Lower
			}
			got, err := s.EigenvaluesInPlace(nil, raw)
			if err != nil {
				t.Fatalf("scale %g, %v: %v", scale, uplo, err)
			}
			for i := range want {
				// Tolerance: the round-off of the eigensolver at scale 1
				// (1e-15 of the largest), with room for the scaled
				// entries' own rounding.
				if d := math.Abs(got[i]/scale - want[i]); d > 1e-12*math.Abs(want[n-1]) {
					t.Errorf("scale %g, %v: eigenvalue %d is %g, want %g", scale, uplo, i, got[i]/scale, want[i])
				}
			}
		}
	}
}
