package covariance

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// compactRoundTrip encodes s compactly, decodes it and checks that the
// decoded sum has the same plain encoding.
func compactRoundTrip(t *testing.T, s *ExactSum) []byte {
	t.Helper()
	enc, err := s.AppendCompact(nil)
	if err != nil {
		t.Fatal(err)
	}
	var back ExactSum
	if err := back.UnmarshalCompact(enc); err != nil {
		t.Fatal(err)
	}
	want, _ := s.MarshalBinary()
	if got, _ := back.MarshalBinary(); !bytes.Equal(got, want) {
		t.Fatal("compact round trip changed the sum")
	}
	if again, _ := back.AppendCompact(nil); !bytes.Equal(again, enc) {
		t.Fatal("compact encoding does not re-encode identically")
	}
	return enc
}

// withEntries returns a copy of s whose first entries are values (128-bit
// integers, low word first).
func withEntries(s *ExactSum, values [][2]uint64) ExactSum {
	t := *s
	v, err := s.values()
	if err != nil {
		panic(err)
	}
	for k, w := range values {
		v[2*k], v[2*k+1] = w[0], w[1]
	}
	t.setValues(v)
	return t
}

// TestExactSumCompact checks the compact encoding: round trips of real sums
// and of entries at the edges of the range (zero, ±1 unit of 2⁻⁷², ±2⁵⁵ − 1
// unit, every bit set, negative powers of two), its size against the plain
// encoding's, and the refusal of bad bytes, the receiver unchanged.
func TestExactSumCompact(t *testing.T) {
	var s ExactSum
	empty := compactRoundTrip(t, &s)
	for _, a := range shardAccumulators(t, 3) {
		if err := s.Add(a); err != nil {
			t.Fatal(err)
		}
	}
	enc := compactRoundTrip(t, &s)
	plain, _ := s.MarshalBinary()
	// The entries of three shards' float64 sums: at most 53 significant
	// bits each but for the exponents between the shards (measured 69.9
	// bits an entry with their descriptions, stored as they are in blocks
	// this small), against 128.
	entries := s.entries()
	bitsPerEntry := float64(8*(len(enc)-compactHeaderSize-checksumSize)) / float64(entries)
	if bitsPerEntry > 80 {
		t.Errorf("compact entries take %.1f bits each, want at most 80 (plain: 128)", bitsPerEntry)
	}
	t.Logf("compact %d bytes (%.1f bits an entry), plain %d", len(enc), bitsPerEntry, len(plain))

	max55 := [2]uint64{math.MaxUint64, 1<<(127-64) - 1} // 2¹²⁷ − 1 units
	values := [][2]uint64{{0, 0}, {1, 0}, {math.MaxUint64, math.MaxUint64}, max55, {1, 1 << 63}, {0, 1}, {0, 1 << 62}, {1 << 63, 0}, {math.MaxUint64, 0}}
	for _, v := range slices.Clone(values) {
		lo, hi := neg128(v[0], v[1])
		values = append(values, [2]uint64{lo, hi})
	}
	edges := withEntries(&s, values)
	compactRoundTrip(t, &edges)

	var back ExactSum
	if err := back.UnmarshalCompact(empty); err != nil || !back.Empty() {
		t.Fatalf("empty: %v, empty %v", err, back.Empty())
	}
	if err := back.UnmarshalCompact(enc); err != nil {
		t.Fatal(err)
	}
	flipped := bytes.Clone(enc)
	flipped[len(flipped)/2] ^= 1
	for name, data := range map[string][]byte{
		"truncated": enc[:len(enc)-9], "flipped": flipped, "plain": plain, "empty bytes": nil,
		"trailing": append(bytes.Clone(enc), 0), "header only": enc[:compactHeaderSize],
	} {
		if err := back.UnmarshalCompact(data); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
		if again, _ := back.AppendCompact(nil); !bytes.Equal(again, enc) {
			t.Fatalf("%s: receiver changed", name)
		}
	}
}

// FuzzUnmarshalCompact decodes arbitrary bytes as a compact exact sum: an
// error matching ErrFormat, or a sum that re-encodes to the same bytes.
func FuzzUnmarshalCompact(f *testing.F) {
	var s ExactSum
	for _, a := range shardAccumulators(f, 2) {
		s.Add(a)
	}
	good, _ := s.AppendCompact(nil)
	var e ExactSum
	empty, _ := e.AppendCompact(nil)
	f.Add(good)
	f.Add(good[:60])
	f.Add(empty)
	f.Add([]byte("dimeXC"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s ExactSum
		if err := s.UnmarshalCompact(data); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		if again, err := s.AppendCompact(nil); err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not re-encode identically")
		}
		if !s.Empty() {
			s.Accumulator()
		}
	})
}

