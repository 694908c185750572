package covariance

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

var testMap = rff.PairSpec{Kernel: vocab.Gaussian, Features: 6, Seed: 3, SigmaX: 1, SigmaY: 1.4, DimX: 2, DimY: 3}

func block(n, d int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return x
}

// features returns the part features of n random rows of X and Y.
func features(t testing.TB, spec rff.PairSpec, n int, seed uint64) (px, py []float64) {
	t.Helper()
	pair, err := rff.NewPair(spec)
	if err != nil {
		t.Fatal(err)
	}
	x, y := block(n, spec.DimX, seed), block(n, spec.DimY, seed+1000)
	for i := range y { // make Y depend on X a little
		y[i] += 0.5 * x[(i/spec.DimY)*spec.DimX]
	}
	px, _ = pair.X.Transform(nil, x, n)
	py, _ = pair.Y.Transform(nil, y, n)
	return px, py
}

func mustNew(t testing.TB, d Description) *Accumulator {
	t.Helper()
	a, err := New(d)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func maxAbsDiff(a, b mat.Matrix) float64 {
	r, c := a.Dims()
	var m float64
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			m = math.Max(m, math.Abs(a.At(i, j)-b.At(i, j)))
		}
	}
	return m
}

// TestSpectrumEqualsGram checks that the eigenvalues of the covariance equal
// the nonzero eigenvalues of the RFF Gram matrix ΦΦᵀ/N, with N both below
// and above the feature dimension, and that the entropies agree.
func TestSpectrumEqualsGram(t *testing.T) {
	for _, n := range []int{5, 40} {
		px, _ := features(t, testMap, n, 1)
		p := 2 * testMap.Features
		acc := mustNew(t, Description{Map: testMap, Part: PartX})
		if err := acc.Add(px, n); err != nil {
			t.Fatal(err)
		}
		spec, err := acc.Spectrum(nil)
		if err != nil {
			t.Fatal(err)
		}
		phi := mat.NewDense(n, p, px)
		gram := mat.NewSymDense(n, nil)
		gram.SymOuterK(1/float64(n), phi)
		var es mat.EigenSym
		es.Factorize(gram, false)
		g := es.Values(nil)
		// The largest min(n, p) eigenvalues of each must agree; the rest are 0.
		k := min(n, p)
		a, b := spec[len(spec)-k:], g[len(g)-k:]
		for i := range a {
			if math.Abs(a[i]-b[i]) > 1e-10 {
				t.Errorf("n %d: eigenvalue %d: covariance %.17g, Gram %.17g", n, i, a[i], b[i])
			}
		}
		for _, v := range spec[:len(spec)-k] {
			if math.Abs(v) > 1e-12 {
				t.Errorf("n %d: extra eigenvalue %g, want 0", n, v)
			}
		}
		var total float64
		for _, v := range spec {
			total += v
		}
		if math.Abs(total-1) > 1e-12 {
			t.Errorf("n %d: trace %v, want 1", n, total)
		}
		for _, alpha := range []float64{0.5, 1, 1.01, 2, 3} {
			sc, err := acc.Entropy(alpha)
			if err != nil {
				t.Fatal(err)
			}
			sg, err := exact.MatrixEntropy(gram, alpha)
			if err != nil {
				t.Fatal(err)
			}
			// alpha < 1 amplifies round-off eigenvalues (see exact.SpectrumEntropy).
			tol := 1e-10
			if alpha < 1 {
				tol = 1e-6
			}
			if math.Abs(sc-sg) > tol {
				t.Errorf("n %d alpha %v: entropy %.15g from covariance, %.15g from Gram", n, alpha, sc, sg)
			}
		}
	}
}

