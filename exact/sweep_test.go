package exact

import (
	"errors"
	"math"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestAutoBandwidth checks that the auto rule picks the sweep's argmax, an
// interior point of the grid, with DiME at least that of the fixed rule, and
// that Estimate with the auto rule uses it.
func TestAutoBandwidth(t *testing.T) {
	x, y := toy(t, synth.Sine, 2, 0, 300, 6)
	cfg := DefaultConfig()
	cfg.SigmaX, cfg.SigmaY = Auto(), Auto()
	points, err := Sweep(x, y, cfg, AutoScales())
	if err != nil {
		t.Fatal(err)
	}
	best := BestDiME(points)
	if best == 0 || best == len(points)-1 {
		t.Errorf("auto picks the end of the grid: scale %v", points[best].Scale)
	}
	for i := 1; i < len(points); i++ { // scales increase: MI must not
		if points[i].Result.MutualInformation > points[i-1].Result.MutualInformation+1e-12 {
			t.Errorf("MI rises with sigma at scale %v", points[i].Scale)
		}
	}
	sx, sy, err := ResolveBandwidths(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sx != points[best].SigmaX || sy != points[best].SigmaY {
		t.Errorf("ResolveBandwidths = %v, %v; sweep argmax %v, %v", sx, sy, points[best].SigmaX, points[best].SigmaY)
	}
	auto, err := Estimate(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	fixed, _ := Estimate(x, y, DefaultConfig())
	if auto.SigmaX != sx || auto.DiME < fixed.DiME {
		t.Errorf("auto: sigma %v DiME %v; fixed: sigma %v DiME %v", auto.SigmaX, auto.DiME, fixed.SigmaX, fixed.DiME)
	}
	t.Logf("auto sigma %.3f (scale %.3f): DiME %.4f; fixed sigma %.3f: DiME %.4f", auto.SigmaX, points[best].Scale, auto.DiME, fixed.SigmaX, fixed.DiME)

	// One view auto, the other explicit: only the auto view is swept.
	cfg.SigmaY = Sigma(0.7)
	points, err = Sweep(x, y, cfg, []float64{0.5, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range points {
		if p.SigmaY != 0.7 || math.Abs(p.SigmaX-p.Scale*FixedSigma(2)) > 1e-15 {
			t.Errorf("scale %v: sigmas %v, %v", p.Scale, p.SigmaX, p.SigmaY)
		}
	}
	if _, err := Sweep(x, y, cfg, []float64{1, -1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("negative scale: %v", err)
	}
	if _, err := Resolve(Auto(), Gaussian, x); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("auto resolved from one view: %v", err)
	}
	if b, err := ParseBandwidth("auto"); err != nil || b != Auto() || b.String() != "auto" {
		t.Errorf("ParseBandwidth(auto) = %v, %v", b, err)
	}
}
