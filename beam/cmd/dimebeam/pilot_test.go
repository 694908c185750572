package main

import (
	"fmt"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestPilotLayoutFree checks that the median bandwidths and the columns'
// scales are chosen on the same rows (a seeded sample of the dataset's
// rows) whatever the input's spelling (relative or absolute), the order of
// the files on the command line, and however the same rows are cut into
// files (8 or 40), that they are dime score's, and that --sigma auto works
// at the default --permutations 0 and chooses what dime score --sigma auto
// chooses.
func TestPilotLayoutFree(t *testing.T) {
	dir := t.TempDir()
	eight, forty := filepath.Join(dir, "ds8"), filepath.Join(dir, "ds40")
	for _, c := range []struct {
		out   string
		files int
	}{{eight, 8}, {forty, 40}} {
		dime(t, "gen", "--kind", "units", "--dim", "2", "--noise", "0.3", "--rows", "4000", "--seed", "2131",
			"--files", fmt.Sprint(c.files), "--out", c.out)
	}
	wd, _ := os.Getwd()
	rel, err := filepath.Rel(wd, eight)
	if err != nil {
		t.Fatal(err)
	}
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--features", "16"}
	files, err := filepath.Glob(filepath.Join(forty, "*", "*.parquet"))
	if err != nil || len(files) != 40 {
		t.Fatalf("%d files of 40: %v", len(files), err)
	}
	slices.Reverse(files)
	var reports []map[string]any
	for _, in := range [][]string{{"--input", rel}, {"--input", eight}, {"--input", forty}, files} {
		code, out, errs := runCmd(t, slices.Concat([]string{"--sigma", "median"}, views, in)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", in[:min(2, len(in))], code, errs)
		}
		if !strings.Contains(errs, "chosen on a seeded sample of 1000 rows") {
			t.Errorf("%s: stderr %q", in[:min(2, len(in))], errs)
		}
		reports = append(reports, decodeJSON(t, out))
	}
	if sc, _ := reports[0]["scaling"].(map[string]any); sc["pilot"] != "sample" {
		t.Errorf("scaling %v, want pilot sample", reports[0]["scaling"])
	}
	score := decodeJSON(t, dime(t, append([]string{"score", forty, "--json", "--sigma", "median"}, views...)...))
	reports = append(reports, score)
	for i, in := range []string{"absolute path", "40 files", "40 files named in reverse", "dime score"} {
		a, b := reports[0], reports[i+1]
		for _, k := range []string{"sigma_x", "sigma_y", "sigma_rule_x"} {
			if a[k] != b[k] {
				t.Errorf("%s: %s %v, relative path %v", in, k, b[k], a[k])
			}
		}
		if fmt.Sprint(a["scaling"]) != fmt.Sprint(b["scaling"]) {
			t.Errorf("%s: scaling %v, relative path %v", in, b["scaling"], a["scaling"])
		}
	}
	// auto at the default --permutations 0, as dime score --sigma auto.
	code, out, errs := runCmd(t, append([]string{"--input", eight, "--sigma", "auto"}, views...)...)
	if code != 0 {
		t.Fatalf("--sigma auto: exit %d: %s", code, errs)
	}
	got := decodeJSON(t, out)
	want := decodeJSON(t, dime(t, append([]string{"score", eight, "--json", "--sigma", "auto"}, views...)...))
	for _, k := range []string{"sigma_x", "sigma_y", "sigma_rule_x"} {
		if got[k] != want[k] {
			t.Errorf("--sigma auto: %s %v, dime score %v", k, got[k], want[k])
		}
	}
}

// TestScaleFree multiplies a column by 1e4 and shifts another by 1e6:
// dimebeam's estimates move by at most 1e-6 relative (the defaults:
// standardized columns).
func TestScaleFree(t *testing.T) {
	dir := t.TempDir()
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Units, Dim: 2, Noise: 0.3, Seed: 2132}, 3000)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, f func(row []float64)) string {
		p := filepath.Join(dir, name)
		w, err := tablewriter.Create(p, dataset.Auto, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			row := []float64{x.At(i, 0), x.At(i, 1), y.At(i, 0), y.At(i, 1)}
			f(row)
			if err := w.Write(row, 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	paths := []string{
		write("a.parquet", func([]float64) {}),
		write("b.parquet", func(r []float64) { r[1] *= 1e4; r[2] += 1e6 }),
	}
	var reps []map[string]any
	for _, p := range paths {
		code, out, errs := runCmd(t, "--input", p, "--x", "x0,x1", "--y", "y0,y1", "--features", "32")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		reps = append(reps, decodeJSON(t, out))
	}
	for _, k := range []string{"entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime", "dime_analytic", "sigma_x", "sigma_y"} {
		a, b := reps[0][k].(float64), reps[1][k].(float64)
		if rel := math.Abs(a-b) / math.Abs(a); !(rel <= 1e-6) {
			t.Errorf("%s: %v, rescaled %v (relative %.3g)", k, a, b, rel)
		}
	}
	if reps[0]["dime"].(float64) < 0.05 {
		t.Errorf("DiME %v on a strong dependence in real units", reps[0]["dime"])
	}
}

// TestLike scores a dataset with --like a state of dime score on another
// part of the data: the state merges with dime score's, and an estimator
// flag with --like is a one-line usage error.
func TestLike(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	dime(t, "gen", "--kind", "units", "--dim", "2", "--rows", "2000", "--seed", "2133", "--out", a)
	dime(t, "gen", "--kind", "units", "--dim", "2", "--rows", "2500", "--seed", "2134", "--out", b)
	ref := filepath.Join(dir, "a.state")
	dime(t, "score", a, "--x", "x0,x1", "--y", "y0,y1", "--features", "16", "--sigma", "median", "--save-state", ref)
	st := filepath.Join(dir, "b.state")
	code, _, errs := runCmd(t, "--input", b, "--x", "x0,x1", "--y", "y0,y1", "--like", ref, "--save-state", st)
	if code != 0 {
		t.Fatalf("--like: exit %d: %s", code, errs)
	}
	merged := decodeJSON(t, dime(t, "merge", "--json", ref, st))
	if merged["rows"] != 4500.0 {
		t.Errorf("merged %v rows", merged["rows"])
	}
	code, _, errs = runCmd(t, "--input", b, "--x", "x0,x1", "--y", "y0,y1", "--like", ref, "--features", "32")
	if code != 2 || !strings.Contains(errs, "--features with --like") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--features with --like: exit %d, %q", code, errs)
	}
}