// TestProductOfMarginalsAllPairs checks C⊥ against the mean of
// φ(x_i, y_k)φ(x_i, y_k)ᵀ over all N² pairs, for every kernel.
func TestProductOfMarginalsAllPairs(t *testing.T) {
	const n = 9
	for _, k := range vocab.Kernels() {
		spec := testMap
		spec.Kernel = k
		px, py := features(t, spec, n, 2)
		D, p := spec.Features, 2*spec.Features
		ax, ay := mustNew(t, Description{Map: spec, Part: PartX}), mustNew(t, Description{Map: spec, Part: PartY})
		ax.Add(px, n)
		ay.Add(py, n)
		got, err := ProductOfMarginals(nil, ax, ay)
		if err != nil {
			t.Fatal(err)
		}
		all := mustNew(t, Description{Map: spec, Part: PartPermuted})
		for i := 0; i < n; i++ {
			for kk := 0; kk < n; kk++ {
				row, err := rff.Joint(nil, px[i*p:(i+1)*p], py[kk*p:(kk+1)*p], 1, D, nil)
				if err != nil {
					t.Fatal(err)
				}
				all.Add(row, 1)
			}
		}
		want, _ := all.Covariance(nil)
		// Measured: 2e-17.
		if d := maxAbsDiff(got, want); d > 1e-12 {
			t.Errorf("%v: C⊥ differs from the all-pairs mean by %g", k, d)
		}
		if tr := mat.Trace(got); math.Abs(tr-1) > 1e-12 {
			t.Errorf("%v: trace of C⊥ = %v", k, tr)
		}
	}
}

// TestMergeEqualsUnion checks, in the pattern of hash/marshal_test.go, that
// accumulating part of the rows, marshalling, unmarshalling into a fresh
// value, merging the rest and accumulating it directly all give the same sum.
func TestMergeEqualsUnion(t *testing.T) {
	const n = 50
	px, _ := features(t, testMap, n, 4)
	p := 2 * testMap.Features
	desc := Description{Map: testMap, Part: PartX}
	whole := mustNew(t, desc)
	whole.Add(px, n)
	for _, cut := range []int{0, 1, 17, 49, 50} {
		first, second := mustNew(t, desc), mustNew(t, desc)
		first.Add(px[:cut*p], cut)
		second.Add(px[cut*p:], n-cut)
		b, err := first.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var restored Accumulator
		if err := restored.UnmarshalBinary(b); err != nil {
			t.Fatal(err)
		}
		if err := restored.Merge(second); err != nil {
			t.Fatal(err)
		}
		if restored.Weight() != n {
			t.Errorf("cut %d: weight %v, want %d", cut, restored.Weight(), n)
		}
		// Measured: 1e-16 (summation order only).
		if d := maxAbsDiff(restored.Sum(), whole.Sum()); d > 1e-12 {
			t.Errorf("cut %d: merged sum differs from the union by %g", cut, d)
		}
		// Continuing both with the same rows keeps them equal.
		more, _ := features(t, testMap, 5, 99)
		restored.Add(more, 5)
		direct := mustNew(t, desc)
		direct.Add(px, n)
		direct.Add(more, 5)
		if d := maxAbsDiff(restored.Sum(), direct.Sum()); d > 1e-12 {
			t.Errorf("cut %d: after more rows, differs by %g", cut, d)
		}
	}
}

// TestMarshalRoundTrip checks that encoding is bit-exact both ways.
func TestMarshalRoundTrip(t *testing.T) {
	px, _ := features(t, testMap, 13, 5)
	a := mustNew(t, Description{Map: testMap, Part: PartPermuted, Index: 3})
	a.Add(px, 13)
	a.Scale(0.75)
	b1, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c Accumulator
	if err := c.UnmarshalBinary(b1); err != nil {
		t.Fatal(err)
	}
	if c.Description() != a.Description() || math.Float64bits(c.Weight()) != math.Float64bits(a.Weight()) {
		t.Errorf("description or weight changed: %+v %v", c.Description(), c.Weight())
	}
	ra, rc := a.Sum().RawSymmetric(), c.Sum().RawSymmetric()
	for i := 0; i < ra.N; i++ {
		for j := i; j < ra.N; j++ {
			if math.Float64bits(ra.Data[i*ra.Stride+j]) != math.Float64bits(rc.Data[i*rc.Stride+j]) {
				t.Fatalf("entry (%d, %d) changed", i, j)
			}
		}
	}
	b2, _ := c.MarshalBinary()
	if !bytes.Equal(b1, b2) {
		t.Error("re-encoding differs")
	}
	prefix := []byte("prefix")
	b3, _ := a.AppendBinary(slices.Clone(prefix))
	if !bytes.Equal(b3[:len(prefix)], prefix) || !bytes.Equal(b3[len(prefix):], b1) {
		t.Error("AppendBinary does not append the encoding")
	}
}

