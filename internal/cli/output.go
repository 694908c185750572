package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	rpt "github.com/dime-project/dime/internal/report"
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

// writeTable writes a report as aligned "name  value" lines.
func writeTable(w io.Writer, r report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
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
	line("rows", "%s", rows)
	line("x columns", "%s", strings.Join(r.XColumns, ", "))
	line("y columns", "%s", strings.Join(r.YColumns, ", "))
	line("kernel", "%s, alpha %g", r.Kernel, r.Alpha)
	line("sigma x", "%s", describeBandwidthRule(r.SigmaRuleX, r.SigmaX))
	line("sigma y", "%s", describeBandwidthRule(r.SigmaRuleY, r.SigmaY))
	line("entropy x", "%s", fmtNumber(r.EntropyX))
	line("entropy y", "%s", fmtNumber(r.EntropyY))
	line("entropy joint", "%s", fmtNumber(r.EntropyJoint))
	line("mutual information", "%s", fmtNumber(r.MI))
	line("DiME", "%s ± %s (P = %d permutations)", fmtNumber(r.DiME), fmtNumber(r.DiMEStdErr), r.Permutations)
	if r.DiMEAnalytic != nil {
		line("DiME analytic", "%s", fmtNumber(*r.DiMEAnalytic))
	}
	if r.PValue != nil {
		how := "t-approximation from the permuted accumulators"
		if r.Estimator == "exact" {
			how = fmt.Sprintf("permutation test, %d null replicates: at least %.3g", r.TestPerms, 1/float64(r.TestPerms+1))
		}
		line("p-value", "%s (independence; %s)", fmtPValue(*r.PValue), how)
	}
	line("elapsed", "%.2f s", r.ElapsedSeconds)
	return tw.Flush()
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

// printReport prints a report as a table or JSON.
func printReport(w io.Writer, r report, asJSON bool) error {
	if asJSON {
		return writeJSON(w, r)
	}
	return writeTable(w, r)
}
