package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dime-project/dime/internal/calib"
)

// serialRecord is one dataset (score) or window (monitor) of the serial
// study.
type serialRecord struct {
	Part   string   `json:"part"` // "score --rows serial", "monitor", or "power: …"
	Kind   string   `json:"kind"`
	Rows   int      `json:"rows"` // rows per dataset or window
	Index  int      `json:"index"`
	Seed   uint64   `json:"seed"`
	DiME   *float64 `json:"dime"`
	StdErr *float64 `json:"dime_stderr"`
	Low    *float64 `json:"dime_ci95_low,omitempty"`
	High   *float64 `json:"dime_ci95_high,omitempty"`
	P      *float64 `json:"p_value"`
	PIID   *float64 `json:"p_value_iid"`
}

// powerSeed is the first seed of CALIBRATION.md's power study (y = x0² +
// noise, 2,000 rows), whose datasets the serial study's power part reuses
// so that the serial test's power compares with the iid test's there.
const powerSeed = 3100000000

// serial runs (or reads back) the serial-rows study: for each kind k of
// calib.SerialKinds, datasets independent datasets of each size of sizes
// (s-th: seeds first + 1,000,000·k + 100,000·s + i) through dime score
// --rows serial, and one series of datasets windows of each length of
// windowRows (w-th: seed first + 1,000,000·k + 900,000 + w) through dime
// monitor at its defaults; then the power part: CALIBRATION.md's power
// datasets through score --rows serial, and windows of 2,000 rows of one
// such series through monitor.
func serial(summarize, records string, first uint64, sizes, windowRows []int, datasets, from int) {
	var rs []serialRecord
	if summarize != "" {
		for _, path := range strings.Split(summarize, ",") {
			readLines(path, func(b []byte) error {
				var r serialRecord
				err := json.Unmarshal(b, &r)
				rs = append(rs, r)
				return err
			})
		}
		serialTable(os.Stdout, rs)
		return
	}
	if first == 0 {
		fatalf("-first-seed is required")
	}
	if datasets == 0 {
		datasets = 100
	}
	rec := appendTo(records)
	fmt.Printf("serial study: score --rows serial on %v rows, monitor windows of %v rows, datasets %d to %d per kind, seeds %d + 1000000·kind + …, commit %s\n\n",
		sizes, windowRows, from, from+datasets-1, first, revision())
	start := time.Now()
	add := func(r serialRecord, o calib.Outcome) {
		r.DiME, r.StdErr, r.P, r.PIID = num(o.DiME), num(o.StdErr), num(o.PValue), num(o.PValueIID)
		r.Low, r.High = num(o.Low), num(o.High)
		rs = append(rs, r)
		writeLine(rec, r)
	}
	for k, kind := range calib.SerialKinds() {
		for w, n := range windowRows {
			seed := first + 1_000_000*uint64(k) + 900_000 + uint64(w)
			wins, err := kind.Monitor(seed, datasets, n, 2)
			if err != nil {
				fatalf("%v", err)
			}
			for i, o := range wins {
				add(serialRecord{Part: "monitor", Kind: kind.Name, Rows: n, Index: i, Seed: seed}, o)
			}
			fmt.Fprintf(os.Stderr, "\rserial: %s, monitor windows of %d rows (%.0f s)", kind.Name, n, time.Since(start).Seconds())
		}
		for s, n := range sizes {
			for i := from; i < from+datasets; i++ {
				seed := first + 1_000_000*uint64(k) + 100_000*uint64(s) + uint64(i)
				o, err := kind.Score(seed, n, 2, "--rows", "serial", "--normalized=false")
				if err != nil {
					fatalf("%v", err)
				}
				add(serialRecord{Part: "score --rows serial", Kind: kind.Name, Rows: n, Index: i, Seed: seed}, o)
				fmt.Fprintf(os.Stderr, "\rserial: %s, score on %d rows: %d/%d (%.0f s)", kind.Name, n, i-from+1, datasets, time.Since(start).Seconds())
			}
		}
	}
	c := calib.PowerCases()[0]
	for i := range 50 {
		o, err := calib.Run(c, powerSeed+uint64(i), "score", "--rows", "serial", "--normalized=false")
		if err != nil {
			fatalf("%v", err)
		}
		add(serialRecord{Part: "power: score --rows serial", Kind: c.String(), Rows: c.Rows, Index: i, Seed: powerSeed + uint64(i)}, o)
		fmt.Fprintf(os.Stderr, "\rserial: power, score: %d/50 (%.0f s)", i+1, time.Since(start).Seconds())
	}
	long := c
	long.Rows = 50 * c.Rows
	wins, err := calib.MonitorCase(long, powerSeed, c.Rows)
	if err != nil {
		fatalf("%v", err)
	}
	for i, o := range wins {
		add(serialRecord{Part: "power: monitor", Kind: long.String(), Rows: c.Rows, Index: i, Seed: powerSeed}, o)
	}
	fmt.Fprintln(os.Stderr)
	serialTable(os.Stdout, rs)
}

// serialTable prints, per part, kind and rows: how many p-values (serial,
// and the iid test's of the same statistic) are ≤ 0.05, with the central
// 99% band of Binomial(n, 0.05), the mean DiME, and (score) how many
// dime_ci95 contain 0.
func serialTable(w io.Writer, rs []serialRecord) {
	type key struct {
		part, kind string
		rows       int
	}
	var keys []key
	by := map[key][]serialRecord{}
	for _, r := range rs {
		k := key{r.Part, r.Kind, r.Rows}
		if by[k] == nil {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	fmt.Fprintln(w, "| what | kind | rows | datasets | p ≤ 0.05 (99% band) | iid test p ≤ 0.05 | largest p | mean `dime` ± s.e. | ci95 covers 0 |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|")
	for _, k := range keys {
		part := by[k]
		var p05, iid05, covers, withCI int
		var sum, sq, maxP float64
		for _, r := range part {
			if val(r.P) <= 0.05 {
				p05++
			}
			if val(r.PIID) <= 0.05 {
				iid05++
			}
			maxP = math.Max(maxP, val(r.P))
			sum += val(r.DiME)
			if r.Low != nil && r.High != nil {
				withCI++
				if *r.Low <= 0 && 0 <= *r.High {
					covers++
				}
			}
		}
		n := float64(len(part))
		m := sum / n
		for _, r := range part {
			sq += (val(r.DiME) - m) * (val(r.DiME) - m)
		}
		lo, hi := calib.BinomialBand99(len(part), 0.05)
		ci := "n/a"
		if withCI > 0 {
			ci = fmt.Sprintf("%d of %d", covers, withCI)
		}
		fmt.Fprintf(w, "| %s | %s | %d | %d | %d (%d–%d) | %d | %.3g | %+.5f ± %.5f | %s |\n",
			k.part, k.kind, k.rows, len(part), p05, lo, hi, iid05, maxP, m, math.Sqrt(sq/(n-1)/n), ci)
	}
}
