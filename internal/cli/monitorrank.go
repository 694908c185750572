package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/monitor/metrics"
	"github.com/dime-project/dime/rank"
	rpt "github.com/dime-project/dime/report"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// rankCandidateLine is a candidate of a window of dime monitor --rank-y:
// dime rank's fields, and its change from the baseline.
type rankCandidateLine struct {
	rpt.RankCandidate
	*baselineChange
	ChangeQValue *number `json:"change_q_value,omitempty"`
	Changed      bool    `json:"changed"`
}

// rankWindowLine is one JSON line of dime monitor --rank-y.
type rankWindowLine struct {
	windowSpan
	Partial    bool     `json:"partial"`
	Target     []string `json:"target"`
	Features   int      `json:"features"`
	Groups     int      `json:"groups"`
	Candidates int      `json:"candidates"`
	// BaselineWindow is the baseline's window, absent with --baseline
	// (a state); IsBaseline marks the baseline window itself.
	BaselineWindow *int `json:"baseline_window,omitempty"`
	IsBaseline     bool `json:"is_baseline"`
	// Top are the first --top candidates by rank.
	Top []rankCandidateLine `json:"top"`
	// Changed counts the candidates whose DiME changed from the
	// baseline's, Changes lists them (smallest change p-value first);
	// EnteredTop and LeftTop count the candidates that entered and left
	// the baseline's top, Entered and Left name them.
	Changed      int                 `json:"changed"`
	EnteredTop   int                 `json:"entered_top"`
	LeftTop      int                 `json:"left_top"`
	Changes      []rankCandidateLine `json:"changes"`
	Entered      []string            `json:"entered"`
	Left         []string            `json:"left"`
	Alert        bool                `json:"alert"`
	AlertReasons []string            `json:"alert_reasons,omitempty"`
}

// rankWindowWriter prints the windows of a monitor of many pairs.
type rankWindowWriter struct {
	w      io.Writer
	json   bool
	timed  bool
	plan   rank.Plan
	target []string
	cfg    stream.Config
}

func (rw *rankWindowWriter) candidate(r *monitor.Ranked, i int) rankCandidateLine {
	c := rankCandidateLine{RankCandidate: rpt.RankCandidateOf(rw.plan, r.Pairs[i])}
	if r.Changes != nil {
		q := number(r.ChangeQ[i])
		c.baselineChange, c.ChangeQValue = changeOf(r.Changes[i]), &q
	}
	for _, j := range r.Changed {
		c.Changed = c.Changed || j == i
	}
	return c
}

func (rw *rankWindowWriter) names(r *monitor.Ranked, idx []int) []string {
	out := []string{}
	for _, i := range idx {
		out = append(out, rw.plan.Views[r.Pairs[i].X].Name)
	}
	return out
}

func (rw *rankWindowWriter) line(w monitor.Window) rankWindowLine {
	r := w.Ranking
	l := rankWindowLine{windowSpan: spanOf(w), Partial: w.Partial,
		Target: rw.target, Features: rw.cfg.Features, Groups: rw.cfg.GroupCount(), Candidates: len(rw.plan.Pairs),
		IsBaseline: r.IsBaseline, Top: []rankCandidateLine{}, Changes: []rankCandidateLine{},
		Changed: len(r.Changed), EnteredTop: len(r.Entered), LeftTop: len(r.Left), Entered: rw.names(r, r.Entered), Left: rw.names(r, r.Left),
		Alert: w.Alert, AlertReasons: w.AlertReasons}
	if r.Baseline >= 0 {
		b := r.Baseline
		l.BaselineWindow = &b
	}
	for _, i := range r.Top {
		l.Top = append(l.Top, rw.candidate(r, i))
	}
	for _, i := range r.Changed {
		l.Changes = append(l.Changes, rw.candidate(r, i))
	}
	return l
}

// write prints a window: one JSON line, or a few lines of a table (the
// window, then its top and the changed candidates outside it).
func (rw *rankWindowWriter) write(w monitor.Window) (any, error) {
	l := rw.line(w)
	if rw.json {
		return l, writeJSON(rw.w, l)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "window %s  rows %d", windowPos(w, rw.timed), w.Rows)
	switch {
	case w.Ranking.Pairs == nil:
		b.WriteString("  (fewer than 2 rows: not ranked)")
	case l.IsBaseline:
		b.WriteString("  baseline")
	default:
		fmt.Fprintf(&b, "  changed %d  entered top %s  left top %s", l.Changed, cellList(l.Entered), cellList(l.Left))
	}
	if w.Alert {
		b.WriteString("  ALERT")
	}
	b.WriteString("\n")
	if w.Ranking.Pairs != nil {
		fmt.Fprintf(&b, "  %4s  %-24s  %10s  %9s  %10s  %9s  %9s  %10s  %9s  %s\n", "rank", "candidate", "DiME", "± se", "normalized", "p-value", "q-value", "change", "change q", "changed")
		extra := []rankCandidateLine{}
		for _, c := range l.Changes {
			if c.Rank > len(l.Top) {
				extra = append(extra, c)
			}
		}
		for _, c := range append(l.Top, extra...) {
			change, cp, mark := "n/a", "n/a", "-"
			if c.baselineChange != nil {
				change, cp = fmt.Sprintf("%+.6f", float64(c.Change)), fmtPValue(*c.ChangeQValue)
			}
			if c.Changed {
				mark = "CHANGED"
			}
			fmt.Fprintf(&b, "  %4d  %-24s  %10s  %9s  %10s  %9s  %9s  %10s  %9s  %s\n", c.Rank, cellText(c.Name), fmtNumber(c.DiME), fmtNumber(c.DiMEStdErr),
				fmtNumber(c.DiMENormalized), fmtPValue(c.PValue), fmtPValue(c.QValue), change, cp, mark)
		}
	}
	_, err := io.WriteString(rw.w, b.String())
	return l, err
}

