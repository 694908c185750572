package covariance_test

import (
	"fmt"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// Accumulate the features of two shards separately, merge them as a
// coordinator would after receiving their saved states, and read the entropy.
func ExampleAccumulator_Merge() {
	spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: 64, Seed: 1, SigmaX: 1, SigmaY: 1, DimX: 2, DimY: 2}
	pair, _ := rff.NewPair(spec)
	desc := covariance.Description{Map: spec, Part: covariance.PartX}
	shard := func(seed uint64) []byte {
		x, _, _ := synth.Generate(synth.Spec{Kind: synth.Independent, Dim: 2, Seed: seed}, 1000)
		phi, _ := pair.X.Transform(nil, x.RawMatrix().Data, 1000)
		acc, _ := covariance.New(desc)
		acc.Add(phi, 1000)
		state, _ := acc.MarshalBinary()
		return state
	}
	var total covariance.Accumulator // the zero value adopts the first state's description
	for _, seed := range []uint64{1, 2} {
		var acc covariance.Accumulator
		if err := acc.UnmarshalBinary(shard(seed)); err != nil {
			panic(err)
		}
		if err := total.Merge(&acc); err != nil {
			panic(err)
		}
	}
	s, _ := total.Entropy(1.01)
	fmt.Printf("rows %.0f, S_X %.3f nats\n", total.Weight(), s)
	// Output: rows 2000, S_X 2.071 nats
}
