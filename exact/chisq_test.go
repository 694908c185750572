package exact

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestWeightedChiSquareChi2 checks the saddlepoint tail against the exact
// chi-square survival function: λ = (1, …, 1) (k ones) and μ = (1) make T a
// χ²_k. The Lugannani–Rice error for χ²_k is largest at k = 1 and grows
// slowly into the tail; measured worst relative errors from survival 0.5
// down to 1e-12: 8.3% (k = 1, 3.4% at 1e-3), 2.2% (k = 3), 0.13% (k = 20).
// The tolerances are those, rounded up.
func TestWeightedChiSquareChi2(t *testing.T) {
	for _, c := range []struct {
		k   int
		tol float64
	}{{1, 0.1}, {3, 0.03}, {20, 0.002}} {
		lam := make([]float64, c.k)
		for i := range lam {
			lam[i] = 1
		}
		chi := distuv.ChiSquared{K: float64(c.k)}
		worst := 0.0
		for _, p := range []float64{0.5, 0.1, 0.05, 0.01, 1e-3, 1e-6, 1e-12} {
			q := chi.Quantile(1 - p)
			if p < 1e-3 { // Quantile(1 − p) loses p to round-off: bisect the survival.
				q = survivalQuantile(chi.Survival, p)
			}
			got := WeightedChiSquareSurvival(q, lam, []float64{1})
			want := chi.Survival(q)
			rel := math.Abs(got/want - 1)
			worst = math.Max(worst, rel)
			if rel > c.tol {
				t.Errorf("chi2_%d at survival %g: got %g, want %g (relative error %.3g > %g)", c.k, p, got, want, rel, c.tol)
			}
		}
		t.Logf("chi2_%d: worst relative error %.3g", c.k, worst)
	}
}

