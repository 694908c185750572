package exact

import (
	"errors"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestMatrixEntropiesOf checks that entropies of matrices written by fills
// into the workers' scratch equal MatrixEntropy of the same matrices, bit
// for bit, whatever the scratch held before (only the upper triangle is
// written), and that a fill's error is returned.
func TestMatrixEntropiesOf(t *testing.T) {
	const n, count = 12, 7
	r := rand.New(rand.NewPCG(5, 6))
	mats := make([]*mat.SymDense, count)
	for k := range mats {
		a := mat.NewDense(n, n+3, nil)
		for i := range n {
			for j := range n + 3 {
				a.Set(i, j, r.NormFloat64())
			}
		}
		mats[k] = mat.NewSymDense(n, nil)
		mats[k].SymOuterK(1, a)
	}
	for _, alpha := range alphas {
		fills := make([]func(*mat.SymDense) error, count)
		for k, m := range mats {
			fills[k] = func(dst *mat.SymDense) error {
				for i := range n {
					for j := i; j < n; j++ {
						dst.SetSym(i, j, m.At(i, j))
					}
				}
				return nil
			}
		}
		got, err := MatrixEntropiesOf(n, alpha, fills...)
		if err != nil {
			t.Fatal(err)
		}
		for k, m := range mats {
			want, err := MatrixEntropy(m, alpha)
			if err != nil {
				t.Fatal(err)
			}
			if got[k] != want {
				t.Errorf("alpha %v, matrix %d: %v, want %v", alpha, k, got[k], want)
			}
		}
	}
	boom := errors.New("boom")
	fills := []func(*mat.SymDense) error{
		func(dst *mat.SymDense) error { dst.SetSym(0, 0, 1); return nil },
		func(*mat.SymDense) error { return boom },
	}
	if _, err := MatrixEntropiesOf(1, 1.01, fills...); !errors.Is(err, boom) {
		t.Errorf("error of a fill: got %v", err)
	}
}
