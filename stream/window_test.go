package stream

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// TestDecayWeights checks that with a half-life h the X, Y and joint
// accumulators hold Σ wᵢ φᵢφᵢᵀ with wᵢ = 2^(−(N−1−i)/h) for row i of N, and
// that every accumulator's weight is what its rows carry, to 1e-12.
func TestDecayWeights(t *testing.T) {
	const d, D, h, N = 2, 8, 50.0, 730
	cfg := testConfig(d, D, 3, 4)
	cfg.HalfLife = h
	cfg.ShuffleRows = 200 // scopes of 200 rows, the last one partial
	e, err := New(d, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.2, Seed: 6}, N)
	addBlocks(t, e, x, y, d, 97)
	if err := e.Flush(); err != nil {
		t.Fatal(err)
	}
	pair, _ := rff.NewPair(cfg.pairSpec(d, d, exact.FixedSigma(d), exact.FixedSigma(d)))
	px, _ := pair.X.Transform(nil, x, N)
	py, _ := pair.Y.Transform(nil, y, N)
	p := 2 * D
	tot := totals(t, e)
	want := map[*covariance.Accumulator]*mat.SymDense{tot.x: mat.NewSymDense(p, nil), tot.y: mat.NewSymDense(p, nil), tot.xy: mat.NewSymDense(p, nil)}
	wantMean := map[*covariance.Mean][]float64{tot.mx: make([]float64, p), tot.my: make([]float64, p), tot.mxy: make([]float64, p)}
	var weight, weight2 float64
	for i := 0; i < N; i++ {
		w := math.Exp2(-float64(N-1-i) / h)
		weight += w
		weight2 += w * w
		j, _ := rff.Joint(nil, px[i*p:(i+1)*p], py[i*p:(i+1)*p], 1, D, nil)
		for acc, f := range map[*covariance.Accumulator][]float64{tot.x: px[i*p : (i+1)*p], tot.y: py[i*p : (i+1)*p], tot.xy: j} {
			want[acc].SymRankOne(want[acc], w, mat.NewVecDense(p, f))
		}
		for m, f := range map[*covariance.Mean][]float64{tot.mx: px[i*p : (i+1)*p], tot.my: py[i*p : (i+1)*p], tot.mxy: j} {
			for k, v := range f {
				wantMean[m][k] += w * v
			}
		}
	}
	for m, w := range wantMean {
		var worst float64
		for k, v := range w {
			worst = math.Max(worst, math.Abs(m.Sum()[k]-v))
		}
		if worst > 1e-12 || math.Abs(m.Weight()-weight) > 1e-12 || math.Abs(m.SquaredWeight()-weight2) > 1e-12 {
			t.Errorf("mean %v: decayed sum differs by %g, weights %v and %v (want %v and %v)",
				m.Description().Part, worst, m.Weight(), m.SquaredWeight(), weight, weight2)
		}
	}
	for acc, w := range want {
		var worst float64
		sum := acc.Sum() // a copy of the packed triangle
		for i := 0; i < p; i++ {
			for j := i; j < p; j++ {
				worst = math.Max(worst, math.Abs(sum.At(i, j)-w.At(i, j)))
			}
		}
		if worst > 1e-12 {
			t.Errorf("%v: decayed sum differs from Σ wᵢφᵢφᵢᵀ by %g", acc.Description().Part, worst)
		}
		if math.Abs(acc.Weight()-weight) > 1e-12 {
			t.Errorf("%v: weight %.15g, want Σ wᵢ = %.15g", acc.Description().Part, acc.Weight(), weight)
		}
	}
	// A permuted pair weighs what its X row weighs: the same total, which
	// the trace carries (unit-norm features).
	for _, a := range e.perm {
		if tr := mat.Trace(a.Sum()); math.Abs(tr-weight) > 1e-12 || math.Abs(a.Weight()-weight) > 1e-12 {
			t.Errorf("permuted: trace %v, weight %v, want %v", tr, a.Weight(), weight)
		}
	}
	r, err := e.Result()
	if err != nil || math.Abs(r.EffectiveRows-weight) > 1e-12 || r.Rows != N {
		t.Errorf("result: effective rows %v (want %v), rows %d: %v", r.EffectiveRows, weight, r.Rows, err)
	}
	// About h/ln 2 rows of weight remain: a sliding view.
	if weight > h/math.Ln2+1 || weight < h/math.Ln2-1 {
		t.Errorf("total weight %v, want about h/ln 2 = %v", weight, h/math.Ln2)
	}
}

