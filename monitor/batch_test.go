package monitor

import (
	"errors"
	"math"
	"testing"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// TestBatchBlocks checks the doubling blocks: contiguous, in order, of s/2
// to 3s/2 rows at the end, for lengths around the doublings; and that the
// batch's plug-in estimate is that of one estimator over the same rows
// (merges of accumulators: round-off only).
func TestBatchBlocks(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 31}, 3000, cfg)
	x, y := genRows(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 32}, 7000)
	for _, n := range []int{2, 63, 64, 65, 640, 641, 700, 1300, 2559, 2600, 7000} {
		b, err := NewBatch(2, 2, Config{Stream: cfg, Baseline: base, BaselineBlocks: 5})
		if err != nil {
			t.Fatal(err)
		}
		// Blocks of 97 rows, across block boundaries.
		for i := 0; i < n; i += 97 {
			e := min(n, i+97)
			if err := b.Add(x[2*i:2*e], y[2*i:2*e], e-i); err != nil {
				t.Fatal(err)
			}
		}
		if b.Rows() != int64(n) {
			t.Fatalf("n %d: Rows %d", n, b.Rows())
		}
		r, ch, err := b.Result()
		if err != nil {
			t.Fatalf("n %d: %v", n, err)
		}
		s := b.blockRows
		total := b.Estimator().Rows()
		if total != int64(n) {
			t.Errorf("n %d: the batch estimator has %d rows", n, total)
		}
		// The K..2K blocks: the change test's degrees of freedom are
		// the non-empty blocks minus one.
		if n >= 5*batchFirstBlockRows {
			nonEmpty := ch.DF + 1
			if nonEmpty < 5 || nonEmpty > 10 {
				t.Errorf("n %d: %d blocks of %d rows, want 5 to 10", n, nonEmpty, s)
			}
		}
		whole, _ := stream.New(2, 2, b.est.Config())
		whole.Add(x[:2*n], y[:2*n], n)
		if n < 2 {
			continue
		}
		wr, err := whole.Result()
		if err != nil {
			t.Fatal(err)
		}
		// The accumulators are the same sums; the jackknife's groups are
		// not (rows are dealt to groups within each block), so compare
		// the plug-in estimate. Measured: relative differences up to 3e-7
		// (the eigensolver's tolerance on matrices summed in another
		// order); bound 2e-6.
		if d := math.Abs(wr.DiMEAnalytic - r.DiMEAnalytic); !(d <= 2e-6*math.Abs(wr.DiMEAnalytic)) {
			t.Errorf("n %d: batch analytic DiME %v, one estimator %v", n, r.DiMEAnalytic, wr.DiMEAnalytic)
		}
	}
}

// TestBatchBlockSizes feeds a batch and inspects its blocks just before
// Result: contiguous blocks of s rows but the last, which joins the one
// before when shorter than s/2.
func TestBatchBlockSizes(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 33}, 3000, cfg)
	x, y := genRows(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 34}, 5000)
	for _, n := range []int{640, 641, 700, 1000, 1300, 2600, 5000} {
		b, _ := NewBatch(2, 2, Config{Stream: cfg, Baseline: base, BaselineBlocks: 5})
		if err := b.Add(x[:2*n], y[:2*n], n); err != nil {
			t.Fatal(err)
		}
		s := b.blockRows
		var rows []int64
		for _, bl := range b.base.blocks[:b.base.cur+1] {
			rows = append(rows, bl.Rows())
		}
		last := rows[len(rows)-1]
		if last < s/2 && len(rows) > 1 {
			rows[len(rows)-2] += last
			rows = rows[:len(rows)-1]
		}
		var sum int64
		for i, r := range rows {
			sum += r
			if i < len(rows)-1 && r != s {
				t.Errorf("n %d: block %d has %d rows, want %d (%v)", n, i, r, s, rows)
			}
			if r < s/2 || r > 3*s/2 {
				t.Errorf("n %d: block %d has %d rows, outside [%d, %d] (%v)", n, i, r, s/2, 3*s/2, rows)
			}
		}
		if sum != int64(n) || len(rows) < 5 || len(rows) > 10 {
			t.Errorf("n %d: %d blocks %v", n, len(rows), rows)
		}
	}
}

