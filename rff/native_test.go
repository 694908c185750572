package rff

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dime-project/dime/vocab"
)

// TestNativeSincosAccuracy checks the sines and cosines of the C version of
// Transform (build tag openblas, AVX2 and FMA) against the 400-bit reference
// of TestSincosAccuracy, through a map of one input column whose four
// frequencies are 1, so that the phases are the inputs exactly. Measured on
// 40,000 phases: at most 2 ulps and 2.2e-16 in the table's range; beyond it
// (C's sin and cos) within 2.2e-16 of math.Sincos.
func TestNativeSincosAccuracy(t *testing.T) {
	if !nativeTransform {
		t.Skip("no native Transform in this build (tag openblas) or on this CPU (AVX2, FMA)")
	}
	const D = 4
	m := &Map{spec: Spec{Kernel: vocab.Gaussian, Sigma: 1, InputDim: 1, Features: D}, w: []float64{1, 1, 1, 1}}
	r := rand.New(rand.NewPCG(3, 4))
	var x []float64
	for i := 0; i < 10000; i++ {
		x = append(x, 3*r.NormFloat64(), (2*r.Float64()-1)*1000, (2*r.Float64()-1)*sincosMaxArg,
			float64(r.IntN(1<<12)-1<<11)*(2*math.Pi/sincosTableSize)+(2*r.Float64()-1)*1e-9)
	}
	beyond := []float64{sincosMaxArg, -sincosMaxArg, 1e9, -3e15, 1e300}
	x = append(x, beyond...)
	dst := make([]float64, len(x)*2*D)
	if !m.transformNative(dst, x, len(x), 1, nil, nil, 0) {
		t.Skip("native Transform not in use (pure-Go backend selected)")
	}
	var worstULP, worstAbs, worstBeyond float64
	for i, v := range x {
		for j := 0; j < D; j++ {
			c, s := dst[i*2*D+j], dst[i*2*D+D+j]
			if math.Abs(v) >= sincosMaxArg {
				s0, c0 := math.Sincos(v)
				worstBeyond = max(worstBeyond, math.Abs(s-s0), math.Abs(c-c0))
				continue
			}
			sr, cr := referenceSincos(v)
			worstULP = max(worstULP, ulpsApart(s, sr), ulpsApart(c, cr))
			worstAbs = max(worstAbs, math.Abs(s-sr), math.Abs(c-cr))
		}
	}
	t.Logf("%d phases: at most %g ulps and %.2g absolute; beyond the table's range %.2g from math.Sincos", len(x), worstULP, worstAbs, worstBeyond)
	if worstULP > 3 || worstAbs > 3.5e-16 || worstBeyond > 1e-15 {
		t.Errorf("native sincos: %g ulps, %.2g absolute, %.2g beyond the range; want at most 3 ulps, 3.5e-16, 1e-15", worstULP, worstAbs, worstBeyond)
	}
}

// TestNativeMatchesGo compares the C and Go versions of Transform on every
// kernel and variant, with an input column of zeros (skipped by both) and a
// number of frequencies that is not a multiple of 4. The phases x·w round
// differently where multiply-adds fuse: each version's phase is within about
// d·ε·Σₖ|xₖwₖ| of the exact one (ε = 2⁻⁵³), whatever the phase's own size, so
// features may differ by that much (in units of the feature scale 1/√D),
// plus the sines' and cosines' own few 1e-16. Measured: at most 0.54 of
// d·ε·Σₖ|xₖwₖ| + 4e-16; the test allows 2.
func TestNativeMatchesGo(t *testing.T) {
	if !nativeTransform {
		t.Skip("no native Transform in this build (tag openblas) or on this CPU (AVX2, FMA)")
	}
	const n, d, D = 200, 6, 31
	x := randomBlock(n, d, 5)
	for i := 0; i < n; i++ {
		x[i*d+2] = 0
	}
	scale := 1 / math.Sqrt(D)
	var worst float64
	for _, s := range allSpecs(d, D, 12) {
		m := mustNew(t, s)
		got, want := make([]float64, n*2*D), make([]float64, n*2*D)
		if !m.transformNative(got, x, n, scale, nil, nil, 0) {
			t.Skip("native Transform not in use (pure-Go backend selected)")
		}
		m.transformGo(want, x, n, scale)
		w := make([]float64, d)
		for j := 0; j < D; j++ {
			m.Frequency(w, j)
			for i := 0; i < n; i++ {
				var sumAbs float64
				for k, v := range w {
					sumAbs += math.Abs(x[i*d+k] * v)
				}
				allowed := d*0x1p-53*sumAbs + 4e-16
				for _, k := range []int{i*2*D + j, i*2*D + D + j} {
					ratio := math.Abs(got[k]-want[k]) / scale / allowed
					worst = max(worst, ratio)
					if ratio > 2 {
						t.Errorf("%s row %d frequency %d: C %.17g, Go %.17g (%.2g of the allowance)", name(s), i, j, got[k], want[k], ratio)
					}
				}
			}
		}
	}
	t.Logf("C and Go features differ by at most %.2g of d·ε·Σ|xw| + 4e-16", worst)
}

