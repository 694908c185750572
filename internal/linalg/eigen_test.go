package linalg

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
)

func randomSym(n int, seed uint64) *mat.SymDense {
	r := rand.New(rand.NewPCG(seed, 1))
	a := mat.NewSymDense(n, nil)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			a.SetSym(i, j, r.NormFloat64())
		}
	}
	return a
}

// TestEigenvaluesMatchGonum compares the values-only solver with gonum's
// EigenSym (with vectors, a different LAPACK path) across sizes, reusing one
// solver so that workspace resizing is exercised.
func TestEigenvaluesMatchGonum(t *testing.T) {
	var s SymEigensolver
	for _, n := range []int{1, 2, 5, 64, 3, 200} {
		a := randomSym(n, uint64(n))
		var es mat.EigenSym
		if !es.Factorize(a, true) {
			t.Fatal("gonum failed")
		}
		want := es.Values(nil)
		scratch := mat.NewSymDense(n, nil)
		scratch.CopySym(a)
		got, err := s.EigenvaluesInPlace(nil, scratch.RawSymmetric())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSorted(got) {
			t.Errorf("n %d: eigenvalues not ascending", n)
		}
		for i := range want {
			// Measured differences ~1e-14 at n = 200 (norm ~ 2√n ≈ 28).
			if !scalar.EqualWithinAbsOrRel(got[i], want[i], 1e-12, 1e-12) {
				t.Errorf("n %d: eigenvalue %d = %.17g, want %.17g", n, i, got[i], want[i])
			}
		}
	}
}

func TestDiagonalAndDstReuse(t *testing.T) {
	a := mat.NewDiagDense(4, []float64{3, -1, 2, 0})
	s := mat.NewSymDense(4, nil)
	for i := 0; i < 4; i++ {
		s.SetSym(i, i, a.At(i, i))
	}
	dst := make([]float64, 10)
	var solver SymEigensolver
	got, err := solver.EigenvaluesInPlace(dst, s.RawSymmetric())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []float64{-1, 0, 2, 3}) || &got[0] != &dst[0] {
		t.Errorf("got %v (reused dst: %v)", got, &got[0] == &dst[0])
	}
	if got, err := solver.EigenvaluesInPlace(nil, mat.NewSymDense(1, []float64{5}).RawSymmetric()); err != nil || got[0] != 5 {
		t.Errorf("1×1: %v %v", got, err)
	}
}

// TestEigenStrideSameBits checks that the padded stride of EigenStride
// changes no eigenvalue, to the bit, on every backend compiled in: the
// padding only moves the rows in memory.
func TestEigenStrideSameBits(t *testing.T) {
	def := Current()
	defer Use(def)
	for _, be := range []Backend{Gonum, OpenBLAS} {
		if !be.Available() {
			continue
		}
		if err := Use(be); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{31, 64, 96, 256, 512} {
			if EigenStride(n) == n && n%32 == 0 {
				t.Errorf("n %d: not padded", n)
			}
			a := randomSym(n, uint64(n))
			var s SymEigensolver
			plain := mat.NewSymDense(n, nil)
			plain.CopySym(a)
			want, err := s.EigenvaluesInPlace(nil, plain.RawSymmetric())
			if err != nil {
				t.Fatal(err)
			}
			padded := new(mat.SymDense)
			padded.SetRawSymmetric(NewEigenScratch(n))
			padded.CopySym(a)
			got, err := s.EigenvaluesInPlace(nil, padded.RawSymmetric())
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
					t.Fatalf("%v, n %d: eigenvalue %d = %.17g with stride %d, %.17g with stride %d", be, n, i, got[i], EigenStride(n), want[i], n)
				}
			}
		}
	}
}