// cellList joins names for the table, "-" for none.
func cellList(names []string) string {
	if len(names) == 0 {
		return "-"
	}
	return cellText(strings.Join(names, ","))
}

// runRankMonitor is dime monitor --rank-y: every candidate ranked against
// the target in each window by one rank.Accumulator, and compared with a
// baseline ranking.
func runRankMonitor(e *env, fs *flagSet, ef *estimatorFlags, in *inputFlags, mf *windowFlags, inputs []string) error {
	for _, f := range []struct{ name, why string }{
		{"half-life", "a ranking compares tumbling windows (--window-rows or --window) with a baseline, not a --half-life"},
		{"alert-above", "a threshold on the DiME of one pair; a ranking alerts when a candidate changed (--alert-change-p)"},
		{"alert-below", "a threshold on the DiME of one pair; a ranking alerts when a candidate changed (--alert-change-p)"},
		{"alert-p", "a threshold on the p-value of one pair; a ranking reports every candidate's p and q"},
		{"baseline-blocks", "a ranking's change test uses the windows' and the baseline's jackknife standard errors, not blocks"},
		{"save-state", "no window state of a ranking is saved; give --baseline a state of dime rank --save-state"},
		{"like", "give --baseline a state of dime rank --save-state: the windows take its settings"},
	} {
		if fs.given(f.name) {
			return usagef("--%s with --rank-y: %s", f.name, f.why)
		}
	}
	if err := checkInputs("monitor --rank-y", inputs); err != nil {
		return err
	}
	for _, in := range inputs {
		if strings.HasPrefix(in, "kafka://") {
			return usagef("monitor --rank-y reads the dataset's columns before its rows: give files, directories or URLs, not Kafka")
		}
	}
	if err := mf.checkWindows(fs); err != nil {
		return err
	}
	if err := mf.failIf.only(rankWindowLine{}, "a monitor of many pairs (--rank-y)"); err != nil {
		return err
	}
	ysel, xsel, err := mf.rank.Selectors(&ef.Estimator)
	if err != nil {
		return err
	}
	// The screening defaults of dime rank, but for the groups: the change
	// test compares two jackknife standard errors, of K − 1 degrees of
	// freedom each.
	if !fs.given("features") {
		ef.Features = defaultRankFeatures
	}
	if !fs.given("groups") {
		ef.Groups = stream.DefaultGroups
	}
	if !fs.given("rows") && ef.Groups < 2 {
		ef.Rows = vocab.IIDRows
	}
	if err := ef.checkProgress(); err != nil {
		return err
	}
	scfg, err := ef.MultiConfig()
	if err != nil {
		return err
	}
	if err := checkRFFMemory(ef.Features, ef.Permutations, ef.Groups); err != nil {
		return err
	}
	lay, opts, err := in.rankLayout(e, "monitor --rank-y", inputs, ysel, xsel, mf.rank.Groups)
	if err != nil {
		return err
	}
	cfg := rank.Config{Stream: scfg}
	var base []rank.PairResult
	if path := *mf.baselinePath; path != "" {
		if err := refuseBaselineSettings(fs, "windows"); err != nil {
			return err
		}
		st, err := readRankState(path)
		if err != nil {
			return err
		}
		if err := rank.SameViews(st.Plan(), lay.Plan); err != nil {
			return usagef("--baseline %s: %s", path, strings.TrimPrefix(err.Error(), rank.ErrIncompatible.Error()+": "))
		}
		if base, err = st.Results(); err != nil {
			return usagef("--baseline %s: %s", path, strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
		}
		cfg = st.Config()
	}
	plan := lay.Plan
	if err := checkMultiMemory(fmt.Sprintf("monitor --rank-y of %d candidates at D = %d", len(plan.Pairs), cfg.Stream.Features), plan.Views, len(plan.Pairs), cfg, "lower --features, or rank fewer candidates"); err != nil {
		return err
	}
	if err := mf.timeOptions(&opts); err != nil {
		return err
	}
	changeP := monitor.DefaultRankChangeP
	if mf.changeP.v != nil {
		changeP = *mf.changeP.v
	}
	mcfg := monitor.Config{WindowRows: *mf.windowRows, Window: *mf.window, SkipLate: in.SkipInvalid,
		Rank: &monitor.Ranking{Layout: lay, Config: cfg, Top: mf.rank.Top, Baseline: base, ChangeP: changeP}}
	rw := &rankWindowWriter{w: e.stdout, json: ef.asJSON, timed: *mf.window != 0, plan: plan, target: plan.Views[plan.OrderY[0]].Columns, cfg: cfg.Stream}
	newMetrics := func() *metrics.Metrics {
		x := ef.X
		for _, g := range mf.rank.Groups {
			x = strings.TrimPrefix(x+","+g.Name, ",")
		}
		return metrics.NewRank(metrics.Labels{X: x, Y: strings.Join(ysel, ",")}, plan, mf.rank.Top)
	}
	return mf.run(e, inputs, opts, mcfg, nil, newMetrics, rw.write)
}