// randomEntries returns the entries (values' layout) of a p×p triangle
// drawn from r: zeros, small and large magnitudes of either sign, with
// and without trailing zeros, and a whole class of zeros when zeroClass is
// a class.
func randomEntries(r *rand.Rand, p, zeroClass int) []uint64 {
	v := make([]uint64, p*(p+1))
	for k := range len(v) / 2 {
		var lo, hi uint64
		switch r.IntN(6) {
		case 0: // zero
		case 1: // a full 127-bit magnitude
			lo, hi = r.Uint64(), r.Uint64()>>1
		case 2: // a power of two
			if s := r.IntN(127); s < 64 {
				lo = 1 << s
			} else {
				hi = 1 << (s - 64)
			}
		default: // h bits, t of them trailing zeros
			h := 1 + r.IntN(127)
			lo, hi = r.Uint64(), r.Uint64()
			lo, hi = shl128(lo, hi, uint(128-h))
			lo, hi = shr128(lo, hi, uint(128-h)), hi>>(128-h) // h low bits
			if h < 64 {
				hi = 0
			}
			t := r.IntN(h)
			lo, hi = shr128(lo, hi, uint(t)), hi>>t
			lo, hi = shl128(lo|1, hi, uint(t))
		}
		if hi>>63 == 1 { // keep the magnitude below 2¹²⁷
			hi &^= 1 << 63
		}
		if r.IntN(2) == 0 {
			lo, hi = neg128(lo, hi)
		}
		v[2*k], v[2*k+1] = lo, hi
	}
	if zeroClass < classes {
		o := newClassOrder(zeroClass, p)
		for range classSize(zeroClass, p) {
			k := o.next(zeroClass)
			v[2*k], v[2*k+1] = 0, 0
		}
	}
	return v
}

// decodeStream returns the entries of a compact stream of a p×p triangle,
// checking that each index comes once.
func decodeStream(c []byte, p int) ([]uint64, error) {
	v := make([]uint64, p*(p+1))
	seen := make([]bool, p*(p+1)/2)
	var twice error
	err := walkCompact(c, p, func(k int, lo, hi uint64) {
		if seen[k] && twice == nil {
			twice = errors.New("an entry comes twice")
		}
		seen[k] = true
		v[2*k], v[2*k+1] = lo, hi
	})
	if err == nil {
		err = twice
	}
	return v, err
}

// TestCompactStream checks the stream of entries on random values, bit
// for bit: triangles whose classes fill several chunks (p = 600: 90,000
// cosine-sine entries against chunks of 65,536), small ones, a class of
// zeros and a triangle of zeros; and that every entry is visited once in
// the order of the classes.
func TestCompactStream(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 1))
	for _, c := range []struct{ p, zero int }{{600, classes}, {2, classes}, {8, classCosSin}, {64, classDiagonal}, {40, classSinSin}} {
		v := randomEntries(r, c.p, c.zero)
		enc := encodeCompact(v, c.p)
		back, err := decodeStream(enc, c.p)
		if err != nil {
			t.Fatalf("p = %d: %v", c.p, err)
		}
		if !slices.Equal(back, v) {
			t.Fatalf("p = %d: the entries changed", c.p)
		}
		if again := encodeCompact(back, c.p); !bytes.Equal(again, enc) {
			t.Fatalf("p = %d: not re-encoded identically", c.p)
		}
	}
	zeros := make([]uint64, 600*601)
	enc := encodeCompact(zeros, 600)
	if back, err := decodeStream(enc, 600); err != nil || !slices.Equal(back, zeros) {
		t.Fatalf("zeros: %v", err)
	}
	// The order: the diagonal, then cos·cos, cos·sin and sin·sin, each in
	// row order.
	const p = 6
	var got [][2]int
	rowOf := func(k int) (int, int) {
		for i := range p {
			if k < p-i {
				return i, i + k
			}
			k -= p - i
		}
		return -1, -1
	}
	for cl := range classes {
		o := newClassOrder(cl, p)
		for range classSize(cl, p) {
			i, j := rowOf(o.next(cl))
			got = append(got, [2]int{i, j})
		}
	}
	want := [][2]int{{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {0, 1}, {0, 2}, {1, 2},
		{0, 3}, {0, 4}, {0, 5}, {1, 3}, {1, 4}, {1, 5}, {2, 3}, {2, 4}, {2, 5}, {3, 4}, {3, 5}, {4, 5}}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// FuzzCompactStream decodes arbitrary bytes as the stream of entries of a
// small triangle (p from the first byte), below the checksum that guards
// it in an encoding: an error, or entries whose encoding decodes to the
// same entries.
func FuzzCompactStream(f *testing.F) {
	r := rand.New(rand.NewPCG(25, 2))
	for _, p := range []int{2, 8, 64} {
		f.Add(append([]byte{byte(p / 2)}, encodeCompact(randomEntries(r, p, classes), p)...))
	}
	f.Add(append([]byte{4}, encodeCompact(make([]uint64, 8*9), 8)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		p := 2 * (1 + int(data[0]%64))
		v, err := decodeStream(data[1:], p)
		if err != nil {
			if !errors.Is(err, errCompact) {
				t.Fatalf("error %v does not match errCompact", err)
			}
			return
		}
		back, err := decodeStream(encodeCompact(v, p), p)
		if err != nil || !slices.Equal(back, v) {
			t.Fatalf("accepted entries do not round trip: %v", err)
		}
	})
}
