package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// realUnits returns rows of a table in real units: X = (age in years,
// income in dollars), Y = spend in dollars, a nonlinear function of both
// plus noise (Pearson correlation of spend with age near 0).
func realUnits(t testing.TB, n int, seed uint64) (x, y []float64) {
	t.Helper()
	g, _, err := synth.Generate(synth.Spec{Kind: synth.Independent, Dim: 3, Seed: seed}, n)
	if err != nil {
		t.Fatal(err)
	}
	z := g.RawMatrix().Data
	x, y = make([]float64, 2*n), make([]float64, n)
	for i := range n {
		age := 45 + 12*z[3*i]
		income := 52000 * math.Exp(0.5*z[3*i+1])
		x[2*i], x[2*i+1] = age, income
		y[i] = 800*math.Cos((age-45)/6) + 0.02*income + 300*z[3*i+2]
	}
	return x, y
}

// TestStandardizedScaleFree multiplies each column by 1e4 and shifts each by
// 1e6, at the defaults and with the median and auto rules: every estimate
// moves by at most 1e-6 of itself (measured: below 1e-9).
func TestStandardizedScaleFree(t *testing.T) {
	const n = 3000
	x, y := realUnits(t, n, 2101)
	var worst float64
	defer func() { t.Logf("largest relative change: %.3g", worst) }()
	for _, rule := range []vocab.Bandwidth{vocab.Fixed(), vocab.Median(), vocab.Auto()} {
		cols := []int{0, 1, 2}
		if rule.Rule == vocab.AutoRule {
			cols = []int{1} // each auto run costs 15 exact estimates
		}
		cfg := DefaultConfig()
		cfg.Features, cfg.BandwidthX, cfg.BandwidthY = 64, rule, rule
		base := estimateBlocks(t, x, y, 2, 1, cfg)
		if !(base.DiME > 0.05) {
			t.Fatalf("%v: DiME %v on a strong dependence in real units", rule, base.DiME)
		}
		for _, col := range cols {
			for _, op := range []struct {
				name string
				f    func(float64) float64
			}{{"×1e4", func(v float64) float64 { return v * 1e4 }}, {"+1e6", func(v float64) float64 { return v + 1e6 }}} {
				x2, y2 := slices.Clone(x), slices.Clone(y)
				if col < 2 {
					for i := col; i < len(x2); i += 2 {
						x2[i] = op.f(x2[i])
					}
				} else {
					for i := range y2 {
						y2[i] = op.f(y2[i])
					}
				}
				got := estimateBlocks(t, x2, y2, 2, 1, cfg)
				for _, v := range []struct {
					name string
					a, b float64
				}{{"DiME", base.DiME, got.DiME}, {"MI", base.MutualInformation, got.MutualInformation},
					{"S_X", base.EntropyX, got.EntropyX}, {"S_Y", base.EntropyY, got.EntropyY},
					{"sigma X", base.SigmaX, got.SigmaX}, {"sigma Y", base.SigmaY, got.SigmaY}} {
					rel := math.Abs(v.a-v.b) / math.Abs(v.a)
					worst = max(worst, rel)
					if !(rel <= 1e-6) {
						t.Errorf("%v, column %d %s: %s %v vs %v (relative %.3g)", rule, col, op.name, v.name, v.b, v.a, rel)
					}
				}
			}
		}
	}
}

