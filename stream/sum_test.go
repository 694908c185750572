package stream

import (
	"bytes"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
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
// does, gives the same state byte for byte; that every field of the state
// (each group's X, Y and joint accumulators and first moments, the
// normalized score's copies and self joints, the permuted joints, the row,
// skipped-row and chunk counts, the shard ids) is that of a float64 merge to
// round-off; and that what depends only on the union of the rows agrees with
// one estimator over all of them. Over layouts: the default (K = 4 groups,
// the normalized score's 7 accumulators per group), with permutations, and
// the smallest (K = 2, 3 accumulators per group, P = 0).
func TestSumOrderIndependent(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.3, Seed: 4}, 9000)
	for _, tc := range []struct {
		name   string
		groups int
		perms  int
		skip   bool
		accs   int // per group
	}{
		{"default", 0, 0, false, 7},
		{"permutations", DefaultGroups, 3, false, 7},
		{"two groups without self terms", 2, 0, true, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(d, 24, tc.perms, 9)
			cfg.Groups, cfg.SkipNormalized = tc.groups, tc.skip
			cfg.XColumns, cfg.YColumns = []string{"a", "b"}, []string{"c", "d"}
			states, one := shardStates(t, cfg, x, y, d, []int{0, 700, 1500, 4000, 4001 + 699, 7000, 9000})
			k := cfg.groups()
			r := rand.New(rand.NewPCG(7, 8))
			var ref []byte
			for trial := range 8 {
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
			if len(merged.accs) != tc.accs*k+tc.perms || len(merged.means) != 3*k {
				t.Fatalf("%d accumulators and %d means, want %d and %d", len(merged.accs), len(merged.means), tc.accs*k+tc.perms, 3*k)
			}

			// A float64 merge in file order holds the same sums to
			// round-off: every accumulator and mean, entry by entry.
			// Entries are sums of up to 9000 terms of magnitude ≤ 1 (an
			// ulp of 9000 is 1.8e-12); measured ≤ 1.2e-13 apart (means)
			// and 6e-14 (accumulators); bound 1e-12.
			// Weights and counts are integers: equal.
			float := readState(t, states[0])
			for _, s := range states[1:] {
				if err := float.Merge(readState(t, s)); err != nil {
					t.Fatal(err)
				}
			}
			for i, a := range merged.accs {
				f := float.accs[i]
				if a.Description() != f.Description() || a.Weight() != f.Weight() {
					t.Fatalf("accumulator %d: %v weighing %v, float merge %v weighing %v", i, a.Description(), a.Weight(), f.Description(), f.Weight())
				}
				if dd := maxSymDiff(a.Sum(), f.Sum()); dd > 1e-12 {
					t.Errorf("accumulator %d (%v#%d): %g from the float merge", i, a.Description().Part, a.Description().Index, dd)
				}
			}
			for i, m := range merged.means {
				f := float.means[i]
				if m.Description() != f.Description() || m.Weight() != f.Weight() || m.SquaredWeight() != f.SquaredWeight() {
					t.Fatalf("mean %d: %v weighing %v, float merge %v weighing %v", i, m.Description(), m.Weight(), f.Description(), f.Weight())
				}
				for j, v := range m.Sum() {
					if dd := math.Abs(v - f.Sum()[j]); dd > 1e-12 {
						t.Errorf("mean %d entry %d: %g from the float merge", i, j, dd)
					}
				}
			}
			if merged.chunks != float.chunks || merged.skipped != float.skipped || !slices.Equal(merged.shards.ids, float.shards.ids) {
				t.Errorf("chunks %d, skipped %d, %d shards; float merge %d, %d, %d", merged.chunks, merged.skipped, len(merged.shards.ids), float.chunks, float.skipped, len(float.shards.ids))
			}
			got, err := merged.Result()
			if err != nil {
				t.Fatal(err)
			}
			fr, _ := float.Result()
			// Everything the result computes, the jackknife and the
			// normalized score included (per-group sums), to round-off:
			// measured ≤ 5e-15, the test statistic 6e-14 absolute;
			// bound 1e-13, relative above 1.
			sameResult(t, "float merge", got, fr, 1e-13)
			for i, p := range [][2]float64{{got.DiMENormalized, fr.DiMENormalized}, {got.DiMESelfX, fr.DiMESelfX},
				{got.TestStatistic, fr.TestStatistic}, {got.PValue, fr.PValue}, {got.EntropyProduct, fr.EntropyProduct}} {
				if math.Abs(p[0]-p[1]) > 1e-13*max(1, math.Abs(p[1])) || math.IsNaN(p[0]) != math.IsNaN(p[1]) {
					t.Errorf("float merge: value %d: %.17g vs %.17g", i, p[0], p[1])
				}
			}

			// One estimator over all rows: the same union sums up to
			// float64 summation order. Measured: entropies, MI and
			// analytic DiME within 1.2e-14 relative; bound 1e-12. (Which
			// chunk goes to which group, and which chunks feed the self
			// terms, restart with each shard: the jackknife, the
			// normalized score and DiME by permutations differ by more
			// than round-off, as the shuffle scopes are cut elsewhere.)
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
		})
	}
}

