package monitor

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

func streamConfig() stream.Config {
	c := stream.DefaultConfig()
	c.Standardize = false // studies designed on unit-scale data at the raw fixed bandwidth
	c.Features, c.Permutations = 32, 3
	return c
}

func data(t testing.TB, kind synth.Kind, n int, seed uint64) (x, y []float64) {
	t.Helper()
	xm, ym, err := synth.Generate(synth.Spec{Kind: kind, Dim: 2, Noise: 0.2, Seed: seed}, n)
	if err != nil {
		t.Fatal(err)
	}
	return xm.RawMatrix().Data, ym.RawMatrix().Data
}

// collect returns an emit function that appends windows to *ws.
func collect(ws *[]Window) func(Window) error {
	return func(w Window) error { *ws = append(*ws, w); return nil }
}

// feedBlocks adds rows to m in blocks of the given size.
func feedBlocks(t testing.TB, m *Monitor, x, y []float64, times []int64, block int) error {
	t.Helper()
	n := len(x) / 2
	for i := 0; i < n; i += block {
		b := min(block, n-i)
		var tb []int64
		if times != nil {
			tb = times[i : i+b]
		}
		if err := m.Add(x[2*i:2*(i+b)], y[2*i:2*(i+b)], tb, b); err != nil {
			return err
		}
	}
	return nil
}

