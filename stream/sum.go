package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"github.com/dime-project/dime/covariance"
)

// Sum is the exact, order-independent merge of estimators: the merge a
// distributed runner needs, which combines shards in whatever order and
// grouping its workers finish.
//
// Estimator.Merge adds float64 accumulators, so that merging shards a, b and
// c as (a+b)+c or a+(b+c) can differ in the last bits of the sums and of the
// entropies. A Sum keeps every float64 sum of the state exactly: each
// accumulator (per group X, Y and joint, the normalized score's copies and
// self joints, the permuted joints) as a covariance.ExactSum and each group's
// first moments (X, Y and joint) as a covariance.ExactMean, in 128-bit fixed
// point (multiples of 2⁻⁷²), and the row, skipped-row and chunk counts as
// integers: any order of Add and Merge gives the same Sum, bit for bit, and
// Estimator rounds it back to float64 once. Compared with a float64 merge,
// only round-off differs (each shard's sums are rounded once to the 2⁻⁷²
// grid).
//
// The zero value is an empty Sum. Add takes an estimator over; Merge adds
// another Sum. Both refuse, with an error matching ErrIncompatible and
// without changing the receiver, what Estimator.Merge refuses: other
// settings, bandwidths or columns. A Sum holds the settings of an estimator
// and its exact sums as it ships them, in their compact encoding
// (covariance.ExactSum): about what MarshalBinary writes, less than an
// estimator's memory with float32 products (19.8 MB against 29.4 MB at D =
// 256 and the defaults) and about the same with float64 products; the
// means, 16 bytes an entry, are small. It is not safe for concurrent use.
type Sum struct {
	est           *Estimator // settings, bandwidths, chunk count and shard ids; no rows, empty accumulators and means
	sums          []covariance.ExactSum
	means         []covariance.ExactMean
	rows, skipped int64
}

// Add adds the rows of e, flushing its shuffle buffer first. The Sum takes e
// over: e's accumulators are released and e must not be used afterwards.
func (s *Sum) Add(e *Estimator) error {
	if err := e.Flush(); err != nil {
		return err
	}
	if !e.Started() {
		return fmt.Errorf("%w: an estimator has no rows", ErrIncompatible)
	}
	t := &Sum{sums: make([]covariance.ExactSum, len(e.accs)), means: make([]covariance.ExactMean, len(e.means))}
	for i, a := range e.accs {
		if err := t.sums[i].Add(a); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	for i, m := range e.means {
		if err := t.means[i].Add(m); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	// The Y features kept to pair a lone row with the previous scope's
	// last row belong to no shard in particular: forget them, so that the
	// sum does not depend on which estimator came first.
	e.haveLastY = false
	clear(e.lastY)
	t.rows, t.skipped, e.rows, e.skipped = e.rows, e.skipped, 0, 0
	// The template is a copy of e's settings without accumulators, so that
	// the Sum holds none of e's memory.
	e.releaseAccumulators()
	tmpl, err := e.clone()
	if err != nil {
		return err
	}
	t.est = tmpl
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
		means := make([]covariance.ExactMean, len(other.means))
		for i := range means {
			means[i].Merge(&other.means[i])
		}
		s.est, s.sums, s.means, s.rows, s.skipped = c, sums, means, other.rows, other.skipped
		return nil
	}
	if s.rows > math.MaxInt64-other.rows || s.skipped > math.MaxInt64-other.skipped {
		return fmt.Errorf("%w: row counts overflow (%d + %d rows, %d + %d skipped)", ErrIncompatible, s.rows, other.rows, s.skipped, other.skipped)
	}
	if len(s.sums) == len(other.sums) {
		for i := range s.sums {
			if s.sums[i].Budget()+other.sums[i].Budget() > covariance.MaxExactBudget {
				return fmt.Errorf("%w: more rows than an exact sum holds", ErrIncompatible)
			}
		}
	}
	if len(s.means) == len(other.means) {
		for i := range s.means {
			if s.means[i].Budget()+other.means[i].Budget() > covariance.MaxExactBudget {
				return fmt.Errorf("%w: more rows than an exact sum holds", ErrIncompatible)
			}
		}
	}
	if len(s.sums) == len(other.sums) {
		for i := range s.sums {
			if s.sums[i].Description() != other.sums[i].Description() {
				return fmt.Errorf("%w: feature maps differ (kernel, variant, features or seed)", ErrIncompatible)
			}
		}
	}
	// The templates have no rows, no accumulators and zero means: their Merge
	// checks every setting and the shard ids (so the layouts match), adds the
	// chunk counts and leaves the rest so.
	if err := s.est.Merge(other.est); err != nil {
		return err
	}
	s.rows += other.rows
	s.skipped += other.skipped
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
	return nil
}

// Rows returns the number of rows added.
func (s *Sum) Rows() int64 { return s.rows }

// Empty reports whether nothing was added yet.
func (s *Sum) Empty() bool { return s.est == nil }

// Estimator returns a new estimator of every row added: each accumulator and
// mean is the exact sum rounded once to float64. Its Result and its state
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
	accs := make([]*covariance.Accumulator, len(s.sums))
	for i := range s.sums {
		if accs[i], err = s.sums[i].Accumulator(); err != nil {
			return nil, err
		}
	}
	e.setAccumulators(e.spec, e.sigmaX, e.sigmaY, accs, e.means)
	for i, m := range e.means {
		total, err := s.means[i].Mean()
		if err != nil {
			return nil, err
		}
		if err := m.Merge(total); err != nil { // into zeros: a copy
			return nil, err
		}
	}
	e.rows, e.skipped = s.rows, s.skipped
	return e, nil
}

