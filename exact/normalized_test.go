package exact

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/synth"
)

// TestNormalizedIdenticalViews checks that the normalized score is exactly
// 1.0 when Y is X (same columns, so the same bandwidth), for several
// kernels, bandwidth rules and kinds of data.
func TestNormalizedIdenticalViews(t *testing.T) {
	for _, c := range []struct {
		kind synth.Kind
		d, n int
		kern Kernel
		bw   Bandwidth
	}{
		{synth.Gaussian, 3, 150, Gaussian, Fixed()},
		{synth.StudentT, 2, 120, Laplacian, Median()},
		{synth.Discrete, 1, 100, Elliptical, Sigma(0.7)},
		{synth.MixedWidths, 5, 90, Gaussian, Median()},
	} {
		x, _ := toy(t, c.kind, c.d, 1, c.n, 8)
		cfg := DefaultConfig()
		cfg.Kernel, cfg.SigmaX, cfg.SigmaY = c.kern, c.bw, c.bw
		r, err := Estimate(x, mat.DenseCopyOf(x), cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.Normalized != 1 || r.DiMESelfX != r.DiMESelfY || r.DiMESelfX != r.DiME || !(r.DiME > 0) {
			t.Errorf("%v %v: Y = X gives normalized %v (DiME %v, self terms %v, %v)",
				c.kind, c.kern, r.Normalized, r.DiME, r.DiMESelfX, r.DiMESelfY)
		}
	}
}

// TestNormalizedScale checks the normalized score between the extremes: near
// 0 on independent data, inside (0, 1) and rising with the true mutual
// information on the paper's toy, NaN for a constant view or when skipped.
// Measured (independent: n = 150, d = 3, seeds 1 to 20): mean −0.0027 ±
// 0.0048 (within 3 standard errors of 0 is required), largest |value| 0.046
// (0.08 allowed); toy (n = 200): 0.30, 0.70, 0.94 at 1, 3, 6 nats.
func TestNormalizedScale(t *testing.T) {
	const sets = 20
	var sum, sq, worst float64
	for s := uint64(1); s <= sets; s++ {
		x, y := toy(t, synth.Independent, 3, 0, 150, s)
		cfg := DefaultConfig()
		cfg.Seed = s
		r, err := Estimate(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum += r.Normalized
		sq += r.Normalized * r.Normalized
		worst = math.Max(worst, math.Abs(r.Normalized))
		if want := r.DiME / math.Sqrt(r.DiMESelfX*r.DiMESelfY); math.Abs(r.Normalized-want) > 1e-15 {
			t.Fatalf("normalized %v, DiME / √(self terms) %v", r.Normalized, want)
		}
	}
	mean := sum / sets
	se := math.Sqrt((sq/sets-mean*mean)*sets/(sets-1)) / math.Sqrt(sets)
	t.Logf("independent: mean normalized %.4f ± %.4f, largest |value| %.4f", mean, se, worst)
	if math.Abs(mean) > 3*se || worst > 0.08 {
		t.Errorf("independent data: mean normalized %.4f ± %.4f, largest |value| %.4f", mean, se, worst)
	}
	prev := 0.0
	for _, mi := range []float64{1, 3, 6} {
		x, y := toy(t, synth.Gaussian, 3, mi, 200, 2)
		r, _ := Estimate(x, y, DefaultConfig())
		t.Logf("toy, %g nats: normalized %.3f", mi, r.Normalized)
		if !(r.Normalized > prev) || !(r.Normalized < 1) {
			t.Errorf("toy with %g nats: normalized %v after %v", mi, r.Normalized, prev)
		}
		prev = r.Normalized
	}
	x, y := toy(t, synth.Independent, 2, 0, 50, 3)
	cfg := DefaultConfig()
	cfg.SkipNormalized = true
	if r, _ := Estimate(x, y, cfg); !math.IsNaN(r.Normalized) || !math.IsNaN(r.DiMESelfX) {
		t.Errorf("skipped: normalized %v, self %v", r.Normalized, r.DiMESelfX)
	}
	constant := mat.NewDense(50, 1, nil)
	if r, err := Estimate(x, constant, DefaultConfig()); err != nil || !math.IsNaN(r.Normalized) || r.DiMESelfY != 0 {
		t.Errorf("constant Y: normalized %v, self term %v, error %v", r.Normalized, r.DiMESelfY, err)
	}
	if NormalizedScore(0.1, 0.2, 0.2) != 0.5 || !math.IsNaN(NormalizedScore(0.1, 0, 1)) || !math.IsNaN(NormalizedScore(0.1, math.NaN(), 1)) {
		t.Error("NormalizedScore")
	}
}
