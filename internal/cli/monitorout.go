package cli

import (
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/dime-project/dime/monitor"
	rpt "github.com/dime-project/dime/report"
)

// windowSpan is where a window lies in the stream: the fields every JSON
// line of dime monitor starts with, one pair's or a ranking's.
type windowSpan struct {
	Window      int    `json:"window"`
	StartRow    int64  `json:"start_row"`
	EndRow      int64  `json:"end_row"`
	StartTime   string `json:"start_time,omitempty"`
	EndTime     string `json:"end_time,omitempty"`
	Rows        int64  `json:"rows"`
	SkippedRows int64  `json:"skipped_rows"`
}

func spanOf(w monitor.Window) windowSpan {
	s := windowSpan{Window: w.Index, StartRow: w.StartRow, EndRow: w.EndRow, Rows: w.Rows, SkippedRows: w.Skipped}
	if !w.StartTime.IsZero() {
		s.StartTime, s.EndTime = w.StartTime.Format(time.RFC3339Nano), w.EndTime.Format(time.RFC3339Nano)
	}
	return s
}

// windowLine is one JSON line of dime monitor: the window, its report's
// fields that a line shows (report.Report's names, in a line's order) and
// the comparison with the baseline.
type windowLine struct {
	windowSpan
	EffectiveRows number  `json:"effective_rows"`
	Partial       bool    `json:"partial"`
	SigmaX        float64 `json:"sigma_x"`
	SigmaY        float64 `json:"sigma_y"`
	// Features and Groups are the window's D and jackknife groups: monitor's
	// defaults (128, 4) differ from score's, and a --baseline or --like
	// state sets them.
	Features int `json:"features"`
	Groups   int `json:"groups"`
	// Scores are score --json's: dime_normalized is DiME over the
	// geometric mean of the self terms, 0 if independent, 1 if Y = X.
	rpt.Scores
	PValue number `json:"p_value"`
	// RowModel is what the p-value and dime_stderr assume: "serial" (the
	// default: neighbouring rows may depend on each other) or "iid";
	// PValueIID is the iid test's p-value of the same statistic (a line
	// shows it with iid rows too, where a report leaves it out).
	RowModel  string `json:"row_model"`
	PValueIID number `json:"p_value_iid"`
	// With --baseline: the comparison with the baseline.
	*baselineChange
	Alert        bool     `json:"alert"`
	AlertReasons []string `json:"alert_reasons,omitempty"`
	// Warnings are the window's warnings of a scale that does not fit
	// the data (report.Report.Warn); stderr shows each kind once.
	Warnings []string `json:"warnings,omitempty"`
}

// newWindowLine returns the line of a window and its report (rffReport).
func newWindowLine(w monitor.Window, rep report) windowLine {
	return windowLine{windowSpan: spanOf(w), EffectiveRows: number(w.Result.EffectiveRows), Partial: w.Partial,
		SigmaX: rep.SigmaX, SigmaY: rep.SigmaY, Features: rep.Features, Groups: rep.Groups, Scores: rep.Scores,
		PValue: *rep.PValue, RowModel: rep.RowModel, PValueIID: number(w.Result.PValueIID),
		baselineChange: changeOf(w.Change), Alert: w.Alert, AlertReasons: w.AlertReasons, Warnings: rep.Warnings}
}

// windowWriter prints closed windows: one JSON line each, or a table whose
// lines are written as the windows close (fixed widths, since a table that
// waits for the end of the input to align itself is no use on a stream).
type windowWriter struct {
	w        io.Writer
	stderr   io.Writer       // where each kind of warning is printed once (nil: nowhere)
	warned   map[string]bool // the kinds printed
	json     bool
	timed    bool // windows by time: the table shows their start
	baseline bool // the table shows the change from the baseline
	header   bool // the table's header is written
}

// tableColumn is a column of the table after the first (the window's
// position), with its width.
type tableColumn struct {
	name  string
	width int
}

var (
	tableColumns    = []tableColumn{{"rows", 9}, {"DiME", 10}, {"± se", 9}, {"normalized", 10}, {"MI", 10}, {"p-value", 9}}
	baselineColumns = []tableColumn{{"baseline", 10}, {"change", 10}, {"± se", 9}, {"change p", 9}}
	alertColumn     = tableColumn{"alert", 0}
)

func (ww *windowWriter) columns() []tableColumn {
	cols := append([]tableColumn(nil), tableColumns...)
	if ww.baseline {
		cols = append(cols, baselineColumns...)
	}
	return append(cols, alertColumn)
}

// reportOf returns the window's report with its warnings, and prints on
// stderr the warnings of a kind (the text before its first colon) not
// printed before.
func (ww *windowWriter) reportOf(w monitor.Window) report {
	r := w.Result
	rep := rffReport(r, 0)
	rep.Warn(len(r.XColumns), len(r.YColumns), math.Log(float64(2*r.Features)))
	for _, t := range rep.Warnings {
		kind, _, _ := strings.Cut(t, ":")
		if ww.stderr != nil && !ww.warned[kind] {
			if ww.warned == nil {
				ww.warned = map[string]bool{}
			}
			ww.warned[kind] = true
			fmt.Fprintf(ww.stderr, "dime: warning: window %d: %s\n", w.Index, t)
		}
	}
	return rep
}

// write prints a window: one JSON line, or a line of the table. It
// returns the JSON line either way (what --fail-if reads).
func (ww *windowWriter) write(w monitor.Window) (any, error) {
	l := newWindowLine(w, ww.reportOf(w))
	if ww.json {
		return l, writeJSON(ww.w, l) // one line, written at once
	}
	var b strings.Builder
	first := 24 // "window [start_row, end_row)" or the time
	if ww.timed {
		first = 30
	}
	if !ww.header {
		ww.header = true
		head := "window"
		if ww.timed {
			head = "window start (UTC)"
		}
		fmt.Fprintf(&b, "%-*s", first, head)
		for _, c := range ww.columns() {
			fmt.Fprintf(&b, "  %*s", c.width, c.name)
		}
		b.WriteString("\n")
	}
	pos := windowPos(w, ww.timed)
	r := w.Result
	alert := "-"
	if w.Alert {
		alert = "ALERT: " + strings.Join(w.AlertReasons, "; ")
	}
	cells := []string{fmt.Sprint(w.Rows), fmtNumber(number(r.DiME)), fmtNumber(number(r.DiMEStdErr)),
		fmtNumber(number(r.DiMENormalized)), fmtNumber(number(r.MutualInformation)), fmtPValue(number(r.PValue))}
	if c := w.Change; ww.baseline && c != nil {
		cells = append(cells, fmtNumber(number(c.BaselineDiME)), fmt.Sprintf("%+.6f", c.Difference), fmtNumber(number(c.StdErr)), fmtPValue(number(c.PValue)))
	}
	cells = append(cells, alert)
	fmt.Fprintf(&b, "%-*s", first, pos)
	for i, c := range ww.columns() {
		fmt.Fprintf(&b, "  %*s", c.width, cells[i])
	}
	_, err := io.WriteString(ww.w, strings.TrimRight(b.String(), " ")+"\n")
	return l, err
}

// windowPos is a window's position in a table: its index and rows, or
// with time windows its start (UTC), and "partial" for a window cut short.
func windowPos(w monitor.Window, timed bool) string {
	pos := fmt.Sprintf("%d [%d, %d)", w.Index, w.StartRow, w.EndRow)
	if timed {
		pos = fmt.Sprintf("%d %s", w.Index, w.StartTime.Format("2006-01-02 15:04:05"))
	}
	if w.Partial {
		pos += " partial"
	}
	return pos
}
