package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// runRank runs dimebeam rank in this process, on Prism.
func runRank(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runWith(t, (*options).registerRank, args...)
}

var elapsed = regexp.MustCompile(`"elapsed_seconds":[0-9.eE+-]+`)

type rankJSON struct {
	Rows       int64 `json:"rows"`
	Candidates []struct {
		Name        string  `json:"name"`
		DiME        float64 `json:"dime"`
		StdErr      float64 `json:"dime_stderr"`
		PValue      float64 `json:"p_value"`
		DiMEAnalyic float64 `json:"dime_analytic"`
		MI          float64 `json:"mutual_information"`
	} `json:"candidates"`
}

// TestRankMatchesDimeRank: dimebeam rank on one file, and on a directory
// of three small files (one split), prints dime rank --json's bytes (but
// the elapsed time), the pilot's sample and every number included, and
// with --csv --top 3 dime rank's CSV; with each file a split of its own it
// equals dime merge of dime rank's states of each file (the settings of
// the first file's state, --like) to round-off, and its --save-state is
// the merged state whose ranking it printed.
func TestRankMatchesDimeRank(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.parquet")
	dime(t, "gen", "--kind", "screen", "--dim", "8", "--rows", "6000", "--seed", "241", "--out", one)
	args := []string{"--y", "y", "--x", "x*", "--group", "g=x06,x07", "--features", "16"}
	code, out, errs := runRank(t, append(args, one)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := dime(t, append([]string{"rank", one, "--json"}, args...)...)
	if g, w := elapsed.ReplaceAllString(out, ""), elapsed.ReplaceAllString(want, ""); g != w {
		t.Errorf("one split:\ndimebeam %s\ndime     %s", g, w)
	}
	if !strings.Contains(out, `"pilot":"sample"`) {
		t.Errorf("no sampled pilot in %.200s", out)
	}
	csv := append([]string{"--csv", "--top", "3"}, args...)
	if code, out, errs = runRank(t, append(csv, one)...); code != 0 {
		t.Fatalf("--csv: exit %d: %s", code, errs)
	}
	if want := dime(t, append([]string{"rank", one}, csv...)...); out != want {
		t.Errorf("one split, --csv --top 3:\ndimebeam %s\ndime     %s", out, want)
	}

	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	var files []string
	for i, rows := range []string{"3000", "4500", "2500"} {
		f := filepath.Join(data, string(rune('a'+i))+".parquet")
		dime(t, "gen", "--kind", "screen", "--dim", "8", "--rows", rows, "--seed", fmt.Sprint(242+i), "--out", f)
		files = append(files, f)
	}
	var states []string
	for i, f := range files {
		st := filepath.Join(dir, "p"+string(rune('0'+i))+".state")
		a := []string{"rank", f, "--json", "--save-state", st, "--y", "y", "--x", "x*", "--group", "g=x06,x07"}
		if i == 0 {
			a = append(a, "--features", "16", "--precision", "float64")
		} else {
			a = append(a, "--like", states[0])
		}
		dime(t, a...)
		states = append(states, st)
	}
	// The directory in one split: dime rank's bytes again.
	code, out, errs = runRank(t, append(args, data)...)
	if code != 0 {
		t.Fatalf("directory in one split: exit %d: %s", code, errs)
	}
	want = dime(t, append([]string{"rank", data, "--json"}, args...)...)
	if g, w := elapsed.ReplaceAllString(out, ""), elapsed.ReplaceAllString(want, ""); g != w {
		t.Errorf("directory in one split:\ndimebeam %s\ndime     %s", g, w)
	}
	var merged, got rankJSON
	if err := json.Unmarshal([]byte(dime(t, append([]string{"merge", "--json"}, states...)...)), &merged); err != nil {
		t.Fatal(err)
	}
	// --split-rows 1000: each file (one row group) a split of its own.
	saved := filepath.Join(dir, "beam.state")
	code, out, errs = runRank(t, "--y", "y", "--x", "x*", "--group", "g=x06,x07", "--like", states[0], "--split-rows", "1000", "--save-state", saved, data)
	if code != 0 {
		t.Fatalf("directory: exit %d: %s", code, errs)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	// The saved state is the merged one: dime merge prints its ranking.
	var fromState rankJSON
	if err := json.Unmarshal([]byte(dime(t, "merge", "--json", saved)), &fromState); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromState, got) {
		t.Errorf("dime merge of --save-state:\n%+v\ndimebeam rank:\n%+v", fromState, got)
	}
	if got.Rows != merged.Rows || len(got.Candidates) != len(merged.Candidates) {
		t.Fatalf("%d rows, %d candidates; dime merge %d, %d", got.Rows, len(got.Candidates), merged.Rows, len(merged.Candidates))
	}
	// Measured here: 1.7e-11 relative in DiME and its stderr (the merged
	// state's sums are added in another order), 1.8e-12 in the analytic
	// DiME, MI and p-value; on a 21,000-row directory of three CSV files
	// 1.1e-9 and 4e-12.
	rel := func(g, w float64) float64 { return math.Abs(g-w) / math.Max(math.Abs(w), 1e-300) }
	var worstD, worstA float64
	defer func() {
		t.Logf("largest relative differences: DiME and stderr %.2g, analytic, MI and p %.2g", worstD, worstA)
	}()
	for i, g := range got.Candidates {
		w := merged.Candidates[i]
		if g.Name != w.Name {
			t.Errorf("rank %d: %s, dime merge %s", i+1, g.Name, w.Name)
			continue
		}
		worstD = max(worstD, rel(g.DiME, w.DiME), rel(g.StdErr, w.StdErr))
		worstA = max(worstA, rel(g.DiMEAnalyic, w.DiMEAnalyic), rel(g.MI, w.MI), rel(g.PValue, w.PValue))
		if rel(g.DiME, w.DiME) > 1e-7 || rel(g.StdErr, w.StdErr) > 1e-7 {
			t.Errorf("%s: DiME %v ± %v, dime merge %v ± %v", g.Name, g.DiME, g.StdErr, w.DiME, w.StdErr)
		}
		if rel(g.DiMEAnalyic, w.DiMEAnalyic) > 1e-9 || rel(g.MI, w.MI) > 1e-9 || rel(g.PValue, w.PValue) > 1e-9 {
			t.Errorf("%s: analytic %v, MI %v, p %v; dime merge %v, %v, %v", g.Name, g.DiMEAnalyic, g.MI, g.PValue, w.DiMEAnalyic, w.MI, w.PValue)
		}
	}
}

// TestRankUsage: bad flags and inputs of dimebeam rank are one line and
// exit status 2.
func TestRankUsage(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one.parquet")
	dime(t, "gen", "--kind", "screen", "--dim", "6", "--rows", "500", "--seed", "243", "--out", one)
	for _, args := range [][]string{
		{one},
		{"--y", "y", one},
		{"--y", "y", "--x", "nope*", one},
		{"--y", "y", "--x", "x*", "--split-rows", "0", one},
		{"--y", "y", "--x", "x*", "--top", "-1", one},
		{"--y", "y", "--x", "x*", "--like", filepath.Join(dir, "missing.state"), one},
		{"--y", "y", "--x", "x*", filepath.Join(dir, "missing.parquet")},
	} {
		code, out, errs := runRank(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "dimebeam: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
}