// TestUnmarshalRejects checks that truncated, corrupted and foreign bytes are
// refused with ErrFormat and leave the receiver unchanged.
func TestUnmarshalRejects(t *testing.T) {
	px, _ := features(t, testMap, 7, 6)
	a := mustNew(t, Description{Map: testMap, Part: PartX})
	a.Add(px, 7)
	good, _ := a.MarshalBinary()
	keep := mustNew(t, Description{Map: testMap, Part: PartY})
	keepBytes, _ := keep.MarshalBinary()
	check := func(name string, data []byte) {
		t.Helper()
		err := keep.UnmarshalBinary(data)
		if !errors.Is(err, ErrFormat) {
			t.Errorf("%s: error %v, want ErrFormat", name, err)
		}
		if now, _ := keep.MarshalBinary(); !bytes.Equal(now, keepBytes) {
			t.Fatalf("%s: receiver changed", name)
		}
	}
	for n := 0; n < len(good); n += 1 + n/8 {
		check("truncated", good[:n])
	}
	check("trailing byte", append(slices.Clone(good), 0))
	for _, i := range []int{0, 6, 7, 8, 12, 40, 52, 70, len(good) - 1} {
		bad := slices.Clone(good)
		bad[i] ^= 0x10
		check("flipped byte", bad)
	}
	check("foreign", []byte("PAR1 this is not an accumulator at all, but long enough to pass the size check........"))
	check("empty", nil)
}

func FuzzUnmarshalBinary(f *testing.F) {
	px, _ := features(f, testMap, 3, 8)
	a, _ := New(Description{Map: testMap, Part: PartJoint})
	a.Add(px, 3)
	good, _ := a.MarshalBinary()
	f.Add(good)
	f.Add(good[:70])
	f.Add([]byte("dimeCV"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var acc Accumulator
		if err := acc.UnmarshalBinary(data); err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error %v does not match ErrFormat", err)
			}
			return
		}
		// Anything accepted re-encodes to the same bytes and is usable.
		again, err := acc.MarshalBinary()
		if err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted bytes do not re-encode identically")
		}
		if acc.Weight() > 0 {
			acc.Entropy(1.01)
		}
	})
}

func TestMergeRules(t *testing.T) {
	px, _ := features(t, testMap, 4, 9)
	desc := Description{Map: testMap, Part: PartJoint}
	a := mustNew(t, desc)
	a.Add(px, 4)
	before, _ := a.MarshalBinary()

	// nil and zero-value others are no-ops.
	if err := a.Merge(nil); err != nil {
		t.Error(err)
	}
	if err := a.Merge(&Accumulator{}); err != nil {
		t.Error(err)
	}
	// A zero receiver adopts the other.
	var z Accumulator
	if err := z.Merge(a); err != nil || z.Description() != desc || z.Weight() != 4 {
		t.Errorf("zero receiver: %v %+v %v", err, z.Description(), z.Weight())
	}
	// Incompatible descriptions are refused and leave a unchanged.
	other := testMap
	other.SigmaY = 2
	for _, d := range []Description{
		{Map: testMap, Part: PartX},
		{Map: testMap, Part: PartPermuted, Index: 1},
		{Map: other, Part: PartJoint},
		{Map: rff.PairSpec{Kernel: vocab.Gaussian, Features: 7, Seed: 3, SigmaX: 1, SigmaY: 1.4, DimX: 2, DimY: 3}, Part: PartJoint},
	} {
		o := mustNew(t, d)
		err := a.Merge(o)
		if !errors.Is(err, ErrIncompatible) {
			t.Errorf("%+v: error %v", d, err)
		}
		if now, _ := a.MarshalBinary(); !bytes.Equal(now, before) {
			t.Fatalf("%+v: receiver changed by a refused merge", d)
		}
	}
	if err := a.Merge(mustNew(t, Description{Map: other, Part: PartJoint})); err == nil || !strings.Contains(err.Error(), "sigmas") {
		t.Errorf("message does not say what differs: %v", err)
	}
}

