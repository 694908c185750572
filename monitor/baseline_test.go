package monitor

import (
	"errors"
	"math"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// reference returns an estimator fed n rows of spec: a baseline.
func reference(t testing.TB, spec synth.Spec, n int, cfg stream.Config) *stream.Estimator {
	t.Helper()
	e, err := stream.New(spec.Dim, spec.Dim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, y := genRows(t, spec, n)
	if err := e.Add(x, y, n); err != nil {
		t.Fatal(err)
	}
	return e
}

func genRows(t testing.TB, spec synth.Spec, n int) (x, y []float64) {
	t.Helper()
	xm, ym, err := synth.Generate(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	return xm.RawMatrix().Data, ym.RawMatrix().Data
}

// TestBaselineJackknife recomputes a window's change by hand: K estimators
// fed the window's blocks, the leave-one-block-out DiMEs, the jackknife
// variance and bias, the t statistic and its p-value.
func TestBaselineJackknife(t *testing.T) {
	cfg := streamConfig()
	spec := synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3}
	spec.Seed = 21
	base := reference(t, spec, 5000, cfg)
	br, _ := base.Result()
	spec.Seed = 22
	x, y := genRows(t, spec, 1000)
	var ws []Window
	m, err := New(2, 2, Config{Stream: cfg, WindowRows: 1000, Baseline: base, BaselineBlocks: 4}, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, nil, 300); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || ws[0].Change == nil {
		t.Fatalf("%d windows", len(ws))
	}
	got := ws[0].Change

	// By hand: blocks of 250 rows, each fed in the pieces the monitor gave
	// it (cut by the 300-row Adds), as its own estimator.
	bcfg := cfg
	sx, sy := base.Bandwidths()
	bcfg.BandwidthX, bcfg.BandwidthY = vocab.Sigma(sx), vocab.Sigma(sy)
	blockOf := func(lo, hi int) *stream.Estimator {
		e, _ := stream.New(2, 2, bcfg)
		for i := lo; i < hi; {
			end := min(hi, (i/300+1)*300)
			e.Add(x[2*i:2*end], y[2*i:2*end], end-i)
			i = end
		}
		return e
	}
	whole := blockOf(0, 0)
	var loo []float64
	for k := 0; k < 4; k++ {
		e := blockOf(0, 0)
		for j := 0; j < 4; j++ {
			if j != k {
				e.Merge(blockOf(250*j, 250*(j+1)))
			}
		}
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		loo = append(loo, r.DiME)
		whole.Merge(blockOf(250*k, 250*(k+1)))
	}
	wr, _ := whole.Result()
	if wr.DiME != ws[0].Result.DiME || wr.Rows != 1000 {
		t.Errorf("window DiME %v, blocks merged %v", ws[0].Result.DiME, wr.DiME)
	}
	mean := (loo[0] + loo[1] + loo[2] + loo[3]) / 4
	var ss float64
	for _, v := range loo {
		ss += (v - mean) * (v - mean)
	}
	v := 3.0 / 4 * ss
	corr := 3 * (mean - wr.DiME) * (1 - 1000/br.EffectiveRows)
	diff := wr.DiME - br.DiME - corr
	se := math.Sqrt(v * (1 + 1000/br.EffectiveRows))
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 3}.Survival(math.Abs(diff/se))
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }
	if got.BaselineDiME != br.DiME || got.BaselineRows != 5000 || got.DF != 3 || !near(got.Correction, corr) ||
		!near(got.Difference, diff) || !near(got.StdErr, se) || !near(got.PValue, p) {
		t.Errorf("change %+v; by hand: correction %v difference %v se %v p %v", *got, corr, diff, se, p)
	}
}