// TestNativeJointMatchesGo compares the C version of Joint with the Go
// version (which Joint uses with a permutation: here the identity) on the
// features of two maps, D not a multiple of 4. They differ only where a
// product and a sum fuse, and in the rounding of the final product by √D:
// measured, at most 1.1 times √D ulps of the larger of the two products plus
// an ulp of the result; the test allows 2.
func TestNativeJointMatchesGo(t *testing.T) {
	if !nativeTransform {
		t.Skip("no native Joint in this build (tag openblas) or on this CPU (AVX2, FMA)")
	}
	const n, D = 300, 37
	pair, err := NewPair(PairSpec{Kernel: vocab.Gaussian, Features: D, Seed: 3, SigmaX: 1, SigmaY: 0.7, DimX: 4, DimY: 3})
	if err != nil {
		t.Fatal(err)
	}
	px, _ := pair.X.Transform(nil, randomBlock(n, 4, 1), n)
	py, _ := pair.Y.Transform(nil, randomBlock(n, 3, 2), n)
	identity := make([]int, n)
	for i := range identity {
		identity[i] = i
	}
	got := make([]float64, n*2*D)
	if !jointNative(got, px, py, n, D, math.Sqrt(D)) {
		t.Skip("native Joint not in use (pure-Go backend selected)")
	}
	want, err := Joint(nil, px, py, n, D, identity)
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	for i := 0; i < n; i++ {
		x, y := px[i*2*D:(i+1)*2*D], py[i*2*D:(i+1)*2*D]
		for j := 0; j < D; j++ {
			for k, terms := range [2][2]float64{{x[j] * y[j], x[D+j] * y[D+j]}, {x[D+j] * y[j], x[j] * y[D+j]}} {
				big := max(math.Abs(terms[0]), math.Abs(terms[1]))
				ulp := math.Nextafter(big, math.Inf(1)) - big
				idx := i*2*D + k*D + j
				out := math.Abs(want[idx])
				allow := math.Sqrt(D)*ulp + (math.Nextafter(out, math.Inf(1)) - out)
				r := math.Abs(got[idx]-want[idx]) / allow
				worst = max(worst, r)
				if r > 2 {
					t.Errorf("row %d feature %d: C %.17g, Go %.17g", i, k*D+j, got[idx], want[idx])
				}
			}
		}
	}
	t.Logf("C and Go joint features differ by at most %.2g of √D ulps of the larger product plus an ulp of the result", worst)
}

// TestNative512MatchesAVX2 checks that the AVX-512 code of the C version
// gives the same features as its AVX2 code, to the bit (the same
// operations on each phase), with phases beyond the table's range among
// them and a number of frequencies that is not a multiple of 8, and the
// fused joint features too.
func TestNative512MatchesAVX2(t *testing.T) {
	if !native512 {
		t.Skip("no AVX-512 code in this build (tag openblas) or on this CPU")
	}
	const n, d = 300, 5
	x := randomBlock(n, d, 7)
	for i := 0; i < n; i++ {
		x[i*d+1] = 0
	}
	x[3*d] = 1e7 // phases beyond the table's range
	for _, D := range []int{37, 64, 256} {
		for _, s := range allSpecs(d, D, 12) {
			m := mustNew(t, s)
			px := randomBlock(n, 2*D, 8)
			got, want := make([]float64, n*2*D), make([]float64, n*2*D)
			gotJ, wantJ := make([]float64, n*2*D), make([]float64, n*2*D)
			scale := 1 / math.Sqrt(float64(D))
			if !m.transformNative(got, x, n, scale, px, gotJ, 1/scale) {
				t.Skip("native Transform not in use (pure-Go backend selected)")
			}
			native512 = false
			m.transformNative(want, x, n, scale, px, wantJ, 1/scale)
			native512 = true
			for i := range got {
				if math.Float64bits(got[i]) != math.Float64bits(want[i]) || math.Float64bits(gotJ[i]) != math.Float64bits(wantJ[i]) {
					t.Fatalf("%s D = %d, value %d: AVX-512 %v and %v, AVX2 %v and %v", name(s), D, i, got[i], gotJ[i], want[i], wantJ[i])
				}
			}
		}
	}
}
