package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dime-project/dime/internal/calib"
)

// familyRecord is one null of the families study, as written to -records
// (NaN as null) and read back by -summarize.
type familyRecord struct {
	Family   string   `json:"family"`
	Rows     int      `json:"rows"`
	Index    int      `json:"index"`
	Seed     uint64   `json:"seed"`
	DiME     *float64 `json:"dime"`
	StdErr   *float64 `json:"dime_stderr"`
	Low      *float64 `json:"dime_ci95_low"`
	High     *float64 `json:"dime_ci95_high"`
	Analytic *float64 `json:"dime_analytic"`
	PValue   *float64 `json:"p_value"`
	Elapsed  float64  `json:"elapsed_seconds"`
}

func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}

func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

// families runs (or, with summarize, reads back) the null families study:
// dataset i of family number f (calib.NullFamilies) with the s-th number of
// rows of sizes has seed first + 10,000,000·s + 1,000,000·f + i, for i =
// from … from + datasets − 1.
func families(summarize, only, records string, first uint64, sizes []int, datasets, from int, command string, args []string) {
	var picked []calib.Family
	for _, name := range strings.Split(only, ",") {
		if name == "" {
			continue
		}
		f, err := calib.FamilyByName(strings.TrimSpace(name))
		if err != nil {
			fatalf("%v", err)
		}
		picked = append(picked, f)
	}
	if len(picked) == 0 {
		picked = calib.NullFamilies()
	}
	var rs []familyRecord
	if summarize != "" {
		for _, path := range strings.Split(summarize, ",") {
			rs = append(rs, readFamilyRecords(path)...)
		}
	} else {
		if first == 0 {
			fatalf("-first-seed is required")
		}
		if datasets == 0 {
			datasets = 100
		}
		rec := appendTo(records)
		rev := revision()
		start := time.Now()
		index := map[string]int{}
		for i, f := range calib.NullFamilies() {
			index[f.Name] = i
		}
		extra := ""
		if len(args) > 0 {
			extra = " " + strings.Join(args, " ")
		}
		fmt.Printf("families study of `dime %s -%s`: %v rows, datasets %d to %d per family, seeds %d + 10000000·size + 1000000·family + index, commit %s\n\n",
			command, extra, sizes, from, from+datasets-1, first, rev)
		for si, rows := range sizes {
			for _, f := range picked {
				for i := from; i < from+datasets; i++ {
					seed := first + 10_000_000*uint64(si) + 1_000_000*uint64(index[f.Name]) + uint64(i)
					o, err := f.Run(seed, rows, command, args...)
					if err != nil {
						fatalf("%v", err)
					}
					r := familyRecord{Family: f.Name, Rows: rows, Index: i, Seed: seed, DiME: num(o.DiME), StdErr: num(o.StdErr),
						Low: num(o.Low), High: num(o.High), Analytic: num(o.Analytic), PValue: num(o.PValue), Elapsed: o.Elapsed}
					rs = append(rs, r)
					if rec != nil {
						b, _ := json.Marshal(r)
						fmt.Fprintf(rec, "%s\n", b)
					}
					fmt.Fprintf(os.Stderr, "\r%s, %d rows: %d/%d (%.0f s)", f.Name, rows, i-from+1, datasets, time.Since(start).Seconds())
				}
				fmt.Fprintln(os.Stderr)
			}
		}
	}
	familyTable(os.Stdout, picked, rs)
}

func readFamilyRecords(path string) []familyRecord {
	var rs []familyRecord
	readLines(path, func(b []byte) error {
		var r familyRecord
		err := json.Unmarshal(b, &r)
		rs = append(rs, r)
		return err
	})
	return rs
}

// appendTo opens path to append record lines to (nil for "").
func appendTo(path string) io.Writer {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fatalf("%v", err)
	}
	return f // closed on exit
}

// writeLine writes v as one JSON line to w (nothing if w is nil).
func writeLine(w io.Writer, v any) {
	if w == nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		fatalf("record: %v", err)
	}
	if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
		fatalf("record: %v", err)
	}
}

// readLines calls parse on each line of the file at path.
func readLines(path string, parse func([]byte) error) {
	f, err := os.Open(path)
	if err != nil {
		fatalf("%v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for line := 1; sc.Scan(); line++ {
		if err := parse(sc.Bytes()); err != nil {
			fatalf("%s line %d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		fatalf("%s: %v", path, err)
	}
}

// familyTable prints one row per family and number of rows: the mean
// default DiME with its standard error over the nulls and z = mean/s.e.,
// the spread of DiME beside the mean dime_stderr, how many dime_ci95
// contain 0 and how many p-values are ≤ 0.05, each with the central 99%
// band of its binomial (0.95 and 0.05).
func familyTable(w io.Writer, picked []calib.Family, rs []familyRecord) {
	fmt.Fprintln(w, "| family | rows | nulls | mean `dime` ± s.e. | z | sd of `dime` | mean `dime_stderr` | ci95 covers 0 (99% band) | p ≤ 0.05 (99% band) | mean plug-in | within 2 s.e. |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|")
	seen := map[int]bool{}
	var sizes []int
	for _, r := range rs {
		if !seen[r.Rows] {
			seen[r.Rows] = true
			sizes = append(sizes, r.Rows)
		}
	}
	for _, f := range picked {
		for _, n := range sizes {
			var part []calib.Record
			var se, plug float64
			covers := 0
			for _, r := range rs {
				if r.Family != f.Name || r.Rows != n {
					continue
				}
				part = append(part, calib.Record{Index: r.Index, Seed: r.Seed, Outcome: calib.Outcome{DiME: val(r.DiME), PValue: val(r.PValue), Normalized: math.NaN()}})
				se += val(r.StdErr)
				plug += val(r.Analytic)
				if val(r.Low) <= 0 && 0 <= val(r.High) {
					covers++
				}
			}
			if len(part) == 0 {
				continue
			}
			s := calib.Summarize(part)
			k := float64(len(part))
			lo, hi := calib.BinomialBand99(len(part), 0.95)
			ok := "yes"
			if math.Abs(s.MeanDiME) > 2*s.StdErrDiME {
				ok = "**no**"
			}
			fmt.Fprintf(w, "| %s | %d | %d | %+.6f ± %.6f | %+.1f | %.5f | %.5f | %d (%d–%d) | %d (%d–%d) | %+.5f | %s |\n",
				f.Name, n, len(part), s.MeanDiME, s.StdErrDiME, s.MeanDiME/s.StdErrDiME, s.StdErrDiME*math.Sqrt(k), se/k,
				covers, lo, hi, s.Below05, s.Band05[0], s.Band05[1], plug/k, ok)
		}
	}
}
