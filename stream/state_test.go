package stream

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/synth"
)

// rows returns n rows of spec as row-major slices.
func rows(t testing.TB, spec synth.Spec, n int) (x, y []float64) {
	t.Helper()
	xm, ym, err := synth.Generate(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	return xm.RawMatrix().Data, ym.RawMatrix().Data
}

func addBlocks(t testing.TB, e *Estimator, x, y []float64, d, block int) {
	t.Helper()
	n := len(x) / d
	for i := 0; i < n; i += block {
		b := min(block, n-i)
		if err := e.Add(x[i*d:(i+b)*d], y[i*d:(i+b)*d], b); err != nil {
			t.Fatal(err)
		}
	}
}

func sameResult(t *testing.T, name string, a, b Result, tol float64) {
	t.Helper()
	pairs := [][2]float64{
		{a.EntropyX, b.EntropyX}, {a.EntropyY, b.EntropyY}, {a.EntropyJoint, b.EntropyJoint},
		{a.DiME, b.DiME}, {a.DiMEAnalytic, b.DiMEAnalytic}, {a.DiMEStdErr, b.DiMEStdErr},
	}
	for i, p := range pairs {
		if math.Abs(p[0]-p[1]) > tol || math.IsNaN(p[0]) != math.IsNaN(p[1]) {
			t.Errorf("%s: value %d: %.17g vs %.17g (tolerance %g)", name, i, p[0], p[1], tol)
		}
	}
	if a.Rows != b.Rows || a.SkippedRows != b.SkippedRows {
		t.Errorf("%s: rows %d/%d vs %d/%d", name, a.Rows, a.SkippedRows, b.Rows, b.SkippedRows)
	}
}

// TestStateContinues checks, in the pattern of hash/marshal_test.go, that an
// estimator saved after some rows and restored continues exactly as the
// original does.
func TestStateContinues(t *testing.T) {
	const d = 3
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.2, Seed: 1}, 6000)
	cfg := testConfig(d, 32, 3, 5)
	cfg.XColumns, cfg.YColumns = []string{"a", "b", "c"}, []string{"u", "v", "w"}
	orig, _ := New(d, d, cfg)
	addBlocks(t, orig, x[:2500*d], y[:2500*d], d, 1200)
	state, err := orig.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	restored, err := ReadState(bytes.NewReader(state))
	if err != nil {
		t.Fatal(err)
	}
	again, _ := restored.MarshalBinary()
	if !bytes.Equal(state, again) {
		t.Error("a restored state does not re-encode to the same bytes")
	}
	addBlocks(t, orig, x[2500*d:], y[2500*d:], d, 1200)
	addBlocks(t, restored, x[2500*d:], y[2500*d:], d, 1200)
	a, _ := orig.Result()
	b, err := restored.Result()
	if err != nil {
		t.Fatal(err)
	}
	sameResult(t, "continued", a, b, 0)
	if !slices.Equal(b.XColumns, cfg.XColumns) || !slices.Equal(b.YColumns, cfg.YColumns) {
		t.Errorf("columns %v %v", b.XColumns, b.YColumns)
	}
}

// TestMergeEqualsOneRun checks that merging the states of two shards equals
// one run over both shards with the same blocks (the scopes are the same, and
// each scope is ordered from its own content). Measured: 1e-15.
func TestMergeEqualsOneRun(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Circle, Dim: d, Noise: 0.1, Seed: 2}, 8000)
	cfg := testConfig(d, 32, 4, 7)
	cfg.Kernel = exact.Laplacian
	one, _ := New(d, d, cfg)
	addBlocks(t, one, x, y, d, 2000)
	one.Skip(3)
	shard := func(lo, hi int, skipped int64) []byte {
		e, _ := New(d, d, cfg)
		addBlocks(t, e, x[lo*d:hi*d], y[lo*d:hi*d], d, 2000)
		e.Skip(skipped)
		b, err := e.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	s1, s2 := shard(0, 6000, 1), shard(6000, 8000, 2)
	merged, err := ReadState(bytes.NewReader(s1))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := ReadState(bytes.NewReader(s2))
	if err := merged.Merge(other); err != nil {
		t.Fatal(err)
	}
	a, _ := one.Result()
	b, _ := merged.Result()
	sameResult(t, "merged", a, b, 1e-9)
}

func TestMergeRefusesIncompatible(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: 3}, 1500)
	base := testConfig(d, 16, 2, 1)
	build := func(f func(*Config)) *Estimator {
		c := base
		f(&c)
		e, err := New(d, d, c)
		if err != nil {
			t.Fatal(err)
		}
		addBlocks(t, e, x, y, d, 1500)
		return e
	}
	recv := build(func(*Config) {})
	before, _ := recv.MarshalBinary()
	for name, f := range map[string]func(*Config){
		"sigma":        func(c *Config) { c.BandwidthX = exact.Sigma(3) },
		"permutations": func(c *Config) { c.Permutations = 3 },
		"alpha":        func(c *Config) { c.Alpha = 2 },
		"features":     func(c *Config) { c.Features = 17 },
		"seed":         func(c *Config) { c.Seed = 2 },
		"kernel":       func(c *Config) { c.Kernel = exact.Elliptical },
		"columns":      func(c *Config) { c.XColumns = []string{"p", "q"} },
	} {
		if err := recv.Merge(build(f)); !errors.Is(err, ErrIncompatible) {
			t.Errorf("%s: error %v", name, err)
		}
		if now, _ := recv.MarshalBinary(); !bytes.Equal(now, before) {
			t.Fatalf("%s: receiver changed by a refused merge", name)
		}
	}
	median := build(func(c *Config) { c.BandwidthX = exact.Median() })
	if err := recv.Merge(median); !errors.Is(err, ErrIncompatible) {
		t.Errorf("median bandwidth: %v", err)
	}
}

