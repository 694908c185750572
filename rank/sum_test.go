package rank

import (
	"bytes"
	"errors"
	"testing"
)

// splitSums ranks the given row ranges of a table each into an
// accumulator of its own, with the scales and bandwidths chosen on the
// table's first pilot rows (as dimebeam rank's launcher chooses them), and
// returns their exact sums.
func splitSums(t *testing.T, data []float64, plan Plan, cfg Config, cuts []int) []*Sum {
	t.Helper()
	W := plan.Width
	var out []*Sum
	for i := 0; i+1 < len(cuts); i++ {
		acc, err := New(plan, cfg)
		if err != nil {
			t.Fatal(err)
		}
		feed(t, data[cuts[i]*W:cuts[i+1]*W], W, 1500, acc.Add)
		var s Sum
		if err := s.Add(acc); err != nil {
			t.Fatal(err)
		}
		out = append(out, &s)
	}
	return out
}

// TestResolvePilotIsThePilot: an accumulator given the scales and
// bandwidths that ResolvePilot chooses on the first pilot rows gives the
// results of one that chooses them itself, bit for bit, and so does the
// exact sum of a single run.
func TestResolvePilotIsThePilot(t *testing.T) {
	const n, c = 5000, 3
	W := c + 1
	data := table(n, c, 2, 44)
	plan := rankPlan(c)
	cfg := testConfig(16)
	cfg.PilotRows = 700
	self, err := New(plan, Config{Stream: cfg})
	if err != nil {
		t.Fatal(err)
	}
	feed(t, data, W, 1500, self.Add)
	want, err := self.Results()
	if err != nil {
		t.Fatal(err)
	}
	given, err := ResolvePilot(plan, Config{Stream: cfg}, data[:700*W], 700, "the first 700 rows")
	if err != nil {
		t.Fatal(err)
	}
	sums := splitSums(t, data, plan, given, []int{0, n})
	total, err := sums[0].Estimator()
	if err != nil {
		t.Fatal(err)
	}
	got, err := total.Results()
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		g, w := floatFields(got[i]), floatFields(want[i])
		for f, b := range w {
			if g[f] != b {
				t.Errorf("pair %d: %s differs through the given pilot and one exact sum", i, f)
			}
		}
	}
	if _, err := ResolvePilot(plan, Config{Stream: cfg}, data[:W], 1, "the first row"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("one pilot row: %v", err)
	}
}

// TestSumIsOrderFree: the exact sums of three runs merged in any order
// and grouping, through their encodings, are the same bytes, and give the
// same results; a sum merged twice is refused, and damaged bytes are
// refused without a panic.
func TestSumIsOrderFree(t *testing.T) {
	const n, c = 6000, 3
	W := c + 1
	data := table(n, c, 2, 45)
	plan := rankPlan(c)
	cfg, err := ResolvePilot(plan, Config{Stream: testConfig(16)}, data[:1000*W], 1000, "the first 1000 rows")
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{0, 1700, 4100, n}
	encode := func(s *Sum) []byte {
		b, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	decode := func(b []byte) *Sum {
		var s Sum
		if err := s.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		return &s
	}
	var encs [][]byte
	for _, s := range splitSums(t, data, plan, cfg, cuts) {
		encs = append(encs, encode(s))
	}
	var first []byte
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 2, 0}} {
		var total Sum
		// ((a + b) + c) and (c + (b + a)) and ...: the first two merged
		// into an empty sum, the third merged into them.
		var pair Sum
		for _, i := range order[:2] {
			if err := pair.Merge(decode(encs[i])); err != nil {
				t.Fatal(err)
			}
		}
		if err := total.Merge(decode(encs[order[2]])); err != nil {
			t.Fatal(err)
		}
		if err := total.Merge(decode(encode(&pair))); err != nil {
			t.Fatal(err)
		}
		b := encode(&total)
		if first == nil {
			first = b
		} else if !bytes.Equal(b, first) {
			t.Errorf("order %v: other bytes", order)
		}
		if total.Rows() != n {
			t.Errorf("order %v: %d rows", order, total.Rows())
		}
		if err := total.Merge(decode(encs[0])); !errors.Is(err, ErrIncompatible) {
			t.Errorf("a sum merged twice: %v", err)
		}
	}
	acc, err := decode(first).Estimator()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := acc.Results(); err != nil || len(res) != c || acc.Rows() != n {
		t.Errorf("results of the sum: %d pairs, %d rows, %v", len(res), acc.Rows(), err)
	}
	var empty Sum
	if b := encode(&empty); !decode(b).Empty() {
		t.Error("an empty sum does not round-trip")
	}
	if _, err := empty.Estimator(); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("estimator of an empty sum: %v", err)
	}
	for _, cut := range []int{0, 5, len(first) / 2, len(first) - 1} {
		var s Sum
		if err := s.UnmarshalBinary(first[:cut]); !errors.Is(err, ErrState) {
			t.Errorf("%d of %d bytes: %v", cut, len(first), err)
		}
	}
	bad := bytes.Clone(first)
	bad[len(bad)/3] ^= 1
	var s Sum
	if err := s.UnmarshalBinary(bad); !errors.Is(err, ErrState) {
		t.Errorf("a flipped bit: %v", err)
	}
}