// maxSymDiff returns the largest |a_ij − b_ij|.
func maxSymDiff(a, b mat.Symmetric) float64 {
	var m float64
	for i := range a.SymmetricDim() {
		for j := i; j < a.SymmetricDim(); j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
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
	other.BandwidthX = vocab.Sigma(3)
	e, _ := New(d, d, other)
	addBlocks(t, e, x, y, d, 3000)
	if err := s.Add(e); !errors.Is(err, ErrIncompatible) {
		t.Errorf("another bandwidth: %v, want ErrIncompatible", err)
	}
	notStarted, _ := New(d, d, Config{Kernel: vocab.Gaussian, Alpha: 1.01, Features: 16, Permutations: 2, Seed: 1, BandwidthX: vocab.Median()})
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
	// A Sum's template holds no accumulators and is encoded without them
	// and its (zero) means; ReadState refuses that settings-only state.
	st, err := c.est.appendState(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadState(bytes.NewReader(st)); !errors.Is(err, ErrState) {
		t.Errorf("ReadState of a settings-only state: %v, want ErrState", err)
	}
	whole, err := c.Estimator()
	if err != nil {
		t.Fatal(err)
	}
	if full, _ := whole.MarshalBinary(); len(st) >= len(full)/100 {
		t.Errorf("settings-only state of %d bytes, the full one %d", len(st), len(full))
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

// TestSumStreams checks the streaming forms of a Sum against the Sum:
// WriteSum writes the bytes of Add then MarshalBinary; MergeSums of
// encodings, in any order and with empty Sums among them, writes the bytes
// of their merged Sum; EstimatorOfSums gives the state of its Estimator.
// They refuse what Merge refuses: a Sum given twice (its shards would count
// twice), other settings, damaged bytes.
func TestSumStreams(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.3, Seed: 5}, 6000)
	for _, perms := range []int{0, 2} {
		cfg := testConfig(d, 24, perms, 9)
		states, _ := shardStates(t, cfg, x, y, d, []int{0, 900, 2500, 2501 + 699, 6000})
		var encs [][]byte
		var total Sum
		for _, st := range states {
			var s Sum
			if err := s.Add(readState(t, st)); err != nil {
				t.Fatal(err)
			}
			want, _ := s.MarshalBinary()
			var buf bytes.Buffer
			if err := WriteSum(&buf, readState(t, st)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("P = %d: WriteSum differs from Add and MarshalBinary", perms)
			}
			encs = append(encs, want)
			if err := total.Merge(&s); err != nil {
				t.Fatal(err)
			}
		}
		want, _ := total.MarshalBinary()
		wantEst, _ := total.Estimator()
		wantState, _ := wantEst.MarshalBinary()
		empty, _ := (&Sum{}).MarshalBinary()
		r := rand.New(rand.NewPCG(25, uint64(perms)))
		for trial := range 4 {
			ins := []io.Reader{bytes.NewReader(empty)}
			for _, i := range r.Perm(len(encs)) {
				ins = append(ins, bytes.NewReader(encs[i]))
			}
			r.Shuffle(len(ins), func(i, j int) { ins[i], ins[j] = ins[j], ins[i] })
			var buf bytes.Buffer
			if err := MergeSums(&buf, ins...); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), want) {
				t.Fatalf("P = %d, trial %d: MergeSums differs from Merge", perms, trial)
			}
			for _, in := range ins {
				in.(*bytes.Reader).Seek(0, io.SeekStart)
			}
			e, err := EstimatorOfSums(ins...)
			if err != nil {
				t.Fatal(err)
			}
			if st, _ := e.MarshalBinary(); !bytes.Equal(st, wantState) {
				t.Fatalf("P = %d, trial %d: EstimatorOfSums differs from Estimator", perms, trial)
			}
		}
		// Merging merged sums gives the same bytes.
		var ab, cd, all bytes.Buffer
		MergeSums(&ab, bytes.NewReader(encs[0]), bytes.NewReader(encs[1]))
		MergeSums(&cd, bytes.NewReader(encs[2]), bytes.NewReader(encs[3]), bytes.NewReader(empty))
		if err := MergeSums(&all, &cd, &ab); err != nil || !bytes.Equal(all.Bytes(), want) {
			t.Fatalf("P = %d: a tree of MergeSums differs: %v", perms, err)
		}
		var none bytes.Buffer
		if err := MergeSums(&none, bytes.NewReader(empty)); err != nil || !bytes.Equal(none.Bytes(), empty) {
			t.Fatalf("MergeSums of an empty sum: %v", err)
		}
		if _, err := EstimatorOfSums(bytes.NewReader(empty)); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("EstimatorOfSums of an empty sum: %v", err)
		}
		if err := MergeSums(io.Discard, bytes.NewReader(encs[0]), bytes.NewReader(encs[0])); !errors.Is(err, ErrOverlap) {
			t.Errorf("a sum given twice: %v, want ErrOverlap", err)
		}
		for name, data := range map[string][]byte{"truncated": encs[1][:len(encs[1])-1], "trailing": append(bytes.Clone(encs[1]), 0),
			"state": states[1], "nothing": nil} {
			if err := MergeSums(io.Discard, bytes.NewReader(encs[0]), bytes.NewReader(data)); !errors.Is(err, ErrState) {
				t.Errorf("%s: %v, want ErrState", name, err)
			}
			if _, err := EstimatorOfSums(bytes.NewReader(data), bytes.NewReader(encs[0])); !errors.Is(err, ErrState) {
				t.Errorf("%s: %v, want ErrState", name, err)
			}
		}
	}
	other := testConfig(d, 24, 0, 9)
	other.BandwidthX = vocab.Sigma(3)
	var encs [][]byte
	for _, c := range []Config{testConfig(d, 24, 0, 9), other} {
		e, _ := New(d, d, c)
		addBlocks(t, e, x[:2000], y[:2000], d, 700)
		var buf bytes.Buffer
		if err := WriteSum(&buf, e); err != nil {
			t.Fatal(err)
		}
		encs = append(encs, buf.Bytes())
	}
	if err := MergeSums(io.Discard, bytes.NewReader(encs[0]), bytes.NewReader(encs[1])); !errors.Is(err, ErrIncompatible) {
		t.Errorf("another bandwidth: %v, want ErrIncompatible", err)
	}
}

