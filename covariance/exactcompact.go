package covariance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/bits"
	"slices"

	"github.com/klauspost/compress/huff0"
)

// The compact encoding of an ExactSum, what a distributed combine ships:
// the same sum, losslessly, in about the bits its entries use. An entry v is
// a multiple of 2⁻⁷² held in 128 bits, but the sum of a few shards' float64
// values has few significant bits between its leading one and its trailing
// zeros (24 to 40 with float32 products, depending on the rows; 53 or more
// with float64); the rest is sign extension and zeros. Each entry is
// described by h, the bit length of |v| (0 for v = 0), its sign, and t, the
// number of trailing zero bits of |v|, so that |v| = (2ᵏ + kept)·2ᵗ with the
// k = h − 1 − t bits kept below the leading one (kept odd when k > 0).
//
// The kept bits are about as random as bits come (the low bits of sums of
// rounded products; measured 7.97 bits of entropy in the top 8 of them), so
// they are stored as they are. The descriptions are not: h, the sign and t
// take 5 to 7 bits of entropy an entry, against 15 written plainly, and are
// Huffman-coded (huff0, from github.com/klauspost/compress) in four classes
// of entries whose magnitudes differ: the diagonal, the products of two
// cosine features, of a cosine and a sine, and of two sines (each feature
// map is D cosines then D sines).
//
// The stream of entries (what an ExactSum holds in memory) is, little-
// endian:
//
//	8 bytes   n, the length of the descriptions
//	n bytes   the descriptions: for each class in turn, its entries in row
//	          order, cut into chunks of compactChunk entries; per chunk, a
//	          block of the bytes h | sign<<7 of its entries, then a block of
//	          the bytes t of its nonzero entries (none if all are zero)
//	the rest  the kept bits of every entry in the same order, least
//	          significant bit first, the last byte padded with zero bits
//
// A block is a mode byte, 0 for the bytes as they are, 1 for huff0's
// Compress1X output (its table and bits) preceded by its length (4 bytes).
// The encoding is the magic "dimeXH", the versions and description as in
// the other encodings (bytes 6 to 51), the budget (8 bytes), the weight (16
// bytes), the length in bytes of the stream (8 bytes), the stream, and a
// CRC-32C of every byte before it. An empty ExactSum is the magic, a zero
// byte and the checksum.
const (
	compactMagic      = "dimeXH"
	compactHeaderSize = exactHeaderSize + 8
	// compactChunk bounds the entries of a block (huff0 codes at most
	// huff0.BlockSizeMax bytes at a time).
	compactChunk = 1 << 16
	blockRaw     = 0
	blockHuff    = 1
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
// corrupted, foreign or invalid bytes give an error matching ErrFormat and
// leave s unchanged. Every entry is decoded to check it, in time and memory
// proportional to the bytes given (each entry takes at least a bit).
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
	if err := walkCompact(stream, desc.Dim(), nil); err != nil {
		return bad("%v", err)
	}
	*s = ExactSum{desc: desc, p: desc.Dim(), c: bytes.Clone(stream), budget: budget,
		weight: [2]uint64{le.Uint64(data[descSize+8:]), le.Uint64(data[descSize+16:])}}
	return nil
}

// values returns the entries of s in row order, the low and high words of
// each (2 words an entry).
func (s *ExactSum) values() ([]uint64, error) {
	v := make([]uint64, 2*s.entries())
	err := walkCompact(s.c, s.p, func(k int, lo, hi uint64) { v[2*k], v[2*k+1] = lo, hi })
	if err != nil {
		return nil, fmt.Errorf("%w: compact exact sum: %v", ErrFormat, err) // only from UnmarshalCompact's checks: not reached
	}
	return v, nil
}

// setValues sets the entries of s from v, in row order (values' layout).
func (s *ExactSum) setValues(v []uint64) {
	s.c = encodeCompact(v, s.p)
}

// The classes of the entries of a p×p upper triangle (p = 2D: D cosine
// features, then D sines), in the order the compact stream takes them.
const (
	classDiagonal = iota
	classCosCos
	classCosSin
	classSinSin
	classes
)