// TestResetStartsAfresh checks that an estimator reset after some rows gives
// exactly what a new estimator gives on the rows that follow.
func TestResetStartsAfresh(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Circle, Dim: d, Noise: 0.1, Seed: 8}, 5000)
	cfg := testConfig(d, 16, 3, 2)
	cfg.BandwidthX = vocab.Median()
	reused, _ := New(d, d, cfg)
	addBlocks(t, reused, x[:2000*d], y[:2000*d], d, 1000)
	if _, err := reused.Result(); err != nil {
		t.Fatal(err)
	}
	sx, _ := reused.Bandwidths()
	reused.Reset()
	addBlocks(t, reused, x[2000*d:], y[2000*d:], d, 1000)
	a, err := reused.Result()
	if err != nil {
		t.Fatal(err)
	}
	cfg.BandwidthX = vocab.Sigma(sx) // a reset keeps the bandwidths it chose
	fresh, _ := New(d, d, cfg)
	addBlocks(t, fresh, x[2000*d:], y[2000*d:], d, 1000)
	b, _ := fresh.Result()
	sameResult(t, "reset", a, b, 0)
	if a.Rows != 3000 {
		t.Errorf("rows after reset %d, want 3000", a.Rows)
	}
}

// TestPValueCalibrated checks the t-approximation of the permutation
// estimator's p-value (Result.PValuePermutations; the default p-value, the
// RFF-HSIC test, is checked by TestDefaultsCalibratedUnderIndependence) on 200
// independent datasets (N = 1500, D = 32, P = 5): the count of p < 0.05 must
// lie in the binomial 99% interval around 5%. Measured on 300 datasets per
// setting: 4.7% to 7.0% below 0.05, 0.7% to 2.3% below 0.01; on 1000
// datasets of 2500 rows (D = 64 and 256): 5.0% and 5.8% below 0.05, 1.0%
// and 0.9% below 0.01, none below 0.001. And with the default settings
// (the RFF-HSIC p-value) a window of 10,000 clearly dependent rows reaches p < 0.01
// (measured: 2e-12 for sine, 2e-9 for the toy with 4 nats in d = 20).
func TestPValueCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("200 null datasets and two default windows take about 8 s")
	}
	const sets = 200
	below := 0
	for s := 0; s < sets; s++ {
		e, _ := New(3, 3, testConfig(3, 32, 5, uint64(s+1)))
		feed(t, e, synth.Spec{Kind: synth.Independent, Dim: 3, Seed: uint64(7000 + s)}, 1500, 4096)
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		if !(r.PValuePermutations > 0) || r.PValuePermutations > 1 {
			t.Fatalf("p-value %v", r.PValuePermutations)
		}
		if r.PValuePermutations < 0.05 {
			below++
		}
	}
	lo, hi := binomialBand(sets, 0.05)
	t.Logf("%d of %d null datasets have p < 0.05 (99%% interval %d to %d)", below, sets, lo, hi)
	if below < lo || below > hi {
		t.Errorf("%d of %d null p-values below 0.05, outside [%d, %d]", below, sets, lo, hi)
	}
	for _, spec := range []synth.Spec{
		{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1},
		{Kind: synth.Gaussian, Dim: 20, MI: 4, Seed: 1},
	} {
		e, _ := New(spec.Dim, spec.Dim, DefaultConfig())
		feed(t, e, spec, 10000, 4096)
		r, _ := e.Result()
		if !(r.PValue < 0.01) {
			t.Errorf("%v: 10,000 dependent rows give p = %v, want < 0.01", spec.Kind, r.PValue)
		}
	}
	if !math.IsNaN(PValue(1, []float64{2})) || !math.IsNaN(PValue(1, []float64{2, 2})) {
		t.Error("PValue without spread should be NaN")
	}
}
