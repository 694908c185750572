package rank

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/internal/framed"
)

// Sum is the exact, order-independent merge of multi-pair accumulators,
// as stream.Sum is of one pair's: what a distributed runner (dimebeam
// rank) combines, in whatever order and grouping its workers finish.
// Every accumulator and mean of the state is held exactly
// (covariance.ExactSum and ExactMean, 128-bit fixed point on multiples of
// 2⁻⁷², in their compact encoding), and the counts as integers, so that any
// order of Add and Merge gives the same Sum, bit for bit, which Estimator
// rounds back to float64 once. Merge refuses what Accumulator.Merge
// refuses: other settings, plan, bandwidths or scales, and sums that share
// a run's rows. The zero value is an empty Sum; it is not safe for
// concurrent use.
type Sum struct {
	head  stateHeader // settings, plan, bandwidths, scales, counts and shard ids
	sums  []covariance.ExactSum
	means []covariance.ExactMean
}

// Empty reports whether nothing was added yet.
func (s *Sum) Empty() bool { return len(s.head.Sigmas) == 0 }

// Rows returns the number of rows added.
func (s *Sum) Rows() int64 { return s.head.Rows }

// Add adds the rows of a, flushing the rows that wait for their scope. The
// Sum takes a over: a must not be used afterwards.
func (s *Sum) Add(a *Accumulator) error {
	h, accs, means, err := takeOver(a)
	if err != nil {
		return err
	}
	t := &Sum{head: h, sums: make([]covariance.ExactSum, len(accs)), means: make([]covariance.ExactMean, len(means))}
	for i, acc := range accs {
		if err := t.sums[i].Add(acc); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	for i, m := range means {
		if err := t.means[i].Add(m); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	if s.Empty() {
		*s = *t
		return nil
	}
	return s.Merge(t)
}

// takeOver flushes a and returns its header, accumulators and means, which
// a no longer holds.
func takeOver(a *Accumulator) (stateHeader, []*covariance.Accumulator, []*covariance.Mean, error) {
	if err := a.Flush(); err != nil {
		return stateHeader{}, nil, nil, err
	}
	if !a.started {
		return stateHeader{}, nil, nil, fmt.Errorf("%w: an accumulator has no rows", ErrIncompatible)
	}
	h := a.header()
	accs, means := a.accumulators()
	a.started, a.partAcc, a.copyAcc, a.selfAcc, a.pairs = false, nil, nil, nil, nil
	return h, accs, means, nil
}

// Merge adds other's rows to s. A nil or empty other is a no-op; an empty s
// takes other's sums over (other must not be used afterwards).
func (s *Sum) Merge(other *Sum) error {
	if other == nil || other.Empty() {
		return nil
	}
	if s.Empty() {
		*s = *other
		return nil
	}
	if err := compatible(s.head, other.head); err != nil {
		return err
	}
	sa, err := s.head.shardSet()
	if err != nil {
		return err
	}
	sb, err := other.head.shardSet()
	if err != nil {
		return err
	}
	if id, ok := sa.common(sb); ok {
		return fmt.Errorf("%w: both hold the rows of shard %x, which would count twice", ErrIncompatible, id)
	}
	if len(s.sums) != len(other.sums) || len(s.means) != len(other.means) {
		return fmt.Errorf("%w: %d and %d accumulators", ErrIncompatible, len(s.sums), len(other.sums))
	}
	for i := range s.sums {
		if s.sums[i].Description() != other.sums[i].Description() || s.sums[i].Budget()+other.sums[i].Budget() > covariance.MaxExactBudget {
			return fmt.Errorf("%w: accumulator %d: other features, or more rows than an exact sum holds", ErrIncompatible, i)
		}
	}
	for i := range s.means {
		if s.means[i].Description() != other.means[i].Description() || s.means[i].Budget()+other.means[i].Budget() > covariance.MaxExactBudget {
			return fmt.Errorf("%w: mean %d: other features, or more rows than an exact sum holds", ErrIncompatible, i)
		}
	}
	for i := range s.sums {
		if err := s.sums[i].Merge(&other.sums[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err) // checked above: not reached
		}
	}
	for i := range s.means {
		if err := s.means[i].Merge(&other.means[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err) // checked above: not reached
		}
	}
	u := sa.union(sb)
	s.head.Rows += other.head.Rows
	s.head.Skipped += other.head.Skipped
	s.head.Chunks += other.head.Chunks
	s.head.Shards, s.head.Truncated = u.strings(), u.truncated
	return nil
}

// Estimator returns the accumulator of every row added: each accumulator
// and mean the exact sum rounded once to float64, so that its Results and
// its state are the same whatever the order of the merges. An empty Sum
// gives an error matching ErrInvalidInput.
func (s *Sum) Estimator() (*Accumulator, error) {
	if s.Empty() {
		return nil, invalidf("no rows to sum")
	}
	a, accs, means, err := assemble(s.head)
	if err != nil {
		return nil, err
	}
	if err := planCounts(accs, means)(len(s.sums), len(s.means)); err != nil {
		return nil, err
	}
	for i := range s.sums {
		if err := setTotal(accs, i, &s.sums[i]); err != nil {
			return nil, err
		}
	}
	for i := range s.means {
		if err := setMean(means, i, &s.means[i]); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// assemble returns an accumulator of the settings, plan, bandwidths,
// scales and counts of h, with its accumulators and means (zeros).
func assemble(h stateHeader) (*Accumulator, []*covariance.Accumulator, []*covariance.Mean, error) {
	a, err := New(h.Plan, Config{Stream: h.Settings.config(), Sigmas: h.Sigmas, Centers: h.Centers, Scales: h.Scales})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	accs, means := a.accumulators()
	a.rows, a.skipped, a.chunks = h.Rows, h.Skipped, h.Chunks
	if a.shards, err = h.shardSet(); err != nil {
		return nil, nil, nil, err
	}
	return a, accs, means, nil
}

// planCounts returns a check that sums and means are as many as the
// accumulators and means of a plan (a count < 0 is not checked).
func planCounts(accs []*covariance.Accumulator, means []*covariance.Mean) func(nsums, nmeans int) error {
	return func(nsums, nmeans int) error {
		if (nsums >= 0 && nsums != len(accs)) || (nmeans >= 0 && nmeans != len(means)) {
			return fmt.Errorf("%w: %d exact sums and %d means for a plan of %d and %d", ErrState, nsums, nmeans, len(accs), len(means))
		}
		return nil
	}
}

// setTotal sets accumulator i of accs (zeros) to the exact sum x rounded
// once to float64.
func setTotal(accs []*covariance.Accumulator, i int, x *covariance.ExactSum) error {
	total, err := x.Accumulator()
	if err != nil {
		return err
	}
	if err := accs[i].Merge(total); err != nil { // into zeros: a copy
		return fmt.Errorf("%w: accumulator %d: %v", ErrState, i, err)
	}
	return nil
}

// setMean sets mean i of means (zeros) to the exact mean m rounded once.
func setMean(means []*covariance.Mean, i int, m *covariance.ExactMean) error {
	total, err := m.Mean()
	if err != nil {
		return err
	}
	if err := means[i].Merge(total); err != nil {
		return fmt.Errorf("%w: mean %d: %v", ErrState, i, err)
	}
	return nil
}

// The encoding of a Sum, version 1, little-endian: magic "dimeRS",
// version, 0 (an empty Sum) or 1 followed by the header of the state's
// encoding (its length, 4 bytes, and JSON: settings, plan, bandwidths,
// scales, counts, shard ids), the number of exact sums (4 bytes) and each
// in its compact encoding (covariance.ExactSum.AppendCompact) with its
// length, in the state's order of accumulators, the number of exact means
// and each with its length, and a CRC-32C of every byte before it.
//
// WriteSum, MergeSums and AccumulatorOfSums do what Add, Merge and
// Estimator do on encoded Sums, one accumulator at a time, without holding
// whole Sums: what a distributed combine that keeps its sums in files
// (dimebeam rank) needs.
const (
	sumMagic   = "dimeRS"
	sumVersion = 1
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *Sum) MarshalBinary() ([]byte, error) {
	size := len(sumMagic) + 2 + 4 + 4096 + 8 + 4
	for i := range s.sums {
		size += 4 + s.sums[i].CompactSize()
	}
	var buf bytes.Buffer
	buf.Grow(size)
	w := &sumWriter{framed.NewWriter(&buf)}
	if s.Empty() {
		w.head(nil)
	} else {
		w.head(&s.head)
		w.Count(len(s.sums))
		for i := range s.sums {
			w.Piece(s.sums[i].AppendCompact)
		}
		w.Count(len(s.means))
		for i := range s.means {
			w.Piece(s.means[i].AppendBinary)
		}
	}
	if err := w.End(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Bytes that are not
// a Sum's encoding give an error matching ErrState, and s is left
// unchanged.
func (s *Sum) UnmarshalBinary(data []byte) error {
	r := &sumReader{framed.NewReader(bytes.NewReader(data), ErrState)}
	h, err := r.head()
	if err != nil {
		return err
	}
	var t Sum
	if h == nil {
		err = r.End()
	} else {
		t.head = *h
		err = eachTotal([]*sumReader{r}, nil, func(_ int, x *covariance.ExactSum) error {
			t.sums = append(t.sums, *x)
			return nil
		}, func(_ int, m *covariance.ExactMean) error {
			t.means = append(t.means, *m)
			return nil
		})
	}
	if err != nil {
		return err
	}
	*s = t
	return nil
}

// WriteSum writes the encoding of the Sum of a (what Add then MarshalBinary
// give, byte for byte) to w, one accumulator at a time: it holds the exact
// sum of one accumulator at once, and lets go of each of a's accumulators
// once written. a is flushed first and must not be used afterwards.
func WriteSum(w io.Writer, a *Accumulator) error {
	h, accs, means, err := takeOver(a)
	if err != nil {
		return err
	}
	sw := &sumWriter{framed.NewWriter(w)}
	sw.head(&h)
	sw.Count(len(accs))
	for i, acc := range accs {
		var x covariance.ExactSum
		if err := x.Add(acc); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
		accs[i] = nil
		sw.Piece(x.AppendCompact)
	}
	sw.Count(len(means))
	for _, m := range means {
		var x covariance.ExactMean
		if err := x.Add(m); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
		sw.Piece(x.AppendBinary)
	}
	return sw.End()
}

// MergeSums reads the encodings of Sums from sums and writes the encoding
// of their total to w: the bytes that decoding them, merging them in any
// order and encoding the total would give. It reads and writes one
// accumulator at a time, holding the exact sums of that accumulator from
// every input and their total, not whole Sums. An input that is not a
// Sum's encoding, or that does not merge with the others, gives an error
// matching ErrState or ErrIncompatible; what was written to w is then to be
// discarded.
func MergeSums(w io.Writer, sums ...io.Reader) error {
	head, rs, err := readHeads(sums)
	if err != nil {
		return err
	}
	sw := &sumWriter{framed.NewWriter(w)}
	if head == nil {
		sw.head(nil)
		return sw.End()
	}
	sw.head(head)
	err = eachTotal(rs, func(n int) error {
		sw.Count(n)
		return nil
	}, func(_ int, x *covariance.ExactSum) error {
		sw.Piece(x.AppendCompact)
		return nil
	}, func(_ int, m *covariance.ExactMean) error {
		sw.Piece(m.AppendBinary)
		return nil
	})
	if err != nil {
		return err
	}
	return sw.End()
}

// AccumulatorOfSums reads the encodings of Sums from sums and returns the
// accumulator of their total, as Estimator of their merged Sum would give
// it. It reads one accumulator at a time: it holds the accumulator and the
// exact sums of one of its accumulators, not whole Sums. No input but
// empty Sums gives an error matching ErrInvalidInput.
func AccumulatorOfSums(sums ...io.Reader) (*Accumulator, error) {
	head, rs, err := readHeads(sums)
	if err != nil {
		return nil, err
	}
	if head == nil {
		return nil, invalidf("no rows to sum")
	}
	a, accs, means, err := assemble(*head)
	if err != nil {
		return nil, err
	}
	check := planCounts(accs, means)
	counts := 0
	err = eachTotal(rs, func(n int) error {
		if counts++; counts == 1 {
			return check(n, -1)
		}
		return check(-1, n)
	}, func(i int, x *covariance.ExactSum) error {
		return setTotal(accs, i, x)
	}, func(i int, m *covariance.ExactMean) error {
		return setMean(means, i, m)
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// readHeads reads the headers of the encodings of Sums and returns their
// total (nil when every Sum is empty) and the readers of the nonempty
// inputs, positioned at their number of exact sums. Empty inputs are read
// to their end.
func readHeads(sums []io.Reader) (*stateHeader, []*sumReader, error) {
	var total Sum // its header only
	var rs []*sumReader
	for _, in := range sums {
		r := &sumReader{framed.NewReader(in, ErrState)}
		h, err := r.head()
		if err != nil {
			return nil, nil, err
		}
		if h == nil {
			if err := r.End(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := total.Merge(&Sum{head: *h}); err != nil {
			return nil, nil, err
		}
		rs = append(rs, r)
	}
	if total.Empty() {
		return nil, nil, nil
	}
	return &total.head, rs, nil
}

// eachTotal reads the exact sums of every accumulator from rs, in their
// order, and calls sum with their total, then the means likewise with
// mean, and checks the end of every input. count, when not nil, is called
// with the number of exact sums and then of means, before they are read.
func eachTotal(rs []*sumReader, count func(n int) error, sum func(i int, x *covariance.ExactSum) error, mean func(i int, m *covariance.ExactMean) error) error {
	counts := func(what string) (int, error) {
		n := -1
		for _, r := range rs {
			c, err := r.Count(what)
			if err != nil {
				return 0, err
			}
			if n >= 0 && c != n {
				return 0, fmt.Errorf("%w: %d and %d %s", ErrIncompatible, n, c, what)
			}
			n = c
		}
		if count != nil {
			return n, count(n)
		}
		return n, nil
	}
	n, err := counts("exact sums")
	if err != nil {
		return err
	}
	xs := make([]covariance.ExactSum, len(rs))
	ptrs := make([]*covariance.ExactSum, len(rs))
	for i := range n {
		for j, r := range rs {
			enc, err := r.Sized(fmt.Sprintf("exact sum %d", i))
			if err != nil {
				return err
			}
			if err := xs[j].UnmarshalCompact(enc); err != nil {
				return r.Bad("exact sum %d: %v", i, err)
			}
			ptrs[j] = &xs[j]
		}
		var total covariance.ExactSum
		if err := total.Merge(ptrs...); err != nil {
			return fmt.Errorf("%w: exact sum %d: %v", ErrIncompatible, i, err)
		}
		clear(xs)
		if err := sum(i, &total); err != nil {
			return err
		}
	}
	if n, err = counts("exact means"); err != nil {
		return err
	}
	for i := range n {
		var total covariance.ExactMean
		for _, r := range rs {
			enc, err := r.Sized(fmt.Sprintf("exact mean %d", i))
			if err != nil {
				return err
			}
			var m covariance.ExactMean
			if err := m.UnmarshalBinary(enc); err != nil {
				return r.Bad("exact mean %d: %v", i, err)
			}
			if err := total.Merge(&m); err != nil {
				return fmt.Errorf("%w: exact mean %d: %v", ErrIncompatible, i, err)
			}
		}
		if err := mean(i, &total); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if err := r.End(); err != nil {
			return err
		}
	}
	return nil
}

// sumWriter writes the encoding of a Sum piece by piece (framed.Writer).
type sumWriter struct{ *framed.Writer }

// head writes the magic, version, flag and header h (nil: an empty Sum).
func (w *sumWriter) head(h *stateHeader) {
	w.Write(append([]byte(sumMagic), sumVersion, boolByte(h != nil)))
	if h == nil {
		return
	}
	j, err := json.Marshal(h)
	w.Fail(err)
	w.Piece(func(b []byte) ([]byte, error) { return append(b, j...), nil })
}

// sumReader reads the encoding of a Sum piece by piece (framed.Reader).
type sumReader struct{ *framed.Reader }

// head reads the magic, version, flag and header: nil for an empty Sum.
func (r *sumReader) head() (*stateHeader, error) {
	b, err := r.Read(uint64(len(sumMagic))+2, "the magic")
	if err != nil || string(b[:len(sumMagic)]) != sumMagic {
		return nil, r.Bad("not a multi-pair sum (bad magic)")
	}
	if v := b[len(sumMagic)]; v != sumVersion {
		return nil, r.Bad("version %d, this build reads %d", v, sumVersion)
	}
	switch b[len(sumMagic)+1] {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, r.Bad("flag %d", b[len(sumMagic)+1])
	}
	n, err := r.Read(4, "the header")
	if err != nil {
		return nil, err
	}
	if binary.LittleEndian.Uint32(n) > maxHeader {
		return nil, r.Bad("header of %d bytes", binary.LittleEndian.Uint32(n))
	}
	hb, err := r.Read(uint64(binary.LittleEndian.Uint32(n)), "the header")
	if err != nil {
		return nil, err
	}
	var h stateHeader
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, r.Bad("header: %v", err)
	}
	if len(h.Sigmas) == 0 || h.Rows < 0 || h.Skipped < 0 || h.Chunks < 0 {
		return nil, r.Bad("header: %d bandwidths, counts %d, %d, %d", len(h.Sigmas), h.Rows, h.Skipped, h.Chunks)
	}
	if _, err := h.shardSet(); err != nil {
		return nil, err
	}
	return &h, nil
}

// MarshalBinary returns the accumulator's state (WriteState's bytes).
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	if err := a.WriteState(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
