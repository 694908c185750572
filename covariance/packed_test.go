package covariance

import (
	"bytes"
	"os"
	"slices"
	"testing"

	"github.com/dime-project/dime/internal/linalg"
)

// TestEncodingGolden checks that the encoding did not change with the
// packed storage: the files in testdata were written by MarshalBinary when
// the accumulator stored a dense matrix (D = 20, 300 rows of X's features
// in two Adds, float64 and float32 products, pure-Go build on an AVX-512
// CPU). Each decodes and encodes back to the same bytes; where this build
// and CPU run the same code as the one that wrote them, adding the same
// rows gives the same bytes too (the packed triangle receives the same
// sums, to the bit, as the dense matrix did: linalg.TestAddAtATriangle).
// The OpenBLAS build's float64 bytes of these rows differ from the pure
// build's already with the dense storage (measured on the commit before),
// so the sums are compared in the pure build only.
func TestEncodingGolden(t *testing.T) {
	spec := testMap
	spec.Features = 20
	px, _ := features(t, spec, 300, 5)
	p := 2 * spec.Features
	sameKernels := linalg.Current() == linalg.Gonum &&
		slices.Contains(linalg.Kernels(), "syrk64=avx512-8x24") && slices.Contains(linalg.Kernels(), "syrk32=avx512-8x48")
	for _, prec := range []Precision{Float64, Float32} {
		golden, err := os.ReadFile("testdata/accumulator-v1-" + prec.String() + ".bin")
		if err != nil {
			t.Fatal(err)
		}
		var dec Accumulator
		if err := dec.UnmarshalBinary(golden); err != nil {
			t.Fatalf("%v: %v", prec, err)
		}
		if b, err := dec.MarshalBinary(); err != nil || !bytes.Equal(b, golden) {
			t.Errorf("%v: decoding and encoding the golden file does not give its bytes back (%v)", prec, err)
		}
		if !sameKernels {
			t.Logf("%v: backend %v, kernels %v, not those that wrote the golden files: sums not compared", prec, linalg.Current(), linalg.Kernels())
			continue
		}
		a := mustNew(t, Description{Map: spec, Part: PartX, Index: 2})
		if err := a.SetPrecision(prec); err != nil {
			t.Fatal(err)
		}
		if err := a.Add(px[:256*p], 256); err != nil {
			t.Fatal(err)
		}
		if err := a.Add(px[256*p:], 44); err != nil {
			t.Fatal(err)
		}
		if b, _ := a.MarshalBinary(); !bytes.Equal(b, golden) {
			t.Errorf("%v: the sums of the same rows differ from the golden file's", prec)
		}
	}
}

// TestPackedMemory is the memory guard of the accumulators: every way of
// making one (New, a Merge into the zero value, UnmarshalBinary, SumGroups,
// ExactSum.Accumulator) stores linalg.TriangleLen(2D) float64, which at the
// dime commands' default D = 256 is 135168 values (1.03 MiB), 51.6% of the
// dense 512×512 matrix (2 MiB) they stored before, and at most
// n(n+1)/2 + 7.5n values for every n.
func TestPackedMemory(t *testing.T) {
	if got, want := linalg.TriangleLen(512), 135168; got != want {
		t.Errorf("TriangleLen(512) = %d, want %d", got, want)
	}
	spec := testMap
	spec.Features = 37
	p := 2 * spec.Features
	px, _ := features(t, spec, 50, 9)
	a := mustNew(t, Description{Map: spec, Part: PartX})
	if err := a.Add(px, 50); err != nil {
		t.Fatal(err)
	}
	var merged Accumulator
	if err := merged.Merge(a); err != nil {
		t.Fatal(err)
	}
	enc, _ := a.MarshalBinary()
	var dec Accumulator
	if err := dec.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	sum, err := SumGroups(a, &dec)
	if err != nil {
		t.Fatal(err)
	}
	var ex ExactSum
	if err := ex.Add(a); err != nil {
		t.Fatal(err)
	}
	fromExact, err := ex.Accumulator()
	if err != nil {
		t.Fatal(err)
	}
	want := linalg.TriangleLen(p)
	if bound := p*(p+1)/2 + p*15/2; want > bound {
		t.Errorf("TriangleLen(%d) = %d > n(n+1)/2 + 7.5n = %d", p, want, bound)
	}
	for name, acc := range map[string]*Accumulator{"New": a, "Merge": &merged, "UnmarshalBinary": &dec, "SumGroups": sum, "ExactSum": fromExact} {
		if n := cap(acc.sum.Data); n != want {
			t.Errorf("%s: %d values stored, want %d", name, n, want)
		}
	}
}
