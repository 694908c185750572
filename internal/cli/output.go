package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	rpt "github.com/dime-project/dime/report"
)

// The report of one estimate is shared with the dimebeam command, so that
// their JSON match field for field.
type (
	number = rpt.Number
	report = rpt.Report
)

var (
	exactReport = rpt.Exact
	rffReport   = rpt.RFF
)

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// fmtNumber formats a value for the table, "n/a" for NaN.
func fmtNumber(v number) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	return fmt.Sprintf("%.6f", float64(v))
}

// fmtPValue formats a p-value: small ones in scientific notation.
func fmtPValue(v number) string {
	switch f := float64(v); {
	case math.IsNaN(f):
		return "n/a"
	case f < 1e-3:
		return fmt.Sprintf("%.2g", f)
	default:
		return fmt.Sprintf("%.4f", f)
	}
}

// writeTable writes a report as aligned "name  value" lines, the extra
// lines before the elapsed time.
func writeTable(w io.Writer, r report, extra ...[2]string) error {
	tw := newTable(w, 0)
	line := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t%s\n", k, fmt.Sprintf(format, args...)) }
	est := r.Estimator
	if r.Estimator == "rff" {
		est = fmt.Sprintf("rff (D = %d frequencies, %d features, %s)", r.Features, 2*r.Features, r.Variant)
	}
	line("estimator", "%s", est)
	if r.Input != "" {
		line("input", "%s", r.Input)
	}
	rows := fmt.Sprintf("%d", r.Rows)
	if r.SampledFrom > r.Rows {
		rows += fmt.Sprintf(" (sampled from %d)", r.SampledFrom)
	}
	if r.SkippedRows > 0 {
		rows += fmt.Sprintf(" (%d skipped)", r.SkippedRows)
	}
	if r.Partial {
		rows += " (partial: interrupted, the rows read so far)"
	}
	line("rows", "%s", rows)
	line("x columns", "%s", strings.Join(r.XColumns, ", "))
	line("y columns", "%s", strings.Join(r.YColumns, ", "))
	line("kernel", "%s, alpha %g", r.Kernel, r.Alpha)
	if sc := r.Scaling; sc != nil {
		line("scaling", "columns standardized, (value - center) / scale, on %s; sigma in those units", describePilotRows(sc.Pilot, sc.PilotRows))
		line("x center, scale", "%s", pairs(sc.CenterX, sc.ScaleX))
		line("y center, scale", "%s", pairs(sc.CenterY, sc.ScaleY))
	}
	line("sigma x", "%s", describeBandwidthRule(r.SigmaRuleX, r.SigmaX))
	line("sigma y", "%s", describeBandwidthRule(r.SigmaRuleY, r.SigmaY))
	line("entropy x", "%s", fmtNumber(r.EntropyX))
	line("entropy y", "%s", fmtNumber(r.EntropyY))
	line("entropy joint", "%s", fmtNumber(r.EntropyJoint))
	line("mutual information", "%s", fmtNumber(r.MI))
	switch r.DiMEEstimator {
	case "analytic-jackknife":
		line("DiME", "%s ± %s (analytic, its bias removed by the jackknife over %d groups of rows)", fmtNumber(r.DiME), fmtNumber(r.DiMEStdErr), r.Groups)
	default:
		line("DiME", "%s ± %s (P = %d permutations)", fmtNumber(r.DiME), fmtNumber(r.DiMEStdErr), r.Permutations)
	}
	if r.DiMEAnalytic != nil {
		if r.Estimator == "rff" {
			line("DiME analytic", "%s (plug-in, biased upward by about D/rows)", fmtNumber(*r.DiMEAnalytic))
		} else {
			line("DiME analytic", "%s", fmtNumber(*r.DiMEAnalytic))
		}
	}
	if r.DiMENormalized != nil {
		line("DiME normalized", "%s (0: independent, 1: Y = X; DiME / sqrt(DiME(X;X')·DiME(Y;Y')))", fmtNumber(*r.DiMENormalized))
	}
	if r.PValue != nil {
		how := "t-approximation from the permuted accumulators"
		switch {
		case r.TestStatistic != nil:
			how = fmt.Sprintf("RFF-HSIC test, statistic %.4g, %.4g expected if independent", float64(*r.TestStatistic), float64(*r.TestNullMean))
		case r.Estimator == "exact" && r.PValueTest == "hsic":
			how = "HSIC test of the same Gram matrices"
		case r.Estimator == "exact":
			how = fmt.Sprintf("permutation test, %d null replicates: at least %.3g", r.TestPerms, 1/float64(r.TestPerms+1))
		}
		line("p-value", "%s (independence; %s)", fmtPValue(*r.PValue), how)
	}
	for _, l := range extra {
		line(l[0], "%s", l[1])
	}
	line("elapsed", "%.2f s", r.ElapsedSeconds)
	return tw.Flush()
}

// warnReport adds the report's warnings (Report.Warn) and prints each on
// stderr as one line.
func warnReport(e *env, r *report, dimX, dimY int, maxEntropy float64) {
	n := len(r.Warnings)
	r.Warn(dimX, dimY, maxEntropy)
	for _, w := range r.Warnings[n:] {
		fmt.Fprintf(e.stderr, "dime: warning: %s\n", w)
	}
}

// describeBandwidthRule returns a bandwidth and, unless it was given
// explicitly, the rule that chose it.
func describeBandwidthRule(rule string, sigma float64) string {
	switch rule {
	case "fixed", "median", "auto":
		return fmt.Sprintf("%.6g (%s)", sigma, rule)
	}
	return fmt.Sprintf("%.6g", sigma)
}

// pairs formats centers and scales as "c/s, c/s, ...", at most 8 columns.
func pairs(center, scale []float64) string {
	var b strings.Builder
	for i := range min(len(center), 8) {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.6g/%.6g", center[i], scale[i])
	}
	if len(center) > 8 {
		fmt.Fprintf(&b, ", ... (%d columns)", len(center))
	}
	return b.String()
}

// printReport prints a report as a table or JSON.
func printReport(w io.Writer, r report, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	return writeTable(w, r)
}

// table is an aligned table whose lines lose their trailing spaces (the
// padding of empty last cells) when it is flushed: a tabwriter into a
// buffer.
type table struct {
	*tabwriter.Writer
	buf bytes.Buffer
	out io.Writer
}

// newTable returns a table with two spaces between columns and the given
// tabwriter flags, written to w by Flush.
func newTable(w io.Writer, flags uint) *table {
	t := &table{out: w}
	t.Writer = tabwriter.NewWriter(&t.buf, 0, 0, 2, ' ', flags)
	return t
}

// Flush aligns the cells written so far and writes their lines.
func (t *table) Flush() error {
	if err := t.Writer.Flush(); err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range strings.SplitAfter(t.buf.String(), "\n") {
		nl := strings.HasSuffix(l, "\n")
		b.WriteString(strings.TrimRight(l, " \n"))
		if nl {
			b.WriteByte('\n')
		}
	}
	t.buf.Reset()
	_, err := io.WriteString(t.out, b.String())
	return err
}