// fresh returns the result of a new estimator fed rows [lo, hi) in the
// blocks that the monitor's window saw (cuts at multiples of block and at
// lo).
func fresh(t *testing.T, cfg stream.Config, x, y []float64, lo, hi, block int) stream.Result {
	t.Helper()
	e, err := stream.New(2, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := lo; i < hi; {
		end := min(hi, (i/block+1)*block)
		if err := e.Add(x[2*i:2*end], y[2*i:2*end], end-i); err != nil {
			t.Fatal(err)
		}
		i = end
	}
	r, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRowWindows(t *testing.T) {
	x, y := data(t, synth.Circle, 2500, 1)
	var ws []Window
	m, err := New(2, 2, Config{Stream: streamConfig(), WindowRows: 1000}, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, nil, 333); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 {
		t.Fatalf("%d windows before Close, want 2", len(ws))
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	want := [][2]int64{{0, 1000}, {1000, 2000}, {2000, 2500}}
	if len(ws) != 3 {
		t.Fatalf("%d windows, want 3", len(ws))
	}
	for i, w := range ws {
		if w.Index != i || w.StartRow != want[i][0] || w.EndRow != want[i][1] || w.Rows != want[i][1]-want[i][0] || w.Partial != (i == 2) {
			t.Errorf("window %d: %+v", i, w)
		}
		r := fresh(t, streamConfig(), x, y, int(want[i][0]), int(want[i][1]), 333)
		if w.Result.DiME != r.DiME || w.Result.EntropyJoint != r.EntropyJoint || w.Result.Rows != r.Rows {
			t.Errorf("window %d: DiME %v joint %v, fresh estimator %v %v", i, w.Result.DiME, w.Result.EntropyJoint, r.DiME, r.EntropyJoint)
		}
	}
}

func TestTimeWindows(t *testing.T) {
	const n = 600
	x, y := data(t, synth.Sine, n, 2)
	// Rows every 0.25 s from 00:00:00, a 3-minute gap after row 399.
	base := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC).UnixNano()
	times := make([]int64, n)
	for i := range times {
		ts := base + int64(i)*int64(250*time.Millisecond)
		if i >= 400 {
			ts += int64(3 * time.Minute)
		}
		times[i] = ts
	}
	var ws []Window
	cfg := Config{Stream: streamConfig(), Window: time.Minute}
	m, err := New(2, 2, cfg, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, times, 97); err != nil {
		t.Fatal(err)
	}
	m.Close()
	// 240 rows per minute: [0,240) in 10:00, [240,400) in 10:01, then the
	// gap: rows 400.. are at 10:04:40 onward: [400,480) in 10:04, [480,600) in 10:05.
	want := []struct {
		lo, hi int64
		start  string
	}{{0, 240, "10:00"}, {240, 400, "10:01"}, {400, 480, "10:04"}, {480, 600, "10:05"}}
	if len(ws) != len(want) {
		t.Fatalf("%d windows, want %d", len(ws), len(want))
	}
	for i, w := range ws {
		if w.StartRow != want[i].lo || w.EndRow != want[i].hi || w.StartTime.Format("15:04") != want[i].start ||
			w.EndTime.Sub(w.StartTime) != time.Minute || w.Index != i {
			t.Errorf("window %d: rows [%d, %d) from %v, want [%d, %d) from %s", i, w.StartRow, w.EndRow, w.StartTime, want[i].lo, want[i].hi, want[i].start)
		}
	}
	// A row before the current window is an error; windows emitted stay.
	ws = nil
	m, _ = New(2, 2, cfg, collect(&ws))
	late := append([]int64(nil), times...)
	late[300] = base // back to 10:00 while 10:01 is open
	err = feedBlocks(t, m, x, y, late, 97)
	if !errors.Is(err, ErrLate) || len(ws) != 1 || ws[0].EndRow != 240 {
		t.Errorf("late row: error %v, %d windows", err, len(ws))
	}
	// With SkipLate the row is dropped and counted.
	ws = nil
	cfg.SkipLate = true
	m, _ = New(2, 2, cfg, collect(&ws))
	if err := feedBlocks(t, m, x, y, late, 97); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if len(ws) != 4 || ws[1].Rows != 159 || ws[1].Skipped != 1 || ws[1].Result.SkippedRows != 1 {
		t.Errorf("SkipLate: %d windows, window 1 rows %d skipped %d", len(ws), ws[1].Rows, ws[1].Skipped)
	}
}

// TestDecayReports checks that decay reports equal a decaying estimator fed
// the same rows, every WindowRows rows.
func TestDecayReports(t *testing.T) {
	x, y := data(t, synth.Gaussian, 2000, 3)
	var ws []Window
	cfg := Config{Stream: streamConfig(), HalfLife: 300, WindowRows: 700}
	m, err := New(2, 2, cfg, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, nil, 700); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if len(ws) != 3 || ws[2].EndRow != 2000 || !ws[2].Partial {
		t.Fatalf("%d reports", len(ws))
	}
	sc := streamConfig()
	sc.HalfLife = 300
	e, _ := stream.New(2, 2, sc)
	for i, w := range ws {
		lo, hi := int(w.StartRow), int(w.EndRow)
		e.Add(x[2*lo:2*hi], y[2*lo:2*hi], hi-lo)
		r, _ := e.Result()
		if w.Result.DiME != r.DiME || math.Abs(w.Result.EffectiveRows-r.EffectiveRows) > 1e-12 {
			t.Errorf("report %d: DiME %v effective rows %v; estimator %v %v", i, w.Result.DiME, w.Result.EffectiveRows, r.DiME, r.EffectiveRows)
		}
		if r.EffectiveRows > 300/math.Ln2+1 {
			t.Errorf("report %d: effective rows %v exceed h/ln 2", i, r.EffectiveRows)
		}
	}
}

// TestSwitchDetected streams 20,000 independent rows then 20,000 sine rows in
// windows of 2500: the windows before the switch have DiME near 0 and no
// alert; those after exceed the threshold and alert; the switch (at row
// 20,000, the start of window 8) is located to within one window.
func TestSwitchDetected(t *testing.T) {
	if testing.Short() {
		t.Skip("40,000 rows")
	}
	xa, ya := data(t, synth.Independent, 20000, 11)
	xb, yb := data(t, synth.Sine, 20000, 12)
	x, y := append(xa, xb...), append(ya, yb...)
	var ws []Window
	cfg := Config{Stream: streamConfig(), WindowRows: 2500, AlertAbove: Threshold(0.05)}
	cfg.Stream.Features = 64
	m, err := New(2, 2, cfg, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, nil, 1000); err != nil {
		t.Fatal(err)
	}
	m.Close()
	first := -1
	for _, w := range ws {
		r := w.Result
		t.Logf("window %2d rows [%5d, %5d): DiME %7.4f p %.2g alert %v", w.Index, w.StartRow, w.EndRow, r.DiME, r.PValue, w.Alert)
		if w.EndRow <= 20000 {
			// Measured: |DiME| <= 0.003, p from 0.003 to 0.9.
			if math.Abs(r.DiME) > 0.01 || w.Alert {
				t.Errorf("window %d before the switch: DiME %.4f, alert %v", w.Index, r.DiME, w.Alert)
			}
		} else {
			// Measured: DiME 0.28 to 0.30, p below 1e-8.
			if !w.Alert || r.PValue > 1e-4 {
				t.Errorf("window %d after the switch: DiME %.4f, p %v, alert %v", w.Index, r.DiME, r.PValue, w.Alert)
			}
		}
		if w.Alert && first < 0 {
			first = w.Index
		}
	}
	if first < 8 || first > 9 {
		t.Errorf("first alert in window %d, switch in window 8", first)
	}
}

func TestConfigErrors(t *testing.T) {
	emit := func(Window) error { return nil }
	for _, c := range []Config{
		{Stream: streamConfig()},                                     // no window
		{Stream: streamConfig(), WindowRows: -5},                     // negative rows
		{Stream: streamConfig(), Window: -time.Second},               // negative duration
		{Stream: streamConfig(), Window: time.Second, WindowRows: 3}, // two kinds
		{Stream: streamConfig(), HalfLife: math.Inf(1)},
		{Stream: streamConfig(), WindowRows: 10, AlertP: Threshold(2)},
		{Stream: streamConfig(), WindowRows: 10, AlertP: Threshold(0)},
		{Stream: streamConfig(), WindowRows: 10, AlertAbove: Threshold(math.NaN())},
	} {
		if _, err := New(2, 2, c, emit); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := New(2, 2, Config{Stream: streamConfig(), WindowRows: 10}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil emit: %v", err)
	}
	if _, err := New(2, 2, Config{Stream: streamConfig(), WindowRows: 10}, emit); err != nil {
		t.Errorf("the zero thresholds (unset) are refused: %v", err)
	}
	m, _ := New(2, 2, Config{Stream: streamConfig(), Window: time.Minute}, emit)
	if err := m.Add([]float64{1, 2}, []float64{1, 2}, nil, 1); err == nil {
		t.Error("time windows accepted rows without times")
	}
}
