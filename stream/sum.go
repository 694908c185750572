package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"github.com/dime-project/dime/covariance"
)

// Sum is the exact, order-independent merge of estimators: the merge a
// distributed runner needs, which combines shards in whatever order and
// grouping its workers finish.
//
// Estimator.Merge adds float64 accumulators, so that merging shards a, b and
// c as (a+b)+c or a+(b+c) can differ in the last bits of the sums and of the
// entropies. A Sum keeps each accumulator as a covariance.ExactSum (128-bit
// fixed point, multiples of 2⁻⁷²) and the row counts as integers: any order
// of Add and Merge gives the same Sum, bit for bit, and Estimator rounds it
// back to float64 once. Compared with a float64 merge, only round-off
// differs (each shard's sums are rounded once to the 2⁻⁷² grid).
//
// The zero value is an empty Sum. Add takes an estimator over; Merge adds
// another Sum. Both refuse, with an error matching ErrIncompatible and
// without changing the receiver, what Estimator.Merge refuses: other
// settings, bandwidths or columns. A Sum holds the settings of an estimator
// and 16 bytes per accumulator entry: about three times an estimator's
// memory. It is not safe for concurrent use.
type Sum struct {
	est  *Estimator // settings, bandwidths and row counts; its accumulators stay empty
	sums []covariance.ExactSum
}

// Add adds the rows of e, flushing its shuffle buffer first. The Sum takes e
// over: e's accumulators are emptied and e must not be used afterwards.
func (s *Sum) Add(e *Estimator) error {
	if err := e.Flush(); err != nil {
		return err
	}
	if !e.Started() {
		return fmt.Errorf("%w: an estimator has no rows", ErrIncompatible)
	}
	t := &Sum{est: e, sums: make([]covariance.ExactSum, len(e.accs))}
	for i, a := range e.accs {
		if err := t.sums[i].Add(a); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	for _, a := range e.accs {
		a.Reset()
	}
	// The Y features kept to pair a lone row with the previous scope's
	// last row belong to no shard in particular: forget them, so that the
	// sum does not depend on which estimator came first.
	e.haveLastY = false
	clear(e.lastY)
	if s.est == nil {
		*s = *t
		return nil
	}
	return s.Merge(t)
}

// Merge adds other's rows to s. A nil or empty other is a no-op; an empty s
// becomes a copy of other.
func (s *Sum) Merge(other *Sum) error {
	if other == nil || other.est == nil {
		return nil
	}
	if s.est == nil {
		c, err := other.est.clone()
		if err != nil {
			return err
		}
		sums := make([]covariance.ExactSum, len(other.sums))
		for i := range sums {
			sums[i].Merge(&other.sums[i]) // into an empty sum: a copy
		}
		s.est, s.sums = c, sums
		return nil
	}
	if len(s.sums) == len(other.sums) {
		for i := range s.sums {
			if s.sums[i].Budget()+other.sums[i].Budget() > covariance.MaxExactBudget {
				return fmt.Errorf("%w: more rows than an exact sum holds", ErrIncompatible)
			}
		}
	}
	// The templates' accumulators are empty: their Merge checks every
	// setting, adds the row counts and leaves the accumulators empty.
	if err := s.est.Merge(other.est); err != nil {
		return err
	}
	for i := range s.sums {
		if err := s.sums[i].Merge(&other.sums[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err) // checked above: not reached
		}
	}
	return nil
}

// Rows returns the number of rows added.
func (s *Sum) Rows() int64 {
	if s.est == nil {
		return 0
	}
	return s.est.rows
}

// Empty reports whether nothing was added yet.
func (s *Sum) Empty() bool { return s.est == nil }

// Estimator returns a new estimator of every row added: each accumulator is
// the exact sum rounded once to float64. Its Result and its state
// (WriteState) are thus the same whatever the order of the merges. An
// empty Sum gives an error matching ErrInvalidInput.
func (s *Sum) Estimator() (*Estimator, error) {
	if s.est == nil {
		return nil, invalidf("no rows to sum")
	}
	e, err := s.est.clone()
	if err != nil {
		return nil, err
	}
	for i, a := range e.accs {
		total, err := s.sums[i].Accumulator()
		if err != nil {
			return nil, err
		}
		if err := a.Merge(total); err != nil { // into zeros: a copy
			return nil, err
		}
	}
	return e, nil
}

// clone returns a copy of e through its state.
func (e *Estimator) clone() (*Estimator, error) {
	b, err := e.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return ReadState(bytes.NewReader(b))
}

// The encoding of a Sum, version 1, little-endian: magic "dimeSM", version,
// then either nothing (an empty Sum) or the state of the estimator with empty
// accumulators (WriteState) and the number of exact sums, each length-prefixed,
// and a CRC-32C of every byte before it.
const (
	sumMagic   = "dimeSM"
	sumVersion = 1
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *Sum) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := append([]byte(sumMagic), sumVersion, boolByte(s.est != nil))
	if s.est != nil {
		st, err := s.est.MarshalBinary()
		if err != nil {
			return nil, err
		}
		b = appendBytes(b, st)
		b = le.AppendUint32(b, uint32(len(s.sums)))
		for i := range s.sums {
			enc, err := s.sums[i].MarshalBinary()
			if err != nil {
				return nil, err
			}
			b = appendBytes(b, enc)
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Bytes that are not
// a Sum's encoding give an error matching ErrState, and s is left unchanged.
func (s *Sum) UnmarshalBinary(data []byte) error {
	head := len(sumMagic) + 2
	if len(data) < head+4 || string(data[:len(sumMagic)]) != sumMagic {
		return fmt.Errorf("%w: not a dime sum (bad magic)", ErrState)
	}
	if v := data[len(sumMagic)]; v != sumVersion {
		return fmt.Errorf("%w: sum version %d, this build reads version %d", ErrState, v, sumVersion)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return fmt.Errorf("%w: sum checksum mismatch (truncated or corrupted)", ErrState)
	}
	r := &stateReader{b: body[head:]}
	if data[head-1] == 0 {
		if len(r.b) != 0 {
			return fmt.Errorf("%w: %d bytes after an empty sum", ErrState, len(r.b))
		}
		*s = Sum{}
		return nil
	}
	st := r.bytes()
	if r.err != nil {
		return r.err
	}
	e, err := ReadState(bytes.NewReader(st))
	if err != nil {
		return err
	}
	n := int(r.u32())
	if r.err == nil && n != len(e.accs) {
		return fmt.Errorf("%w: %d exact sums for %d accumulators", ErrState, n, len(e.accs))
	}
	sums := make([]covariance.ExactSum, len(e.accs))
	for i, a := range e.accs {
		enc := r.bytes()
		if r.err != nil {
			return r.err
		}
		if a.Weight() != 0 {
			return fmt.Errorf("%w: the settings of a sum hold rows", ErrState)
		}
		if err := sums[i].UnmarshalBinary(enc); err != nil {
			return fmt.Errorf("%w: %v", ErrState, err)
		}
		if sums[i].Description() != a.Description() {
			return fmt.Errorf("%w: exact sum %d does not belong to these settings", ErrState, i)
		}
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d bytes of trailing data", ErrState, len(r.b))
	}
	s.est, s.sums = e, sums
	return nil
}