// TestBaselineTimeWindows cuts time windows into Window/K blocks: a window
// whose rows fill 3 of its 4 quarters has 3 blocks (2 degrees of freedom).
func TestBaselineTimeWindows(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Circle, Dim: 2, Noise: 0.1, Seed: 23}, 4000, cfg)
	x, y := genRows(t, synth.Spec{Kind: synth.Circle, Dim: 2, Noise: 0.1, Seed: 24}, 1200)
	// Minute windows; rows every 0.1 s, with a gap of 15 s at 15 s.
	times := make([]int64, 1200)
	for i := range times {
		s := float64(i) * 0.1
		if i >= 150 {
			s += 15
		}
		times[i] = int64(s * 1e9)
	}
	var ws []Window
	m, err := New(2, 2, Config{Stream: cfg, Window: time.Minute, Baseline: base, BaselineBlocks: 4}, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, times, 97); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// Windows [0, 60 s): 450 rows in blocks 0, 2 and 3; [60, 120 s): 600
	// rows in 4 blocks; [120, 135 s): 150 rows in one block, no test.
	if len(ws) != 3 || ws[0].Rows != 450 || ws[0].Change.DF != 2 || ws[1].Change.DF != 3 || math.IsNaN(ws[0].Change.PValue) ||
		ws[2].Change.DF != 0 || !math.IsNaN(ws[2].Change.PValue) {
		for _, w := range ws {
			t.Logf("window %d: %d rows, change %+v", w.Index, w.Rows, w.Change)
		}
		t.Errorf("%d windows", len(ws))
	}
}

func TestBaselineConfigErrors(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 25}, 500, cfg)
	emit := func(Window) error { return nil }
	for _, c := range []Config{
		{Stream: cfg, WindowRows: 100, AlertChangeP: Threshold(0.01)},                                                 // no baseline
		{Stream: cfg, HalfLife: 100, Baseline: base},                                                                  // decay
		{Stream: cfg, WindowRows: 100, Baseline: base, BaselineBlocks: 1},                                             // too few blocks
		{Stream: cfg, WindowRows: 100, Baseline: base, BaselineBlocks: 65},                                            // too many
		{Stream: cfg, WindowRows: 100, Baseline: base, AlertChangeP: Threshold(1.5)},                                  // not a p-value
		{Stream: cfg, WindowRows: 100, Baseline: reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Seed: 1}, 1, cfg)}, // 1 row
	} {
		if _, err := New(2, 2, c, emit); !errors.Is(err, ErrConfig) {
			t.Errorf("%+v: %v", c, err)
		}
	}
	if _, err := New(3, 2, Config{Stream: cfg, WindowRows: 100, Baseline: base}, emit); !errors.Is(err, ErrConfig) {
		t.Errorf("views of other widths: %v", err)
	}
	// The windows take the baseline's settings, whatever Config.Stream says.
	other := cfg
	other.Features, other.Seed = 8, 99
	var ws []Window
	m, err := New(2, 2, Config{Stream: other, WindowRows: 200, Baseline: base}, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	x, y := genRows(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 26}, 200)
	m.Add(x, y, nil, 200)
	if r := ws[0].Result; r.Features != cfg.Features || r.Seed != cfg.Seed {
		t.Errorf("window estimated with D = %d, seed %d; baseline D = %d, seed %d", r.Features, r.Seed, cfg.Features, cfg.Seed)
	}
}

// Held-out seeds: the test was designed on seeds 100 to 505; these were not
// looked at before the bounds below were set.
const heldOut = 7000

// TestBaselineChangeAlerts is the criterion: against a baseline
// saved from data like the first half of a stream, a monitor alerts on
// change (p < 0.01) in every window after the dependence changes half-way,
// and in at most 5% of the windows before. Three changes: a Gaussian's
// mutual information halves (1 → 0.5 nats), a sine's noise doubles, a
// circle becomes independent.
func TestBaselineChangeAlerts(t *testing.T) {
	if testing.Short() {
		t.Skip("3 × 40 windows")
	}
	const nw, nb, half = 2000, 20000, 20
	cfg := stream.DefaultConfig()
	cfg.Standardize = false // studies designed on unit-scale data at the raw fixed bandwidth
	cfg.Features = 32
	before := 0
	for ci, c := range [][2]synth.Spec{
		{{Kind: synth.Gaussian, Dim: 2, MI: 1}, {Kind: synth.Gaussian, Dim: 2, MI: 0.5}},
		{{Kind: synth.Sine, Dim: 2, Noise: 0.2}, {Kind: synth.Sine, Dim: 2, Noise: 0.4}},
		{{Kind: synth.Circle, Dim: 2, Noise: 0.1}, {Kind: synth.Independent, Dim: 2}},
	} {
		a, b := c[0], c[1]
		a.Seed = heldOut + uint64(10*ci)
		base := reference(t, a, nb, cfg)
		a.Seed, b.Seed = a.Seed+1, a.Seed+2
		x, y := genRows(t, a, nw*half)
		x2, y2 := genRows(t, b, nw*half)
		x, y = append(x, x2...), append(y, y2...)
		var ws []Window
		m, err := New(2, 2, Config{Stream: cfg, WindowRows: nw, Baseline: base, AlertChangeP: Threshold(0.01)}, collect(&ws))
		if err != nil {
			t.Fatal(err)
		}
		if err := feedBlocks(t, m, x, y, nil, 1000); err != nil {
			t.Fatal(err)
		}
		if len(ws) != 2*half {
			t.Fatalf("%d windows", len(ws))
		}
		for _, w := range ws {
			ch := w.Change
			if w.Index < half && w.Alert {
				before++
				t.Logf("%v: window %d before the change alerts: %v", a.Kind, w.Index, w.AlertReasons)
			}
			if w.Index >= half && !w.Alert {
				t.Errorf("%v → %v: window %d after the change: DiME %.4f, baseline %.4f, t %.2f, p %.3g: no alert",
					a, b, w.Index, w.Result.DiME, ch.BaselineDiME, ch.T, ch.PValue)
			}
		}
	}
	// 5% of the 60 windows before the changes.
	if before > 3 {
		t.Errorf("%d of %d windows before a change alert", before, 3*half)
	}
}

