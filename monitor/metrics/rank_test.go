package metrics

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/rank"
)

// TestRankSeriesBounded: over 300 windows of a ranking of 200 candidates
// whose top 5 and changed candidates (0 to 40 a window) are drawn afresh
// each window, every dime_rank_* gauge has at most 2K = 10 series after
// each window (those of the window's top 5 and at most 5 changed ones,
// the others deleted), the values are the window's, and the families of
// one pair (dime_dime_nats, …) are not exported.
func TestRankSeriesBounded(t *testing.T) {
	const C, K = 200, 5
	var plan rank.Plan
	for j := range C {
		plan.Views = append(plan.Views, rank.View{Name: fmt.Sprintf("c%03d", j)})
		plan.Pairs = append(plan.Pairs, [2]int{j, C})
	}
	plan.Views = append(plan.Views, rank.View{Name: "y"})
	m := NewRank(Labels{X: "c*", Y: "y"}, plan, K)
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for w := range 300 {
		r := &monitor.Ranked{Pairs: make([]rank.PairResult, C), Changes: make([]*monitor.Change, C)}
		for i, p := range rng.Perm(C) {
			r.Pairs[i] = rank.PairResult{X: i, Y: C, Rank: p + 1}
			r.Pairs[i].DiME = float64(C - p)
			r.Changes[i] = &monitor.Change{Difference: float64(i), PValue: 0.5}
		}
		for _, i := range rng.Perm(C) {
			if r.Pairs[i].Rank <= K {
				r.Top = append(r.Top, i)
			}
		}
		r.Changed = rng.Perm(C)[:rng.IntN(41)]
		for _, i := range r.Changed {
			r.Changes[i].PValue = 0.001
		}
		m.Observe(monitor.Window{Index: w, Rows: 1000, Ranking: r})
		fams, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			name := f.GetName()
			if name == "dime_dime_nats" || name == "dime_p_value" {
				t.Fatalf("%s exported by a ranking", name)
			}
			if !strings.HasPrefix(name, "dime_rank_") || len(f.GetMetric()) == 1 && len(f.GetMetric()[0].GetLabel()) == 2 {
				continue
			}
			if n := len(f.GetMetric()); n > 2*K || n < K {
				t.Fatalf("window %d: %s has %d series, want %d to %d", w, name, n, K, 2*K)
			}
			for _, s := range f.GetMetric() {
				var cand string
				for _, l := range s.GetLabel() {
					if l.GetName() == "candidate" {
						cand = l.GetValue()
					}
				}
				seen[cand] = true
				var i int
				fmt.Sscanf(cand, "c%d", &i)
				if name == "dime_rank_position" && s.GetGauge().GetValue() != float64(r.Pairs[i].Rank) {
					t.Fatalf("window %d: %s rank %v, want %d", w, cand, s.GetGauge().GetValue(), r.Pairs[i].Rank)
				}
				if name == "dime_rank_changed" && (s.GetGauge().GetValue() == 1) != (r.Changes[i].PValue < 0.01) {
					t.Fatalf("window %d: %s changed %v", w, cand, s.GetGauge().GetValue())
				}
			}
		}
	}
	if len(seen) < C/2 {
		t.Errorf("only %d candidates ever labelled: the set did not churn", len(seen))
	}
}
