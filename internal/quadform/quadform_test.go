package quadform

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// TestEqualWeightsAreChiSquared compares both methods with the χ²_n
// survival function (n equal weights): Imhof to 1e-8 relative plus 1e-12
// absolute (its stopping rule) wherever it converges; the saddlepoint to a
// relative error measured at most 1.18% (n = 4), 0.15% (n = 20) and 0.02%
// (n = 200) over p from 0.9 down to about 1e-20; bounds 2%, 0.3%, 0.05%.
func TestEqualWeightsAreChiSquared(t *testing.T) {
	cases := []struct {
		n      int
		relTol float64
	}{{4, 0.02}, {20, 0.003}, {200, 0.0005}}
	for _, c := range cases {
		w := make([]float64, c.n)
		for i := range w {
			w[i] = 3 // the scale must not matter
		}
		chi := distuv.ChiSquared{K: float64(c.n)}
		var worstRel float64
		imhofRan := 0
		for _, q := range []float64{0.1, 0.5, 0.9, 0.99, 0.999, 1 - 1e-5, 1 - 1e-8} {
			x := chi.Quantile(q)
			want := chi.Survival(x)
			if p, ok := ImhofSurvival(w, 3*x); ok {
				imhofRan++
				if d := math.Abs(p - want); d > 1e-8*want+1e-12 {
					t.Errorf("n=%d x=%.4g: Imhof %.15g, χ² %.15g (|diff| %.2g)", c.n, x, p, want, d)
				}
			}
			sp := SaddlepointSurvival(w, 3*x)
			worstRel = math.Max(worstRel, math.Abs(sp-want)/want)
		}
		// Far tail, where only the saddlepoint is used.
		for _, x := range []float64{chi.Quantile(0.5) * 4, chi.Quantile(0.5) * 6} {
			want := chi.Survival(x)
			sp, m := Survival(w, 3*x)
			if m != Saddlepoint && want < imhofFloor {
				t.Errorf("n=%d: p = %.3g computed by %v, want the saddlepoint", c.n, want, m)
			}
			worstRel = math.Max(worstRel, math.Abs(sp-want)/want)
		}
		t.Logf("n=%d: saddlepoint worst relative error %.4f; Imhof converged at %d of 7 points", c.n, worstRel, imhofRan)
		if worstRel > c.relTol {
			t.Errorf("n=%d: saddlepoint relative error %.4f above %.4f", c.n, worstRel, c.relTol)
		}
		if c.n >= 20 && imhofRan < 5 {
			t.Errorf("n=%d: Imhof converged at only %d points", c.n, imhofRan)
		}
	}
}

// spectrum returns m decaying weights like the spectra of feature
// covariances: λ_j ∝ 1/(1+j)^power.
func spectrum(m int, power float64) []float64 {
	w := make([]float64, m)
	for j := range w {
		w[j] = math.Pow(1+float64(j), -power)
	}
	return w
}

// TestImhofMatchesMonteCarlo draws Q = Σ λ_j Z_j² 200 000 times (seeded) for
// decaying spectra and checks Imhof's tail at several points against the
// empirical tail: within 4 binomial standard errors.
func TestImhofMatchesMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("Monte Carlo of 200 000 draws")
	}
	const draws = 200000
	r := rand.New(rand.NewPCG(1, 2))
	for _, w := range [][]float64{spectrum(64, 1), spectrum(512, 1.5), {5, 1, 1, 0.5, 0.1}} {
		qs := make([]float64, draws)
		for i := range qs {
			var q float64
			for _, l := range w {
				z := r.NormFloat64()
				q += l * z * z
			}
			qs[i] = q
		}
		var mean float64
		for _, l := range w {
			mean += l
		}
		for _, f := range []float64{0.5, 1, 1.5, 2, 3} {
			x := f * mean
			n := 0
			for _, q := range qs {
				if q > x {
					n++
				}
			}
			emp := float64(n) / draws
			p, m := Survival(w, x)
			se := math.Sqrt(math.Max(p*(1-p), 1/float64(draws)) / draws)
			if math.Abs(p-emp) > 4*se {
				t.Errorf("%d weights x=%.3g: %v %.5g, Monte Carlo %.5g (4 se = %.2g)", len(w), x, m, p, emp, 4*se)
			}
		}
	}
}

// TestSaddlepointAgreesWithImhof checks the saddlepoint against Imhof
// where Survival switches from one to the other (p near 1e-9), for p in
// [1e-11, 1e-8] (where Imhof's absolute accuracy, 1e-13, is still 1%
// relative), for decaying spectra: relative differences measured at most
// 7.9% (λ_j ∝ 1/j and 1/j², 512 weights; 1/√j, 40 weights: 7.6%); bound
// 10%. In the bulk (p ≥ 1e-9) Imhof is used.
func TestSaddlepointAgreesWithImhof(t *testing.T) {
	if testing.Short() {
		t.Skip("Imhof integrals deep in the tail")
	}
	for _, w := range [][]float64{spectrum(512, 1), spectrum(512, 2), spectrum(40, 0.5)} {
		var mean float64
		for _, l := range w {
			mean += l
		}
		var worst float64
		points := 0
		for f := 1.5; f < 100; f *= 1.1 {
			p, ok := ImhofSurvival(w, f*mean)
			if !ok {
				t.Fatalf("%d weights: Imhof did not converge at x = %.3g", len(w), f*mean)
			}
			if p > 1e-8 {
				continue
			}
			if p < 1e-11 {
				break
			}
			points++
			sp := SaddlepointSurvival(w, f*mean)
			worst = math.Max(worst, math.Abs(sp-p)/p)
		}
		t.Logf("%d weights: worst saddlepoint/Imhof relative difference %.4f over %d points", len(w), worst, points)
		if worst > 0.10 || points < 3 {
			t.Errorf("%d weights: saddlepoint and Imhof differ by %.4f relative (%d points)", len(w), worst, points)
		}
	}
}

func TestDegenerate(t *testing.T) {
	if p, _ := Survival(nil, 1); p != 0 {
		t.Errorf("no weights, x = 1: %v, want 0", p)
	}
	if p, _ := Survival([]float64{0, -1e-18}, -1); p != 1 {
		t.Errorf("no positive weights, x = -1: %v, want 1", p)
	}
	if p, _ := Survival([]float64{1, 2}, 0); p != 1 {
		t.Errorf("x = 0: %v, want 1", p)
	}
	if p, _ := Survival([]float64{1, 2}, math.NaN()); !math.IsNaN(p) {
		t.Errorf("x = NaN: %v, want NaN", p)
	}
	if p, m := Survival([]float64{1, 1, 1}, 1e4); !(p >= 0 && p < 1e-300) || m != Saddlepoint {
		t.Errorf("far tail: %v by %v, want a tiny probability by the saddlepoint", p, m)
	}
}

// BenchmarkSurvival measures one p-value for 512 weights λ_j ∝ 1/j (an
// RFF test's spectrum at D = 256) in the bulk and in the far tail.
func BenchmarkSurvival(b *testing.B) {
	w := spectrum(512, 1)
	var mean float64
	for _, l := range w {
		mean += l
	}
	for _, f := range []float64{1.8, 4, 8} {
		p, m := Survival(w, f*mean)
		b.Run(fmt.Sprintf("p=%.0e/%v", p, m), func(b *testing.B) {
			for range b.N {
				Survival(w, f*mean)
			}
		})
	}
}
