package covariance

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"math/bits"
	"slices"

	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/rff"
)

// ExactSum adds accumulators exactly, so that the total does not depend on
// the order or grouping of the additions: the merge that a distributed
// runner needs when it combines shards in whatever order its workers finish.
//
// Floating-point addition is not associative: merging the float64 sums of
// three shards as (a+b)+c or a+(b+c) can differ in the last bits, and the
// entropies with them. An ExactSum converts each accumulator's sums and
// weight once to fixed point, rounding to the nearest multiple of 2⁻⁷²
// (ties to even), and adds them as 128-bit two's-complement integers, whose
// addition is exact, commutative and associative. Accumulator rounds the
// total back to float64 once, correctly. The only rounding is thus the one
// of each shard's values to the 2⁻⁷² grid (at most 2⁻⁷³ per entry, which is
// exact for every entry of magnitude 2⁻²⁰ or more) and the final one: results
// are identical bit for bit whatever the order, and within float64 round-off
// of a float64 sum.
//
// The range is bounded: every added entry and the total must stay below
// 2⁵⁵ in magnitude. ExactSum enforces a stronger rule that does not depend on
// the order either: each accumulator added counts for the ceiling of its
// largest magnitude (its weight or an entry), and these counts may total at
// most MaxExactBudget = 2⁵⁴. For feature maps of unit norm, as in package rff,
// every entry of Σφφᵀ is at most the weight, so that is 2⁵⁴ rows.
//
// The zero value is empty; its first Add or Merge gives it a description, and
// accumulators of another description are refused with ErrIncompatible.
//
// An ExactSum holds its entries as the compact encoding ships them
// (AppendCompact): each 128-bit entry in its significant bits and a
// Huffman-coded description of its length, sign and trailing zeros, so that
// what it holds is what it ships, about 4 to 5 bytes an entry for the sums
// of float32 products and 8 for float64 (an Accumulator holds 8, the 128-bit
// entries would take 16). Add and Merge decode the stream into 16 bytes an
// entry, add, and encode it again: they hold that and the new stream of this
// one sum while they run.
type ExactSum struct {
	desc   Description
	p      int    // feature dimension 2D; 0 in the zero value
	c      []byte // the codes of the entries of the upper triangle, row by row (AppendCompact's stream)
	weight [2]uint64
	budget uint64
}

// ExactFracBits is the number of fractional bits of the fixed point of an
// ExactSum: values are held as integer multiples of 2⁻⁷².
const ExactFracBits = 72

// MaxExactBudget bounds the sum, over the accumulators added to an
// ExactSum, of the ceiling of each one's largest magnitude.
const MaxExactBudget = 1 << 54

// Description returns the description of the accumulators summed (the zero
// Description for an empty ExactSum).
func (s *ExactSum) Description() Description { return s.desc }

// Empty reports whether nothing was added yet.
func (s *ExactSum) Empty() bool { return s.p == 0 }

// Budget returns the part of MaxExactBudget used so far.
func (s *ExactSum) Budget() uint64 { return s.budget }

// entries returns the number of entries of the upper triangle.
func (s *ExactSum) entries() int { return s.p * (s.p + 1) / 2 }

// compatible returns an error if the sum cannot take values of description d.
func (s *ExactSum) compatible(d Description) error {
	if s.p == 0 {
		return nil
	}
	if diff := s.desc.diff(d); diff != "" {
		return fmt.Errorf("%w: %s", ErrIncompatible, diff)
	}
	return nil
}