func TestReadStateRejects(t *testing.T) {
	const d = 2
	x, y := rows(t, synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: 4}, 1100)
	e, _ := New(d, d, testConfig(d, 8, 2, 1))
	addBlocks(t, e, x, y, d, 1100)
	good, _ := e.MarshalBinary()
	for n := 0; n < len(good); n += 1 + n/10 {
		if _, err := ReadState(bytes.NewReader(good[:n])); !errors.Is(err, ErrState) {
			t.Fatalf("truncated to %d bytes: %v", n, err)
		}
	}
	for _, i := range []int{0, 6, 9, 20, 40, 100, len(good) / 2, len(good) - 5} {
		bad := slices.Clone(good)
		bad[i] ^= 0x40
		if _, err := ReadState(bytes.NewReader(bad)); !errors.Is(err, ErrState) {
			t.Errorf("byte %d flipped: %v", i, err)
		}
	}
	if _, err := ReadState(bytes.NewReader([]byte("PAR1 definitely not a state"))); !errors.Is(err, ErrState) {
		t.Errorf("foreign bytes: %v", err)
	}
	empty, _ := New(d, d, Config{Kernel: exact.Gaussian, Alpha: 1, Features: 4, Permutations: 1, BandwidthX: exact.Median()})
	if err := empty.WriteState(&bytes.Buffer{}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("saving an estimator without rows: %v", err)
	}
}

func FuzzReadState(f *testing.F) {
	x, y := rows(f, synth.Spec{Kind: synth.Gaussian, Dim: 1, MI: 1, Seed: 4}, 50)
	e, _ := New(1, 1, testConfig(1, 2, 1, 1))
	e.Add(x, y, 50)
	good, _ := e.MarshalBinary()
	f.Add(good)
	f.Add(good[:40])
	f.Add([]byte("dimeST\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e, err := ReadState(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrState) {
				t.Fatalf("error %v does not match ErrState", err)
			}
			return
		}
		if again, err := e.MarshalBinary(); err != nil || !bytes.Equal(again, data) {
			t.Fatalf("accepted state does not re-encode identically")
		}
	})
}

// TestPilotBandwidths checks that median and auto rules are resolved on the
// first PilotRows rows, which are then counted and added like the others.
func TestPilotBandwidths(t *testing.T) {
	const d, n = 2, 3000
	x, y := rows(t, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.2, Seed: 5}, n)
	cfg := testConfig(d, 16, 2, 1)
	cfg.BandwidthX, cfg.BandwidthY = exact.Median(), exact.Sigma(0.9)
	cfg.PilotRows = 800
	e, err := New(d, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if e.Started() {
		t.Fatal("started before the pilot")
	}
	addBlocks(t, e, x, y, d, 500)
	want, _ := exact.MedianSigma(exact.Gaussian, mat.NewDense(800, d, x[:800*d]))
	sx, sy := e.Bandwidths()
	if sx != want || sy != 0.9 {
		t.Errorf("bandwidths %v, %v; want median of the first 800 rows %v and 0.9", sx, sy, want)
	}
	r, err := e.Result()
	if err != nil || r.Rows != n || r.SigmaX != want || r.BandwidthX != exact.Median() {
		t.Errorf("result rows %d sigma %v rule %v: %v", r.Rows, r.SigmaX, r.BandwidthX, err)
	}
	// The pilot rows are added: the same data with the bandwidth given
	// explicitly gives the same result.
	cfg2 := cfg
	cfg2.BandwidthX = exact.Sigma(want)
	e2, _ := New(d, d, cfg2)
	addBlocks(t, e2, x, y, d, 500)
	r2, _ := e2.Result()
	if math.Abs(r.EntropyJoint-r2.EntropyJoint) > 1e-12 {
		t.Errorf("pilot rows not added like the others: joint %v vs %v", r.EntropyJoint, r2.EntropyJoint)
	}

	// Auto: resolved like exact.ResolveBandwidths on the pilot.
	cfg.BandwidthX, cfg.BandwidthY, cfg.PilotRows = exact.Auto(), exact.Auto(), 300
	ea, _ := New(d, d, cfg)
	addBlocks(t, ea, x[:1000*d], y[:1000*d], d, 1000)
	ax, ay := ea.Bandwidths()
	ecfg := exact.Config{Kernel: exact.Gaussian, Alpha: cfg.Alpha, SigmaX: exact.Auto(), SigmaY: exact.Auto(), Permutations: 2, Seed: 1}
	wx, wy, _ := exact.ResolveBandwidths(mat.NewDense(300, d, x[:300*d]), mat.NewDense(300, d, y[:300*d]), ecfg)
	if ax != wx || ay != wy {
		t.Errorf("auto bandwidths %v, %v; exact on the pilot %v, %v", ax, ay, wx, wy)
	}

	// Fewer rows than the pilot: Result resolves on what there is.
	ef, _ := New(d, d, cfg)
	addBlocks(t, ef, x[:100*d], y[:100*d], d, 100)
	if r, err := ef.Result(); err != nil || r.Rows != 100 || !(r.SigmaX > 0) {
		t.Errorf("short stream: %+v %v", r, err)
	}
	// An error in a row after the pilot names its global row.
	eb, _ := New(d, d, cfg)
	addBlocks(t, eb, x[:400*d], y[:400*d], d, 400)
	bad := slices.Clone(y[:10*d])
	bad[7*d+1] = math.NaN()
	if err := eb.Add(x[:10*d], bad, 10); err == nil || !bytesContains(err.Error(), "Y row 407, column 1") {
		t.Errorf("NaN after the pilot: %v", err)
	}
}

func bytesContains(s, sub string) bool { return bytes.Contains([]byte(s), []byte(sub)) }
