// Package statetest helps the tests of the beam module compare estimator
// states.
package statetest

import (
	"bytes"
	"slices"

	"github.com/dime-project/dime/stream"
)

// WithoutShards returns a state without its shard ids (random, see
// stream.ShardID) and its final checksum, which covers them: what two runs
// over the same data must agree on byte for byte. It finds the ids through
// stream.ReadState and Shards, not through the layout of the state, so that
// new fields of the format change nothing here; it returns the state
// unchanged if it cannot (the comparison then fails).
func WithoutShards(state []byte) []byte {
	e, err := stream.ReadState(bytes.NewReader(state))
	if err != nil || len(state) < 4 {
		return state
	}
	ids, _ := e.Shards()
	var block []byte
	for _, id := range ids {
		block = append(block, id[:]...)
	}
	i := bytes.Index(state, block)
	if len(block) == 0 || i < 0 || bytes.Index(state[i+1:], block) >= 0 {
		return state
	}
	return slices.Concat(state[:i], state[i+len(block):len(state)-4])
}
