package covariance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"
)

// The compact encoding of an ExactSum, what a distributed combine ships:
// the same sum in about the bits its entries use. An entry is a multiple
// of 2⁻⁷² held in 128 bits, but the sum of a few shards' float64 values
// has few significant bits (53 for one shard's float64 entry, about 25 to
// 30 with float32 products) between its leading one and its trailing
// zeros; the rest is sign extension and zeros. Each entry is written,
// least significant bit first in a stream of bits, as
//
//	7 bits  h, the bit length of |v| (0: v = 0, nothing follows)
//	1 bit   the sign (1: negative)
//	7 bits  k < h, the number of bits kept below the leading one
//	k bits  those bits: |v| = (2ᵏ + kept)·2^(h−1−k), kept odd when k > 0
//
// so 15 + k bits for a nonzero entry, against 128. The layout, little-
// endian: magic "dimeXC", the versions and description as in the other
// encodings (bytes 6 to 51), the budget (8 bytes), the weight (16 bytes),
// the length in bytes of the stream of entries (8 bytes), the stream (its
// last byte padded with zero bits), and a CRC-32C of every byte before it.
// An empty ExactSum is the magic, a zero byte and the checksum.
const (
	compactMagic      = "dimeXC"
	compactHeaderSize = exactHeaderSize + 8
	compactMinBits    = 7        // a zero entry
	compactMaxBits    = 15 + 126 // a nonzero entry of 127 bits, all kept
)

