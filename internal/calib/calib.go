// Package calib runs calibration and power studies of dime's estimators: it
// generates datasets with known dependence (package synth) from explicit
// seeds, runs the dime command on each exactly as a user would (dime gen
// piped into dime score or dime exact, in process), and summarizes DiME and
// the p-values with the binomial bands that say whether they are calibrated.
//
// # Overview
//
// A Study is a list of Cases (kind of data, columns per view, noise, rows)
// and a first seed: dataset i of the study uses seed FirstSeed + i, and the
// cases are dealt round-robin (dataset i is case i mod len(Cases)), so a
// study is reproducible from its description alone, and two studies whose
// seed ranges do not overlap see different data. Each dataset is one run of
//
//	dime gen --kind KIND --dim D --noise NOISE --rows N --seed S --out - |
//	dime COMMAND - --x x0,…,x{D−1} --y y0,…,y{D−1} --json [ARGS…]
//
// with the command's defaults unless the study adds arguments. Summarize
// gives the mean DiME with its standard error, and the number of p-values at
// or below 0.05 and 0.01 with the central 99% binomial band that a
// calibrated p-value falls in with probability 99%.
//
// Seeds used while tuning an estimator must not be those of a report: the
// program in ./calibrate prints the seed range of every table it writes.
package calib

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/dime-project/dime/tablewriter"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/internal/cli"
	"github.com/dime-project/dime/synth"
)

// Case is one kind of dataset.
type Case struct {
	Kind  synth.Kind
	Dim   int     // columns per view
	Noise float64 // noise standard deviation (sine, circle, square)
	MI    float64 // true mutual information in nats (gaussian)
	Rows  int
}

// String describes the case, e.g. "student-t d=3 n=10000".
func (c Case) String() string {
	s := fmt.Sprintf("%v d=%d", c.Kind, c.Dim)
	switch c.Kind {
	case synth.Sine, synth.Circle, synth.Square, synth.Units:
		s += fmt.Sprintf(" noise=%g", c.Noise)
	case synth.Gaussian:
		s += fmt.Sprintf(" mi=%g", c.MI)
	}
	return s + fmt.Sprintf(" n=%d", c.Rows)
}

// GenArgs returns the arguments of dime gen that write the dataset of this
// case with the given seed to stdout.
func (c Case) GenArgs(seed uint64) []string {
	args := []string{"gen", "--kind", c.Kind.String(), "--dim", strconv.Itoa(c.Dim),
		"--rows", strconv.Itoa(c.Rows), "--seed", strconv.FormatUint(seed, 10), "--out", "-", "--progress", "never"}
	switch c.Kind {
	case synth.Gaussian:
		args = append(args, "--mi", strconv.FormatFloat(c.MI, 'g', -1, 64))
	default:
		args = append(args, "--noise", strconv.FormatFloat(c.Noise, 'g', -1, 64))
	}
	return args
}

// EstimateArgs returns the arguments of dime COMMAND that read the dataset
// from stdin, with extra arguments appended.
func (c Case) EstimateArgs(command string, extra ...string) []string {
	args := []string{command, "-", "--x", strings.Join(tablewriter.ColumnNames("x", c.Dim), ","),
		"--y", strings.Join(tablewriter.ColumnNames("y", c.Dim), ","), "--json", "--progress", "never"}
	return append(args, extra...)
}

// Outcome is what one estimate reports (the fields of its JSON that the
// studies use). Fields absent from the report are NaN.
type Outcome struct {
	DiME       float64
	Normalized float64 // dime_normalized
	PValue     float64
	PValueTest string  // p_value_test, when reported
	PValueIID  float64 // p_value_iid: the iid test's, with serial rows
	// StdErr is dime_stderr, Low and High the ends of dime_ci95, and
	// Analytic the plug-in dime_analytic (score).
	StdErr, Low, High, Analytic float64
	Rows                        int64
	Elapsed                     float64 // seconds, as reported
}

