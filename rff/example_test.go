package rff_test

import (
	"fmt"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// Map rows to random Fourier features: inner products of features
// approximate the kernel.
func ExampleMap_Transform() {
	m, err := rff.New(rff.Spec{Kernel: vocab.Gaussian, Sigma: 1, InputDim: 2, Features: 4096, Seed: 1})
	if err != nil {
		panic(err)
	}
	x := []float64{0, 0, 0.5, 1} // two rows of two columns
	phi, err := m.Transform(nil, x, 2)
	if err != nil {
		panic(err)
	}
	p := m.Dim()
	var dot float64
	for j := 0; j < p; j++ {
		dot += phi[j] * phi[p+j]
	}
	fmt.Printf("features %d, kernel %.3f, estimate %.3f\n", p, exact.Eval(vocab.Gaussian, x[:2], x[2:], 1), dot)
	// Output: features 8192, kernel 0.535, estimate 0.530
}
