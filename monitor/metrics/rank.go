package metrics

import (
	"math"
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/rank"
)

// rankGauge is a gauge of a ranking's labelled candidates: its name, help,
// and the value of pair i of a window's ranking.
type rankGauge struct {
	name, help string
	value      func(r *monitor.Ranked, i int) float64
}

// changeOf returns a field of pair i's change from the baseline, NaN in
// the baseline window.
func changeOf(f func(c *monitor.Change) float64) func(r *monitor.Ranked, i int) float64 {
	return func(r *monitor.Ranked, i int) float64 {
		if r.Changes == nil {
			return math.NaN()
		}
		return f(r.Changes[i])
	}
}

// rankGaugeSpecs are the gauges of the candidates of a ranking, labelled by
// candidate.
var rankGaugeSpecs = []rankGauge{
	{"rank_dime_nats", "DiME of the candidate with the target, last closed window.", func(r *monitor.Ranked, i int) float64 { return r.Pairs[i].DiME }},
	{"rank_dime_stderr_nats", "Standard error of rank_dime_nats (jackknife over groups of rows).", func(r *monitor.Ranked, i int) float64 { return r.Pairs[i].DiMEStdErr }},
	{"rank_dime_normalized", "Normalized DiME of the candidate with the target, last closed window.", func(r *monitor.Ranked, i int) float64 { return r.Pairs[i].DiMENormalized }},
	{"rank_p_value", "p-value of independence of the candidate and the target, last closed window.", func(r *monitor.Ranked, i int) float64 { return r.Pairs[i].PValue }},
	{"rank_q_value", "Benjamini-Hochberg q-value over all candidates, last closed window.", func(r *monitor.Ranked, i int) float64 { return r.Pairs[i].QValue }},
	{"rank_position", "Rank of the candidate by DiME (1 the largest), last closed window.", func(r *monitor.Ranked, i int) float64 { return float64(r.Pairs[i].Rank) }},
	{"rank_dime_change_nats", "DiME of the candidate minus its baseline's, last closed window (NaN in the baseline window).", changeOf(func(c *monitor.Change) float64 { return c.Difference })},
	{"rank_change_p_value", "p-value of the test that the candidate's DiME changed from the baseline's, last closed window.", changeOf(func(c *monitor.Change) float64 { return c.PValue })},
	{"rank_change_q_value", "Benjamini-Hochberg q-value of rank_change_p_value over all candidates, last closed window.", func(r *monitor.Ranked, i int) float64 {
		if r.ChangeQ == nil {
			return math.NaN()
		}
		return r.ChangeQ[i]
	}},
	{"rank_changed", "1 if the candidate's DiME changed from the baseline's in the last closed window, else 0.", func(r *monitor.Ranked, i int) float64 {
		if slices.Contains(r.Changed, i) {
			return 1
		}
		return 0
	}},
}

// rankGauges are the gauges of a monitor of many pairs.
type rankGauges struct {
	plan                             rank.Plan
	top                              int
	vecs                             []*prometheus.GaugeVec
	labelled                         map[string]bool // the candidates with series
	candidates, changedCount, series prometheus.Gauge
}

// NewRank returns the metrics of a monitor of many pairs (monitor.Ranking
// with the plan and top K given): the gauges of the last window's position
// (dime_window, dime_window_rows, dime_alert, the last window's timestamp),
// the counters, and per candidate the gauges dime_rank_* labelled by
// candidate, for the current top K and at most K more of the changed
// candidates (smallest change p-value first). The series of a candidate
// that leaves that set are deleted: each labelled gauge has at most 2K
// series (dime_rank_labelled_candidates), whatever the number of
// candidates or windows. A window of fewer than 2 rows leaves them as
// they are.
func NewRank(l Labels, plan rank.Plan, top int) *Metrics {
	if top <= 0 {
		top = monitor.DefaultRankTop
	}
	m := newMetrics(l, positionGauges)
	labels := m.labels
	g := &rankGauges{plan: plan, top: top, labelled: map[string]bool{}}
	for _, s := range rankGaugeSpecs {
		g.vecs = append(g.vecs, prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: s.name, Help: s.help, ConstLabels: labels}, []string{"candidate"}))
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help, ConstLabels: labels})
	}
	g.candidates = gauge("rank_candidates", "Candidates ranked against the target.")
	g.candidates.Set(float64(len(plan.Pairs)))
	g.changedCount = gauge("rank_changed_candidates", "Candidates whose DiME changed from the baseline's in the last closed window (all, labelled or not).")
	g.changedCount.Set(math.NaN())
	g.series = gauge("rank_labelled_candidates", "Candidates with series of the dime_rank_* gauges: the top K and at most K changed ones.")
	m.rank = g
	return m
}

func (g *rankGauges) collectors() []prometheus.Collector {
	cs := []prometheus.Collector{g.candidates, g.changedCount, g.series}
	for _, v := range g.vecs {
		cs = append(cs, v)
	}
	return cs
}

// observe sets the gauges of the window's top and changed candidates and
// deletes those of the candidates that left them.
func (g *rankGauges) observe(r *monitor.Ranked) {
	if r.Pairs == nil {
		return
	}
	keep := append([]int(nil), r.Top...)
	extra := 0
	for _, i := range r.Changed {
		if extra == g.top {
			break
		}
		if !slices.Contains(r.Top, i) {
			keep = append(keep, i)
			extra++
		}
	}
	now := map[string]bool{}
	for _, i := range keep {
		name := boundLabel(g.plan.Views[r.Pairs[i].X].Name)
		now[name] = true
		for k, s := range rankGaugeSpecs {
			g.vecs[k].WithLabelValues(name).Set(s.value(r, i))
		}
	}
	for name := range g.labelled {
		if !now[name] {
			for _, v := range g.vecs {
				v.DeleteLabelValues(name)
			}
		}
	}
	g.labelled = now
	g.series.Set(float64(len(now)))
	if r.Changes != nil {
		g.changedCount.Set(float64(len(r.Changed)))
	} else {
		g.changedCount.Set(0)
	}
}