// clone returns a template, a copy of the settings of an estimator without
// rows (its accumulators zero values, its means zero), through its
// settings-only state.
func (e *Estimator) clone() (*Estimator, error) {
	b, err := e.appendState(nil, true)
	if err != nil {
		return nil, err
	}
	return decodeState(bytes.NewReader(b), true)
}

// The encoding of a Sum, version 3, little-endian: magic "dimeSM", version,
// then either 0 (an empty Sum) or 1 followed by the row and skipped-row
// counts (8 bytes each), the settings-only state of the estimator that holds
// the settings, chunk count and shard ids (WriteState's format without the
// accumulators and means, flag bit 1), the exact sums of the accumulators
// in their compact encoding (covariance.ExactSum.AppendCompact, one per
// accumulator of the state, in its order: 7K + P, or 3K + P without the
// normalized score) and of the means (ExactMean, 3K), each with its length
// (4 bytes), and a CRC-32C of every byte before it. Version 2 (the exact
// sums in 16 bytes an entry) is read too; version 1 (before the groups and
// means of state version 3) is not.
//
// The compact sums keep 15 bits and the significant bits of each entry: at
// D = 256 with the default settings (float32 products), a split of 50,000
// rows ships 19.8 MB where version 2 took 59 MB and its float64 state 29.5
// MB; with float64 products, 30.3 MB (TestSumCompactSize).
const (
	sumMagic   = "dimeSM"
	sumVersion = 3
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *Sum) MarshalBinary() ([]byte, error) {
	le := binary.LittleEndian
	b := append([]byte(sumMagic), sumVersion, boolByte(s.est != nil))
	if s.est != nil {
		b = le.AppendUint64(b, uint64(s.rows))
		b = le.AppendUint64(b, uint64(s.skipped))
		st, err := s.est.appendState(nil, true)
		if err != nil {
			return nil, err
		}
		// One allocation: the exact sums make nearly all of it.
		size := len(b) + 4 + len(st) + 4
		for i := range s.sums {
			size += 4 + s.sums[i].CompactSize()
		}
		for range s.means {
			size += 4 + 128 + 16*len(s.est.lastY) // at least the mean's encoding
		}
		b = slices.Grow(b, size)
		b = appendBytes(b, st)
		for i := range s.sums {
			if b, err = appendSized(b, s.sums[i].AppendCompact); err != nil {
				return nil, err
			}
		}
		for i := range s.means {
			if b, err = appendSized(b, s.means[i].AppendBinary); err != nil {
				return nil, err
			}
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

// appendSized appends a 4-byte length and what appendTo appends.
func appendSized(b []byte, appendTo func([]byte) ([]byte, error)) ([]byte, error) {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b, err := appendTo(b)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b, nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Bytes that are not
// a Sum's encoding give an error matching ErrState, and s is left unchanged.
func (s *Sum) UnmarshalBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: sum: %s", ErrState, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	head := len(sumMagic) + 2
	if len(data) < head+4 || string(data[:len(sumMagic)]) != sumMagic {
		return bad("not a dime sum (bad magic)")
	}
	version := data[len(sumMagic)]
	if version != sumVersion && version != 2 {
		return bad("version %d, this build reads versions 2 and %d", version, sumVersion)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(body):]) {
		return bad("checksum mismatch (truncated or corrupted)")
	}
	b := body[head:]
	switch data[head-1] {
	case 0:
		if len(b) != 0 {
			return bad("%d bytes after an empty sum", len(b))
		}
		*s = Sum{}
		return nil
	case 1:
	default:
		return bad("flag %d", data[head-1])
	}
	// next returns the next length-prefixed field.
	next := func() ([]byte, bool) {
		if len(b) < 4 || uint64(le.Uint32(b)) > uint64(len(b)-4) {
			return nil, false
		}
		n := le.Uint32(b)
		v := b[4 : 4+n]
		b = b[4+n:]
		return v, true
	}
	if len(b) < 16 {
		return bad("truncated")
	}
	rows, skipped := le.Uint64(b), le.Uint64(b[8:])
	b = b[16:]
	if rows > math.MaxInt64 || skipped > math.MaxInt64 {
		return bad("row counts %d and %d out of range", rows, skipped)
	}
	st, ok := next()
	if !ok {
		return bad("truncated")
	}
	e, err := decodeState(bytes.NewReader(st), true)
	if err != nil {
		return err
	}
	if e.rows != 0 || e.skipped != 0 {
		return bad("the settings hold rows")
	}
	accDescs, meanDescs := layout(e.cfg, e.spec)
	sums := make([]covariance.ExactSum, len(accDescs))
	for i, d := range accDescs {
		enc, ok := next()
		if !ok {
			return bad("truncated: %d of %d exact sums", i, len(e.accs))
		}
		decode := sums[i].UnmarshalCompact
		if version == 2 {
			decode = sums[i].UnmarshalBinary
		}
		if err := decode(enc); err != nil {
			return bad("%v", err)
		}
		if sums[i].Description() != d {
			return bad("exact sum %d does not belong to these settings", i)
		}
	}
	means := make([]covariance.ExactMean, len(meanDescs))
	for i, d := range meanDescs {
		enc, ok := next()
		if !ok {
			return bad("truncated: %d of %d exact means", i, len(e.means))
		}
		if err := means[i].UnmarshalBinary(enc); err != nil {
			return bad("%v", err)
		}
		if means[i].Description() != d {
			return bad("exact mean %d does not belong to these settings", i)
		}
	}
	if len(b) != 0 {
		return bad("%d bytes of trailing data", len(b))
	}
	s.est, s.sums, s.means, s.rows, s.skipped = e, sums, means, int64(rows), int64(skipped)
	return nil
}