func estimateBlocks(t *testing.T, x, y []float64, dx, dy int, cfg Config) Result {
	t.Helper()
	e, err := New(dx, dy, cfg)
	if err != nil {
		t.Fatal(err)
	}
	n := len(x) / dx
	for i := 0; i < n; i += 700 {
		b := min(700, n-i)
		if err := e.Add(x[i*dx:(i+b)*dx], y[i*dy:(i+b)*dy], b); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestStandardizedState saves a standardized estimator (version 4), reads it
// back, continues it, and merges it with an estimator given its scaling:
// the same as one estimator over every row. A shard that chose its own
// scales is refused.
func TestStandardizedState(t *testing.T) {
	x, y := realUnits(t, 4000, 2102)
	cfg := DefaultConfig()
	cfg.Features, cfg.Workers = 32, 1
	whole := estimateBlocks(t, x, y, 2, 1, cfg)

	a, _ := New(2, 1, cfg)
	addBlocks2(t, a, x[:4000], y[:2000], 2, 1)
	var buf bytes.Buffer
	if err := a.WriteState(&buf); err != nil {
		t.Fatal(err)
	}
	if v := buf.Bytes()[len(stateMagic)]; v != stateVersion {
		t.Fatalf("version %d, want %d", v, stateVersion)
	}
	back, err := ReadState(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !back.Scaling().Equal(a.Scaling()) || !back.Config().Standardize {
		t.Fatalf("scaling not restored: %+v vs %+v", back.Scaling(), a.Scaling())
	}
	again, _ := back.MarshalBinary()
	if !bytes.Equal(again, buf.Bytes()) {
		t.Fatal("a read state does not re-encode identically")
	}
	// The second half as a shard that takes the first's settings.
	like := back.Config()
	like.Workers = 1
	like.BandwidthX, like.BandwidthY = vocab.Sigma(back.sigmaX), vocab.Sigma(back.sigmaY)
	b, err := New(2, 1, like)
	if err != nil {
		t.Fatal(err)
	}
	addBlocks2(t, b, x[4000:], y[2000:], 2, 1)
	if err := back.Merge(b); err != nil {
		t.Fatal(err)
	}
	merged, _ := back.Result()
	// The shards' chunks go to the groups of the jackknife in another
	// order than one run's: the estimates agree to their noise.
	if merged.Rows != whole.Rows || math.Abs(merged.DiME-whole.DiME) > 3*whole.DiMEStdErr {
		t.Errorf("merged: %d rows, DiME %v; one run: %d rows, DiME %v ± %v", merged.Rows, merged.DiME, whole.Rows, whole.DiME, whole.DiMEStdErr)
	}

	// A shard that chose its own scales on other rows does not merge.
	own, _ := New(2, 1, cfg)
	addBlocks2(t, own, x[4000:], y[2000:], 2, 1)
	if err := a.Merge(own); !errors.Is(err, ErrIncompatible) || !strings.Contains(err.Error(), "scales") {
		t.Errorf("merging shards of different scales: %v", err)
	}
}

func addBlocks2(t *testing.T, e *Estimator, x, y []float64, dx, dy int) {
	t.Helper()
	n := len(x) / dx
	for i := 0; i < n; i += 500 {
		b := min(500, n-i)
		if err := e.Add(x[i*dx:(i+b)*dx], y[i*dy:(i+b)*dy], b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConstantColumn: a constant column is an error naming it, not a NaN.
func TestConstantColumn(t *testing.T) {
	x, y := realUnits(t, 1500, 2103)
	for i := 1; i < len(x); i += 2 {
		x[i] = 7
	}
	cfg := DefaultConfig()
	cfg.Features, cfg.XColumns, cfg.YColumns = 16, []string{"age", "income"}, []string{"spend"}
	e, _ := New(2, 1, cfg)
	err := e.Add(x, y, 1500)
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), `column "income" is constant`) {
		t.Fatalf("constant column: %v", err)
	}
	// Mostly zeros (a count): the MAD is 0, the standard deviation is not.
	for i := 1; i < len(x); i += 2 {
		x[i] = 0
	}
	x[1], x[301] = 3, 1
	if _, _, err := ColumnScales(x, 1500, 2, nil); err != nil {
		t.Errorf("mostly zeros: %v", err)
	}
}

// TestReadStateScaledBounded forges the widths of a standardized state:
// refused before the scaling is allocated.
func TestReadStateScaledBounded(t *testing.T) {
	x, y := realUnits(t, 300, 2104)
	cfg := DefaultConfig()
	cfg.Features, cfg.XColumns, cfg.YColumns = 16, []string{"a", "b"}, []string{"s"}
	e, _ := New(2, 1, cfg)
	addBlocks2(t, e, x, y, 2, 1)
	good, _ := e.MarshalBinary()
	bad := forge(good, func(b []byte) { binary.LittleEndian.PutUint32(b[offDimX:], 1<<20) })
	var err error
	alloc := allocatedBy(func() { _, err = ReadState(bytes.NewReader(bad)) })
	if !errors.Is(err, ErrState) || !strings.Contains(err.Error(), "scaling") {
		t.Errorf("forged widths: %v", err)
	}
	if alloc > 2*uint64(len(bad)) {
		t.Errorf("allocated %d bytes for a state of %d", alloc, len(bad))
	}
	// A scale of 0 is refused: the scaling follows the column names
	// ("a", "b" of X, "s" of Y), centers then scales of X, then of Y.
	names := offShards + 4 + 16*int(binary.LittleEndian.Uint32(good[offShards:])) + 4 + 2*(4+1) + 4 + (4 + 1)
	zero := forge(good, func(b []byte) { binary.LittleEndian.PutUint64(b[names+16:], 0) })
	if _, err := ReadState(bytes.NewReader(zero)); !errors.Is(err, ErrState) || !strings.Contains(err.Error(), "scale 0") {
		t.Errorf("a scale of 0: %v", err)
	}
}

// TestNewResolved: an estimator given what ResolvePilot chose on its first
// PilotRows rows equals one that held those rows back and chose itself,
// bit for bit (result, and state but for the run's random id), with every bandwidth rule; a pilot on
// other rows gives other scales; a pilot without the scaling that
// standardization needs is refused.
func TestNewResolved(t *testing.T) {
	x, y := realUnits(t, 3000, 2104)
	for _, rule := range []vocab.Bandwidth{vocab.Fixed(), vocab.Median(), vocab.Auto(), vocab.Sigma(0.8)} {
		cfg := DefaultConfig()
		cfg.Features, cfg.Workers, cfg.BandwidthX, cfg.BandwidthY = 16, 1, rule, rule
		own, _ := New(2, 1, cfg)
		addBlocks2(t, own, x, y, 2, 1)
		p, err := ResolvePilot(x[:2*DefaultPilotRows], y[:DefaultPilotRows], DefaultPilotRows, 2, 1, cfg)
		if err != nil {
			t.Fatal(err)
		}
		given, err := NewResolved(2, 1, cfg, p)
		if err != nil {
			t.Fatal(err)
		}
		if !given.Started() {
			t.Fatalf("%v: not started", rule)
		}
		addBlocks2(t, given, x, y, 2, 1)
		given.shards = own.shards // the run's random id
		a, _ := own.MarshalBinary()
		b, _ := given.MarshalBinary()
		if !bytes.Equal(a, b) {
			t.Errorf("%v: the states differ", rule)
		}
		ra, _ := own.Result()
		rb, _ := given.Result()
		if ra.DiME != rb.DiME || ra.SigmaX != rb.SigmaX || ra.BandwidthX != rb.BandwidthX {
			t.Errorf("%v: DiME %v, σ %v (%v); given the pilot: %v, %v (%v)", rule, ra.DiME, ra.SigmaX, ra.BandwidthX, rb.DiME, rb.SigmaX, rb.BandwidthX)
		}
	}
	cfg := DefaultConfig()
	cfg.Features = 16
	p, err := ResolvePilot(x[2000:4000], y[1000:2000], 1000, 2, 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewResolved(2, 1, cfg, p)
	first, _ := New(2, 1, cfg)
	addBlocks2(t, first, x[:2000], y[:1000], 2, 1)
	if other.Scaling().Equal(first.Scaling()) {
		t.Error("a pilot of other rows chose the same scales")
	}
	if _, err := NewResolved(2, 1, cfg, Pilot{SigmaX: 1, SigmaY: 1}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("standardization without a scaling: %v", err)
	}
}
