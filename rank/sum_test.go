package rank

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
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

// TestSumStreams: WriteSum writes the sums of Add and MarshalBinary,
// MergeSums the bytes of the merged Sum's encoding whatever the order of
// its inputs (an empty Sum among them), and AccumulatorOfSums the state of
// the merged Sum's Estimator; inputs that do not merge, or are damaged,
// are refused.
func TestSumStreams(t *testing.T) {
	const n, c = 5000, 3
	W := c + 1
	data := table(n, c, 2, 46)
	plan := rankPlan(c)
	cfg, err := ResolvePilot(plan, Config{Stream: testConfig(16)}, data[:1000*W], 1000, "the first 1000 rows")
	if err != nil {
		t.Fatal(err)
	}
	cuts := []int{0, 1200, 3900, n}
	var sums, written [][]byte
	for i := 0; i+1 < len(cuts); i++ {
		for _, stream := range []bool{false, true} {
			acc, err := New(plan, cfg)
			if err != nil {
				t.Fatal(err)
			}
			feed(t, data[cuts[i]*W:cuts[i+1]*W], W, 1500, acc.Add)
			if stream {
				var b bytes.Buffer
				if err := WriteSum(&b, acc); err != nil {
					t.Fatal(err)
				}
				written = append(written, b.Bytes())
				continue
			}
			var s Sum
			if err := s.Add(acc); err != nil {
				t.Fatal(err)
			}
			b, err := s.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			sums = append(sums, b)
		}
	}
	body := func(b []byte) []byte {
		start := len(sumMagic) + 2
		if len(b) < start+4 {
			return nil
		}
		return b[start+4+int(binary.LittleEndian.Uint32(b[start:])) : len(b)-4]
	}
	var total Sum
	for i, b := range sums {
		// The two runs differ in their shard ids only (the header).
		if body(b) == nil || !bytes.Equal(body(b), body(written[i])) {
			t.Fatalf("split %d: WriteSum wrote other sums than Add and MarshalBinary", i)
		}
		var s Sum
		if err := s.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if err := total.Merge(&s); err != nil {
			t.Fatal(err)
		}
	}
	want, err := total.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	empty, err := new(Sum).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	readers := func(bs ...[]byte) []io.Reader {
		var rs []io.Reader
		for _, b := range bs {
			rs = append(rs, bytes.NewReader(b))
		}
		return rs
	}
	for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
		var b bytes.Buffer
		if err := MergeSums(&b, readers(sums[order[0]], empty, sums[order[1]], sums[order[2]])...); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b.Bytes(), want) {
			t.Errorf("order %v: MergeSums wrote other bytes than the merged Sum's", order)
		}
	}
	// Two levels: (0 + 1) + 2.
	var pair bytes.Buffer
	if err := MergeSums(&pair, readers(sums[0], sums[1])...); err != nil {
		t.Fatal(err)
	}
	acc, err := AccumulatorOfSums(readers(pair.Bytes(), sums[2])...)
	if err != nil {
		t.Fatal(err)
	}
	est, err := total.Estimator()
	if err != nil {
		t.Fatal(err)
	}
	got, err1 := acc.MarshalBinary()
	exp, err2 := est.MarshalBinary()
	if err1 != nil || err2 != nil || !bytes.Equal(got, exp) {
		t.Errorf("AccumulatorOfSums: another state than the merged Sum's Estimator (%v, %v)", err1, err2)
	}
	if _, err := AccumulatorOfSums(readers(empty)...); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("only an empty sum: %v", err)
	}
	if err := MergeSums(io.Discard, readers(sums[0], pair.Bytes())...); !errors.Is(err, ErrIncompatible) {
		t.Errorf("a split's rows twice: %v", err)
	}
	bad := bytes.Clone(sums[1])
	bad[len(bad)/2] ^= 1
	if _, err := AccumulatorOfSums(readers(sums[0], bad)...); !errors.Is(err, ErrState) {
		t.Errorf("a flipped bit: %v", err)
	}
	if err := MergeSums(io.Discard, readers(sums[0], sums[1][:len(sums[1])-1])...); !errors.Is(err, ErrState) {
		t.Errorf("a truncated sum: %v", err)
	}
}
