// Package report is the result of one estimate as the dime commands print
// it: a table row by row, or one JSON object whose field names are part of
// the commands' interface.
//
// Contract: RFF and Exact turn a stream.Result or an exact.Result into a
// Report; its JSON field names and their meaning are stable (a script
// reads them), NaN and ±Inf print as null, and the same result gives the
// same bytes. dime and dimebeam (module beam) both print through it, so
// that dimebeam's JSON has the fields of dime score --json.
package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// Number is a float64 that encodes NaN and ±Inf as JSON null.
type Number float64

// MarshalJSON implements json.Marshaler.
func (n Number) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Report is the result of one estimate as the commands print it. Its JSON
// field names are part of the command's interface.
type Report struct {
	Estimator    string   `json:"estimator"` // "exact" or "rff"
	Input        string   `json:"input,omitempty"`
	Rows         int64    `json:"rows"`
	SkippedRows  int64    `json:"skipped_rows"`
	XColumns     []string `json:"x_columns"`
	YColumns     []string `json:"y_columns"`
	Kernel       string   `json:"kernel"`
	Alpha        float64  `json:"alpha"`
	SigmaRuleX   string   `json:"sigma_rule_x"`
	SigmaRuleY   string   `json:"sigma_rule_y"`
	SigmaX       float64  `json:"sigma_x"`
	SigmaY       float64  `json:"sigma_y"`
	Features     int      `json:"features,omitempty"` // rff: D frequencies
	Variant      string   `json:"variant,omitempty"`  // rff
	ShuffleRows  *int     `json:"shuffle_buffer,omitempty"`
	Permutations int      `json:"permutations"`
	Seed         uint64   `json:"seed"`
	SampledFrom  int64    `json:"sampled_from_rows,omitempty"` // exact: rows in the input
	Scores
	DiMEEstimator string   `json:"dime_estimator,omitempty"` // rff: "analytic-jackknife" or "permutations"
	Groups        int      `json:"groups,omitempty"`         // rff: K groups of the jackknife
	Jackknife     string   `json:"jackknife,omitempty"`      // rff, analytic: "third-order", "generalized", "second-order" or "group"
	DiMESelfX     *Number  `json:"dime_self_x,omitempty"`    // rff: DiME(X;X'), the normalized score's self terms
	DiMESelfY     *Number  `json:"dime_self_y,omitempty"`
	TestStatistic *Number  `json:"test_statistic,omitempty"` // rff: the RFF-HSIC statistic
	TestNullMean  *Number  `json:"test_null_mean,omitempty"` // rff: its expectation under independence
	PValuePerms   *Number  `json:"p_value_permutations,omitempty"`
	PValue        *Number  `json:"p_value,omitempty"`
	PValueTest    string   `json:"p_value_test,omitempty"`           // exact: "hsic" or "permutation"
	RowModel      string   `json:"row_model,omitempty"`              // rff: "iid" or "serial" (what the p-value and dime_stderr assume)
	PValueIID     *Number  `json:"p_value_iid,omitempty"`            // rff, serial rows: the iid test's p-value of the same statistic
	DiMEDF        *Number  `json:"dime_df,omitempty"`                // rff: degrees of freedom of dime_stderr
	DiMECI95      []Number `json:"dime_ci95,omitempty"`              // rff: dime ∓ t(dime_df, 0.975)·dime_stderr
	Lag1X         *Number  `json:"lag1_autocorrelation_x,omitempty"` // rff: largest |lag-1 autocorrelation| of a column of X
	Lag1Y         *Number  `json:"lag1_autocorrelation_y,omitempty"`
	TestPerms     int      `json:"test_permutations,omitempty"` // exact: null replicates of the permutation test
	Partial       bool     `json:"partial,omitempty"`           // score cut short by a signal: the rows read so far
	// Scaling is the columns' standardization (nil when the values were
	// used as they are): sigma_x and sigma_y are in its units.
	Scaling *Scaling `json:"scaling,omitempty"`
	// Warnings are the lines printed on stderr about this estimate.
	Warnings       []string `json:"warnings,omitempty"`
	ElapsedSeconds float64  `json:"elapsed_seconds"`
}

