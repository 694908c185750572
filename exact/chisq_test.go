package exact

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/internal/quadform"
)

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

// TestProductSurvival checks the tail against 200,000 simulated
// draws of T for spectra shaped like those of Gram matrices (fast and slow
// geometric decay, and a discrete view with 4 values). At simulated tail
// probability p the Monte Carlo standard error is √(p(1−p)/200000): 6.7e-4
// at 0.1, 2.2e-4 at 0.01, 7e-5 at 1e-3. Tolerance: 5 standard errors plus 3%
// of p for the saddlepoint itself (measured here: at most 6.4% of p at 0.01
// and 10% at 1e-3, both for the discrete view and within 3 standard errors).
func TestProductSurvival(t *testing.T) {
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
			got := productSurvival(q, c.lam, c.mu)
			se := math.Sqrt(p * (1 - p) / draws)
			if math.Abs(got-p) > 5*se+0.03*p {
				t.Errorf("%s: P(T ≥ %.5g) = %.5g, simulated %.5g", c.name, q, got, p)
			}
			t.Logf("%s: simulated %g, saddlepoint %.4g", c.name, p, got)
		}
	}
}

// TestMixtureTruncation checks that keeping the products above 10⁻⁴ of the
// largest (and summarizing the rest by equal weights with its mean and
// variance) changes the tail by a negligible amount compared with keeping
// all n² products, for spectra of n = 300 with the slow decay of a
// 10-column Gaussian kernel, from 2 standard deviations below the mean to 12
// above. Both sides are read with the saddlepoint (all 90000 products are
// beyond Imhof's budget), so only the truncation differs. Measured: 5.2e-11
// relative at worst (tolerance 1e-9); with the cap forced down to 500
// products (cut about 100 times higher) 5.6% (tolerance 8%).
func TestMixtureTruncation(t *testing.T) {
	lam := kernelLikeSpectrum(300, 0.97)
	mu := kernelLikeSpectrum(300, 0.95)
	full, c0 := productWeights(lam, mu, 0, len(lam)*len(mu))
	cut, c1 := productWeights(lam, mu, mixtureRelCut, mixtureMaxKept)
	tiny, c2 := productWeights(lam, mu, mixtureRelCut, 500) // the cap raises the cut
	if len(full) != 90000 || c0 != 0 || !(c1 > 0) || !(c2 > 0) {
		t.Fatalf("%d products with c = %g; c = %g and %g after truncation", len(full), c0, c1, c2)
	}
	var mean, variance float64
	for _, w := range full {
		mean += w
		variance += 2 * w * w
	}
	worst, worstTiny := 0.0, 0.0
	for _, z := range []float64{-2, -0.5, 0, 0.5, 1, 2, 3, 5, 8, 12} {
		q := mean + z*math.Sqrt(variance)
		want := quadform.SaddlepointSurvival(full, q)
		worst = math.Max(worst, math.Abs(quadform.SaddlepointSurvival(cut, q-c1)/want-1))
		worstTiny = math.Max(worstTiny, math.Abs(quadform.SaddlepointSurvival(tiny, q-c2)/want-1))
	}
	t.Logf("kept %d of 90000 products: worst relative difference %.3g; %d weights: %.3g",
		len(cut), worst, len(tiny), worstTiny)
	if worst > 1e-9 || worstTiny > 0.08 {
		t.Errorf("truncation changes the tail by %.3g relative (%.3g with 500 products)", worst, worstTiny)
	}
}

func TestProductSurvivalEdges(t *testing.T) {
	if p := productSurvival(0, []float64{1}, []float64{1}); p != 1 {
		t.Errorf("q = 0: %v", p)
	}
	if p := productSurvival(1, []float64{0, -1e-17}, []float64{1}); p != 1 {
		t.Errorf("no positive weight: %v", p)
	}
	if p := productSurvival(1, []float64{math.NaN()}, []float64{1}); !math.IsNaN(p) {
		t.Errorf("NaN weight: %v", p)
	}
	if p := productSurvival(1e6, []float64{1}, []float64{1}); p != 1e-300 {
		t.Errorf("far tail: %v, want the floor 1e-300", p)
	}
	// At the mean of one χ²_3 the limit formula gives about P(χ²_3 ≥ 3) = 0.39.
	p := productSurvival(3, []float64{1, 1, 1}, []float64{1})
	if want := (distuv.ChiSquared{K: 3}).Survival(3); math.Abs(p-want) > 0.02 {
		t.Errorf("at the mean: %v, want about %v", p, want)
	}
	// Monotone in q.
	prev := 1.0
	for q := 0.1; q < 40; q += 0.37 {
		p := productSurvival(q, []float64{0.5, 0.3, 0.2}, []float64{0.6, 0.4})
		if p > prev {
			t.Fatalf("survival rises at q = %v: %v > %v", q, p, prev)
		}
		prev = p
	}
}
