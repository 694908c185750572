package report

import (
	"encoding/csv"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dime-project/dime/rank"
)

// RankCandidate is one candidate of a ranking as the commands print it.
type RankCandidate struct {
	Rank           int      `json:"rank"`
	Name           string   `json:"name"`
	Columns        []string `json:"columns"`
	DiME           Number   `json:"dime"`
	DiMEStdErr     Number   `json:"dime_stderr"`
	DiMENormalized Number   `json:"dime_normalized"`
	PValue         Number   `json:"p_value"`
	QValue         Number   `json:"q_value"`
	DiMEAnalytic   Number   `json:"dime_analytic"`
	MI             Number   `json:"mutual_information"`
	SigmaX         Number   `json:"sigma_x"`
}

// Rank is a ranking of candidates against a target as dime rank --json
// and dimebeam rank print it; its JSON field names are part of both
// commands' interface.
type Rank struct {
	Estimator   string          `json:"estimator"`
	Input       string          `json:"input"`
	Rows        int64           `json:"rows"`
	Skipped     int64           `json:"skipped_rows"`
	Target      []string        `json:"target"`
	Kernel      string          `json:"kernel"`
	Alpha       float64         `json:"alpha"`
	Features    int             `json:"features"`
	Groups      int             `json:"groups"`
	Seed        uint64          `json:"seed"`
	Sigma       string          `json:"sigma_rule"`
	SigmaY      Number          `json:"sigma_y"`
	Standardize bool            `json:"standardize"`
	Pilot       string          `json:"pilot,omitempty"` // "sample" or "prefix": the rows the scales and bandwidths were chosen on
	PilotRows   int             `json:"pilot_rows,omitempty"`
	Candidates  []RankCandidate `json:"candidates"`
	Count       int             `json:"candidates_total"`
	Partial     bool            `json:"partial,omitempty"`
	Elapsed     float64         `json:"elapsed_seconds"`
}

// RankOf returns the ranking of the results of every pair of a ranking
// (rank.Accumulator.Results), candidates in rank order.
func RankOf(acc *rank.Accumulator, results []rank.PairResult, input string) Rank {
	plan := acc.Plan()
	cfg := acc.Settings()
	target := plan.Views[plan.OrderY[0]]
	o := Rank{Estimator: "rff", Input: input, Rows: acc.Rows(), Target: target.Columns, Kernel: cfg.Kernel.String(), Alpha: cfg.Alpha,
		Features: cfg.Features, Groups: cfg.GroupCount(), Seed: cfg.Seed, Sigma: cfg.BandwidthX.String(),
		Standardize: cfg.Standardize, Count: len(results)}
	if len(results) > 0 {
		o.Skipped = results[0].SkippedRows
		o.SigmaY = Number(results[0].SigmaY)
	}
	sorted := slices.Clone(results)
	slices.SortStableFunc(sorted, func(a, b rank.PairResult) int { return a.Rank - b.Rank })
	for _, r := range sorted {
		o.Candidates = append(o.Candidates, RankCandidateOf(plan, r))
	}
	return o
}

// RankCandidateOf returns the candidate of a pair of a ranking's plan.
func RankCandidateOf(plan rank.Plan, r rank.PairResult) RankCandidate {
	v := plan.Views[r.X]
	return RankCandidate{Rank: r.Rank, Name: v.Name, Columns: v.Columns, DiME: Number(r.DiME), DiMEStdErr: Number(r.DiMEStdErr),
		DiMENormalized: Number(r.DiMENormalized), PValue: Number(r.PValue), QValue: Number(r.QValue), DiMEAnalytic: Number(r.DiMEAnalytic),
		MI: Number(r.MutualInformation), SigmaX: Number(r.SigmaX)}
}

// Top keeps the first k candidates (all for k ≤ 0); Count still counts
// every candidate.
func (o *Rank) Top(k int) {
	if k > 0 && k < len(o.Candidates) {
		o.Candidates = o.Candidates[:k]
	}
}

// WriteCSV writes the ranking as CSV, one line per candidate: rank,
// candidate, columns (joined by ";"), dime, dime_stderr, dime_normalized,
// p_value, q_value, rows; NaN as an empty cell.
func (o Rank) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"rank", "candidate", "columns", "dime", "dime_stderr", "dime_normalized", "p_value", "q_value", "rows"})
	f := func(v Number) string {
		if math.IsNaN(float64(v)) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	for _, c := range o.Candidates {
		_ = cw.Write([]string{strconv.Itoa(c.Rank), c.Name, strings.Join(c.Columns, ";"), f(c.DiME), f(c.DiMEStdErr), f(c.DiMENormalized), f(c.PValue), f(c.QValue), strconv.FormatInt(o.Rows, 10)})
	}
	cw.Flush()
	return cw.Error()
}