// survivalQuantile returns q with sf(q) = p by bisection on [0, 1e4].
func survivalQuantile(sf func(float64) float64, p float64) float64 {
	lo, hi := 0.0, 1e4
	for range 200 {
		mid := (lo + hi) / 2
		if sf(mid) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// kernelLikeSpectrum returns n decreasing weights with geometric decay
// rate^i, the shape of a Gaussian kernel's spectrum, scaled to sum 1.
func kernelLikeSpectrum(n int, rate float64) []float64 {
	v := make([]float64, n)
	var s float64
	for i := range v {
		v[i] = math.Pow(rate, float64(i))
		s += v[i]
	}
	for i := range v {
		v[i] /= s
	}
	return v
}

// TestWeightedChiSquareSurvival checks the tail against 200,000 simulated
// draws of T for spectra shaped like those of Gram matrices (fast and slow
// geometric decay, and a discrete view with 4 values). At simulated tail
// probability p the Monte Carlo standard error is √(p(1−p)/200000): 6.7e-4
// at 0.1, 2.2e-4 at 0.01, 7e-5 at 1e-3. Tolerance: 5 standard errors plus 3%
// of p for the saddlepoint itself (measured with 400,000 draws: within 2.5%
// at 0.01, 13% at 1e-3 for the discrete view, 1.3 standard errors).
func TestWeightedChiSquareSurvival(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 simulated draws per case")
	}
	const draws = 200_000
	cases := []struct {
		name    string
		lam, mu []float64
	}{
		{"fast decay", kernelLikeSpectrum(8, 0.3), kernelLikeSpectrum(6, 0.5)},
		{"slow decay", kernelLikeSpectrum(20, 0.85), kernelLikeSpectrum(20, 0.8)},
		{"discrete y", kernelLikeSpectrum(20, 0.7), []float64{0.4, 0.3, 0.2, 0.1}},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, c := range cases {
		sim := make([]float64, draws)
		for k := range sim {
			var s float64
			for _, l := range c.lam {
				for _, m := range c.mu {
					z := r.NormFloat64()
					s += l * m * z * z
				}
			}
			sim[k] = s
		}
		slices.Sort(sim)
		for _, p := range []float64{0.5, 0.1, 0.01, 1e-3} {
			q := sim[int(float64(draws)*(1-p))]
			got := WeightedChiSquareSurvival(q, c.lam, c.mu)
			se := math.Sqrt(p * (1 - p) / draws)
			if math.Abs(got-p) > 5*se+0.03*p {
				t.Errorf("%s: P(T ≥ %.5g) = %.5g, simulated %.5g", c.name, q, got, p)
			}
			t.Logf("%s: simulated %g, saddlepoint %.4g", c.name, p, got)
		}
	}
}

// TestMixtureTruncation checks that keeping the products above 10⁻⁴ of the
// largest (and summarizing the rest by a scaled χ²) changes the tail by a
// negligible amount compared with keeping all n² products, for spectra of
// n = 300 with the slow decay of a 10-column Gaussian kernel, from 2
// standard deviations below the mean to 12 above. Measured: 7.5e-12 relative
// at worst (tolerance 1e-9); with the cap forced down to 500 products (cut
// about 100 times higher) still 5.6% (tolerance 8%), where matching two
// cumulants of the remainder instead of three gave 52%.
func TestMixtureTruncation(t *testing.T) {
	lam := kernelLikeSpectrum(300, 0.97)
	mu := kernelLikeSpectrum(300, 0.95)
	full := newChiSquareMixture(lam, mu, 0, len(lam)*len(mu))
	cut := newChiSquareMixture(lam, mu, mixtureRelCut, mixtureMaxKept)
	tiny := newChiSquareMixture(lam, mu, mixtureRelCut, 500) // the cap raises the cut
	if len(full.w) != 90000 || full.a != 0 || len(cut.w) >= 90000 || !(cut.a > 0) || len(tiny.w) > 500 {
		t.Fatalf("kept %d, %d and %d products", len(full.w), len(cut.w), len(tiny.w))
	}
	_, mean, variance := full.cumulants(0)
	worst, worstTiny := 0.0, 0.0
	for _, z := range []float64{-2, -0.5, 0, 0.5, 1, 2, 3, 5, 8, 12} {
		q := mean + z*math.Sqrt(variance)
		want := full.survival(q)
		worst = math.Max(worst, math.Abs(cut.survival(q)/want-1))
		worstTiny = math.Max(worstTiny, math.Abs(tiny.survival(q)/want-1))
	}
	t.Logf("kept %d of 90000 products: worst relative difference %.3g; %d products: %.3g",
		len(cut.w), worst, len(tiny.w), worstTiny)
	if worst > 1e-9 || worstTiny > 0.08 {
		t.Errorf("truncation changes the tail by %.3g relative (%.3g with 500 products)", worst, worstTiny)
	}
}

func TestWeightedChiSquareEdges(t *testing.T) {
	if p := WeightedChiSquareSurvival(0, []float64{1}, []float64{1}); p != 1 {
		t.Errorf("q = 0: %v", p)
	}
	if p := WeightedChiSquareSurvival(1, []float64{0, -1e-17}, []float64{1}); p != 1 {
		t.Errorf("no positive weight: %v", p)
	}
	if p := WeightedChiSquareSurvival(1, []float64{math.NaN()}, []float64{1}); !math.IsNaN(p) {
		t.Errorf("NaN weight: %v", p)
	}
	if p := WeightedChiSquareSurvival(1e6, []float64{1}, []float64{1}); p != 1e-300 {
		t.Errorf("far tail: %v, want the floor 1e-300", p)
	}
	// At the mean of one χ²_3 the limit formula gives about P(χ²_3 ≥ 3) = 0.39.
	p := WeightedChiSquareSurvival(3, []float64{1, 1, 1}, []float64{1})
	if want := (distuv.ChiSquared{K: 3}).Survival(3); math.Abs(p-want) > 0.02 {
		t.Errorf("at the mean: %v, want about %v", p, want)
	}
	// Monotone in q.
	prev := 1.0
	for q := 0.1; q < 40; q += 0.37 {
		p := WeightedChiSquareSurvival(q, []float64{0.5, 0.3, 0.2}, []float64{0.6, 0.4})
		if p > prev {
			t.Fatalf("survival rises at q = %v: %v > %v", q, p, prev)
		}
		prev = p
	}
}
