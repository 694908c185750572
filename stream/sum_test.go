package stream

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/synth"
)

// shardStates returns the states of estimators over consecutive ranges of
// the rows (of different sizes) and an estimator over all the rows.
func shardStates(t *testing.T, cfg Config, x, y []float64, d int, cuts []int) (states [][]byte, one *Estimator) {
	t.Helper()
	one, _ = New(d, d, cfg)
	for i := 1; i < len(cuts); i++ {
		lo, hi := cuts[i-1], cuts[i]
		e, err := New(d, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		addBlocks(t, e, x[lo*d:hi*d], y[lo*d:hi*d], d, 700)
		addBlocks(t, one, x[lo*d:hi*d], y[lo*d:hi*d], d, 700)
		e.Skip(int64(i))
		one.Skip(int64(i))
		b, err := e.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, b)
	}
	return states, one
}

func readState(t *testing.T, b []byte) *Estimator {
	t.Helper()
	e, err := ReadState(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestSumOrderIndependent checks that summing shards in any order and
// grouping, with the partial sums encoded and decoded on the way as a runner
// does, gives the same state byte for byte, and that it agrees with one
// estimator over all the rows and with a float64 merge.
func TestSumOrderIndependent(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.3, Seed: 4}, 9000)
	cfg := testConfig(d, 24, 3, 9)
	cfg.XColumns, cfg.YColumns = []string{"a", "b"}, []string{"c", "d"}
	states, one := shardStates(t, cfg, x, y, d, []int{0, 700, 1500, 4000, 4001 + 699, 7000, 9000})
	r := rand.New(rand.NewPCG(7, 8))
	var ref []byte
	for trial := range 10 {
		parts := make([]Sum, 1+r.IntN(3))
		for _, i := range r.Perm(len(states)) {
			if err := parts[r.IntN(len(parts))].Add(readState(t, states[i])); err != nil {
				t.Fatal(err)
			}
		}
		var total Sum
		for _, i := range r.Perm(len(parts)) {
			enc, err := parts[i].MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var p Sum
			if err := p.UnmarshalBinary(enc); err != nil {
				t.Fatal(err)
			}
			if err := total.Merge(&p); err != nil {
				t.Fatal(err)
			}
		}
		e, err := total.Estimator()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := e.MarshalBinary()
		if trial == 0 {
			ref = b
			continue
		}
		if !bytes.Equal(b, ref) {
			t.Fatalf("trial %d: the merged state differs", trial)
		}
	}
	merged := readState(t, ref)
	if merged.Rows() != 9000 {
		t.Fatalf("%d rows, want 9000", merged.Rows())
	}
	got, err := merged.Result()
	if err != nil {
		t.Fatal(err)
	}
	// One estimator over all rows: the same accumulators up to float64
	// summation order. Measured: entropies, MI and analytic DiME within
	// 8e-15 relative. (DiME by permutations differs more, by 0.4% here:
	// shards cut the shuffle scopes elsewhere.)
	want, _ := one.Result()
	for i, p := range [][2]float64{{got.EntropyX, want.EntropyX}, {got.EntropyY, want.EntropyY}, {got.EntropyJoint, want.EntropyJoint},
		{got.MutualInformation, want.MutualInformation}, {got.DiMEAnalytic, want.DiMEAnalytic}} {
		if rel := math.Abs(p[0]-p[1]) / math.Abs(p[1]); rel > 1e-12 {
			t.Errorf("value %d: %.17g, one run %.17g (relative %g)", i, p[0], p[1], rel)
		}
	}
	if got.Rows != want.Rows || got.SkippedRows != want.SkippedRows || got.SkippedRows != 21 {
		t.Errorf("rows %d/%d skipped, one run %d/%d", got.Rows, got.SkippedRows, want.Rows, want.SkippedRows)
	}
	// A float64 merge in file order: the same to round-off (measured 2e-15).
	float := readState(t, states[0])
	for _, s := range states[1:] {
		if err := float.Merge(readState(t, s)); err != nil {
			t.Fatal(err)
		}
	}
	fr, _ := float.Result()
	sameResult(t, "float merge", got, fr, 1e-13)
}

// TestSumRefuses checks that a Sum refuses what Estimator.Merge refuses,
// unchanged, and the edge cases of empty sums.
func TestSumRefuses(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: 3}, 3000)
	cfg := testConfig(d, 16, 2, 1)
	states, _ := shardStates(t, cfg, x, y, d, []int{0, 1000, 3000})
	var s Sum
	if _, err := s.Estimator(); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Estimator of an empty sum: %v", err)
	}
	if err := s.Merge(&Sum{}); err != nil || !s.Empty() {
		t.Errorf("merging empty sums: %v", err)
	}
	if err := s.Add(readState(t, states[0])); err != nil {
		t.Fatal(err)
	}
	before, _ := s.MarshalBinary()
	other := cfg
	other.BandwidthX = exact.Sigma(3)
	e, _ := New(d, d, other)
	addBlocks(t, e, x, y, d, 3000)
	if err := s.Add(e); !errors.Is(err, ErrIncompatible) {
		t.Errorf("another bandwidth: %v, want ErrIncompatible", err)
	}
	notStarted, _ := New(d, d, Config{Kernel: exact.Gaussian, Alpha: 1.01, Features: 16, Permutations: 2, Seed: 1, BandwidthX: exact.Median()})
	if err := s.Add(notStarted); !errors.Is(err, ErrIncompatible) {
		t.Errorf("an estimator without rows: %v", err)
	}
	if after, _ := s.MarshalBinary(); !bytes.Equal(after, before) {
		t.Fatal("a refused Add changed the sum")
	}
	// An empty Sum merged into is a copy: changing it leaves the original.
	var c Sum
	if err := c.Merge(&s); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(readState(t, states[1])); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.MarshalBinary(); !bytes.Equal(after, before) || c.Rows() != 3000 || s.Rows() != 1000 {
		t.Fatalf("the copy shares the original's storage: rows %d and %d", c.Rows(), s.Rows())
	}
	// Damaged encodings.
	enc, _ := c.MarshalBinary()
	empty, _ := (&Sum{}).MarshalBinary()
	flipped := bytes.Clone(enc)
	flipped[len(flipped)/3] ^= 4
	for name, data := range map[string][]byte{"truncated": enc[:len(enc)-1], "flipped": flipped, "state": states[0],
		"nothing": nil, "empty with trailing data": append(bytes.Clone(empty[:len(empty)-4]), 0, 0, 0, 0, 0)} {
		if err := c.UnmarshalBinary(data); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v, want ErrState", name, err)
		}
	}
	if now, _ := c.MarshalBinary(); !bytes.Equal(now, enc) {
		t.Error("a refused UnmarshalBinary changed the sum")
	}
	var e2 Sum
	if err := e2.UnmarshalBinary(empty); err != nil || !e2.Empty() {
		t.Errorf("empty sum: %v", err)
	}
}