// classSize returns the number of entries of class c of a p×p triangle.
func classSize(c, p int) int {
	h := p / 2
	switch c {
	case classDiagonal:
		return p
	case classCosSin:
		return h * (p - h)
	case classCosCos:
		return h * (h - 1) / 2
	default:
		return (p - h) * (p - h - 1) / 2
	}
}

// classOrder iterates over the row-order indexes of the entries of class c
// of a p×p triangle, in row order.
type classOrder struct {
	p, h, i, j, end int
	row             int // the index of entry (i, i)
}

// newClassOrder returns an iterator at the first entry of class c.
func newClassOrder(c, p int) classOrder {
	o := classOrder{p: p, h: p / 2}
	switch c {
	case classDiagonal:
		o.j, o.end = 0, 1 // one entry a row
	case classCosCos:
		o.end = o.h
	case classCosSin:
		o.end = p
	case classSinSin:
		o.i = o.h
		o.end = p
	}
	o.row = o.i*p - o.i*(o.i-1)/2
	o.start(c)
	return o
}

// start places o at the first entry of its row of class c.
func (o *classOrder) start(c int) {
	switch c {
	case classDiagonal:
		o.j, o.end = o.i, o.i+1
	case classCosSin:
		o.j = max(o.h, o.i+1)
	default:
		o.j = o.i + 1
	}
}

// next returns the index of the next entry of class c.
func (o *classOrder) next(c int) int {
	for o.j >= o.end {
		o.row += o.p - o.i
		o.i++
		o.start(c)
	}
	k := o.row + o.j - o.i
	o.j++
	return k
}

// encodeCompact returns the compact stream of the entries v of a p×p
// triangle (in row order, values' layout).
func encodeCompact(v []uint64, p int) []byte {
	var (
		sc     = huff0.Scratch{Reuse: huff0.ReusePolicyNone}
		desc   = []byte{0, 0, 0, 0, 0, 0, 0, 0} // n, set below
		kept   = newBitWriter(len(v) / 2 * 4)
		hs, ts []byte
	)
	for c := range classes {
		o := newClassOrder(c, p)
		for left := classSize(c, p); left > 0; {
			m := min(left, compactChunk)
			left -= m
			hs, ts = hs[:0], ts[:0]
			for range m {
				k := o.next(c)
				lo, hi := v[2*k], v[2*k+1]
				neg := int64(hi) < 0
				if neg {
					lo, hi = neg128(lo, hi)
				}
				h := bitLen128(lo, hi)
				if h == 0 {
					hs = append(hs, 0)
					continue
				}
				t := trailingZeros128(lo, hi)
				hs = append(hs, byte(h)|byte(boolBit(neg))<<7)
				ts = append(ts, byte(t))
				// The kept bits are the low bits of |v| >> t (a shift
				// by 64 or more gives 0).
				kept.write128(shr128(lo, hi, uint(t)), hi>>t, uint(h-1-t))
			}
			desc = appendBlock(desc, hs, &sc)
			if len(ts) > 0 {
				desc = appendBlock(desc, ts, &sc)
			}
		}
	}
	binary.LittleEndian.PutUint64(desc, uint64(len(desc)-8))
	out := make([]byte, 0, len(desc)+len(kept.b)+1)
	out = append(out, desc...)
	return append(out, kept.flush()...)
}

// appendBlock appends the block of the bytes sym: Huffman-coded, or as
// they are when that is not shorter.
func appendBlock(b, sym []byte, sc *huff0.Scratch) []byte {
	out, _, err := huff0.Compress1X(sym, sc)
	if err != nil || len(out)+4 >= len(sym) { // incompressible, or a single value
		b = append(b, blockRaw)
		return append(b, sym...)
	}
	b = append(b, blockHuff)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(out)))
	return append(b, out...)
}

// errCompact is the error of walkCompact, wrapped by its callers.
var errCompact = errors.New("invalid entries")