// Scores are the numbers an estimate gives: the entropies, the mutual
// information, DiME and its standard error, DiME's analytic estimate (rff)
// and the normalized score. A Report embeds them, and so does a line of
// dime monitor --json: the same fields in the same order.
type Scores struct {
	EntropyX       Number  `json:"entropy_x"`
	EntropyY       Number  `json:"entropy_y"`
	EntropyJoint   Number  `json:"entropy_joint"`
	MI             Number  `json:"mutual_information"`
	DiME           Number  `json:"dime"`
	DiMEStdErr     Number  `json:"dime_stderr"`
	DiMEAnalytic   *Number `json:"dime_analytic,omitempty"` // rff
	DiMENormalized *Number `json:"dime_normalized,omitempty"`
}

// Scaling is the standardization of the report's columns: column j of X
// was used as (x_j − center_x[j]) / scale_x[j], chosen on pilot_rows rows:
// a seeded sample of the dataset's rows (pilot "sample", Parquet), or its
// first rows (pilot "prefix": CSV, Arrow IPC, streams; empty when not
// known, as in a merge of states).
type Scaling struct {
	CenterX   []float64 `json:"center_x"`
	ScaleX    []float64 `json:"scale_x"`
	CenterY   []float64 `json:"center_y"`
	ScaleY    []float64 `json:"scale_y"`
	PilotRows int       `json:"pilot_rows,omitempty"`
	Pilot     string    `json:"pilot,omitempty"`
}

// SetScaling records s (nothing if it is empty), chosen on pilotRows rows
// of the kind pilot names ("sample", "prefix", or "" if not known).
func (r *Report) SetScaling(s stream.Scaling, pilotRows int, pilot string) {
	if s.Empty() {
		return
	}
	r.Scaling = &Scaling{CenterX: s.CenterX, ScaleX: s.ScaleX, CenterY: s.CenterY, ScaleY: s.ScaleY, PilotRows: pilotRows, Pilot: pilot}
}

// Warn adds the warnings of a scale that does not fit the data, for views
// of dimX and dimY columns whose entropies cannot exceed maxEntropy
// (log 2D for the RFF estimator, log n for the exact one): a bandwidth
// chosen by the auto rule at an end of its grid, or a view whose entropy
// is within 1% of maxEntropy (every row looks unlike every other: σ far
// below the data's scale) or of 0 (every row looks alike: σ far above it).
func (r *Report) Warn(dimX, dimY int, maxEntropy float64) {
	views := []struct {
		name, rule string
		sigma      float64
		d          int
		h          Number
	}{{"X", r.SigmaRuleX, r.SigmaX, dimX, r.EntropyX}, {"Y", r.SigmaRuleY, r.SigmaY, dimY, r.EntropyY}}
	scales := exact.AutoScales()
	lo, hi := scales[0], scales[len(scales)-1]
	for _, v := range views {
		fixed := exact.FixedSigma(v.d)
		if v.rule == "auto" {
			end := ""
			switch {
			case sameFloat(v.sigma, lo*fixed):
				end = "low"
			case sameFloat(v.sigma, hi*fixed):
				end = "high"
			}
			if end != "" {
				r.Warnings = append(r.Warnings, fmt.Sprintf("sigma of %s (%.4g) is at the %s end of the auto grid (%.4g to %.4g): the grid may not reach the data's scale; check dime sweep, standardize the columns (--standardize), or give --sigma-%s",
					v.name, v.sigma, end, lo*fixed, hi*fixed, strings.ToLower(v.name)))
			}
		}
		h := float64(v.h)
		if math.IsNaN(h) || !(maxEntropy > 0) {
			continue
		}
		switch {
		case h >= 0.99*maxEntropy:
			r.Warnings = append(r.Warnings, fmt.Sprintf("view %s is degenerate: its entropy %.4g is within 1%% of its maximum %.4g (sigma %.4g is far below the data's scale, every row looks unique); standardize the columns (--standardize) or try --sigma median", v.name, h, maxEntropy, v.sigma))
		case h <= 0.01*maxEntropy:
			r.Warnings = append(r.Warnings, fmt.Sprintf("view %s is degenerate: its entropy %.4g is within 1%% of 0 (sigma %.4g is far above the data's scale, every row looks alike); standardize the columns (--standardize) or try --sigma median", v.name, h, v.sigma))
		}
	}
}

