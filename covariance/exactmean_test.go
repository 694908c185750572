package covariance

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// shardMeans returns k first moments of joint-like feature rows of 3 to
// 3 + 17(k−1) rows, the last one decayed (Scale) so that Σ w² ≠ Σ w.
func shardMeans(t *testing.T, k int) []*Mean {
	t.Helper()
	var out []*Mean
	for i := range k {
		n := 3 + 17*i
		px, py := features(t, testMap, n, uint64(40+i))
		m, err := NewMean(Description{Map: testMap, Part: PartJoint})
		if err != nil {
			t.Fatal(err)
		}
		for j := range px {
			px[j] = (px[j] + py[j]) / 2
		}
		if err := m.Add(px, n); err != nil {
			t.Fatal(err)
		}
		if i == k-1 {
			m.Scale(0.625)
		}
		out = append(out, m)
	}
	return out
}

// TestExactMeanOrderIndependent checks that an ExactMean of shards gives the
// same bytes whatever the order and grouping of Adds and Merges, and that it
// agrees with the float64 Merge to round-off.
func TestExactMeanOrderIndependent(t *testing.T) {
	shards := shardMeans(t, 9)
	var ref []byte
	var refMean *Mean
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 12 {
		order := r.Perm(len(shards))
		parts := make([]ExactMean, 1+r.IntN(4))
		for _, i := range order {
			if err := parts[r.IntN(len(parts))].Add(shards[i]); err != nil {
				t.Fatal(err)
			}
		}
		var total ExactMean
		for _, i := range r.Perm(len(parts)) {
			if err := total.Merge(&parts[i]); err != nil {
				t.Fatal(err)
			}
		}
		enc, err := total.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		m, err := total.Mean()
		if err != nil {
			t.Fatal(err)
		}
		if trial == 0 {
			ref, refMean = enc, m
			continue
		}
		if !bytes.Equal(enc, ref) {
			t.Fatalf("trial %d (order %v, %d parts): encoding differs", trial, order, len(parts))
		}
		a, _ := m.MarshalBinary()
		b, _ := refMean.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Fatalf("trial %d: rounded mean differs", trial)
		}
	}
	var float Mean
	for _, s := range shards {
		float.Merge(s)
	}
	if refMean.Description() != float.Description() || refMean.Dim() != float.Dim() {
		t.Fatal("description differs from the float merge's")
	}
	// The weights are sums of a few exact binary fractions: equal. The
	// entries (O(rows) = O(100)) are within a few ulps of the exact sum.
	if refMean.Weight() != float.Weight() || refMean.SquaredWeight() != float.SquaredWeight() {
		t.Errorf("weights %v, %v; float merge %v, %v", refMean.Weight(), refMean.SquaredWeight(), float.Weight(), float.SquaredWeight())
	}
	for j, v := range refMean.Sum() {
		if d := math.Abs(v - float.Sum()[j]); d > 1e-13 {
			t.Errorf("entry %d: exact and float merges differ by %g", j, d)
		}
	}
}

// TestExactMeanMarshal checks the encoding round trip, the empty sum, and
// that damaged bytes are refused without changing the receiver.
func TestExactMeanMarshal(t *testing.T) {
	var s ExactMean
	empty, _ := s.MarshalBinary()
	for _, m := range shardMeans(t, 3) {
		if err := s.Add(m); err != nil {
			t.Fatal(err)
		}
	}
	enc, _ := s.MarshalBinary()
	var back ExactMean
	if err := back.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if again, _ := back.MarshalBinary(); !bytes.Equal(again, enc) || back.Budget() != s.Budget() || back.Description() != s.Description() {
		t.Fatal("round trip changed the sum")
	}
	var e ExactMean
	if err := e.UnmarshalBinary(empty); err != nil || !e.Empty() {
		t.Fatalf("empty sum: %v, empty %v", err, e.Empty())
	}
	if _, err := e.Mean(); !errors.Is(err, ErrEmpty) {
		t.Errorf("Mean of an empty sum: %v, want ErrEmpty", err)
	}
	var acc ExactSum
	acc.Add(shardAccumulators(t, 1)[0])
	accEnc, _ := acc.MarshalBinary()
	flipped := bytes.Clone(enc)
	flipped[len(flipped)/2] ^= 1
	for name, data := range map[string][]byte{
		"truncated": enc[:len(enc)-9], "flipped": flipped, "exact sum": accEnc,
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

// TestExactMeanRefuses checks the budget and the descriptions.
func TestExactMeanRefuses(t *testing.T) {
	var s ExactMean
	if err := s.Add(shardMeans(t, 1)[0]); err != nil {
		t.Fatal(err)
	}
	before, _ := s.MarshalBinary()
	other, _ := NewMean(Description{Map: testMap, Part: PartX})
	other.Add(make([]float64, other.Dim()), 1)
	if err := s.Add(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("another part: %v, want ErrIncompatible", err)
	}
	var o ExactMean
	o.Add(other)
	if err := s.Merge(&o); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Merge of another part: %v, want ErrIncompatible", err)
	}
	huge, _ := NewMean(Description{Map: testMap, Part: PartJoint})
	huge.Add(make([]float64, huge.Dim()), 1)
	huge.Scale(1 << 27) // Σ w² = 2⁵⁴: with s's, past the budget
	if err := s.Add(huge); !errors.Is(err, ErrInvalid) {
		t.Errorf("past the budget: %v, want ErrInvalid", err)
	}
	var h ExactMean
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
}
