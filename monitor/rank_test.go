package monitor

import (
	"slices"
	"testing"

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
