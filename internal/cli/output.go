package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
)

// number is a float64 that encodes NaN and ±Inf as JSON null.
type number float64

// MarshalJSON implements json.Marshaler.
func (n number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// report is the result of one estimate as the commands print it. Its JSON
// field names are part of the command's interface.
type report struct {
	Estimator      string   `json:"estimator"` // "exact" or "rff"
	Input          string   `json:"input,omitempty"`
	Rows           int64    `json:"rows"`
	SkippedRows    int64    `json:"skipped_rows"`
	XColumns       []string `json:"x_columns"`
	YColumns       []string `json:"y_columns"`
	Kernel         string   `json:"kernel"`
	Alpha          float64  `json:"alpha"`
	SigmaRuleX     string   `json:"sigma_rule_x"`
	SigmaRuleY     string   `json:"sigma_rule_y"`
	SigmaX         float64  `json:"sigma_x"`
	SigmaY         float64  `json:"sigma_y"`
	Features       int      `json:"features,omitempty"` // rff: D frequencies
	Variant        string   `json:"variant,omitempty"`  // rff
	ShuffleRows    *int     `json:"shuffle_buffer,omitempty"`
	Permutations   int      `json:"permutations"`
	Seed           uint64   `json:"seed"`
	SampledFrom    int64    `json:"sampled_from_rows,omitempty"` // exact: rows in the input
	EntropyX       number   `json:"entropy_x"`
	EntropyY       number   `json:"entropy_y"`
	EntropyJoint   number   `json:"entropy_joint"`
	MI             number   `json:"mutual_information"`
	DiME           number   `json:"dime"`
	DiMEStdErr     number   `json:"dime_stderr"`
	DiMEAnalytic   *number  `json:"dime_analytic,omitempty"` // rff
	DiMENormalized *number  `json:"dime_normalized,omitempty"`
	DiMEEstimator  string   `json:"dime_estimator,omitempty"` // rff: "analytic-jackknife" or "permutations"
	Groups         int      `json:"groups,omitempty"`         // rff: K groups of the jackknife
	DiMESelfX      *number  `json:"dime_self_x,omitempty"`    // rff: DiME(X;X'), the normalized score's self terms
	DiMESelfY      *number  `json:"dime_self_y,omitempty"`
	TestStatistic  *number  `json:"test_statistic,omitempty"` // rff: the RFF-HSIC statistic
	TestNullMean   *number  `json:"test_null_mean,omitempty"` // rff: its expectation under independence
	PValuePerms    *number  `json:"p_value_permutations,omitempty"`
	PValue         *number  `json:"p_value,omitempty"`
	PValueTest     string   `json:"p_value_test,omitempty"`      // exact: "hsic" or "permutation"
	TestPerms      int      `json:"test_permutations,omitempty"` // exact: null replicates of the permutation test
	Partial        bool     `json:"partial,omitempty"`           // score cut short by a signal: the rows read so far
	ElapsedSeconds float64  `json:"elapsed_seconds"`
}

func exactReport(r exact.Result, cfg exact.Config, xcols, ycols []string, elapsed time.Duration) report {
	p := number(r.PValue)
	var norm *number
	if !cfg.SkipNormalized {
		v := number(r.Normalized)
		norm = &v
	}
	return report{
		DiMENormalized: norm,
		PValue:         &p, PValueTest: r.Test.String(), TestPerms: r.TestPermutations,
		Estimator: "exact", Rows: int64(r.Rows), XColumns: xcols, YColumns: ycols,
		Kernel: r.Kernel.String(), Alpha: r.Alpha,
		SigmaRuleX: cfg.SigmaX.String(), SigmaRuleY: cfg.SigmaY.String(), SigmaX: r.SigmaX, SigmaY: r.SigmaY,
		Permutations: r.Permutations, Seed: r.Seed,
		EntropyX: number(r.EntropyX), EntropyY: number(r.EntropyY), EntropyJoint: number(r.EntropyJoint),
		MI: number(r.MutualInformation), DiME: number(r.DiME), DiMEStdErr: number(r.DiMEStdErr),
		ElapsedSeconds: elapsed.Seconds(),
	}
}

func rffReport(r stream.Result, elapsed time.Duration) report {
	analytic, p := number(r.DiMEAnalytic), number(r.PValue)
	norm, selfX, selfY := number(r.DiMENormalized), number(r.DiMESelfX), number(r.DiMESelfY)
	stat, nullMean := number(r.TestStatistic), number(r.TestNullMean)
	shuffle := r.ShuffleRows
	how := "analytic-jackknife"
	var pPerms *number
	if r.Permutations > 0 {
		how = "permutations"
		if r.Permutations > 1 {
			v := number(r.PValuePermutations)
			pPerms = &v
		}
	}
	return report{
		DiMENormalized: &norm, DiMEEstimator: how, Groups: r.Groups, DiMESelfX: &selfX, DiMESelfY: &selfY,
		TestStatistic: &stat, TestNullMean: &nullMean, PValuePerms: pPerms,
		Estimator: "rff", Rows: r.Rows, SkippedRows: r.SkippedRows, XColumns: r.XColumns, YColumns: r.YColumns,
		Kernel: r.Kernel.String(), Alpha: r.Alpha,
		SigmaRuleX: r.BandwidthX.String(), SigmaRuleY: r.BandwidthY.String(), SigmaX: r.SigmaX, SigmaY: r.SigmaY,
		Features: r.Features, Variant: r.Variant.String(), ShuffleRows: &shuffle,
		Permutations: r.Permutations, Seed: r.Seed,
		EntropyX: number(r.EntropyX), EntropyY: number(r.EntropyY), EntropyJoint: number(r.EntropyJoint),
		MI: number(r.MutualInformation), DiME: number(r.DiME), DiMEStdErr: number(r.DiMEStdErr),
		DiMEAnalytic: &analytic, PValue: &p, ElapsedSeconds: elapsed.Seconds(),
	}
}

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
