package cli

import (
	"bytes"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeUnits writes rows of the real-units kind (two columns per view:
// ages and money in X, money and counts in Y) to path, each row changed
// by f first.
func writeUnits(t *testing.T, path string, rows int, seed uint64, f func(row []float64)) {
	t.Helper()
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Units, Dim: 2, Noise: 0.3, Seed: seed}, rows)
	if err != nil {
		t.Fatal(err)
	}
	w, err := tablewriter.Create(path, dataset.Auto, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		row := []float64{x.At(i, 0), x.At(i, 1), y.At(i, 0), y.At(i, 1)}
		f(row)
		if err := w.Write(row, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestCommandsScaleFree multiplies one column by 1e4 and shifts another by
// 1e6: score, exact, sweep, monitor and compare report the same estimates
// to 1e-6 relative at their defaults, and with --sigma median and auto.
func TestCommandsScaleFree(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeUnits(t, a, 3000, 2141, func([]float64) {})
	writeUnits(t, b, 3000, 2141, func(r []float64) { r[0] *= 1e4; r[3] += 1e6 })
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--json"}
	keys := []string{"entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime", "sigma_x", "sigma_y"}
	for _, c := range []struct {
		name string
		args []string
		keys []string
	}{
		{"score", []string{"score", "--features", "32"}, keys},
		{"score median", []string{"score", "--features", "32", "--sigma", "median"}, keys},
		{"score auto", []string{"score", "--features", "32", "--sigma", "auto", "--pilot-rows", "300"}, keys},
		{"exact", []string{"exact", "--sample", "400"}, keys},
		{"sweep", []string{"sweep", "--sample", "200", "--pilot-rows", "300"}, []string{"auto_sigma_x", "auto_sigma_y"}},
		{"monitor", []string{"monitor", "--window-rows", "1000", "--features", "32"}, []string{"entropy_joint", "mutual_information", "dime", "p_value"}},
	} {
		var outs [2]string
		for i, p := range []string{a, b} {
			args := append(append([]string{c.args[0], p}, c.args[1:]...), views...)
			code, out, errs := runBinary(t, nil, args...)
			if code != 0 {
				t.Fatalf("%s: exit %d: %s", c.name, code, errs)
			}
			outs[i] = out
		}
		la, lb := strings.Split(strings.TrimSpace(outs[0]), "\n"), strings.Split(strings.TrimSpace(outs[1]), "\n")
		if len(la) != len(lb) {
			t.Fatalf("%s: %d and %d lines", c.name, len(la), len(lb))
		}
		for i := range la {
			ma, mb := decodeJSON(t, la[i]), decodeJSON(t, lb[i])
			for _, k := range c.keys {
				va, vb := num(t, ma, k), num(t, mb, k)
				if rel := math.Abs(va-vb) / math.Abs(va); !(rel <= 1e-6) {
					t.Errorf("%s line %d: %s %v, rescaled %v (relative %.3g)", c.name, i, k, va, vb, rel)
				}
			}
		}
	}
	// compare: its exact estimate and each RFF run.
	var cmp [2]map[string]any
	for i, p := range []string{a, b} {
		code, out, errs := runBinary(t, nil, append([]string{"compare", p, "--sample", "300", "--features", "16,32"}, views...)...)
		if code != 0 {
			t.Fatalf("compare: exit %d: %s", code, errs)
		}
		cmp[i] = decodeJSON(t, out)
	}
	pick := func(m map[string]any) []map[string]any {
		out := []map[string]any{m["exact"].(map[string]any)}
		for _, r := range m["rff"].([]any) {
			out = append(out, r.(map[string]any))
		}
		return out
	}
	ca, cb := pick(cmp[0]), pick(cmp[1])
	for i := range ca {
		for _, k := range keys {
			va, vb := num(t, ca[i], k), num(t, cb[i], k)
			if rel := math.Abs(va-vb) / math.Abs(va); !(rel <= 1e-6) {
				t.Errorf("compare estimate %d: %s %v, rescaled %v (relative %.3g)", i, k, va, vb, rel)
			}
		}
	}
}

// TestAutoSigmaAgrees: dime score --sigma auto and dime sweep choose the
// same bandwidths on the same data and seed (both on the first rows).
func TestAutoSigmaAgrees(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.parquet")
	writeUnits(t, path, 5000, 2142, func([]float64) {})
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--json"}
	code, out, errs := runBinary(t, nil, append([]string{"score", path, "--sigma", "auto", "--features", "32", "--pilot-rows", "300"}, views...)...)
	if code != 0 {
		t.Fatalf("score: %s", errs)
	}
	score := decodeJSON(t, out)
	code, out, errs = runBinary(t, nil, append([]string{"sweep", path, "--sample", "300", "--pilot-rows", "300"}, views...)...)
	if code != 0 {
		t.Fatalf("sweep: %s", errs)
	}
	sweep := decodeJSON(t, out)
	if score["sigma_x"] != sweep["auto_sigma_x"] || score["sigma_y"] != sweep["auto_sigma_y"] {
		t.Errorf("score --sigma auto chose %v, %v; sweep %v, %v", score["sigma_x"], score["sigma_y"], sweep["auto_sigma_x"], sweep["auto_sigma_y"])
	}
}

// TestScaleWarnings: with the values as they are (--standardize=false), a
// fixed bandwidth far below the columns' scales makes every view
// degenerate, and auto stops at the end of its grid: one stderr line each,
// and the same text in --json's warnings. At the defaults, none.
func TestScaleWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.parquet")
	writeUnits(t, path, 3000, 2143, func([]float64) {})
	views := []string{path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--json"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{nil, nil},
		{[]string{"--standardize=false"}, []string{"view X is degenerate", "view Y is degenerate"}},
		{[]string{"--standardize=false", "--sigma", "auto"}, []string{"sigma of X", "end of the auto grid", "sigma of Y"}},
	} {
		code, out, errs := runBinary(t, nil, append(append([]string{"score"}, views...), c.args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		m := decodeJSON(t, out)
		ws, _ := m["warnings"].([]any)
		lines := strings.Count(errs, "dime: warning: ")
		if len(c.want) == 0 && (len(ws) != 0 || lines != 0) {
			t.Errorf("defaults: warnings %v, stderr %q", ws, errs)
		}
		if len(c.want) > 0 && (len(ws) == 0 || lines != len(ws)) {
			t.Errorf("%v: warnings %v, stderr %q", c.args, ws, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) || !strings.Contains(out, w) {
				t.Errorf("%v: no %q in stderr %q or JSON", c.args, w, errs)
			}
		}
	}
}

// TestPeopleExample runs README's first example on dime gen --kind people:
// money, ages and a nonlinear spend. The defaults find the dependence;
// the values as they are do not, and say so.
func TestPeopleExample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "people.csv")
	if code, _, errs := runBinary(t, nil, "gen", "--kind", "people", "--rows", "5000", "--out", path); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	head, _ := os.ReadFile(path)
	if !bytes.HasPrefix(head, []byte("age,income,spend,visits,height")) {
		t.Fatalf("people.csv starts %q", head[:min(len(head), 60)])
	}
	code, out, errs := runBinary(t, nil, "score", path, "--x", "age,income", "--y", "spend", "--json")
	if code != 0 {
		t.Fatalf("score: %s", errs)
	}
	m := decodeJSON(t, out)
	if d, p := num(t, m, "dime"), num(t, m, "p_value"); !(d > 0.05) || !(p < 1e-6) || errs != "" {
		t.Errorf("defaults: DiME %v, p %v, stderr %q", d, p, errs)
	}
	code, out, errs = runBinary(t, nil, "score", path, "--x", "age,income", "--y", "spend", "--json", "--standardize=false")
	if code != 0 || !strings.Contains(errs, "degenerate") {
		t.Errorf("--standardize=false: exit %d, stderr %q, %s", code, errs, out)
	}
	// The independent column stays independent.
	code, out, errs = runBinary(t, nil, "score", path, "--x", "height", "--y", "spend", "--json")
	if code != 0 {
		t.Fatalf("score height: %s", errs)
	}
	if p := num(t, decodeJSON(t, out), "p_value"); !(p > 0.001) {
		t.Errorf("height vs spend: p %v", p)
	}
}

// TestMonitorLike: monitor --like takes a saved state's settings (its
// scales and bandwidths) for every window; an estimator flag with --like
// is a one-line usage error.
func TestMonitorLike(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	writeUnits(t, a, 2000, 2144, func([]float64) {})
	writeUnits(t, b, 2000, 2145, func([]float64) {})
	ref := filepath.Join(dir, "a.state")
	views := []string{"--x", "x0,x1", "--y", "y0,y1"}
	if code, _, errs := runBinary(t, nil, append([]string{"score", a, "--features", "16", "--sigma", "median", "--save-state", ref}, views...)...); code != 0 {
		t.Fatalf("score: %s", errs)
	}
	st := decodeJSON(t, func() string {
		_, out, _ := runBinary(t, nil, "merge", ref, "--json")
		return out
	}())
	code, out, errs := runBinary(t, nil, append([]string{"monitor", b, "--window-rows", "1000", "--like", ref, "--json"}, views...)...)
	if code != 0 {
		t.Fatalf("monitor --like: %s", errs)
	}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		w := decodeJSON(t, l)
		if w["sigma_x"] != st["sigma_x"] || w["sigma_y"] != st["sigma_y"] {
			t.Errorf("window %d: sigma %v, %v; the state's %v, %v", i, w["sigma_x"], w["sigma_y"], st["sigma_x"], st["sigma_y"])
		}
	}
	code, _, errs = runBinary(t, nil, append([]string{"monitor", b, "--window-rows", "1000", "--like", ref, "--sigma", "auto"}, views...)...)
	if code != 2 || !strings.Contains(errs, "--sigma with --like") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--sigma with --like: exit %d, %q", code, errs)
	}
}

// TestMonitorWarnings: windows of a degenerate view say so in their JSON,
// and stderr says it once.
func TestMonitorWarnings(t *testing.T) {
	path := filepath.Join(t.TempDir(), "u.parquet")
	writeUnits(t, path, 3000, 2146, func([]float64) {})
	code, out, errs := runBinary(t, nil, "monitor", path, "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "1000", "--features", "16", "--json", "--standardize=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if n := strings.Count(errs, "view X is degenerate"); n != 1 {
		t.Errorf("stderr says it %d times: %q", n, errs)
	}
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if ws, _ := decodeJSON(t, l)["warnings"].([]any); len(ws) == 0 {
			t.Errorf("window %d: no warnings", i)
		}
	}
	_, out, errs = runBinary(t, nil, "monitor", path, "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "1000", "--features", "16", "--json")
	if strings.Contains(out, "warnings") || strings.Contains(errs, "warning") {
		t.Errorf("defaults: %q, %q", out, errs)
	}
}