// report holds the JSON fields read back from the dime command.
type report struct {
	DiME       *float64   `json:"dime"`
	Normalized *float64   `json:"dime_normalized"`
	PValue     *float64   `json:"p_value"`
	PValueTest string     `json:"p_value_test"`
	PValueIID  *float64   `json:"p_value_iid"`
	StdErr     *float64   `json:"dime_stderr"`
	CI95       []*float64 `json:"dime_ci95"`
	Analytic   *float64   `json:"dime_analytic"`
	Rows       int64      `json:"rows"`
	Elapsed    float64    `json:"elapsed_seconds"`
}

// Run generates the dataset of case c with seed and runs dime command on
// it, in process, with the extra arguments.
func Run(c Case, seed uint64, command string, extra ...string) (Outcome, error) {
	var data, stderr bytes.Buffer
	if code := cli.Main(c.GenArgs(seed), nil, &data, &stderr); code != 0 {
		return Outcome{}, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(c.GenArgs(seed), " "), code, stderr.String())
	}
	return c.estimate(command, &data, extra...)
}

// estimate runs dime COMMAND (EstimateArgs) on the data in in, and reads
// its JSON report into an Outcome.
func (c Case) estimate(command string, in io.Reader, extra ...string) (Outcome, error) {
	var out, stderr bytes.Buffer
	args := c.EstimateArgs(command, extra...)
	if code := cli.Main(args, in, &out, &stderr); code != 0 {
		return Outcome{}, fmt.Errorf("calib: dime %s: exit %d: %s", strings.Join(args, " "), code, stderr.String())
	}
	var r report
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return Outcome{}, fmt.Errorf("calib: dime %s: %v in %q", strings.Join(args, " "), err, out.String())
	}
	return r.outcome(), nil
}

// outcome returns the fields of the report, NaN where absent.
func (r report) outcome() Outcome {
	val := func(p *float64) float64 {
		if p == nil {
			return math.NaN()
		}
		return *p
	}
	o := Outcome{PValueIID: val(r.PValueIID), DiME: val(r.DiME), Normalized: val(r.Normalized), PValue: val(r.PValue),
		PValueTest: r.PValueTest, StdErr: val(r.StdErr), Low: math.NaN(), High: math.NaN(),
		Analytic: val(r.Analytic), Rows: r.Rows, Elapsed: r.Elapsed}
	if len(r.CI95) == 2 {
		o.Low, o.High = val(r.CI95[0]), val(r.CI95[1])
	}
	return o
}

// Study is a set of datasets: dataset i is case Cases[i mod len(Cases)]
// with seed FirstSeed + i.
type Study struct {
	Cases     []Case
	Datasets  int
	FirstSeed uint64
	// Command is the dime command (score or exact) and Args its extra
	// arguments (none: the defaults).
	Command string
	Args    []string
}

// Dataset returns the case and seed of dataset i.
func (s Study) Dataset(i int) (Case, uint64) {
	return s.Cases[i%len(s.Cases)], s.FirstSeed + uint64(i)
}

// Record is the outcome of one dataset of a study.
type Record struct {
	Index int
	Case  Case
	Seed  uint64
	Outcome
}

// Run runs every dataset of the study in order, calling progress (if not
// nil) after each, and returns the records.
func (s Study) Run(progress func(done int, r Record)) ([]Record, error) {
	if len(s.Cases) == 0 || s.Datasets < 1 {
		return nil, fmt.Errorf("calib: a study needs cases and at least one dataset")
	}
	out := make([]Record, 0, s.Datasets)
	for i := 0; i < s.Datasets; i++ {
		c, seed := s.Dataset(i)
		o, err := Run(c, seed, s.Command, s.Args...)
		if err != nil {
			return out, err
		}
		r := Record{Index: i, Case: c, Seed: seed, Outcome: o}
		out = append(out, r)
		if progress != nil {
			progress(i+1, r)
		}
	}
	return out, nil
}

