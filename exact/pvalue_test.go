package exact

import (
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/synth"
)

// binomialInterval99 returns the central 99% interval of Binomial(n, p).
func binomialInterval99(n int, p float64) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: p}
	for lo = 0; b.CDF(float64(lo)) < 0.005; lo++ {
	}
	for hi = n; hi > 0 && b.CDF(float64(hi-1)) >= 0.995; hi-- {
	}
	return lo, hi
}

// TestPermutationPValueCalibrated checks the permutation test on 200
// independent datasets (n = 40, B = 99): the number with p ≤ 0.05 must lie
// in the binomial 99% interval around 5% (B = 99 makes P(p ≤ 0.05) exactly
// 0.05 under exchangeability). Measured: see the log line.
func TestPermutationPValueCalibrated(t *testing.T) {
	const sets = 200
	cfg := DefaultConfig()
	cfg.TestPermutations = 99
	below := 0
	for s := 0; s < sets; s++ {
		x, y := toy(t, synth.Independent, 2, 0, 40, uint64(5000+s))
		cfg.Seed = uint64(s + 1)
		r, err := Estimate(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if r.PValue < 0.01 || r.PValue > 1 || r.TestPermutations != 99 {
			t.Fatalf("p-value %v with B = %d", r.PValue, r.TestPermutations)
		}
		if r.PValue <= 0.05 {
			below++
		}
	}
	lo, hi := binomialInterval99(sets, 0.05)
	t.Logf("%d of %d null datasets have p <= 0.05 (99%% interval %d to %d)", below, sets, lo, hi)
	if below < lo || below > hi {
		t.Errorf("%d of %d null p-values <= 0.05, outside [%d, %d]", below, sets, lo, hi)
	}
	// Dependent data reaches the floor 1/(B+1).
	x, y := toy(t, synth.Sine, 2, 0, 200, 1)
	r, _ := Estimate(x, y, cfg)
	if r.PValue != 0.01 {
		t.Errorf("sine data: p = %v, want 1/(99+1)", r.PValue)
	}
	// By default the P DiME permutations are the null replicates.
	r, _ = Estimate(x, y, DefaultConfig())
	if r.TestPermutations != 5 || r.PValue != 1.0/6 {
		t.Errorf("default test: B = %d, p = %v", r.TestPermutations, r.PValue)
	}
}
