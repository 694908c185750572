package dimebeam

import (
	"fmt"
	"math"
	"reflect"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dime-project/dime/stream"
)

func init() {
	register.Combiner3[*stream.Sum, *stream.Sum, []byte](&sumFn{})
	register.Combiner3[*stream.Sum, []byte, []byte](&mergeFn{})
	beam.RegisterCoder(reflect.TypeOf((*stream.Sum)(nil)), encodeSum, decodeSum)
}

// The combine of the splits' states is a tree of two levels, so that no
// worker receives more than a bounded number of states or sums, whether or
// not the runner lifts combiners before the shuffle (Dataflow and Prism do;
// the portable Flink and Spark runners do not, and would otherwise send
// every split's state to one worker):
//
//  1. the states are keyed by their split's shard (Split.Shard, given by
//     assignShards) and combined per key (beam.CombinePerKey with sumFn)
//     into one exact sum per shard;
//  2. the shards' sums are combined globally (beam.Combine with mergeFn)
//     into the merged state.
//
// With n splits there are s = ⌈√n⌉ shards of at most ⌈n/s⌉ ≤ s splits each,
// so a worker of either level receives at most ⌈√n⌉ states or sums (31 for
// the 950 splits of 10⁹ rows at the default split size) where a single
// global combine would receive n. Both levels add exactly (stream.Sum), so
// the merged state is the same bit for bit whatever the grouping.

// assignShards gives each of the n splits its shard: the splits are dealt
// in turn to ⌈√n⌉ shards.
func assignShards(splits []Split) []Split {
	shards := shardCount(len(splits))
	for i := range splits {
		splits[i].Shard = i % shards
	}
	return splits
}

// shardCount returns the number of shards of n splits: ⌈√n⌉ (at least 1).
func shardCount(n int) int {
	s := max(int(math.Sqrt(float64(n))), 1)
	for s*s < n {
		s++
	}
	return s
}

// combineStates combines states, a PCollection of KV<int, *stream.Sum> (a
// split's shard and its exact sum), into a PCollection of one []byte: the
// state of every row (nil when there are none).
func combineStates(s beam.Scope, states beam.PCollection) beam.PCollection {
	return beam.Combine(s, &mergeFn{}, shardSums(s, states))
}

// shardSums returns the exact sum (stream.Sum's encoding) of the states of
// each shard.
func shardSums(s beam.Scope, states beam.PCollection) beam.PCollection {
	return beam.DropKey(s, beam.CombinePerKey(s, &sumFn{}, states))
}

// sumFn adds the exact sums of a shard's splits (stream.Sum) and emits
// their total, still exact, in its encoding.
type sumFn struct{}

func (sumFn) CreateAccumulator() *stream.Sum { return &stream.Sum{} }

func (sumFn) AddInput(s, split *stream.Sum) (*stream.Sum, error) { return merge(s, split) }

func (sumFn) MergeAccumulators(a, b *stream.Sum) (*stream.Sum, error) { return merge(a, b) }

func (sumFn) ExtractOutput(s *stream.Sum) ([]byte, error) { return encodeSum(s) }

// mergeFn adds the shards' sums exactly and emits the state of their total.
type mergeFn struct{}

func (mergeFn) CreateAccumulator() *stream.Sum { return &stream.Sum{} }

func (mergeFn) AddInput(s *stream.Sum, enc []byte) (*stream.Sum, error) {
	t, err := decodeSum(enc)
	if err != nil {
		return nil, fmt.Errorf("dimebeam: a shard's sum: %v", err)
	}
	return merge(s, t)
}

func (mergeFn) MergeAccumulators(a, b *stream.Sum) (*stream.Sum, error) { return merge(a, b) }

func (mergeFn) ExtractOutput(s *stream.Sum) ([]byte, error) {
	if s.Empty() {
		return nil, nil
	}
	e, err := s.Estimator()
	if err != nil {
		return nil, err
	}
	return e.MarshalBinary()
}

// merge adds b to a and returns the total: b itself when a is empty, so
// that the first sum a combine receives is taken over rather than copied.
func merge(a, b *stream.Sum) (*stream.Sum, error) {
	if a.Empty() {
		return b, nil
	}
	if err := a.Merge(b); err != nil {
		return nil, fmt.Errorf("dimebeam: combining the splits: %v", err)
	}
	return a, nil
}

func encodeSum(s *stream.Sum) ([]byte, error) { return s.MarshalBinary() }

func decodeSum(b []byte) (*stream.Sum, error) {
	var s stream.Sum
	if err := s.UnmarshalBinary(b); err != nil {
		return nil, err
	}
	return &s, nil
}
