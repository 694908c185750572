package covariance

import (
	"bytes"
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// randomMagnitude returns a random float64 of either sign with an exponent
// uniform in [lo, hi).
func randomMagnitude(r *rand.Rand, lo, hi int) float64 {
	v := math.Ldexp(1+r.Float64(), lo+r.IntN(hi-lo))
	if r.IntN(2) == 0 {
		v = -v
	}
	return v
}

// fixedRef returns round(v·2⁷²), ties to even, computed with math/big.
func fixedRef(v float64) *big.Int {
	x := new(big.Float).SetPrec(0).SetFloat64(v) // exact
	x.SetMantExp(x, ExactFracBits)
	i, _ := x.Int(nil) // truncated toward zero
	frac := new(big.Float).Sub(x, new(big.Float).SetInt(i))
	frac.Abs(frac)
	switch c := frac.Cmp(big.NewFloat(0.5)); {
	case c > 0 || c == 0 && i.Bit(0) == 1:
		if v < 0 {
			i.Sub(i, big.NewInt(1))
		} else {
			i.Add(i, big.NewInt(1))
		}
	}
	return i
}

// fromWords returns the 128-bit two's-complement integer (lo, hi).
func fromWords(lo, hi uint64) *big.Int {
	i := new(big.Int).SetUint64(hi)
	i.Lsh(i, 64)
	i.Or(i, new(big.Int).SetUint64(lo))
	if int64(hi) < 0 {
		i.Sub(i, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	return i
}

// TestToFixed checks the conversion to fixed point against math/big, over
// magnitudes from below the grid to the top of the range, and ties.
func TestToFixed(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := []float64{0, math.Copysign(0, -1), 1, -1, math.SmallestNonzeroFloat64, 0x1p-73, 0x1p-72, 0x3p-73, 0x5p-73, -0x3p-73,
		0x1.fffffffffffffp54, -0x1.fffffffffffffp54, 0x1p-136, 0x1.8p-73, math.MaxFloat64 / math.MaxFloat64}
	for range 20000 {
		values = append(values, randomMagnitude(r, -140, 55))
	}
	for _, v := range values {
		lo, hi := toFixed(v)
		if got, want := fromWords(lo, hi), fixedRef(v); got.Cmp(want) != 0 {
			t.Fatalf("toFixed(%v) = %v, want %v", v, got, want)
		}
		back := fromFixed(lo, hi)
		if math.Abs(v) >= 0x1p-20 && back != v {
			t.Fatalf("%v does not round-trip: %v", v, back)
		}
		if d := math.Abs(back - v); d > 0x1p-73 {
			t.Fatalf("%v comes back as %v, %g away", v, back, d)
		}
	}
}

// TestFixedSumCorrectlyRounded checks that sums in fixed point, wrapping
// through negative partial sums and carries between the words, round back to
// the float64 nearest to the exact sum of the grid values (math/big).
func TestFixedSumCorrectlyRounded(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 3000 {
		n := 1 + r.IntN(40)
		lo, hi := -100, 50
		if trial%3 == 0 {
			lo, hi = -30, -10 // round-off ranges: the final rounding decides
		}
		var slo, shi uint64
		exactSum := new(big.Float).SetPrec(2000)
		for range n {
			v := randomMagnitude(r, lo, hi)
			if trial%5 == 0 && r.IntN(2) == 0 {
				v = -fromFixed(slo, shi) // cancel: the sum passes through 0
			}
			a, b := toFixed(v)
			slo, shi = add128(slo, shi, a, b)
			exactSum.Add(exactSum, new(big.Float).SetFloat64(fromFixed(a, b)))
		}
		want, _ := exactSum.Float64()
		if got := fromFixed(slo, shi); got != want {
			t.Fatalf("trial %d: sum %v, want %v (exact %v)", trial, got, want, exactSum.Text('g', 40))
		}
	}
}

// shardAccumulators returns the joint accumulators of k shards of random rows
// of different sizes.
func shardAccumulators(t testing.TB, k int) []*Accumulator {
	t.Helper()
	var out []*Accumulator
	for i := range k {
		n := 3 + 17*i
		px, py := features(t, testMap, n, uint64(10+i))
		a := mustNew(t, Description{Map: testMap, Part: PartJoint})
		joint := make([]float64, n*a.Dim())
		for r := range n { // a joint-like feature row: both parts, rescaled
			for j := range a.Dim() {
				joint[r*a.Dim()+j] = (px[r*a.Dim()+j] + py[r*a.Dim()+j]) / 2
			}
		}
		if err := a.Add(joint, n); err != nil {
			t.Fatal(err)
		}
		out = append(out, a)
	}
	return out
}

// TestExactSumOrderIndependent checks that an ExactSum of shards gives the
// same bytes whatever the order and grouping of Adds and Merges, and that it
// agrees with the float64 Merge to round-off.
func TestExactSumOrderIndependent(t *testing.T) {
	shards := shardAccumulators(t, 9)
	var ref []byte
	var refAcc *Accumulator
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 12 {
		order := r.Perm(len(shards))
		// A random tree: Add shards to a few partial sums, then Merge them
		// in a random order.
		parts := make([]ExactSum, 1+r.IntN(4))
		for _, i := range order {
			if err := parts[r.IntN(len(parts))].Add(shards[i]); err != nil {
				t.Fatal(err)
			}
		}
		var total ExactSum
		for _, i := range r.Perm(len(parts)) {
			if err := total.Merge(&parts[i]); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := total.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		acc, err := total.Accumulator()
		if err != nil {
			t.Fatal(err)
		}
		if trial == 0 {
			ref, refAcc = enc, acc
			continue
		}
		if !bytes.Equal(enc, ref) {
			t.Fatalf("trial %d (order %v, %d parts): encoding differs", trial, order, len(parts))
		}
		a, b := acc.MarshalBinary()
		c, _ := refAcc.MarshalBinary()
		if b != nil || !bytes.Equal(a, c) {
			t.Fatalf("trial %d: rounded accumulator differs", trial)
		}
	}
	var float Accumulator
	for _, s := range shards {
		float.Merge(s)
	}
	if refAcc.Weight() != float.Weight() || refAcc.Description() != float.Description() {
		t.Fatalf("weight %v or description differs from the float merge's %v", refAcc.Weight(), float.Weight())
	}
	// Both are within a few ulps of the exact sum: entries are O(rows).
	if d := maxAbsDiff(refAcc.Sum(), float.Sum()); d > 1e-13 {
		t.Errorf("exact and float merges differ by %g", d)
	}
}

// TestExactSumMarshal checks the encoding round trip, the empty sum, and that
// damaged bytes are refused without changing the receiver.
func TestExactSumMarshal(t *testing.T) {
	var s ExactSum
	empty, _ := s.MarshalBinary()
	for _, a := range shardAccumulators(t, 3) {
		if err := s.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	enc, _ := s.MarshalBinary()
	var back ExactSum
	if err := back.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, enc) || back.Budget() != s.Budget() || back.Description() != s.Description() {
		t.Fatal("round trip changed the sum")
	}
	var e ExactSum
	if err := e.UnmarshalBinary(empty); err != nil || !e.Empty() {
		t.Fatalf("empty sum: %v, empty %v", err, e.Empty())
	}
	if _, err := e.Accumulator(); !errors.Is(err, ErrEmpty) {
		t.Errorf("Accumulator of an empty sum: %v, want ErrEmpty", err)
	}
	flipped := bytes.Clone(enc)
	flipped[len(flipped)/2] ^= 1
	for name, data := range map[string][]byte{
		"truncated": enc[:len(enc)-9], "flipped": flipped, "accumulator": mustMarshal(t, shardAccumulators(t, 1)[0]),
		"empty bytes": nil, "trailing": append(bytes.Clone(enc), 0), "empty flipped": append(bytes.Clone(empty[:len(empty)-1]), empty[len(empty)-1]^1),
	} {
		if err := back.UnmarshalBinary(data); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
		if again, _ := back.MarshalBinary(); !bytes.Equal(again, enc) {
			t.Fatalf("%s: receiver changed", name)
		}
	}
}

func mustMarshal(t *testing.T, a *Accumulator) []byte {
	t.Helper()
	b, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestExactSumRefuses checks the budget and the descriptions.
func TestExactSumRefuses(t *testing.T) {
	a := shardAccumulators(t, 1)[0]
	var s ExactSum
	if err := s.Add(a); err != nil {
		t.Fatal(err)
	}
	before, _ := s.MarshalBinary()
	other := mustNew(t, Description{Map: testMap, Part: PartX})
	other.Add(make([]float64, other.Dim()), 1)
	if err := s.Add(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("another part: %v, want ErrIncompatible", err)
	}
	var o ExactSum
	o.Add(other)
	if err := s.Merge(&o); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Merge of another part: %v, want ErrIncompatible", err)
	}
	huge := mustNew(t, Description{Map: testMap, Part: PartJoint})
	huge.Add(make([]float64, huge.Dim()), 1)
	huge.Scale(MaxExactBudget) // weight 2⁵⁴: with a's, past the budget
	if err := s.Add(huge); !errors.Is(err, ErrInvalid) {
		t.Errorf("past the budget: %v, want ErrInvalid", err)
	}
	var h ExactSum
	if err := h.Add(huge); err != nil {
		t.Fatalf("2⁵⁴ alone is within the budget: %v", err)
	}
	if err := s.Merge(&h); !errors.Is(err, ErrInvalid) {
		t.Errorf("Merge past the budget: %v, want ErrInvalid", err)
	}
	if after, _ := s.MarshalBinary(); !bytes.Equal(after, before) {
		t.Error("a refused Add or Merge changed the sum")
	}
	if err := s.Add(nil); err != nil {
		t.Error(err)
	}
	if err := s.Merge(&ExactSum{}); err != nil {
		t.Error(err)
	}
}

func BenchmarkExactSumAdd(b *testing.B) {
	spec := testMap
	spec.Features = 256
	a, _ := New(Description{Map: spec, Part: PartJoint})
	r := rand.New(rand.NewPCG(1, 1))
	for i := range a.sum.N {
		row := a.sum.Row(i)
		for j := range row {
			row[j] = r.NormFloat64()
		}
	}
	a.weight = 1000
	var s ExactSum
	b.ResetTimer()
	for range b.N {
		s = ExactSum{budget: 0}
		s.Add(a)
	}
}
