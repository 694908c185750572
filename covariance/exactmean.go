package covariance

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
)

// ExactMean adds first moments (Mean) exactly, as ExactSum adds
// accumulators: Σ w φ, Σ w and Σ w² are held in the same 128-bit fixed point
// (multiples of 2⁻⁷²), so that the total does not depend on the order or
// grouping of the additions, and Mean rounds it back to float64 once.
//
// Its range is ExactSum's: each Mean added counts for the ceiling of its
// largest magnitude (Σ w, Σ w² or an entry of Σ w φ), and these counts may
// total at most MaxExactBudget. The zero value is empty; its first Add or
// Merge gives it a description, and means of another description are
// refused with ErrIncompatible.
type ExactMean struct {
	desc    Description
	v       []uint64 // (low, high) words of each entry of Σ w φ; nil in the zero value
	weight  [2]uint64
	weight2 [2]uint64
	budget  uint64
}

// Description returns the description of the means summed (the zero
// Description for an empty ExactMean).
func (s *ExactMean) Description() Description { return s.desc }

// Empty reports whether nothing was added yet.
func (s *ExactMean) Empty() bool { return s.v == nil }

// Budget returns the part of MaxExactBudget used so far.
func (s *ExactMean) Budget() uint64 { return s.budget }

func (s *ExactMean) compatible(d Description) error {
	if s.v == nil {
		return nil
	}
	if diff := s.desc.diff(d); diff != "" {
		return fmt.Errorf("%w: %s", ErrIncompatible, diff)
	}
	return nil
}

// Add adds m's sums and weights. A nil or zero-value m is a no-op. An m of
// another description, or one that would take the budget past
// MaxExactBudget, is refused and s is left unchanged.
func (s *ExactMean) Add(m *Mean) error {
	if m == nil || m.sum == nil {
		return nil
	}
	if err := s.compatible(m.desc); err != nil {
		return err
	}
	largest := math.Max(m.weight, m.weight2)
	for _, v := range m.sum {
		largest = math.Max(largest, math.Abs(v))
	}
	if math.IsNaN(largest) || largest > MaxExactBudget {
		return fmt.Errorf("%w: an entry or a weight of a mean is %v, beyond the exact range", ErrInvalid, largest)
	}
	budget, carry := bits.Add64(s.budget, uint64(math.Ceil(largest)), 0)
	if carry != 0 || budget > MaxExactBudget {
		return fmt.Errorf("%w: exact mean beyond its range (%d of %d)", ErrInvalid, s.budget, uint64(MaxExactBudget))
	}
	if s.v == nil {
		s.desc, s.v = m.desc, make([]uint64, 2*len(m.sum))
	}
	s.budget = budget
	for j, v := range m.sum {
		lo, hi := toFixed(v)
		s.v[2*j], s.v[2*j+1] = add128(s.v[2*j], s.v[2*j+1], lo, hi)
	}
	lo, hi := toFixed(m.weight)
	s.weight[0], s.weight[1] = add128(s.weight[0], s.weight[1], lo, hi)
	lo, hi = toFixed(m.weight2)
	s.weight2[0], s.weight2[1] = add128(s.weight2[0], s.weight2[1], lo, hi)
	return nil
}

// Merge adds other to s. A nil or empty other is a no-op; an empty s adopts
// other's description. Sums of different descriptions, or whose budgets
// total more than MaxExactBudget, are refused and s is left unchanged.
func (s *ExactMean) Merge(other *ExactMean) error {
	if other == nil || other.v == nil {
		return nil
	}
	if err := s.compatible(other.desc); err != nil {
		return err
	}
	budget, carry := bits.Add64(s.budget, other.budget, 0)
	if carry != 0 || budget > MaxExactBudget {
		return fmt.Errorf("%w: exact mean beyond its range (%d + %d of %d)", ErrInvalid, s.budget, other.budget, uint64(MaxExactBudget))
	}
	if s.v == nil {
		s.desc, s.v = other.desc, make([]uint64, len(other.v))
	}
	s.budget = budget
	for k := 0; k < len(s.v); k += 2 {
		s.v[k], s.v[k+1] = add128(s.v[k], s.v[k+1], other.v[k], other.v[k+1])
	}
	s.weight[0], s.weight[1] = add128(s.weight[0], s.weight[1], other.weight[0], other.weight[1])
	s.weight2[0], s.weight2[1] = add128(s.weight2[0], s.weight2[1], other.weight2[0], other.weight2[1])
	return nil
}

// Mean returns the total as a Mean: each entry and both weights rounded
// once to the nearest float64 (ties to even). An empty ExactMean gives
// ErrEmpty.
func (s *ExactMean) Mean() (*Mean, error) {
	if s.v == nil {
		return nil, ErrEmpty
	}
	m := &Mean{desc: s.desc, sum: make([]float64, len(s.v)/2),
		weight: fromFixed(s.weight[0], s.weight[1]), weight2: fromFixed(s.weight2[0], s.weight2[1])}
	for j := range m.sum {
		m.sum[j] = fromFixed(s.v[2*j], s.v[2*j+1])
	}
	return m, nil
}

// The encoding of an ExactMean, version 1, little-endian: magic "dimeXM",
// then the versions and description as in an Accumulator's encoding (bytes
// 6 to 51), the budget (8 bytes), Σ w and Σ w² (16 bytes each: low then high
// word), the 2D entries of Σ w φ (16 bytes each) and a CRC-32C of every byte
// before it. An empty ExactMean is the magic, a zero version byte and the
// checksum.
const (
	exactMeanMagic      = "dimeXM"
	exactMeanHeaderSize = descSize + 8 + 32
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *ExactMean) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// AppendBinary implements encoding.BinaryAppender: it appends the encoding of
// s to b.
func (s *ExactMean) AppendBinary(b []byte) ([]byte, error) {
	start := len(b)
	le := binary.LittleEndian
	if s.v == nil {
		b = append(b, exactMeanMagic...)
		b = append(b, 0)
	} else {
		b = appendHeader(b, exactMeanMagic, s.desc)
		b = le.AppendUint64(b, s.budget)
		for _, w := range [4]uint64{s.weight[0], s.weight[1], s.weight2[0], s.weight2[1]} {
			b = le.AppendUint64(b, w)
		}
		for _, w := range s.v {
			b = le.AppendUint64(b, w)
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Truncated,
// corrupted or foreign bytes give an error matching ErrFormat and leave s
// unchanged.
func (s *ExactMean) UnmarshalBinary(data []byte) error {
	desc, budget, empty, err := parseExact(data, exactMeanMagic, "mean", exactMeanHeaderSize, func(p uint64) uint64 { return p })
	if err != nil {
		return err
	}
	if empty {
		*s = ExactMean{}
		return nil
	}
	le := binary.LittleEndian
	p := desc.Dim()
	t := ExactMean{desc: desc, budget: budget, v: make([]uint64, 2*p)}
	off := descSize + 8
	t.weight = [2]uint64{le.Uint64(data[off:]), le.Uint64(data[off+8:])}
	t.weight2 = [2]uint64{le.Uint64(data[off+16:]), le.Uint64(data[off+24:])}
	for k, off := 0, exactMeanHeaderSize; k < len(t.v); k, off = k+1, off+8 {
		t.v[k] = le.Uint64(data[off:])
	}
	*s = t
	return nil
}
