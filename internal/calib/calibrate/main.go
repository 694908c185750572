// Command calibrate runs the calibration and power studies of dime's
// default estimators and prints their tables (Markdown), as CALIBRATION.md
// reports them:
//
//	go build -o calibrate ./internal/calib/calibrate
//	./calibrate -study null -command score  -first-seed 3000000000
//	./calibrate -study null -command exact  -first-seed 3000000000
//	./calibrate -study power -command score -first-seed 3100000000
//	./calibrate -study families -rows 5000 -datasets 100 -first-seed 6220000000
//
// Every dataset is `dime gen … | dime COMMAND - --json` at the command's
// defaults (see package calib); -args adds arguments to COMMAND. Progress
// goes to stderr, tables to stdout, and with -records FILE one JSON line per
// dataset to FILE.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/dime-project/dime/host"
	"github.com/dime-project/dime/internal/calib"
	"github.com/dime-project/dime/synth"
)

func main() {
	host.UseBLAS() // the backend dime's main installs: the same numbers as dime
	study := flag.String("study", "null", "null (independent data: calibration), power (y = x0² + noise) or families (the default DiME's mean under independence per null family)")
	command := flag.String("command", "score", "dime command to study: score or exact")
	datasets := flag.Int("datasets", 0, "number of datasets (default 400 for null, 50 for power)")
	first := flag.Uint64("first-seed", 0, "seed of the first dataset (required: never a seed used while tuning)")
	args := flag.String("args", "", "extra arguments of the command, space-separated (default: none, the defaults)")
	records := flag.String("records", "", "write one JSON line per dataset to this file")
	rows := flag.String("rows", "", "families, parity, serial: rows per dataset, comma-separated (families: 5000; parity: 1000,2000; serial: 5000)")
	features := flag.String("features", "64,256,1024", "parity: numbers D of frequencies, comma-separated")
	windowRows := flag.String("window-rows", "5000,2000", "serial: monitor's window lengths, comma-separated")
	from := flag.Int("from", 0, "families: index of the first dataset of each family (to add datasets to a study)")
	only := flag.String("only", "", "families, parity: comma-separated names (or prefixes) of the families or kinds to run (default: all)")
	summarize := flag.String("summarize", "", "families, parity, serial: print the table of these record files (comma-separated) instead of running")
	flag.Parse()
	switch *study {
	case "families":
		families(*summarize, *only, *records, *first, ints("-rows", *rows, "5000"), *datasets, *from, *command, strings.Fields(*args))
		return
	case "parity":
		parity(*summarize, *only, *records, *first, ints("-rows", *rows, "1000,2000"), ints("-features", *features, ""), *datasets, *from)
		return
	case "serial":
		serial(*summarize, *records, *first, ints("-rows", *rows, "5000"), ints("-window-rows", *windowRows, ""), *datasets, *from)
		return
	}
	if *first == 0 {
		fatalf("-first-seed is required")
	}
	s := calib.Study{FirstSeed: *first, Command: *command, Args: strings.Fields(*args)}
	switch *study {
	case "null":
		s.Cases, s.Datasets = calib.NullCases(), 400
	case "power":
		s.Cases, s.Datasets = calib.PowerCases(), 50
	default:
		fatalf("-study %q: want null or power", *study)
	}
	if *datasets > 0 {
		s.Datasets = *datasets
	}
	var rec io.Writer
	if *records != "" {
		f, err := os.Create(*records)
		if err != nil {
			fatalf("%v", err)
		}
		defer f.Close()
		rec = f
	}
	rev := revision() // before the run: the tree may change while it runs
	start := time.Now()
	rs, err := s.Run(func(done int, r calib.Record) {
		if rec != nil {
			writeRecord(rec, r)
		}
		fmt.Fprintf(os.Stderr, "\r%s %s: %d/%d (%.0f s)", *study, *command, done, s.Datasets, time.Since(start).Seconds())
	})
	fmt.Fprintln(os.Stderr)
	if err != nil {
		fatalf("%v", err)
	}
	header(os.Stdout, s, *study, rev, time.Since(start))
	if *study == "power" {
		power(os.Stdout, rs)
		return
	}
	null(os.Stdout, rs)
}

// writeRecord writes one dataset's record as a JSON line (NaN as null).
func writeRecord(w io.Writer, r calib.Record) {
	num := func(v float64) *float64 {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		return &v
	}
	b, err := json.Marshal(map[string]any{
		"index": r.Index, "case": r.Case.String(), "kind": r.Case.Kind.String(), "dim": r.Case.Dim,
		"noise": r.Case.Noise, "rows": r.Case.Rows, "seed": r.Seed, "estimated_rows": r.Rows,
		"dime": num(r.DiME), "dime_normalized": num(r.Normalized), "p_value": num(r.PValue),
		"p_value_test": r.PValueTest, "elapsed_seconds": r.Elapsed,
	})
	if err != nil {
		fatalf("record %d: %v", r.Index, err)
	}
	fmt.Fprintf(w, "%s\n", b)
}