func TestScaleResetAndErrors(t *testing.T) {
	px, _ := features(t, testMap, 6, 10)
	a := mustNew(t, Description{Map: testMap, Part: PartX})
	a.Add(px, 6)
	c1, _ := a.Covariance(nil)
	s1 := mat.NewSymDense(a.Dim(), nil)
	s1.CopySym(a.Sum())
	if err := a.Scale(0.25); err != nil {
		t.Fatal(err)
	}
	if a.Weight() != 1.5 {
		t.Errorf("weight after Scale(0.25) = %v", a.Weight())
	}
	c2, _ := a.Covariance(nil)
	if d := maxAbsDiff(c1, c2); d > 1e-15 {
		t.Errorf("covariance changed by scaling: %g", d)
	}
	var scaled mat.SymDense
	scaled.ScaleSym(0.25, s1)
	if d := maxAbsDiff(&scaled, a.Sum()); d != 0 {
		t.Errorf("sum not scaled exactly: %g", d)
	}
	for _, f := range []float64{-1, math.NaN(), math.Inf(1)} {
		if err := a.Scale(f); !errors.Is(err, ErrInvalid) {
			t.Errorf("Scale(%v): %v", f, err)
		}
	}
	a.Reset()
	if a.Weight() != 0 || mat.Trace(a.Sum()) != 0 {
		t.Error("Reset left rows")
	}
	if _, err := a.Entropy(1); !errors.Is(err, ErrEmpty) {
		t.Errorf("entropy of empty accumulator: %v", err)
	}
	if _, err := a.Spectrum(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("spectrum of empty accumulator: %v", err)
	}
	if err := a.Add(px[:5], 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("short block: %v", err)
	}
	var z Accumulator
	if err := z.Add(px, 6); !errors.Is(err, ErrInvalid) {
		t.Errorf("Add to zero value: %v", err)
	}
	if _, err := New(Description{Map: testMap, Part: PartX, Index: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative index: %v", err)
	}
	if _, err := New(Description{Map: testMap, Part: PartSelfY + 1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unknown part: %v", err)
	}
	ay := mustNew(t, Description{Map: testMap, Part: PartY})
	if _, err := ProductOfMarginals(nil, ay, a); !errors.Is(err, ErrIncompatible) {
		t.Errorf("swapped parts: %v", err)
	}
	a.Add(px, 6)
	if _, err := ProductOfMarginals(nil, a, ay); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty Y part: %v", err)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	spec := testMap
	spec.Features = 128
	px, _ := features(t, spec, 256, 11)
	a := mustNew(t, Description{Map: spec, Part: PartX})
	if allocs := testing.AllocsPerRun(10, func() { a.Add(px, 256) }); allocs != 0 {
		t.Errorf("%v allocations per Add", allocs)
	}
	if err := a.SetPrecision(Float32); err != nil {
		t.Fatal(err)
	}
	if allocs := testing.AllocsPerRun(10, func() { a.Add(px, 256) }); allocs != 0 {
		t.Errorf("%v allocations per Add with float32 products", allocs)
	}
}

// TestAddWeighted checks that rows pre-scaled by √w add w φφᵀ and weight w.
func TestAddWeighted(t *testing.T) {
	px, _ := features(t, testMap, 5, 12)
	p := 2 * testMap.Features
	w := []float64{1, 0.5, 0.25, 2, 0.1}
	scaled := make([]float64, len(px))
	var total float64
	want := mat.NewSymDense(p, nil)
	for i, wi := range w {
		for j := 0; j < p; j++ {
			scaled[i*p+j] = px[i*p+j] * math.Sqrt(wi)
		}
		total += wi
		row := mat.NewDense(p, 1, px[i*p:(i+1)*p]) // a column: SymOuterK forms row·rowᵀ
		var outer mat.SymDense
		outer.SymOuterK(wi, row)
		want.AddSym(want, &outer)
	}
	a := mustNew(t, Description{Map: testMap, Part: PartX})
	if err := a.AddWeighted(scaled, 5, total); err != nil {
		t.Fatal(err)
	}
	if a.Weight() != total {
		t.Errorf("weight %v, want %v", a.Weight(), total)
	}
	if d := maxAbsDiff(a.Sum(), want); d > 1e-15 {
		t.Errorf("weighted sum differs by %g", d)
	}
	if err := a.AddWeighted(scaled, 5, -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative weight: %v", err)
	}
}

func TestParsePrecision(t *testing.T) {
	for _, p := range []Precision{Float64, Float32} {
		for _, name := range []string{p.String(), strings.ToUpper(p.String())} {
			got, err := ParsePrecision(name)
			if err != nil || got != p {
				t.Errorf("ParsePrecision(%q) = %v, %v; want %v", name, got, err, p)
			}
		}
	}
	for _, name := range []string{"", "float16", "double", "float64 "} {
		if _, err := ParsePrecision(name); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParsePrecision(%q) error %v, want ErrInvalid", name, err)
		}
	}
}
