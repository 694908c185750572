package monitor

import (
	"slices"
	"testing"
	"time"

	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// screenLayout returns the layout of a ranking of a screening table's
// candidates against its target y, read as X = candidates, Y = y.
func screenLayout(t *testing.T, s *synth.Screen) rank.Layout {
	t.Helper()
	cols := s.Columns()
	probe := func(x, _ []string) ([]string, int, error) { return x, len(x), nil }
	lay, err := rank.RankLayout(probe, cols[:1], cols[1:], nil)
	if err != nil {
		t.Fatal(err)
	}
	return lay
}

// addScreen adds n rows of s to m, in blocks of 500 rows.
func addScreen(t *testing.T, m *Monitor, s *synth.Screen, c, n int) {
	t.Helper()
	table := make([]float64, 500*(1+c))
	for done := 0; done < n; done += 500 {
		rows := s.Fill(table)
		x, y := make([]float64, 0, rows*c), make([]float64, 0, rows)
		for i := range rows {
			row := table[i*(1+c) : (i+1)*(1+c)]
			y = append(y, row[0])
			x = append(x, row[1:]...)
		}
		if err := m.Add(x, y, nil, rows); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRankMonitorFindsTheSwitch: on a screening stream of 20 candidates
// (six dependent on y, held-out seeds) where the third-strongest dependent
// candidate is independent of y for the first 6,000 rows and dependent
// after, a ranking monitor of 1,000-row windows at D = 32 (the first window
// the baseline, top 5) reports it changed and in the top in every window
// after the switch, entering the top with one leaving it, and flags the
// candidates whose dependence does not change rarely.
func TestRankMonitorFindsTheSwitch(t *testing.T) {
	const c, window, windows = 20, 1000, 12
	falseFlags, tests := 0, 0
	for _, seed := range []uint64{31, 32} {
		s, err := synth.NewScreen(c, seed)
		if err != nil {
			t.Fatal(err)
		}
		s.SwitchOn(2, windows/2*window)
		switched := s.Dependent()[2]
		sc := stream.DefaultConfig()
		sc.Features = 32
		var got []Window
		m, err := New(c, 1, Config{WindowRows: window, Rank: &Ranking{Layout: screenLayout(t, s), Config: rank.Config{Stream: sc}, Top: 5}},
			func(w Window) error { got = append(got, w); return nil })
		if err != nil {
			t.Fatal(err)
		}
		addScreen(t, m, s, c, windows*window)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		if len(got) != windows || !got[0].Ranking.IsBaseline || got[1].Ranking.Baseline != 0 {
			t.Fatalf("seed %d: %d windows, first baseline %v", seed, len(got), got[0].Ranking.IsBaseline)
		}
		plan := screenLayout(t, s).Plan
		name := func(w Window, i int) string { return plan.Views[w.Ranking.Pairs[i].X].Name }
		for _, w := range got[1:] {
			r := w.Ranking
			var changed, top, entered []string
			for _, i := range r.Changed {
				changed = append(changed, name(w, i))
			}
			for _, i := range r.Top {
				top = append(top, name(w, i))
			}
			for _, i := range r.Entered {
				entered = append(entered, name(w, i))
			}
			after := w.StartRow >= windows/2*window
			if after && (!slices.Contains(changed, switched) || !slices.Contains(top, switched) || !slices.Contains(entered, switched) || len(r.Left) != 1 || !w.Alert) {
				t.Errorf("seed %d: window %d after the switch: %s not changed in %v, top %v, entered %v (left %d), alert %v", seed, w.Index, switched, changed, top, entered, len(r.Left), w.Alert)
			}
			if !after && slices.Contains(top, switched) {
				t.Errorf("seed %d: window %d before the switch: %s in the top %v", seed, w.Index, switched, top)
			}
			for i := range r.Pairs {
				if name(w, i) == switched {
					continue
				}
				tests++
				if slices.Contains(r.Changed, i) {
					falseFlags++
				}
			}
		}
	}
	t.Logf("candidates whose dependence did not change flagged in %d of %d window-candidates (%.2f%%)", falseFlags, tests, 100*float64(falseFlags)/float64(tests))
	if float64(falseFlags) > 0.03*float64(tests) {
		t.Errorf("%d of %d unchanged window-candidates flagged, want at most 3%%", falseFlags, tests)
	}
}

// TestRankMonitorTimeWindows: time windows of 1,000 s over rows one second
// apart rank exactly as row windows of 1,000 rows.
func TestRankMonitorTimeWindows(t *testing.T) {
	const c, n = 8, 3000
	s, err := synth.NewScreen(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	table := make([]float64, n*(1+c))
	s.Fill(table)
	x, y, times := make([]float64, 0, n*c), make([]float64, 0, n), make([]int64, n)
	for i := range n {
		row := table[i*(1+c) : (i+1)*(1+c)]
		y, x = append(y, row[0]), append(x, row[1:]...)
		times[i] = int64(i) * int64(time.Second)
	}
	sc := stream.DefaultConfig()
	sc.Features = 16
	var byRows, byTime []Window
	for _, run := range []struct {
		cfg Config
		out *[]Window
		t   []int64
	}{{Config{WindowRows: 1000}, &byRows, nil}, {Config{Window: 1000 * time.Second}, &byTime, times}} {
		run.cfg.Rank = &Ranking{Layout: screenLayout(t, s), Config: rank.Config{Stream: sc}, Top: 3}
		m, err := New(c, 1, run.cfg, func(w Window) error { *run.out = append(*run.out, w); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Add(x, y, run.t, n); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if len(byRows) != 3 || len(byTime) != 3 {
		t.Fatalf("%d and %d windows, want 3", len(byRows), len(byTime))
	}
	for k := range byRows {
		a, b := byRows[k].Ranking, byTime[k].Ranking
		if byTime[k].StartTime.IsZero() || !slices.Equal(a.Top, b.Top) || !slices.Equal(a.Changed, b.Changed) {
			t.Errorf("window %d: top %v and %v, changed %v and %v", k, a.Top, b.Top, a.Changed, b.Changed)
		}
		for i := range a.Pairs {
			if a.Pairs[i].DiME != b.Pairs[i].DiME || a.Pairs[i].QValue != b.Pairs[i].QValue {
				t.Errorf("window %d, pair %d: DiME %v and %v", k, i, a.Pairs[i].DiME, b.Pairs[i].DiME)
			}
		}
	}
}