// AppendCompact appends the compact encoding of s to b.
func (s *ExactSum) AppendCompact(b []byte) ([]byte, error) {
	start := len(b)
	le := binary.LittleEndian
	if s.p == 0 {
		b = append(b, compactMagic...)
		b = append(b, 0)
		return le.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
	}
	b = slices.Grow(b, s.CompactSize())
	b = appendHeader(b, compactMagic, s.desc)
	b = le.AppendUint64(b, s.budget)
	b = le.AppendUint64(b, s.weight[0])
	b = le.AppendUint64(b, s.weight[1])
	b = le.AppendUint64(b, uint64(len(s.c)))
	b = append(b, s.c...)
	return le.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// CompactSize returns the length of the compact encoding of s, which is
// about what s holds in memory.
func (s *ExactSum) CompactSize() int {
	if s.p == 0 {
		return len(compactMagic) + 1 + checksumSize
	}
	return compactHeaderSize + len(s.c) + checksumSize
}

// UnmarshalCompact decodes the compact encoding (AppendCompact). Truncated,
// corrupted, foreign or non-canonical bytes give an error matching
// ErrFormat and leave s unchanged.
func (s *ExactSum) UnmarshalCompact(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: compact exact sum: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	le := binary.LittleEndian
	if len(data) < len(compactMagic) || string(data[:len(compactMagic)]) != compactMagic {
		return bad("not a dime compact exact sum (bad magic)")
	}
	if len(data) < len(compactMagic)+1+checksumSize {
		return bad("truncated: %d bytes", len(data))
	}
	body := data[:len(data)-checksumSize]
	if crc32.Checksum(body, castagnoli) != le.Uint32(data[len(body):]) {
		return bad("checksum mismatch (truncated or corrupted)")
	}
	if len(data) == len(compactMagic)+1+checksumSize && data[len(compactMagic)] == 0 {
		*s = ExactSum{}
		return nil
	}
	if len(body) < compactHeaderSize {
		return bad("truncated: %d bytes, header needs %d", len(data), compactHeaderSize+checksumSize)
	}
	if err := checkVersions(data); err != nil {
		return err
	}
	desc, err := parseHeader(data)
	if err != nil {
		return err
	}
	budget := le.Uint64(data[descSize:])
	if budget > MaxExactBudget {
		return bad("budget %d beyond %d", budget, uint64(MaxExactBudget))
	}
	stream := body[compactHeaderSize:]
	if n := le.Uint64(data[exactHeaderSize:]); n != uint64(len(stream)) {
		return bad("%d bytes of entries, the header says %d", len(stream), n)
	}
	p := uint64(desc.Dim())
	entries := p * (p + 1) / 2
	if uint64(len(stream)) < (entries*compactMinBits+7)/8 || uint64(len(stream)) > (entries*compactMaxBits+7)/8 {
		return bad("%d bytes cannot hold %d entries", len(stream), entries)
	}
	r := bitReader{b: stream}
	for k := range entries {
		if !r.canonical() {
			return bad("entry %d is not canonical", k)
		}
	}
	if r.err {
		return bad("truncated entries")
	}
	if r.pos != len(stream) || r.acc != 0 {
		return bad("trailing bits after the entries")
	}
	*s = ExactSum{desc: desc, p: int(p), c: bytes.Clone(stream), budget: budget,
		weight: [2]uint64{le.Uint64(data[descSize+8:]), le.Uint64(data[descSize+16:])}}
	return nil
}

// entry appends the code of the 128-bit two's-complement integer (lo, hi),
// whose magnitude is below 2¹²⁷: 7 bits h, the bit length of |v| (0: v =
// 0, nothing follows), 1 bit the sign, 7 bits k < h, the number of bits
// kept below the leading one, and those k bits.
func (w *bitWriter) entry(lo, hi uint64) {
	neg := int64(hi) < 0
	if neg {
		lo, hi = neg128(lo, hi)
	}
	h := bitLen128(lo, hi)
	if h == 0 {
		w.write(0, 7)
		return
	}
	t := trailingZeros128(lo, hi)
	kept := h - 1 - t
	w.write(uint64(h)|boolBit(neg)<<7|uint64(kept)<<8, 15)
	// The kept bits are the low bits of |v| >> t (a shift by 64 or more
	// gives 0).
	w.write128(shr128(lo, hi, uint(t)), hi>>t, uint(kept))
}

// entry reads the code of an entry that a bitWriter wrote.
func (r *bitReader) entry() (lo, hi uint64) {
	lo, hi, _ = r.next()
	return lo, hi
}

// canonical reads the code of an entry and reports whether it is one that
// entry writes.
func (r *bitReader) canonical() bool {
	_, _, ok := r.next()
	return ok
}

func (r *bitReader) next() (lo, hi uint64, ok bool) {
	h := uint(r.read(7))
	if h == 0 {
		return 0, 0, true
	}
	v := r.read(8)
	neg, kept := v&1 == 1, uint(v>>1)
	if kept >= h {
		return 0, 0, false
	}
	lo, hi = r.read128(kept)
	if kept > 0 && lo&1 == 0 {
		return 0, 0, false
	}
	// Put the leading one back, then shift into place.
	if kept < 64 {
		lo |= 1 << kept
	} else {
		hi |= 1 << (kept - 64)
	}
	lo, hi = shl128(lo, hi, h-1-kept)
	if neg {
		lo, hi = neg128(lo, hi)
	}
	return lo, hi, true
}

func boolBit(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// bitLen128 returns the bit length of (lo, hi) as an unsigned number.
func bitLen128(lo, hi uint64) int {
	if hi != 0 {
		return 64 + bits.Len64(hi)
	}
	return bits.Len64(lo)
}

// trailingZeros128 returns the trailing zero bits of a nonzero (lo, hi).
func trailingZeros128(lo, hi uint64) int {
	if lo != 0 {
		return bits.TrailingZeros64(lo)
	}
	return 64 + bits.TrailingZeros64(hi)
}

// shl128 returns (lo, hi) << s, for s < 128.
func shl128(lo, hi uint64, s uint) (uint64, uint64) {
	if s >= 64 {
		return 0, lo << (s - 64)
	}
	if s == 0 {
		return lo, hi
	}
	return lo << s, hi<<s | lo>>(64-s)
}

// bitWriter appends bits to a byte slice, least significant first.
type bitWriter struct {
	b   []byte
	acc uint64 // fewer than 8 pending bits
	n   uint
}

// newBitWriter returns a writer of a new stream of about size bytes.
func newBitWriter(size int) bitWriter {
	return bitWriter{b: make([]byte, 0, size+size/8+64)}
}

// done flushes w and returns its stream, without more than an eighth of
// spare capacity.
func (w *bitWriter) done() []byte {
	b := w.flush()
	if cap(b)-len(b) > len(b)/8 {
		b = bytes.Clone(b)
	}
	return b
}

// write appends the n ≤ 32 low bits of v.
func (w *bitWriter) write(v uint64, n uint) {
	w.acc |= (v & (1<<n - 1)) << w.n
	w.n += n
	for w.n >= 8 {
		w.b = append(w.b, byte(w.acc))
		w.acc >>= 8
		w.n -= 8
	}
}

// write128 appends the n ≤ 128 low bits of (lo, hi).
func (w *bitWriter) write128(lo, hi uint64, n uint) {
	for _, word := range [2]uint64{lo, hi} {
		for i := uint(0); i < 64 && n > 0; i += 32 {
			m := min(n, 32)
			w.write(word>>i, m)
			n -= m
		}
	}
}

// flush writes the pending bits, padded with zeros, and returns the bytes.
func (w *bitWriter) flush() []byte {
	if w.n > 0 {
		w.b = append(w.b, byte(w.acc))
		w.acc, w.n = 0, 0
	}
	return w.b
}

// bitReader reads what a bitWriter wrote; past the end it reads zeros and
// sets err.
type bitReader struct {
	b   []byte
	pos int
	acc uint64
	n   uint
	err bool
}

// read returns the next n ≤ 32 bits.
func (r *bitReader) read(n uint) uint64 {
	for r.n < n {
		if r.pos >= len(r.b) {
			r.err = true
			r.n = n
			break
		}
		r.acc |= uint64(r.b[r.pos]) << r.n
		r.pos++
		r.n += 8
	}
	v := r.acc & (1<<n - 1)
	r.acc >>= n
	r.n -= n
	return v
}

// read128 returns the next n ≤ 128 bits.
func (r *bitReader) read128(n uint) (lo, hi uint64) {
	for i := uint(0); i < n; i += 32 {
		m := min(n-i, 32)
		v := r.read(m)
		if i < 64 {
			lo |= v << i
		} else {
			hi |= v << (i - 64)
		}
	}
	return lo, hi
}