// Add adds a's sum and weight. A nil or empty (zero-value) a is a no-op. An
// a of another description, or one that would take the budget past
// MaxExactBudget, is refused and s is left unchanged.
func (s *ExactSum) Add(a *Accumulator) (err error) {
	if a == nil || a.empty() {
		return nil
	}
	if err := s.compatible(a.desc); err != nil {
		return err
	}
	p := a.sum.N
	largest := a.weight
	for i := range p {
		for _, v := range a.sum.Row(i) {
			largest = math.Max(largest, math.Abs(v))
		}
	}
	if math.IsNaN(largest) || largest > MaxExactBudget {
		return fmt.Errorf("%w: an entry or the weight is %v, beyond the exact range", ErrInvalid, largest)
	}
	budget, carry := bits.Add64(s.budget, uint64(math.Ceil(largest)), 0)
	if carry != 0 || budget > MaxExactBudget {
		return fmt.Errorf("%w: exact sum beyond its range (%d of %d)", ErrInvalid, s.budget, uint64(MaxExactBudget))
	}
	var sum []uint64
	if s.p == 0 {
		s.desc, s.p = a.desc, a.desc.Dim()
		sum = make([]uint64, 2*s.entries())
	} else if sum, err = s.values(); err != nil {
		return err
	}
	k := 0
	for i := range p {
		for _, v := range a.sum.Row(i) {
			vlo, vhi := toFixed(v)
			sum[k], sum[k+1] = add128(sum[k], sum[k+1], vlo, vhi)
			k += 2
		}
	}
	s.setValues(sum)
	s.budget = budget
	lo, hi := toFixed(a.weight)
	s.weight[0], s.weight[1] = add128(s.weight[0], s.weight[1], lo, hi)
	return nil
}

// Merge adds others to s: decoding s once and each of others once, and
// encoding the total once. Nil or empty others are no-ops; an empty s adopts
// the description of the first other. Sums of different descriptions, or
// whose budgets total more than MaxExactBudget, are refused and s is left
// unchanged.
func (s *ExactSum) Merge(others ...*ExactSum) error {
	budget, desc := s.budget, s.desc
	var add []*ExactSum
	for _, o := range others {
		if o == nil || o.p == 0 {
			continue
		}
		if len(add) > 0 || s.p != 0 {
			if diff := desc.diff(o.desc); diff != "" {
				return fmt.Errorf("%w: %s", ErrIncompatible, diff)
			}
		}
		var carry uint64
		if budget, carry = bits.Add64(budget, o.budget, 0); carry != 0 || budget > MaxExactBudget {
			return fmt.Errorf("%w: exact sum beyond its range (%d + %d of %d)", ErrInvalid, budget-o.budget, o.budget, uint64(MaxExactBudget))
		}
		desc = o.desc
		add = append(add, o)
	}
	if len(add) == 0 {
		return nil
	}
	if s.p == 0 && len(add) == 1 {
		// A copy: the stream as it is.
		o := add[0]
		s.desc, s.p, s.c, s.budget, s.weight = o.desc, o.p, slices.Clone(o.c), o.budget, o.weight
		return nil
	}
	var sum []uint64
	if s.p == 0 {
		p := desc.Dim()
		sum = make([]uint64, p*(p+1))
	} else {
		var err error
		if sum, err = s.values(); err != nil {
			return err
		}
	}
	weight := s.weight
	for _, o := range add {
		v, err := o.values()
		if err != nil {
			return err
		}
		for k := 0; k < len(sum); k += 2 {
			sum[k], sum[k+1] = add128(sum[k], sum[k+1], v[k], v[k+1])
		}
		weight[0], weight[1] = add128(weight[0], weight[1], o.weight[0], o.weight[1])
	}
	s.desc, s.p, s.c = desc, desc.Dim(), encodeCompact(sum, desc.Dim())
	s.budget, s.weight = budget, weight
	return nil
}

// Accumulator returns the total as an accumulator: each entry and the weight
// rounded once to the nearest float64 (ties to even). An empty ExactSum
// gives ErrEmpty.
func (s *ExactSum) Accumulator() (*Accumulator, error) {
	if s.p == 0 {
		return nil, ErrEmpty
	}
	a := &Accumulator{desc: s.desc, sum: linalg.NewTriangle(s.p), weight: fromFixed(s.weight[0], s.weight[1])}
	v, err := s.values()
	if err != nil {
		return nil, err
	}
	k := 0
	for i := range s.p {
		row := a.sum.Row(i)
		for j := range row {
			row[j] = fromFixed(v[k], v[k+1])
			k += 2
		}
	}
	return a, nil
}

