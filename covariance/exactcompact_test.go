package covariance

import (
	"bytes"
	"errors"
	"math"
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
	r, w := bitReader{b: s.c}, newBitWriter(len(s.c))
	for k := range s.entries() {
		lo, hi := r.entry()
		if k < len(values) {
			lo, hi = values[k][0], values[k][1]
		}
		w.entry(lo, hi)
	}
	t.c = w.done()
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
	// bits each but for the exponents between the shards (measured 69 bits
	// an entry with the 15 of the code), against 128.
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
