package rank

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"

	"github.com/dime-project/dime/covariance"
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
	if err := a.Flush(); err != nil {
		return err
	}
	if !a.started {
		return fmt.Errorf("%w: an accumulator has no rows", ErrIncompatible)
	}
	accs, means := a.accumulators()
	t := &Sum{head: a.header(), sums: make([]covariance.ExactSum, len(accs)), means: make([]covariance.ExactMean, len(means))}
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
	// Taken over: a holds none of its accumulators' memory any more.
	a.started, a.partAcc, a.copyAcc, a.selfAcc, a.pairs = false, nil, nil, nil, nil
	if s.Empty() {
		*s = *t
		return nil
	}
	return s.Merge(t)
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
	h := s.head
	a, err := New(h.Plan, Config{Stream: h.Settings.config(), Sigmas: h.Sigmas, Centers: h.Centers, Scales: h.Scales})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	accs, means := a.accumulators()
	if len(accs) != len(s.sums) || len(means) != len(s.means) {
		return nil, fmt.Errorf("%w: %d accumulators and %d means for a plan of %d and %d", ErrState, len(s.sums), len(s.means), len(accs), len(means))
	}
	for i, acc := range accs {
		total, err := s.sums[i].Accumulator()
		if err != nil {
			return nil, err
		}
		if err := acc.Merge(total); err != nil { // into zeros: a copy
			return nil, fmt.Errorf("%w: accumulator %d: %v", ErrState, i, err)
		}
	}
	for i, m := range means {
		total, err := s.means[i].Mean()
		if err != nil {
			return nil, err
		}
		if err := m.Merge(total); err != nil {
			return nil, fmt.Errorf("%w: mean %d: %v", ErrState, i, err)
		}
	}
	a.rows, a.skipped, a.chunks = h.Rows, h.Skipped, h.Chunks
	if a.shards, err = h.shardSet(); err != nil {
		return nil, err
	}
	return a, nil
}

// The encoding of a Sum, version 1, little-endian: magic "dimeRS",
// version, 0 (an empty Sum) or 1 followed by the header of the state's
// encoding (its length, 4 bytes, and JSON: settings, plan, bandwidths,
// scales, counts, shard ids), the number of exact sums (4 bytes) and each
// in its compact encoding (covariance.ExactSum.AppendCompact) with its
// length, in the state's order of accumulators, the number of exact means
// and each with its length, and a CRC-32C of every byte before it.
const (
	sumMagic   = "dimeRS"
	sumVersion = 1
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *Sum) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := append([]byte(sumMagic), sumVersion, boolByte(!s.Empty()))
	if !s.Empty() {
		h, err := json.Marshal(s.head)
		if err != nil {
			return nil, err
		}
		size := len(b) + 4 + len(h) + 8 + 4
		for i := range s.sums {
			size += 4 + s.sums[i].CompactSize()
		}
		b = append(make([]byte, 0, size), b...)
		b, _ = appendSized(b, func(b []byte) ([]byte, error) { return append(b, h...), nil })
		b = le.AppendUint32(b, uint32(len(s.sums)))
		for i := range s.sums {
			if b, err = appendSized(b, s.sums[i].AppendCompact); err != nil {
				return nil, err
			}
		}
		b = le.AppendUint32(b, uint32(len(s.means)))
		for i := range s.means {
			if b, err = appendSized(b, s.means[i].AppendBinary); err != nil {
				return nil, err
			}
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
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
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: sum: %s", ErrState, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	head := len(sumMagic) + 2
	if len(data) < head+4 || string(data[:len(sumMagic)]) != sumMagic {
		return bad("not a multi-pair sum (bad magic)")
	}
	if v := data[len(sumMagic)]; v != sumVersion {
		return bad("version %d, this build reads %d", v, sumVersion)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(body):]) {
		return bad("checksum mismatch (truncated or corrupted)")
	}
	p := body[head:]
	switch data[head-1] {
	case 0:
		if len(p) != 0 {
			return bad("%d bytes after an empty sum", len(p))
		}
		*s = Sum{}
		return nil
	case 1:
	default:
		return bad("flag %d", data[head-1])
	}
	next := func() ([]byte, bool) {
		if len(p) < 4 || uint64(le.Uint32(p)) > uint64(len(p)-4) {
			return nil, false
		}
		n := le.Uint32(p)
		v := p[4 : 4+n]
		p = p[4+n:]
		return v, true
	}
	count := func() (int, bool) {
		if len(p) < 4 {
			return 0, false
		}
		n := int(le.Uint32(p))
		p = p[4:]
		return n, n <= len(p)/4
	}
	hb, ok := next()
	if !ok || len(hb) > maxHeader {
		return bad("truncated header")
	}
	var h stateHeader
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return bad("header: %v", err)
	}
	if len(h.Sigmas) == 0 || h.Rows < 0 || h.Skipped < 0 || h.Chunks < 0 {
		return bad("header: %d bandwidths, counts %d, %d, %d", len(h.Sigmas), h.Rows, h.Skipped, h.Chunks)
	}
	if _, err := h.shardSet(); err != nil {
		return err
	}
	n, ok := count()
	if !ok {
		return bad("truncated: exact sums")
	}
	sums := make([]covariance.ExactSum, n)
	for i := range sums {
		enc, ok := next()
		if !ok {
			return bad("truncated: %d of %d exact sums", i, n)
		}
		if err := sums[i].UnmarshalCompact(enc); err != nil {
			return bad("exact sum %d: %v", i, err)
		}
	}
	if n, ok = count(); !ok {
		return bad("truncated: exact means")
	}
	means := make([]covariance.ExactMean, n)
	for i := range means {
		enc, ok := next()
		if !ok {
			return bad("truncated: %d of %d exact means", i, n)
		}
		if err := means[i].UnmarshalBinary(enc); err != nil {
			return bad("exact mean %d: %v", i, err)
		}
	}
	if len(p) != 0 {
		return bad("%d bytes of trailing data", len(p))
	}
	*s = Sum{head: h, sums: sums, means: means}
	return nil
}

// MarshalBinary returns the accumulator's state (WriteState's bytes).
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	if err := a.WriteState(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