// add128 returns a + b in 128-bit two's complement, wrapping: within the
// budget no partial sum overflows, and wrapping sums are associative anyway.
func add128(alo, ahi, blo, bhi uint64) (lo, hi uint64) {
	lo, c := bits.Add64(alo, blo, 0)
	hi, _ = bits.Add64(ahi, bhi, c)
	return lo, hi
}

// neg128 returns −v in 128-bit two's complement.
func neg128(lo, hi uint64) (uint64, uint64) {
	lo, c := bits.Add64(^lo, 1, 0)
	return lo, ^hi + c
}

// toFixed returns round(v·2⁷²) (ties to even) in 128-bit two's complement,
// for a finite v with |v| < 2⁵⁵.
func toFixed(v float64) (lo, hi uint64) {
	b := math.Float64bits(v)
	exp := int(b >> 52 & 0x7ff)
	mant := b & (1<<52 - 1)
	if exp == 0 {
		exp = 1 // subnormal
	} else {
		mant |= 1 << 52
	}
	// v = ±mant·2^(exp−1075), so v·2⁷² = ±mant·2^s.
	switch s := exp - 1075 + ExactFracBits; {
	case s >= 64:
		hi = mant << (s - 64)
	case s >= 0:
		lo, hi = mant<<s, mant>>(64-s) // a shift by 64 gives 0
	case s > -64:
		r := uint(-s)
		q, rem, half := mant>>r, mant&(1<<r-1), uint64(1)<<(r-1)
		if rem > half || rem == half && q&1 == 1 {
			q++
		}
		lo = q
	}
	// Below 2⁻¹³⁶ (s ≤ −64) v rounds to 0: mant < 2⁵³ < half.
	if b>>63 != 0 {
		lo, hi = neg128(lo, hi)
	}
	return lo, hi
}

// fromFixed returns the float64 nearest (ties to even) to the 128-bit
// two's-complement integer (lo, hi) times 2⁻⁷².
func fromFixed(lo, hi uint64) float64 {
	neg := int64(hi) < 0
	if neg {
		lo, hi = neg128(lo, hi)
	}
	var n int // bits of the magnitude
	if hi != 0 {
		n = 64 + bits.Len64(hi)
	} else {
		n = bits.Len64(lo)
	}
	var f float64
	if n <= 53 {
		f = math.Ldexp(float64(lo), -ExactFracBits)
	} else {
		// Keep the top 53 bits q; round on the bits shifted out.
		sh := uint(n - 53)
		q := shr128(lo, hi, sh)
		roundBit := shr128(lo, hi, sh-1)&1 == 1
		sticky := sh > 1 && lowBits(lo, hi, sh-1)
		if roundBit && (sticky || q&1 == 1) {
			q++ // 2⁵³ at most, still exact
		}
		f = math.Ldexp(float64(q), int(sh)-ExactFracBits)
	}
	if neg {
		f = -f
	}
	return f
}

// shr128 returns the low 64 bits of (lo, hi) >> s, for s < 128.
func shr128(lo, hi uint64, s uint) uint64 {
	if s >= 64 {
		return hi >> (s - 64)
	}
	return lo>>s | hi<<(64-s) // hi<<64 is 0
}

// lowBits reports whether any of the s lowest bits of (lo, hi) is set.
func lowBits(lo, hi uint64, s uint) bool {
	if s >= 64 {
		return lo != 0 || hi&(1<<(s-64)-1) != 0
	}
	return lo&(1<<s-1) != 0
}

// The encoding of an ExactSum, version 1, little-endian: magic "dimeXS",
// then the versions and description as in an Accumulator's encoding (bytes
// 6 to 51), the budget (8 bytes), the weight (16 bytes: low then high word),
// the 16-byte entries of the upper triangle row by row, and a CRC-32C of
// every byte before it. An empty ExactSum is the magic, a zero version byte
// and the checksum.
const (
	exactMagic      = "dimeXS"
	exactHeaderSize = descSize + 8 + 16
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *ExactSum) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }

// AppendBinary implements encoding.BinaryAppender: it appends the encoding of
// s to b.
func (s *ExactSum) AppendBinary(b []byte) ([]byte, error) {
	start := len(b)
	le := binary.LittleEndian
	if s.p == 0 {
		b = append(b, exactMagic...)
		b = append(b, 0)
	} else {
		b = appendHeader(b, exactMagic, s.desc)
		b = le.AppendUint64(b, s.budget)
		b = le.AppendUint64(b, s.weight[0])
		b = le.AppendUint64(b, s.weight[1])
		v, err := s.values()
		if err != nil {
			return nil, err
		}
		b = slices.Grow(b, 8*len(v)+checksumSize)
		for _, w := range v {
			b = le.AppendUint64(b, w)
		}
	}
	return le.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Truncated,
// corrupted or foreign bytes give an error matching ErrFormat and leave s
// unchanged.
func (s *ExactSum) UnmarshalBinary(data []byte) error {
	desc, budget, empty, err := parseExact(data, exactMagic, "sum", exactHeaderSize, func(p uint64) uint64 { return p * (p + 1) / 2 })
	if err != nil {
		return err
	}
	if empty {
		*s = ExactSum{}
		return nil
	}
	le := binary.LittleEndian
	t := ExactSum{desc: desc, p: desc.Dim(), budget: budget,
		weight: [2]uint64{le.Uint64(data[descSize+8:]), le.Uint64(data[descSize+16:])}}
	v := make([]uint64, 2*t.entries())
	for k, off := 0, exactHeaderSize; off < len(data)-checksumSize; k, off = k+2, off+16 {
		v[k], v[k+1] = le.Uint64(data[off:]), le.Uint64(data[off+8:])
		if v[k] == 0 && v[k+1] == 1<<63 { // −2¹²⁷, far beyond the budget, and 128 bits of magnitude
			return fmt.Errorf("%w: entry %d out of range", ErrFormat, k/2)
		}
	}
	t.setValues(v)
	*s = t
	return nil
}

// parseExact checks the encoding of an ExactSum or ExactMean (magic, what
// it is called in errors, the size of its fixed fields, its entries for a
// feature dimension p): the empty encoding, the versions, the length, the
// checksum, the description and the budget, which it returns.
func parseExact(data []byte, magic, what string, headerSize int, entries func(p uint64) uint64) (desc Description, budget uint64, empty bool, err error) {
	bad := func(format string, args ...any) (Description, uint64, bool, error) {
		return Description{}, 0, false, fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	if len(data) < len(magic) || string(data[:len(magic)]) != magic {
		return bad("not a dime exact %s (bad magic)", what)
	}
	if len(data) == len(magic)+1+checksumSize && data[len(magic)] == 0 {
		if crc32.Checksum(data[:len(data)-checksumSize], castagnoli) != le.Uint32(data[len(data)-checksumSize:]) {
			return bad("checksum mismatch (corrupted)")
		}
		return Description{}, 0, true, nil
	}
	if len(data) < headerSize+checksumSize {
		return bad("truncated: %d bytes, header needs %d", len(data), headerSize+checksumSize)
	}
	if err := checkVersions(data); err != nil {
		return Description{}, 0, false, err
	}
	features := le.Uint32(data[12:])
	if features < 1 || features > rff.MaxFeatures {
		return bad("%d frequencies, want 1 to %d", features, rff.MaxFeatures)
	}
	p := 2 * uint64(features)
	if want := uint64(headerSize) + 16*entries(p) + checksumSize; uint64(len(data)) != want {
		return bad("%d bytes, want %d for %d features (truncated or trailing data)", len(data), want, p)
	}
	body := data[:len(data)-checksumSize]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(body):]) {
		return bad("checksum mismatch (corrupted)")
	}
	if desc, err = parseHeader(data); err != nil {
		return Description{}, 0, false, err
	}
	if budget = le.Uint64(data[descSize:]); budget > MaxExactBudget {
		return bad("budget %d beyond %d", budget, uint64(MaxExactBudget))
	}
	return desc, budget, false, nil
}
