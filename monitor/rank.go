package monitor

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/dime-project/dime/rank"
)

// DefaultRankTop is the default Ranking.Top.
const DefaultRankTop = 10

// DefaultRankChangeP is the default Ranking.ChangeP.
const DefaultRankChangeP = 0.01

// Ranking configures a monitor of many pairs (Config.Rank): every candidate
// view against one target, each window estimated by one rank.Accumulator
// (one pass, feature maps and part accumulators shared by the pairs, as
// dime rank), and compared with a baseline ranking.
type Ranking struct {
	// Layout lays the X and Y blocks given to Add (the reader's X, every
	// candidate's columns, and its Y, the target's) out as rows of its Plan
	// (rank.RankLayout).
	Layout rank.Layout
	// Config is the accumulator's settings. Without Sigmas, the scales and
	// bandwidths are chosen on the pilot rows of the first window with at
	// least 2 rows and kept for every later window, so that the windows
	// share their feature maps.
	Config rank.Config
	// Top is the number K of candidates a window reports by rank (default
	// DefaultRankTop).
	Top int
	// Baseline, if not nil, is the reference ranking (the Results of a rank
	// state, estimated with Config's settings); nil makes the first window
	// with at least 2 rows the baseline of the windows after it.
	Baseline []rank.PairResult
	// ChangeP: a candidate has changed when the Benjamini–Hochberg
	// q-value of the change of its DiME from the baseline's, over the
	// window's candidates, falls below it (default DefaultRankChangeP): the
	// expected share of false changes among the changed candidates of a
	// window is at most ChangeP, and a window where nothing changed flags
	// a candidate with probability at most ChangeP.
	ChangeP float64
}

// Ranked is the ranking of one window (Window.Ranking).
type Ranked struct {
	// Pairs are every pair's estimate, in the plan's order (nil for a
	// window of fewer than 2 rows).
	Pairs []rank.PairResult
	// Changes compare each pair with the baseline, in the plan's order:
	// Difference is DiME − baseline DiME, StdErr √(se² + se_b²) of the two
	// jackknife standard errors, DF Welch–Satterthwaite's degrees of
	// freedom (rounded down) and PValue 2·P(T_DF > |Difference/StdErr|).
	// Nil for the baseline window itself and windows of fewer than 2 rows.
	Changes []*Change
	// ChangeQ are the Benjamini–Hochberg q-values of the changes'
	// p-values over the pairs (rank.QValues), in the plan's order.
	ChangeQ []float64
	// Baseline is the index of the baseline window, −1 for
	// Ranking.Baseline; IsBaseline marks the baseline window itself.
	Baseline   int
	IsBaseline bool
	// Top are the first Top pairs by rank (indices into Pairs); Changed
	// the pairs whose change q-value is below Ranking.ChangeP, smallest
	// p-value first; Entered the pairs of Top not in the baseline's top
	// (by rank), Left the baseline's top pairs not in Top (by baseline
	// rank).
	Top, Changed, Entered, Left []int
}

// ranker holds the accumulator of a window of many pairs and the baseline.
type ranker struct {
	cfg      Ranking
	settings rank.Config       // resolved on the first window's pilot rows, then kept
	acc      *rank.Accumulator // nil until the window's first rows
	block    []float64
	base     []rank.PairResult
	baseWin  int
	baseTop  []int
}

func newRanker(cfg Ranking, dimX, dimY int) (*ranker, error) {
	lay := cfg.Layout
	switch {
	case lay.DimX != dimX || lay.DimY != dimY:
		return nil, fmt.Errorf("%w: the ranking's layout has views of %d and %d columns, the monitor %d and %d", ErrConfig, lay.DimX, lay.DimY, dimX, dimY)
	case cfg.Top < 0:
		return nil, fmt.Errorf("%w: top %d (want 1 or more)", ErrConfig, cfg.Top)
	case cfg.ChangeP != 0 && !(cfg.ChangeP > 0 && cfg.ChangeP < 1):
		return nil, fmt.Errorf("%w: change p-value threshold %v (want between 0 and 1)", ErrConfig, cfg.ChangeP)
	case cfg.Baseline != nil && len(cfg.Baseline) != len(lay.Plan.Pairs):
		return nil, fmt.Errorf("%w: a baseline of %d pairs for %d", ErrConfig, len(cfg.Baseline), len(lay.Plan.Pairs))
	}
	if cfg.Top == 0 {
		cfg.Top = DefaultRankTop
	}
	if cfg.ChangeP == 0 {
		cfg.ChangeP = DefaultRankChangeP
	}
	// Check the settings now rather than at the first row.
	if _, err := rank.New(lay.Plan, cfg.Config); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	r := &ranker{cfg: cfg, settings: cfg.Config, base: cfg.Baseline, baseWin: -1}
	if r.base != nil {
		r.baseTop = topOf(r.base, cfg.Top)
	}
	return r, nil
}

