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
	// B below P uses the P permutations of DiME.
	cfg.TestPermutations = 2
	r, _ = Estimate(x, y, cfg)
	if r.Test != TestPermutation || r.TestPermutations != 5 || r.PValue != 1.0/6 {
		t.Errorf("B = 2: test %v, B = %d, p = %v", r.Test, r.TestPermutations, r.PValue)
	}
	// By default the p-value is the HSIC test's, with no floor; DiME is
	// unchanged.
	dc := DefaultConfig()
	dc.Seed = cfg.Seed
	def, _ := Estimate(x, y, dc)
	if def.Test != TestHSIC || def.TestPermutations != 0 || !(def.PValue < 1e-10) || def.PValue != def.HSIC.PValue ||
		def.DiME != r.DiME || !(def.HSIC.Statistic > def.HSIC.NullMean) {
		t.Errorf("default test: %v, B = %d, p = %v, DiME %v (permutation run %v), HSIC %+v",
			def.Test, def.TestPermutations, def.PValue, def.DiME, r.DiME, def.HSIC)
	}
}

// TestHSICCalibrated is the reduced calibration study of the default p-value
// (the full one is CALIBRATION.md's): 550 independent datasets of 200 rows,
// 50 of each case, seeds from 700000 (test seeds: not those of the report).
// The cases are the null kinds (Gaussian, Student-t(3), discrete, mixed
// widths) with 1 and 3 columns per view, and three where the spectral tail
// alone was anticonservative: Student-t(3) in 10 columns, mixed widths in 5,
// and a near-identity K_X (mixed widths in 10 columns) with a discrete Y.
// The counts of p ≤ 0.05 and p ≤ 0.01 must lie in the binomial 99% bands
// around 5% and 1%. Measured: see the log line.
func TestHSICCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("550 datasets of 200 rows")
	}
	const n, perCase = 200, 50
	type view struct {
		kind synth.Kind
		d    int
	}
	var cases [][2]view
	for _, d := range []int{1, 3} {
		for _, k := range []synth.Kind{synth.Independent, synth.StudentT, synth.Discrete, synth.MixedWidths} {
			cases = append(cases, [2]view{{k, d}, {k, d}})
		}
	}
	cases = append(cases,
		[2]view{{synth.StudentT, 10}, {synth.StudentT, 10}},
		[2]view{{synth.MixedWidths, 5}, {synth.MixedWidths, 5}},
		[2]view{{synth.MixedWidths, 10}, {synth.Discrete, 1}})
	var below05, below01, sets int
	for _, c := range cases {
		for range perCase {
			seed := uint64(700000 + sets)
			// X from one draw, Y from another: independent by construction.
			x, _, err := synth.Generate(synth.Spec{Kind: c[0].kind, Dim: c[0].d, Seed: seed}, n)
			if err != nil {
				t.Fatal(err)
			}
			_, y, _ := synth.Generate(synth.Spec{Kind: c[1].kind, Dim: c[1].d, Seed: seed + 1e6}, n)
			r, err := HSICTest(mustGram(t, Gaussian, FixedSigma(c[0].d), x), mustGram(t, Gaussian, FixedSigma(c[1].d), y), HSICOptions{Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			if !(r.PValue > 0) || r.PValue > 1 {
				t.Fatalf("%v: p-value %v", c, r.PValue)
			}
			if r.PValue <= 0.05 {
				below05++
			}
			if r.PValue <= 0.01 {
				below01++
			}
			sets++
		}
	}
	lo05, hi05 := binomialInterval99(sets, 0.05)
	lo01, hi01 := binomialInterval99(sets, 0.01)
	t.Logf("%d of %d null datasets have p <= 0.05 (99%% band %d to %d), %d have p <= 0.01 (%d to %d)",
		below05, sets, lo05, hi05, below01, lo01, hi01)
	if below05 < lo05 || below05 > hi05 || below01 < lo01 || below01 > hi01 {
		t.Errorf("p <= 0.05: %d, p <= 0.01: %d of %d, outside [%d, %d] or [%d, %d]", below05, below01, sets, lo05, hi05, lo01, hi01)
	}
}
