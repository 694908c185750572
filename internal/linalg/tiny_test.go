package linalg

import (
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/lapack/gonum"
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

// TestEigenvaluesTinyBlock: a matrix of ordinary scale with a tiny diagonal
// block (the features of a nearly constant column beside others) has a
// tridiagonal form with a block that gonum's Dsterf rescales, and panics on;
// the solver then iterates that matrix with Dsteqr. The eigenvalues are the
// blocks' own.
func TestEigenvaluesTinyBlock(t *testing.T) {
	// The tridiagonal matrix of blocks of scale 1 and 1e-130: Dsterf alone
	// panics, and dsterf reports it.
	var impl gonum.Implementation
	d := []float64{2, 1, 3, 2e-130, 1e-130, 3e-130}
	e := []float64{0.5, 0.25, 0, 1e-131, 2e-131}
	if _, rescaled := dsterf(impl, len(d), d, e); !rescaled {
		t.Fatal("gonum's Dsterf no longer panics on a tiny block: drop the fallback")
	}
	for _, tiny := range []float64{1e-130, 1e-200} {
		const n = 6
		a := mat.NewSymDense(n, nil)
		for i := range 3 {
			for j := i; j < 3; j++ {
				a.SetSym(i, j, float64(i+j+1)/float64(1+i*j)-0.3)
				a.SetSym(3+i, 3+j, tiny*(float64(i*j+1)/float64(1+i+j)+0.1))
			}
		}
		big, small := mat.NewSymDense(3, nil), mat.NewSymDense(3, nil)
		for i := range 3 {
			for j := i; j < 3; j++ {
				big.SetSym(i, j, a.At(i, j))
				small.SetSym(i, j, a.At(3+i, 3+j)/tiny)
			}
		}
		var es mat.EigenSym
		es.Factorize(big, false)
		wantBig := es.Values(nil)
		es.Factorize(small, false)
		wantSmall := es.Values(nil)
		var s SymEigensolver
		got, err := s.EigenvaluesInPlace(nil, a.RawSymmetric())
		if err != nil {
			t.Fatalf("tiny %g: %v", tiny, err)
		}
		// Ascending: the tiny block's three (two may be negative).
		var gotBig, gotSmall []float64
		for _, v := range got {
			if math.Abs(v) > 1e-100 {
				gotBig = append(gotBig, v)
			} else {
				gotSmall = append(gotSmall, v/tiny)
			}
		}
		if len(gotBig) != 3 || len(gotSmall) != 3 {
			t.Fatalf("tiny %g: eigenvalues %v", tiny, got)
		}
		slices.Sort(wantBig)
		slices.Sort(wantSmall)
		for i := range 3 {
			// Round-off of a 3×3 solve, 1e-15 of the block's norm, with room.
			if math.Abs(gotBig[i]-wantBig[i]) > 1e-13 || math.Abs(gotSmall[i]-wantSmall[i]) > 1e-13 {
				t.Errorf("tiny %g: eigenvalue %d: %g and %g·tiny, want %g and %g·tiny", tiny, i, gotBig[i], gotSmall[i], wantBig[i], wantSmall[i])
			}
		}
	}
}
