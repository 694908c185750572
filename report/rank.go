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
	Rank    int      `json:"rank"`
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
	PairScores
	MI     Number `json:"mutual_information"`
	SigmaX Number `json:"sigma_x"`
}

// PairScores are the numbers of a pair of a ranking or a matrix, with the
// q-value of its p-value among every pair's.
type PairScores struct {
	DiME           Number `json:"dime"`
	DiMEStdErr     Number `json:"dime_stderr"`
	DiMENormalized Number `json:"dime_normalized"`
	PValue         Number `json:"p_value"`
	QValue         Number `json:"q_value"`
	DiMEAnalytic   Number `json:"dime_analytic"`
}

func pairScoresOf(r rank.PairResult) PairScores {
	return PairScores{DiME: Number(r.DiME), DiMEStdErr: Number(r.DiMEStdErr), DiMENormalized: Number(r.DiMENormalized),
		PValue: Number(r.PValue), QValue: Number(r.QValue), DiMEAnalytic: Number(r.DiMEAnalytic)}
}

// RankInput is what a ranking or a matrix read: the first fields of its
// JSON.
type RankInput struct {
	Estimator string `json:"estimator"`
	Input     string `json:"input"`
	Rows      int64  `json:"rows"`
	Skipped   int64  `json:"skipped_rows"`
}

// RankSettings are the settings every pair of a ranking or a matrix was
// scored with.
type RankSettings struct {
	Kernel   string  `json:"kernel"`
	Alpha    float64 `json:"alpha"`
	Features int     `json:"features"`
	Groups   int     `json:"groups"`
	Seed     uint64  `json:"seed"`
	Sigma    string  `json:"sigma_rule"`
}

// RankScaling is how the columns of a ranking or a matrix were scaled:
// standardized or not, and the rows the scales and bandwidths were chosen
// on (Pilot and PilotRows are the caller's to set).
type RankScaling struct {
	Standardize bool   `json:"standardize"`
	Pilot       string `json:"pilot,omitempty"` // "sample" or "prefix"
	PilotRows   int    `json:"pilot_rows,omitempty"`
}

// Rank is a ranking of candidates against a target as dime rank --json
// and dimebeam rank print it; its JSON field names are part of both
// commands' interface.
type Rank struct {
	RankInput
	Target []string `json:"target"`
	RankSettings
	SigmaY Number `json:"sigma_y"`
	RankScaling
	Candidates []RankCandidate `json:"candidates"`
	Count      int             `json:"candidates_total"`
	Partial    bool            `json:"partial,omitempty"`
	Elapsed    float64         `json:"elapsed_seconds"`
}

// Matrix is every pair of a set of views as dime matrix --json prints it;
// its JSON field names are part of the command's interface.
type Matrix struct {
	RankInput
	Columns []string `json:"columns"` // the views' names
	RankSettings
	RankScaling
	// Order is the views' order in the heatmap (the caller's to set).
	Order   []string     `json:"order"`
	Pairs   []MatrixPair `json:"pairs"`
	Count   int          `json:"pairs_total"`
	Partial bool         `json:"partial,omitempty"`
	Elapsed float64      `json:"elapsed_seconds"`
}

// MatrixPair is one pair of a Matrix.
type MatrixPair struct {
	Rank int    `json:"rank"`
	X    string `json:"x"`
	Y    string `json:"y"`
	PairScores
}

// rankHead returns what a ranking and a matrix of the results of every
// pair of acc's plan share.
func rankHead(acc *rank.Accumulator, results []rank.PairResult, input string) (RankInput, RankSettings, RankScaling) {
	cfg := acc.Settings()
	in := RankInput{Estimator: "rff", Input: input, Rows: acc.Rows()}
	if len(results) > 0 {
		in.Skipped = results[0].SkippedRows
	}
	return in, RankSettings{Kernel: cfg.Kernel.String(), Alpha: cfg.Alpha, Features: cfg.Features, Groups: cfg.GroupCount(), Seed: cfg.Seed, Sigma: cfg.BandwidthX.String()},
		RankScaling{Standardize: cfg.Standardize}
}

// byRank returns the results in rank order.
func byRank(results []rank.PairResult) []rank.PairResult {
	sorted := slices.Clone(results)
	slices.SortStableFunc(sorted, func(a, b rank.PairResult) int { return a.Rank - b.Rank })
	return sorted
}

// RankOf returns the ranking of the results of every pair of a ranking
// (rank.Accumulator.Results), candidates in rank order.
func RankOf(acc *rank.Accumulator, results []rank.PairResult, input string) Rank {
	plan := acc.Plan()
	o := Rank{Target: plan.Views[plan.OrderY[0]].Columns, Count: len(results)}
	o.RankInput, o.RankSettings, o.RankScaling = rankHead(acc, results, input)
	if len(results) > 0 {
		o.SigmaY = Number(results[0].SigmaY)
	}
	for _, r := range byRank(results) {
		o.Candidates = append(o.Candidates, RankCandidateOf(plan, r))
	}
	return o
}

// RankCandidateOf returns the candidate of a pair of a ranking's plan.
func RankCandidateOf(plan rank.Plan, r rank.PairResult) RankCandidate {
	v := plan.Views[r.X]
	return RankCandidate{Rank: r.Rank, Name: v.Name, Columns: v.Columns, PairScores: pairScoresOf(r), MI: Number(r.MutualInformation), SigmaX: Number(r.SigmaX)}
}

// MatrixOf returns the matrix of the results of every pair of a plan's
// views (rank.Accumulator.Results), pairs in rank order; the caller sets
// its Order.
func MatrixOf(acc *rank.Accumulator, results []rank.PairResult, input string) Matrix {
	plan := acc.Plan()
	o := Matrix{Count: len(results)}
	o.RankInput, o.RankSettings, o.RankScaling = rankHead(acc, results, input)
	for _, v := range plan.Views {
		o.Columns = append(o.Columns, v.Name)
	}
	for _, r := range byRank(results) {
		o.Pairs = append(o.Pairs, MatrixPair{Rank: r.Rank, X: plan.Views[r.X].Name, Y: plan.Views[r.Y].Name, PairScores: pairScoresOf(r)})
	}
	return o
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
