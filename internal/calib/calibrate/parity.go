package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/dime-project/dime/internal/calib"
)

// parityRecord is one dime compare run of the parity study.
type parityRecord struct {
	Case         string    `json:"case"`
	Kind         int       `json:"kind"`
	Index        int       `json:"index"`
	Seed         uint64    `json:"seed"`
	Rows         int       `json:"rows"`
	Exact        float64   `json:"exact"`
	Features     []int     `json:"features"`
	Default      []float64 `json:"default"`
	Permutations []float64 `json:"permutations"`
	PlugIn       []float64 `json:"plug_in"`
	ExactSeconds float64   `json:"exact_seconds"`
	RFFSeconds   []float64 `json:"rff_seconds"`
}

// parity runs (or reads back) the parity study: dataset i of kind k
// (calib.ParityCases) has seed first + 1,000,000·k + i, and is compared
// with exact on its first n rows for every n of sizes (the rows of a seed
// do not depend on how many are drawn). With only (comma-separated
// prefixes of the kinds' names, e.g. "gaussian d=10") it runs those kinds
// alone, on the same seeds.
func parity(summarize, only, records string, first uint64, sizes, features []int, datasets, from int) {
	var rs []parityRecord
	if summarize != "" {
		for _, path := range strings.Split(summarize, ",") {
			readLines(path, func(b []byte) error {
				var r parityRecord
				err := json.Unmarshal(b, &r)
				rs = append(rs, r)
				return err
			})
		}
	} else {
		if first == 0 {
			fatalf("-first-seed is required")
		}
		if datasets == 0 {
			datasets = 5
		}
		matched := false
		for _, c := range calib.ParityCases() {
			matched = matched || picked(c.String(), only)
		}
		if !matched {
			fatalf("-only %q: no parity kind starts with it", only)
		}
		rec := appendTo(records)
		kinds := "every kind"
		if only != "" {
			kinds = fmt.Sprintf("kinds %q", only)
		}
		fmt.Printf("parity study of `dime compare --sample n --features %v --normalized=false`: %v rows, %s, datasets %d to %d per kind, seeds %d + 1000000·kind + index, commit %s\n\n",
			features, sizes, kinds, from, from+datasets-1, first, revision())
		start := time.Now()
		for _, n := range sizes {
			for i := from; i < from+datasets; i++ {
				for k, c := range calib.ParityCases() {
					if !picked(c.String(), only) {
						continue
					}
					c.Rows = n
					seed := first + 1_000_000*uint64(k) + uint64(i)
					p, err := calib.Compare(c, seed, features)
					if err != nil {
						fatalf("%v", err)
					}
					r := parityRecord{Case: c.String(), Kind: k, Index: i, Seed: seed, Rows: n, Exact: p.Exact, Features: p.Features,
						Default: p.Default, Permutations: p.Permutations, PlugIn: p.PlugIn, ExactSeconds: p.ExactSeconds, RFFSeconds: p.RFFSeconds}
					rs = append(rs, r)
					writeLine(rec, r)
					fmt.Fprintf(os.Stderr, "\rparity: %d rows, dataset %d, kind %d (%.0f s)", n, i, k, time.Since(start).Seconds())
				}
			}
		}
		fmt.Fprintln(os.Stderr)
	}
	parityTables(os.Stdout, rs)
}

// picked reports whether name starts with one of the comma-separated
// prefixes of only (every name when only is empty).
func picked(name, only string) bool {
	some := false
	for _, p := range strings.Split(only, ",") {
		if p = strings.TrimSpace(p); p != "" {
			some = true
			if strings.HasPrefix(name, p) {
				return true
			}
		}
	}
	return !some
}

// parityTables prints the gap (RFF − exact)/exact of each RFF estimator,
// by rows and D (mean, range and how many below exact), then by kind at
// each D for the default.
func parityTables(w io.Writer, rs []parityRecord) {
	type key struct{ n, d int }
	type agg struct{ def, perm, plug, exact, defVal []float64 }
	by := map[key]*agg{}
	byKind := map[string]map[key]*agg{}
	var keys []key
	for _, r := range rs {
		for j, d := range r.Features {
			k := key{r.Rows, d}
			if by[k] == nil {
				by[k] = &agg{}
				keys = append(keys, k)
			}
			if byKind[r.Case[:strings.Index(r.Case, " n=")]] == nil {
				byKind[r.Case[:strings.Index(r.Case, " n=")]] = map[key]*agg{}
			}
			kk := byKind[r.Case[:strings.Index(r.Case, " n=")]]
			if kk[k] == nil {
				kk[k] = &agg{}
			}
			for _, a := range []*agg{by[k], kk[k]} {
				a.def = append(a.def, r.Default[j]/r.Exact-1)
				a.perm = append(a.perm, r.Permutations[j]/r.Exact-1)
				a.plug = append(a.plug, r.PlugIn[j]/r.Exact-1)
				a.exact = append(a.exact, r.Exact)
				a.defVal = append(a.defVal, r.Default[j])
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].n != keys[j].n {
			return keys[i].n < keys[j].n
		}
		return keys[i].d < keys[j].d
	})
	gap := func(v []float64) string {
		lo, hi, m, below := math.Inf(1), math.Inf(-1), 0.0, 0
		for _, x := range v {
			lo, hi, m = math.Min(lo, x), math.Max(hi, x), m+x
			if x < 0 {
				below++
			}
		}
		return fmt.Sprintf("%+.0f%% (%+.0f to %+.0f; %d of %d below)", 100*m/float64(len(v)), 100*lo, 100*hi, below, len(v))
	}
	mean := func(v []float64) float64 {
		var s float64
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	fmt.Fprintln(w, "| rows n | D | datasets | mean exact DiME | mean default | default: mean gap (range) | permutations | plug-in |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, k := range keys {
		a := by[k]
		fmt.Fprintf(w, "| %d | %d | %d | %.4f | %.4f | %s | %s | %s |\n", k.n, k.d, len(a.def), mean(a.exact), mean(a.defVal), gap(a.def), gap(a.perm), gap(a.plug))
	}
	var kinds []string
	for name := range byKind {
		kinds = append(kinds, name)
	}
	sort.Strings(kinds)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| kind | rows n | D | datasets | mean exact DiME | mean default | default: mean gap (range) |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, name := range kinds {
		for _, k := range keys {
			if a := byKind[name][k]; a != nil {
				fmt.Fprintf(w, "| %s | %d | %d | %d | %.4f | %.4f | %s |\n", name, k.n, k.d, len(a.def), mean(a.exact), mean(a.defVal), gap(a.def))
			}
		}
	}
}