// Summary summarizes the records of a study (or of part of one).
type Summary struct {
	Datasets int
	// MeanDiME is the mean DiME and StdErrDiME its standard error (the
	// sample standard deviation over √Datasets).
	MeanDiME, StdErrDiME float64
	// MeanNormalized is the mean dime_normalized (NaN when not reported).
	MeanNormalized float64
	// MeanP is the mean p-value (1/2 for a calibrated test).
	MeanP float64
	// Below05 and Below01 count the p-values ≤ 0.05 and ≤ 0.01; Band05 and
	// Band01 are the central 99% intervals of Binomial(Datasets, 0.05) and
	// Binomial(Datasets, 0.01).
	Below05, Below01 int
	Band05, Band01   [2]int
	// MaxP is the largest p-value (a power study wants it below 0.05).
	MaxP float64
}

// Summarize computes the summary of records.
func Summarize(records []Record) Summary {
	n := len(records)
	s := Summary{Datasets: n, MaxP: math.Inf(-1)}
	if n == 0 {
		return s
	}
	var sum, sq, norm, sumP float64
	normN := 0
	for _, r := range records {
		sum += r.DiME
		sumP += r.PValue
		if !math.IsNaN(r.Normalized) {
			norm += r.Normalized
			normN++
		}
		if r.PValue <= 0.05 {
			s.Below05++
		}
		if r.PValue <= 0.01 {
			s.Below01++
		}
		s.MaxP = math.Max(s.MaxP, r.PValue)
	}
	s.MeanDiME = sum / float64(n)
	for _, r := range records {
		sq += (r.DiME - s.MeanDiME) * (r.DiME - s.MeanDiME)
	}
	s.StdErrDiME = math.NaN()
	if n > 1 {
		s.StdErrDiME = math.Sqrt(sq/float64(n-1)) / math.Sqrt(float64(n))
	}
	s.MeanNormalized = math.NaN()
	if normN > 0 {
		s.MeanNormalized = norm / float64(normN)
	}
	s.MeanP = sumP / float64(n)
	s.Band05[0], s.Band05[1] = BinomialBand99(n, 0.05)
	s.Band01[0], s.Band01[1] = BinomialBand99(n, 0.01)
	return s
}

// Calibrated reports whether the mean DiME is within 2 standard errors of
// 0 and both counts lie in their bands: the criteria of a null study.
func (s Summary) Calibrated() bool {
	return math.Abs(s.MeanDiME) <= 2*s.StdErrDiME &&
		s.Below05 >= s.Band05[0] && s.Below05 <= s.Band05[1] &&
		s.Below01 >= s.Band01[0] && s.Below01 <= s.Band01[1]
}

// BinomialBand99 returns the central 99% interval [lo, hi] of
// Binomial(n, p): lo is the smallest k with P(X ≤ k) ≥ 0.005 and hi the
// smallest k with P(X ≤ k) ≥ 0.995, so that P(X < lo) < 0.005 and
// P(X > hi) ≤ 0.005.
func BinomialBand99(n int, p float64) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: p}
	for lo = 0; lo < n && b.CDF(float64(lo)) < 0.005; lo++ {
	}
	for hi = n; hi > 0 && b.CDF(float64(hi-1)) >= 0.995; hi-- {
	}
	return lo, hi
}

// Filter returns the records for which keep is true.
func Filter(records []Record, keep func(Record) bool) []Record {
	var out []Record
	for _, r := range records {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// NullCases returns the cases of the null study: the four independent kinds
// (Gaussian, Student-t(3), discrete, mixed widths), each with 1, 3 and 10
// columns per view and 5,000 or 20,000 rows: 24 cases.
func NullCases() []Case {
	var out []Case
	for _, rows := range []int{5000, 20000} {
		for _, d := range []int{1, 3, 10} {
			for _, k := range []synth.Kind{synth.Independent, synth.StudentT, synth.Discrete, synth.MixedWidths} {
				out = append(out, Case{Kind: k, Dim: d, Rows: rows})
			}
		}
	}
	return out
}

// PowerCases returns the case of the power study: y = x0² + noise with
// standard deviation 1, one column per view, 2,000 rows (Pearson
// correlation 0).
func PowerCases() []Case {
	return []Case{{Kind: synth.Square, Dim: 1, Noise: 1, Rows: 2000}}
}