// TestBatchChange: a batch drawn as the baseline was is not flagged, one
// whose dependence vanished is; and the p-values of batches drawn as the
// baseline spread over (0, 1). Seeds fixed: the outcome is reproducible,
// the bounds wide (a p-value below 0.01 for an unchanged batch has chance
// 1%, above 1e-6 for the vanished one none seen).
func TestBatchChange(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 41}, 8000, cfg)
	run := func(kind synth.Kind, seed uint64, n int) *Change {
		b, err := NewBatch(2, 2, Config{Stream: cfg, Baseline: base})
		if err != nil {
			t.Fatal(err)
		}
		x, y := genRows(t, synth.Spec{Kind: kind, Dim: 2, Noise: 0.3, Seed: seed}, n)
		if err := b.Add(x, y, n); err != nil {
			t.Fatal(err)
		}
		_, ch, err := b.Result()
		if err != nil {
			t.Fatal(err)
		}
		return ch
	}
	if ch := run(synth.Independent, 42, 3000); !(ch.PValue < 1e-6) || !(ch.Difference < 0) {
		t.Errorf("vanished dependence: change %+v", ch)
	}
	below := 0
	var ps []float64
	for seed := uint64(50); seed < 60; seed++ {
		ch := run(synth.Sine, seed, 3000)
		ps = append(ps, ch.PValue)
		if math.IsNaN(ch.PValue) || ch.DF < 4 {
			t.Fatalf("seed %d: change %+v", seed, ch)
		}
		if ch.PValue < 0.01 {
			below++
		}
	}
	if below > 1 {
		t.Errorf("%d of 10 unchanged batches with a change p-value below 0.01", below)
	}
	t.Logf("unchanged batches: change p-values %.3g", ps)
}

func TestBatchErrors(t *testing.T) {
	cfg := streamConfig()
	if _, err := NewBatch(2, 2, Config{Stream: cfg}); !errors.Is(err, ErrConfig) {
		t.Errorf("no baseline: %v", err)
	}
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 43}, 1000, cfg)
	if _, err := NewBatch(2, 2, Config{Stream: cfg, Baseline: base, BaselineBlocks: 1}); !errors.Is(err, ErrConfig) {
		t.Errorf("1 block: %v", err)
	}
	if _, err := NewBatch(3, 2, Config{Stream: cfg, Baseline: base}); !errors.Is(err, ErrConfig) {
		t.Errorf("other widths: %v", err)
	}
	b, _ := NewBatch(2, 2, Config{Stream: cfg, Baseline: base})
	if err := b.Add([]float64{1}, []float64{1, 2}, 1); !errors.Is(err, stream.ErrInvalidInput) {
		t.Errorf("short block: %v", err)
	}
	if err := b.Add([]float64{1, math.NaN()}, []float64{1, 2}, 1); err == nil {
		t.Error("NaN accepted")
	}
	if _, _, err := b.Result(); err == nil {
		t.Error("Result of no rows")
	}
}

// TestBatchExpectRows: a batch of known length is cut as a monitor's
// window of that length, and its comparison is the monitor's, to
// round-off; more rows than expected go on into more blocks.
func TestBatchExpectRows(t *testing.T) {
	cfg := streamConfig()
	base := reference(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 35}, 4000, cfg)
	const n = 2345
	x, y := genRows(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.3, Seed: 36}, 2*n)
	var ws []Window
	m, err := New(2, 2, Config{Stream: cfg, WindowRows: n, Baseline: base, BaselineBlocks: 4}, collect(&ws))
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x[:2*n], y[:2*n], nil, 500); err != nil {
		t.Fatal(err)
	}
	b, _ := NewBatch(2, 2, Config{Stream: cfg, Baseline: base, BaselineBlocks: 4})
	b.ExpectRows(n)
	for i := 0; i < n; i += 500 {
		e := min(n, i+500)
		if err := b.Add(x[2*i:2*e], y[2*i:2*e], e-i); err != nil {
			t.Fatal(err)
		}
	}
	if len(b.base.blocks) != 4 || b.blockRows != (n+3)/4 {
		t.Errorf("%d blocks of %d rows, want 4 of %d", len(b.base.blocks), b.blockRows, (n+3)/4)
	}
	r, ch, err := b.Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 {
		t.Fatalf("%d windows", len(ws))
	}
	w := ws[0]
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1e-3, math.Abs(b)) }
	if !close(r.DiME, w.Result.DiME) || !close(ch.Difference, w.Change.Difference) || !close(ch.StdErr, w.Change.StdErr) ||
		!close(ch.PValue, w.Change.PValue) || ch.DF != w.Change.DF {
		t.Errorf("batch: DiME %v change %+v\nmonitor: DiME %v change %+v", r.DiME, ch, w.Result.DiME, w.Change)
	}
	// Twice the rows expected: 4 more blocks of the same length.
	b, _ = NewBatch(2, 2, Config{Stream: cfg, Baseline: base, BaselineBlocks: 4})
	b.ExpectRows(n)
	if err := b.Add(x, y, 2*n); err != nil {
		t.Fatal(err)
	}
	if len(b.base.blocks) != 8 || b.base.cur != 7 || b.blockRows != (n+3)/4 {
		t.Errorf("twice the rows: %d blocks, current %d, of %d rows", len(b.base.blocks), b.base.cur, b.blockRows)
	}
}
