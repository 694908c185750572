package stream

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// sumOf returns the Sum of the given number of splits of rows each, at D =
// 256 and the other settings at their defaults but the precision.
func sumOf(t testing.TB, precision vocab.Precision, splits, rows int) *Sum {
	t.Helper()
	cfg := DefaultConfig()
	// Raw columns: each split would otherwise choose its own scales on its
	// first rows, and the splits' states would not merge (a pipeline gives
	// them one Scaling); the encoding's size does not depend on it.
	cfg.Precision, cfg.Seed, cfg.Standardize = precision, 3, false
	cfg.Groups = 4 // the size measured below (7 groups, the default, take 7/4 as much)
	var s Sum
	for k := range splits {
		x, y, err := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 10, Noise: 0.3, Seed: uint64(100 + k)}, rows)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(10, 10, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Add(x.RawMatrix().Data, y.RawMatrix().Data, rows); err != nil {
			t.Fatal(err)
		}
		if err := s.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	return &s
}

// TestSumCompactSize checks what a distributed combine ships at D = 256
// (K = 4 groups, 28 accumulators of 131,328 entries; the default K = 7
// measured 33.8 and 35.3 MB for a 51.6 MB state): the encoding of the
// Sum of one split of 50,000 rows and of four splits of 20,000, at the
// default float32 products, is at most 30 MB (measured 19.8 and 20.5 MB,
// against 59 MB in 16 bytes an entry and 29.5 MB for one split's float64
// state), and less for a split of 1,000 rows (measured 17.1 MB). Each
// decodes to the same Sum. What a Sum holds in memory, built by Add or
// decoded, is measured as the live heap it adds, and is bounded by the same
// 30 MB (measured: 20.1 and 23.0 MB built by Add, 19.9 and 20.7 MB
// decoded; Add leaves up to an eighth spare). With float64 products
// the entries keep their 53 bits: 30.3 MB for one split of 50,000 rows
// (logged, not bounded here).
func TestSumCompactSize(t *testing.T) {
	if testing.Short() {
		t.Skip("D = 256 estimators (-short)")
	}
	size := func(precision vocab.Precision, splits, rows int) (int, uint64) {
		var s *Sum
		added := heldBy(func() { s = sumOf(t, precision, splits, rows) })
		enc, err := s.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Sum
		decoded := heldBy(func() {
			if err := back.UnmarshalBinary(enc); err != nil {
				t.Fatal(err)
			}
		})
		again, err := back.MarshalBinary()
		if err != nil || !bytes.Equal(again, enc) {
			t.Fatalf("%d splits of %d rows: the Sum does not re-encode identically (%v)", splits, rows, err)
		}
		a, _ := s.Estimator()
		b, _ := back.Estimator()
		sa, _ := a.MarshalBinary()
		sb, _ := b.MarshalBinary()
		if !bytes.Equal(sa, sb) {
			t.Fatalf("%d splits of %d rows: the decoded Sum gives another state", splits, rows)
		}
		t.Logf("%v products, %d splits of %d rows: %.1f MB (state %.1f MB); in memory %.1f MB added, %.1f MB decoded",
			precision, splits, rows, float64(len(enc))/1e6, float64(len(sa))/1e6, float64(added)/1e6, float64(decoded)/1e6)
		runtime.KeepAlive(s)
		runtime.KeepAlive(&back)
		return len(enc), max(added, decoded)
	}
	const limit = 30e6
	few, _ := size(vocab.Float32, 1, 1000)
	one, oneHeld := size(vocab.Float32, 1, 50000)
	four, fourHeld := size(vocab.Float32, 4, 20000)
	if one > limit || four > limit {
		t.Errorf("one split %d bytes, four %d: want at most %.0f", one, four, limit)
	}
	if oneHeld > limit || fourHeld > limit {
		t.Errorf("in memory, one split's Sum holds %d bytes, four splits' %d: want at most %.0f", oneHeld, fourHeld, limit)
	}
	if few >= one {
		t.Errorf("1,000 rows take %d bytes, 50,000 rows %d: want fewer", few, one)
	}
	size(vocab.Float64, 1, 50000)
}

// heldBy returns the bytes of heap that build leaves reachable: the growth
// of the live heap from before it ran to after, each measured after a
// collection (nothing else runs meanwhile).
func heldBy(build func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	return max(after.HeapAlloc, before.HeapAlloc) - before.HeapAlloc
}

// FuzzReadSum decodes arbitrary bytes as a Sum: an error matching ErrState,
// or a Sum that re-encodes to the same bytes.
func FuzzReadSum(f *testing.F) {
	x, y := rows(f, synth.Spec{Kind: synth.Gaussian, Dim: 1, MI: 1, Seed: 4}, 50)
	var s Sum
	for i := range 2 {
		e, _ := New(1, 1, testConfig(1, 2, 1, 1))
		e.Add(x[25*i:25*(i+1)], y[25*i:25*(i+1)], 25)
		s.Add(e)
	}
	good, err := s.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	var empty Sum
	none, _ := empty.MarshalBinary()
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(none)
	f.Add([]byte("dimeSM\x03\x01"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s Sum
		if err := s.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error %v does not match ErrState", err)
			}
			return
		}
		again, err := s.MarshalBinary()
		if err != nil || (data[len(sumMagic)] == sumVersion && !bytes.Equal(again, data)) {
			t.Fatalf("accepted sum does not re-encode identically: %v", err)
		}
		if !s.Empty() {
			s.Estimator() // may refuse values out of range, must not panic
		}
	})
}