// Add lays the blocks out as the plan's rows and adds them to the
// window's accumulator.
func (r *ranker) Add(x, y []float64, rows int) error {
	if r.acc == nil {
		acc, err := rank.New(r.cfg.Layout.Plan, r.settings)
		if err != nil {
			return err
		}
		r.acc = acc
	}
	r.block = r.cfg.Layout.Row(r.block, x, y, rows)
	return r.acc.Add(r.block, rows)
}

// reset drops the last window's accumulator.
func (r *ranker) reset() { r.acc = nil }

// window ranks the pairs of the window that closes and compares them with
// the baseline.
func (r *ranker) window(w *Window) error {
	out := &Ranked{Baseline: r.baseWin}
	w.Ranking = out
	if r.acc == nil || r.acc.Rows() < 2 {
		return nil
	}
	res, err := r.acc.Results()
	if err != nil {
		return err
	}
	if len(r.settings.Sigmas) == 0 {
		workers := r.settings.Stream.Workers
		r.settings = r.acc.Config()
		r.settings.Stream.Workers = workers
	}
	out.Pairs, out.Top = res, topOf(res, r.cfg.Top)
	if r.base == nil {
		r.base, r.baseWin, r.baseTop = res, w.Index, out.Top
		out.Baseline, out.IsBaseline = w.Index, true
		return nil
	}
	out.Changes = make([]*Change, len(res))
	p := make([]float64, len(res))
	for i := range res {
		out.Changes[i] = pairChange(res[i], r.base[i])
		p[i] = out.Changes[i].PValue
	}
	out.ChangeQ = rank.QValues(p)
	for i, q := range out.ChangeQ {
		if q < r.cfg.ChangeP {
			out.Changed = append(out.Changed, i)
		}
	}
	slices.SortStableFunc(out.Changed, func(i, j int) int {
		return cmp.Or(cmp.Compare(out.Changes[i].PValue, out.Changes[j].PValue), cmp.Compare(res[i].Rank, res[j].Rank))
	})
	for _, i := range out.Top {
		if !slices.Contains(r.baseTop, i) {
			out.Entered = append(out.Entered, i)
		}
	}
	for _, i := range r.baseTop {
		if !slices.Contains(out.Top, i) {
			out.Left = append(out.Left, i)
		}
	}
	const shown = 5
	for n, i := range out.Changed {
		if n == shown {
			w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("and %d more candidates changed", len(out.Changed)-shown))
			break
		}
		c := out.Changes[i]
		w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("%s: DiME changed from the baseline's %.4g by %+.4g ± %.2g (change p-value %.3g, q-value %.3g below %g)",
			r.cfg.Layout.Plan.Views[res[i].X].Name, c.BaselineDiME, c.Difference, c.StdErr, c.PValue, out.ChangeQ[i], r.cfg.ChangeP))
	}
	return nil
}

// topOf returns the first k pairs by rank.
func topOf(res []rank.PairResult, k int) []int {
	idx := make([]int, len(res))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(i, j int) int { return res[i].Rank - res[j].Rank })
	return idx[:min(k, len(idx))]
}

// pairChange compares a pair's DiME in a window with its baseline's by
// their jackknife standard errors: Welch's t with the
// Welch–Satterthwaite degrees of freedom of the two jackknifes.
func pairChange(w, b rank.PairResult) *Change {
	c := &Change{BaselineDiME: b.DiME, BaselineRows: b.EffectiveRows, Difference: w.DiME - b.DiME,
		StdErr: math.NaN(), T: math.NaN(), PValue: math.NaN()}
	vw, vb := w.DiMEStdErr*w.DiMEStdErr, b.DiMEStdErr*b.DiMEStdErr
	if math.IsNaN(c.Difference) || !(vw+vb > 0) || math.IsInf(vw+vb, 0) {
		return c
	}
	c.StdErr = math.Sqrt(vw + vb)
	df := (vw + vb) * (vw + vb) / (vw*vw/dfOf(w) + vb*vb/dfOf(b))
	c.DF = max(1, int(math.Floor(df)))
	c.T = c.Difference / c.StdErr
	c.PValue = studentP(c.T, c.DF)
	return c
}

// dfOf returns the degrees of freedom of a result's DiME standard error.
func dfOf(r rank.PairResult) float64 {
	if r.DiMEDegreesOfFreedom > 0 {
		return r.DiMEDegreesOfFreedom
	}
	return float64(max(1, r.Groups-1))
}