// sameFloat reports whether a and b agree to 1e-12 relative.
func sameFloat(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Abs(b) }

func Exact(r exact.Result, cfg exact.Config, xcols, ycols []string, elapsed time.Duration) Report {
	p := Number(r.PValue)
	var norm *Number
	if !cfg.SkipNormalized {
		v := Number(r.Normalized)
		norm = &v
	}
	return Report{
		PValue: &p, PValueTest: r.Test.String(), TestPerms: r.TestPermutations,
		Estimator: "exact", Rows: int64(r.Rows), XColumns: xcols, YColumns: ycols,
		Kernel: r.Kernel.String(), Alpha: r.Alpha,
		SigmaRuleX: cfg.SigmaX.String(), SigmaRuleY: cfg.SigmaY.String(), SigmaX: r.SigmaX, SigmaY: r.SigmaY,
		Permutations: r.Permutations, Seed: r.Seed,
		Scores: Scores{EntropyX: Number(r.EntropyX), EntropyY: Number(r.EntropyY), EntropyJoint: Number(r.EntropyJoint),
			MI: Number(r.MutualInformation), DiME: Number(r.DiME), DiMEStdErr: Number(r.DiMEStdErr), DiMENormalized: norm},
		ElapsedSeconds: elapsed.Seconds(),
	}
}

func RFF(r stream.Result, elapsed time.Duration) Report {
	analytic, p := Number(r.DiMEAnalytic), Number(r.PValue)
	norm, selfX, selfY := Number(r.DiMENormalized), Number(r.DiMESelfX), Number(r.DiMESelfY)
	stat, nullMean := Number(r.TestStatistic), Number(r.TestNullMean)
	shuffle := r.ShuffleRows
	how := "analytic-jackknife"
	var pPerms *Number
	if r.Permutations > 0 {
		how = "permutations"
		if r.Permutations > 1 {
			v := Number(r.PValuePermutations)
			pPerms = &v
		}
	}
	jack := ""
	if r.Permutations == 0 && r.Groups > 1 {
		jack = r.Jackknife.String()
	}
	df, lagX, lagY := Number(r.DiMEDegreesOfFreedom), Number(r.Lag1X), Number(r.Lag1Y)
	var pIID *Number
	if r.RowModel == vocab.SerialRows {
		v := Number(r.PValueIID)
		pIID = &v
	}
	return Report{
		Jackknife: jack, RowModel: r.RowModel.String(), PValueIID: pIID, DiMEDF: &df, DiMECI95: []Number{Number(r.DiMELow), Number(r.DiMEHigh)},
		Lag1X: &lagX, Lag1Y: &lagY,
		DiMEEstimator: how, Groups: r.Groups, DiMESelfX: &selfX, DiMESelfY: &selfY,
		TestStatistic: &stat, TestNullMean: &nullMean, PValuePerms: pPerms,
		Estimator: "rff", Rows: r.Rows, SkippedRows: r.SkippedRows, XColumns: r.XColumns, YColumns: r.YColumns,
		Kernel: r.Kernel.String(), Alpha: r.Alpha,
		SigmaRuleX: r.BandwidthX.String(), SigmaRuleY: r.BandwidthY.String(), SigmaX: r.SigmaX, SigmaY: r.SigmaY,
		Features: r.Features, Variant: r.Variant.String(), ShuffleRows: &shuffle,
		Permutations: r.Permutations, Seed: r.Seed,
		Scores: Scores{EntropyX: Number(r.EntropyX), EntropyY: Number(r.EntropyY), EntropyJoint: Number(r.EntropyJoint),
			MI: Number(r.MutualInformation), DiME: Number(r.DiME), DiMEStdErr: Number(r.DiMEStdErr), DiMEAnalytic: &analytic, DiMENormalized: &norm},
		PValue: &p, ElapsedSeconds: elapsed.Seconds(),
	}
}