// TestSumKeepsLagsOfOne checks that a Sum of one estimator's rows keeps
// their lag-1 autocorrelations, to the bit, through its encoding and
// WriteSum, MergeSums and EstimatorOfSums of it alone, and that a Sum of
// two estimators has none (their rows have no order), as Estimator.Merge.
func TestSumKeepsLagsOfOne(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.3, Seed: 6}, 3000)
	cfg := testConfig(d, 16, 0, 9)
	states, one := shardStates(t, cfg, x, y, d, []int{0, 1000, 3000})
	want, _ := one.Result()
	if math.IsNaN(want.Lag1X) || math.IsNaN(want.Lag1Y) || want.Lag1X == 0 {
		t.Fatalf("lag-1 autocorrelations %v and %v", want.Lag1X, want.Lag1Y)
	}
	e, _ := New(d, d, cfg)
	addBlocks(t, e, x, y, d, 700)
	var s Sum
	if err := s.Add(e); err != nil {
		t.Fatal(err)
	}
	enc, _ := s.MarshalBinary()
	var back Sum
	if err := back.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	var merged bytes.Buffer
	if err := MergeSums(&merged, bytes.NewReader(enc)); err != nil || !bytes.Equal(merged.Bytes(), enc) {
		t.Fatalf("MergeSums of one sum: %v", err)
	}
	fromStream, err := EstimatorOfSums(bytes.NewReader(enc))
	if err != nil {
		t.Fatal(err)
	}
	fromSum, _ := back.Estimator()
	for name, est := range map[string]*Estimator{"Sum": fromSum, "EstimatorOfSums": fromStream} {
		got, _ := est.Result()
		if got.Lag1X != want.Lag1X || got.Lag1Y != want.Lag1Y {
			t.Errorf("%s: lag-1 %v and %v, the estimator's %v and %v", name, got.Lag1X, got.Lag1Y, want.Lag1X, want.Lag1Y)
		}
	}
	var two Sum
	for _, st := range states {
		if err := two.Add(readState(t, st)); err != nil {
			t.Fatal(err)
		}
	}
	if two.lags != nil {
		t.Error("a Sum of two estimators keeps lag-1 statistics")
	}
	var a, b bytes.Buffer
	e1, e2 := readState(t, states[0]), readState(t, states[1])
	addBlocks(t, e1, x[:600*d], y[:600*d], d, 300) // restored states have no lag statistics: give them some
	addBlocks(t, e2, x[600*d:1200*d], y[600*d:1200*d], d, 300)
	WriteSum(&a, e1)
	WriteSum(&b, e2)
	est, err := EstimatorOfSums(&a, &b)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := est.Result(); !math.IsNaN(r.Lag1X) || !math.IsNaN(r.Lag1Y) {
		t.Errorf("two estimators' rows: lag-1 %v and %v, want none (NaN)", r.Lag1X, r.Lag1Y)
	}
}