// ints parses a comma-separated list of positive integers (def when s is
// empty).
func ints(flag, s, def string) []int {
	if s == "" {
		s = def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			fatalf("%s %q: want positive integers, comma-separated", flag, s)
		}
		out = append(out, n)
	}
	return out
}

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "calibrate: "+format+"\n", a...)
	os.Exit(2)
}

// commit is the commit the program is built from, when set at build time:
//
//	go build -ldflags "-X main.commit=$(git rev-parse --short=12 HEAD)" ./internal/calib/calibrate
var commit string

// revision returns the commit the program was built from: commit, or the
// build information, or else git in the working directory.
func revision() string {
	if commit != "" {
		return commit
	}
	rev, dirty := "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			switch kv.Key {
			case "vcs.revision":
				rev = kv.Value
				if len(rev) > 12 {
					rev = rev[:12]
				}
			case "vcs.modified":
				if kv.Value == "true" {
					dirty = " (with uncommitted changes)"
				}
			}
		}
	}
	if rev == "unknown" { // built with -buildvcs=false: ask git
		if out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output(); err == nil {
			rev = strings.TrimSpace(string(out))
			if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(st) > 0 {
				dirty = " (with uncommitted changes)"
			}
		}
	}
	return rev + dirty
}

// header prints what was run: command, seeds, commit.
func header(w io.Writer, s calib.Study, study, rev string, took time.Duration) {
	last := s.FirstSeed + uint64(s.Datasets) - 1
	extra := ""
	if len(s.Args) > 0 {
		extra = " " + strings.Join(s.Args, " ")
	}
	fmt.Fprintf(w, "%s study of `dime %s -%s`: %d datasets, seeds %d to %d, commit %s, %s, %d CPUs, %.0f s\n\n",
		study, s.Command, extra, s.Datasets, s.FirstSeed, last, rev, runtime.Version(), runtime.NumCPU(), took.Seconds())
}

// null prints the calibration tables: all datasets, then by kind, by
// columns per view and by rows.
func null(w io.Writer, rs []calib.Record) {
	fmt.Fprintln(w, "| datasets | mean DiME ± s.e. | mean / s.e. | p ≤ 0.05 (99% band) | p ≤ 0.01 (99% band) | mean p | mean dime_normalized | calibrated |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	row := func(label string, part []calib.Record) {
		s := calib.Summarize(part)
		ok := "yes"
		if !s.Calibrated() {
			ok = "**no**"
		}
		fmt.Fprintf(w, "| %s%d | %.5f ± %.5f | %+.2f | %d (%d–%d) | %d (%d–%d) | %.3f | %s | %s |\n",
			label, s.Datasets, s.MeanDiME, s.StdErrDiME, s.MeanDiME/s.StdErrDiME,
			s.Below05, s.Band05[0], s.Band05[1], s.Below01, s.Band01[0], s.Band01[1], s.MeanP, fmtNaN(s.MeanNormalized), ok)
	}
	row("all: ", rs)
	for _, k := range []synth.Kind{synth.Independent, synth.StudentT, synth.Discrete, synth.MixedWidths} {
		row(k.String()+": ", calib.Filter(rs, func(r calib.Record) bool { return r.Case.Kind == k }))
	}
	for _, d := range []int{1, 3, 10} {
		row(fmt.Sprintf("d = %d: ", d), calib.Filter(rs, func(r calib.Record) bool { return r.Case.Dim == d }))
	}
	for _, n := range []int{5000, 20000} {
		row(fmt.Sprintf("%d rows: ", n), calib.Filter(rs, func(r calib.Record) bool { return r.Case.Rows == n }))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| case | datasets | mean DiME ± s.e. | p ≤ 0.05 | p ≤ 0.01 | mean p |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, c := range calib.NullCases() {
		part := calib.Filter(rs, func(r calib.Record) bool { return r.Case == c })
		if len(part) == 0 {
			continue
		}
		s := calib.Summarize(part)
		fmt.Fprintf(w, "| %s | %d | %.5f ± %.5f | %d | %d | %.3f |\n", c, s.Datasets, s.MeanDiME, s.StdErrDiME, s.Below05, s.Below01, s.MeanP)
	}
}

// power prints the power table.
func power(w io.Writer, rs []calib.Record) {
	s := calib.Summarize(rs)
	below := len(calib.Filter(rs, func(r calib.Record) bool { return r.PValue < 0.05 }))
	var elapsed float64
	for _, r := range rs {
		elapsed += r.Elapsed
	}
	fmt.Fprintln(w, "| case | datasets | p < 0.05 | largest p | mean DiME ± s.e. | mean dime_normalized | mean seconds per estimate |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	fmt.Fprintf(w, "| %s | %d | %d | %.3g | %.4f ± %.4f | %s | %.2f |\n", rs[0].Case, s.Datasets, below, s.MaxP,
		s.MeanDiME, s.StdErrDiME, fmtNaN(s.MeanNormalized), elapsed/float64(len(rs)))
}

func fmtNaN(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", v)
}
