package exact_test

import (
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// Estimate the dependence between two views with the paper's settings.
func ExampleEstimate() {
	// 400 rows of the paper's toy: d = 3, true mutual information 2 nats.
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: 3, MI: 2, Seed: 1}, 400)
	if err != nil {
		panic(err)
	}
	r, err := exact.Estimate(x, y, exact.DefaultConfig())
	if err != nil {
		panic(err)
	}
	fmt.Printf("sigma %.4f, S_X %.3f, S_XY %.3f, DiME %.3f ± %.3f\n",
		r.SigmaX, r.EntropyX, r.EntropyJoint, r.DiME, r.DiMEStdErr)
	fmt.Println("DiME <= MI:", r.DiME <= r.MutualInformation)
	// Output:
	// sigma 1.2247, S_X 2.688, S_XY 4.071, DiME 0.687 ± 0.004
	// DiME <= MI: true
}

// Entropies of Gram matrices: the identity has the largest entropy, log n.
func ExampleMatrixEntropy() {
	x := mat.NewDense(4, 1, []float64{0, 10, 20, 30})
	k, _ := exact.Gram(nil, vocab.Gaussian, 0.1, x) // far apart: K ≈ I
	s, _ := exact.MatrixEntropy(k, 1.01)
	fmt.Printf("%.4f (log 4 = 1.3863)\n", s)
	// Output: 1.3863 (log 4 = 1.3863)
}