// walkCompact decodes the compact stream c of the entries of a p×p
// triangle, calling fn (if not nil) with the row-order index and the value
// of each entry, in the stream's order. It returns an error for bytes that
// encodeCompact does not write, without calling fn for the rest. Its work
// is bounded by the length of c: every entry takes at least one bit of a
// description block.
func walkCompact(c []byte, p int, fn func(k int, lo, hi uint64)) error {
	if len(c) < 8 || binary.LittleEndian.Uint64(c) > uint64(len(c)-8) {
		return fmt.Errorf("%w: truncated", errCompact)
	}
	n := binary.LittleEndian.Uint64(c)
	blocks := blockReader{b: c[8 : 8+n], sc: new(huff0.Scratch)}
	kept := bitReader{b: c[8+n:]}
	var hs, ts []byte
	for cl := range classes {
		o := newClassOrder(cl, p)
		for left := classSize(cl, p); left > 0; {
			m := min(left, compactChunk)
			left -= m
			var err error
			if hs, err = blocks.next(hs, m); err != nil {
				return err
			}
			nonzero := 0
			for _, d := range hs {
				if d&0x7f != 0 {
					nonzero++
				} else if d != 0 {
					return fmt.Errorf("%w: a zero with a sign", errCompact)
				}
			}
			ts = ts[:0]
			if nonzero > 0 {
				if ts, err = blocks.next(ts, nonzero); err != nil {
					return err
				}
			}
			nz := 0
			for _, d := range hs {
				k := o.next(cl)
				if d == 0 {
					if fn != nil {
						fn(k, 0, 0)
					}
					continue
				}
				h, t := uint(d&0x7f), uint(ts[nz])
				nz++
				if t >= h {
					return fmt.Errorf("%w: %d trailing zeros in %d bits", errCompact, t, h)
				}
				// Read the kept bits, put the leading one back, shift into
				// place.
				lo, hi := kept.read128(h - 1 - t)
				if h-1-t > 0 && lo&1 == 0 {
					return fmt.Errorf("%w: the kept bits end in a zero", errCompact)
				}
				if h-1-t < 64 {
					lo |= 1 << (h - 1 - t)
				} else {
					hi |= 1 << (h - 1 - t - 64)
				}
				lo, hi = shl128(lo, hi, t)
				if d>>7 == 1 {
					lo, hi = neg128(lo, hi)
				}
				if fn != nil {
					fn(k, lo, hi)
				}
			}
			if kept.err {
				return fmt.Errorf("%w: truncated kept bits", errCompact)
			}
		}
	}
	if len(blocks.b) != 0 {
		return fmt.Errorf("%w: %d bytes after the descriptions", errCompact, len(blocks.b))
	}
	if kept.pos != len(kept.b) || kept.acc != 0 {
		return fmt.Errorf("%w: trailing bits after the entries", errCompact)
	}
	return nil
}

// blockReader reads the blocks of a stream's descriptions.
type blockReader struct {
	b  []byte
	sc *huff0.Scratch
}

// next decodes the next block, of m bytes, into dst (reused).
func (r *blockReader) next(dst []byte, m int) ([]byte, error) {
	if len(r.b) < 1 {
		return nil, fmt.Errorf("%w: truncated descriptions", errCompact)
	}
	mode := r.b[0]
	r.b = r.b[1:]
	switch mode {
	case blockRaw:
		if len(r.b) < m {
			return nil, fmt.Errorf("%w: truncated descriptions", errCompact)
		}
		dst = append(dst[:0], r.b[:m]...)
		r.b = r.b[m:]
		return dst, nil
	case blockHuff:
	default:
		return nil, fmt.Errorf("%w: block mode %d", errCompact, mode)
	}
	if len(r.b) < 4 || uint64(binary.LittleEndian.Uint32(r.b)) > uint64(len(r.b)-4) {
		return nil, fmt.Errorf("%w: truncated descriptions", errCompact)
	}
	n := binary.LittleEndian.Uint32(r.b)
	block := r.b[4 : 4+n]
	r.b = r.b[4+n:]
	// A code takes at least a bit a byte: refuse blocks that claim more
	// bytes than that, before decoding them.
	if uint64(m) > 8*uint64(n) {
		return nil, fmt.Errorf("%w: a block of %d bytes cannot hold %d codes", errCompact, n, m)
	}
	sc, rest, err := huff0.ReadTable(block, r.sc)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCompact, err)
	}
	r.sc = sc
	if cap(dst) < m {
		dst = make([]byte, 0, m)
	}
	dst, err = sc.Decoder().Decompress1X(dst[:0:m], rest)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errCompact, err)
	}
	if len(dst) != m {
		return nil, fmt.Errorf("%w: a block of %d codes, want %d", errCompact, len(dst), m)
	}
	return dst, nil
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
