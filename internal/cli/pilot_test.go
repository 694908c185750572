package cli

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
)

// pilotTable returns rows of a table in real units (x0 ages, x1 a count,
// y0 money, y1 a count) whose count x1 is 0 in the first 1,000 rows and
// varies after them: a column constant in a prefix pilot only.
func pilotTable(t *testing.T, rows int) [][]float64 {
	t.Helper()
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Units, Dim: 2, Noise: 0.3, Seed: 2151}, rows)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(2151, 7))
	out := make([][]float64, rows)
	for i := range out {
		count := 0.0
		if i >= 1000 {
			count = float64(r.IntN(12))
		}
		out[i] = []float64{x.At(i, 0), count, y.At(i, 0), y.At(i, 1)}
	}
	return out
}

// writePilotTable writes rows to path in the format of its extension.
func writePilotTable(t *testing.T, path string, rows [][]float64, opts tablewriter.Options) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := tablewriter.Create(path, dataset.Auto, []string{"x0", "x1", "y0", "y1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
		if err := w.Write(row, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeParts writes rows cut into n files dir/part-K.parquet and returns
// their paths in order.
func writeParts(t *testing.T, dir string, rows [][]float64, n int) []string {
	t.Helper()
	var paths []string
	per := (len(rows) + n - 1) / n
	for k := 0; k*per < len(rows); k++ {
		p := filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", k))
		writePilotTable(t, p, rows[k*per:min((k+1)*per, len(rows))], tablewriter.Options{RowGroupRows: 700})
		paths = append(paths, p)
	}
	return paths
}

// TestPilotSample: the pilot of a Parquet dataset is a seeded sample of
// its rows. The same rows in one file, 8 files or 40 files, named in any
// order, by a relative or an absolute path, give dime score the same
// scales and bandwidths; exact and sweep take score's scales (and exact
// score's median σ, sweep score's auto σ). The table's count column is 0 in
// its first 1,000 rows only: the Parquet runs choose its scale on rows from
// everywhere, and the CSV copy, whose pilot is its first 1,000 rows, is a
// one-line usage error naming the column.
func TestPilotSample(t *testing.T) {
	dir := t.TempDir()
	rows := pilotTable(t, 8000)
	one := filepath.Join(dir, "one", "all.parquet")
	writePilotTable(t, one, rows, tablewriter.Options{RowGroupRows: 3000})
	eight := writeParts(t, filepath.Join(dir, "eight"), rows, 8)
	forty := writeParts(t, filepath.Join(dir, "forty"), rows, 40)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(wd, one)
	if err != nil {
		t.Fatal(err)
	}
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--json"}
	score := func(name string, args []string, extra ...string) map[string]any {
		t.Helper()
		a := slices.Concat([]string{"score"}, args, views, []string{"--features", "16", "--sigma", "median"}, extra)
		code, out, errs := run(t, a...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", name, code, errs)
		}
		return decodeJSON(t, out)
	}
	want := score("one file", []string{one})
	sc, _ := want["scaling"].(map[string]any)
	if sc["pilot"] != "sample" || sc["pilot_rows"] != 1000.0 {
		t.Fatalf("scaling %v, want a pilot sample of 1000 rows", want["scaling"])
	}
	if s := sc["scale_x"].([]any)[1].(float64); !(s > 0) {
		t.Fatalf("count column scale %v", s)
	}
	reversed := slices.Clone(eight)
	slices.Reverse(reversed)
	for _, c := range []struct {
		name string
		args []string
	}{
		{"relative path", []string{rel}},
		{"8 files", []string{filepath.Dir(eight[0])}},
		{"8 files named in reverse", reversed},
		{"40 files", []string{filepath.Dir(forty[0])}},
		{"40 files by a glob", []string{filepath.Join(filepath.Dir(forty[0]), "*.parquet")}},
	} {
		got := score(c.name, c.args)
		for _, k := range []string{"sigma_x", "sigma_y"} {
			if got[k] != want[k] {
				t.Errorf("%s: %s %v, one file %v", c.name, k, got[k], want[k])
			}
		}
		if fmt.Sprint(got["scaling"]) != fmt.Sprint(want["scaling"]) {
			t.Errorf("%s: scaling %v, one file %v", c.name, got["scaling"], want["scaling"])
		}
	}
	// Another seed draws another sample.
	if other := score("seed 2", []string{one}, "--seed", "2"); fmt.Sprint(other["scaling"]) == fmt.Sprint(want["scaling"]) {
		t.Error("seeds 1 and 2 chose the same scales")
	}
	// exact takes score's scales and median σ; sweep score's auto σ.
	code, out, errs := run(t, slices.Concat([]string{"exact", filepath.Dir(eight[0])}, views, []string{"--sample", "300", "--sigma", "median"})...)
	if code != 0 {
		t.Fatalf("exact: exit %d: %s", code, errs)
	}
	ex := decodeJSON(t, out)
	if fmt.Sprint(ex["scaling"]) != fmt.Sprint(want["scaling"]) || ex["sigma_x"] != want["sigma_x"] || ex["sigma_y"] != want["sigma_y"] {
		t.Errorf("exact: scaling %v, σ %v, %v; score %v, %v, %v", ex["scaling"], ex["sigma_x"], ex["sigma_y"], want["scaling"], want["sigma_x"], want["sigma_y"])
	}
	auto := score("auto", reversed, "--sigma", "auto")
	code, out, errs = run(t, slices.Concat([]string{"sweep", filepath.Dir(forty[0])}, views, []string{"--sample", "200"})...)
	if code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errs)
	}
	sw := decodeJSON(t, out)
	if sw["auto_sigma_x"] != auto["sigma_x"] || sw["auto_sigma_y"] != auto["sigma_y"] || sw["pilot"] != "sample" ||
		fmt.Sprint(sw["scaling"]) != fmt.Sprint(auto["scaling"]) {
		t.Errorf("sweep: auto σ %v, %v (pilot %v); score --sigma auto %v, %v", sw["auto_sigma_x"], sw["auto_sigma_y"], sw["pilot"], auto["sigma_x"], auto["sigma_y"])
	}
	// The CSV copy: its pilot is its first 1,000 rows, where the count is
	// constant.
	csv := filepath.Join(dir, "all.csv")
	writePilotTable(t, csv, rows, tablewriter.Options{})
	code, _, errs = run(t, slices.Concat([]string{"score", csv}, views, []string{"--features", "16"})...)
	if code != 2 || !strings.Contains(errs, `column "x1" is constant`) || !strings.Contains(errs, "the first 1000 rows") || strings.Count(errs, "\n") != 1 {
		t.Errorf("CSV: exit %d, %q; want exit 2 and one line naming x1 and the first 1000 rows", code, errs)
	}
	// A CSV pilot is a prefix, and the reports say so.
	code, out, errs = run(t, slices.Concat([]string{"score", csv}, views, []string{"--features", "16", "--x", "x0"})...)
	if code != 0 {
		t.Fatalf("CSV x0: exit %d: %s", code, errs)
	}
	if sc, _ := decodeJSON(t, out)["scaling"].(map[string]any); sc["pilot"] != "prefix" {
		t.Errorf("CSV: scaling %v, want pilot prefix", sc)
	}
	// The table says which rows the pilot is.
	code, out, errs = run(t, "score", one, "--x", "x0,x1", "--y", "y0,y1", "--features", "16")
	if code != 0 || !strings.Contains(out, "on a seeded sample of 1000 rows") {
		t.Errorf("score table: exit %d, %s%s", code, out, errs)
	}
}