// TestBaselineCalibrated streams held-out data with no change against a
// baseline of the same distribution, over five kinds of dependence (none,
// Gaussian, sine, circle, 5-dimensional Gaussian): the change p-values must
// look uniform. With 200 windows, the count below 0.05 is Binomial(200,
// 0.05), mean 10, sd 3.1: its two-sided 99% band is [3, 19]; below 0.01,
// Binomial(200, 0.01): [0, 6]; and the Kolmogorov–Smirnov distance to the
// uniform stays under its 1% critical value 1.63/√200 = 0.115. Measured on
// the design seeds (windows of 2500 rows, D = 64, K = 5, a 50,000-row
// reference), with the permutation estimator then the default: KS 0.044, 9
// below 0.05, 1 below 0.01; on these held-out seeds, with D = 64: KS 0.037,
// 7 and 4; with D = 32 (as now, 4 times cheaper): KS 0.056, 9 and 1 (and
// so still with Permutations = 5). With the analytic-jackknife default
// (bounds unchanged): D = 32, KS 0.087, 8 and 1; D = 64, KS 0.044, 6 and 1.
func TestBaselineCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("200 windows")
	}
	const nw, nb, windows = 2000, 20000, 40
	cfg := stream.DefaultConfig()
	cfg.Standardize = false // studies designed on unit-scale data at the raw fixed bandwidth
	cfg.Features = 32
	var ps []float64
	for si, spec := range []synth.Spec{
		{Kind: synth.Independent, Dim: 2},
		{Kind: synth.Gaussian, Dim: 2, MI: 0.5},
		{Kind: synth.Sine, Dim: 2, Noise: 0.2},
		{Kind: synth.Circle, Dim: 2, Noise: 0.1},
		{Kind: synth.Gaussian, Dim: 5, MI: 2},
	} {
		spec.Seed = heldOut + 100 + uint64(10*si)
		base := reference(t, spec, nb, cfg)
		spec.Seed++
		x, y := genRows(t, spec, nw*windows)
		d := spec.Dim
		m, err := New(d, d, Config{Stream: cfg, WindowRows: nw, Baseline: base}, func(w Window) error {
			ps = append(ps, w.Change.PValue)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < nw*windows; i += 1000 {
			if err := m.Add(x[i*d:(i+1000)*d], y[i*d:(i+1000)*d], nil, 1000); err != nil {
				t.Fatal(err)
			}
		}
	}
	sort.Float64s(ps)
	var below5, below1 int
	var ks float64
	n := float64(len(ps))
	for i, p := range ps {
		if p < 0.05 {
			below5++
		}
		if p < 0.01 {
			below1++
		}
		ks = math.Max(ks, math.Max(float64(i+1)/n-p, p-float64(i)/n))
	}
	t.Logf("%d windows: %d below 0.05, %d below 0.01, KS %.3f", len(ps), below5, below1, ks)
	if len(ps) != 200 || below5 < 3 || below5 > 19 || below1 > 6 || ks > 0.115 {
		t.Errorf("not calibrated: %d windows, %d below 0.05 (band [3, 19]), %d below 0.01 (band [0, 6]), KS %.3f (critical 0.115)", len(ps), below5, below1, ks)
	}
}
