package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// TestCompareFillsAnalytic checks compare --json against the library on the
// same rows: every RFF row has its analytic DiME (it was null), equal to the
// library's, and the table has the row and no trailing spaces.
func TestCompareFillsAnalytic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.parquet")
	x, y := writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 3}, 300)
	args := []string{"compare", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "16,32", "--standardize=false"} // the library's numbers, on the values as they are
	code, out, errs := runBinary(t, nil, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	res := decodeJSON(t, out)
	rffs, _ := res["rff"].([]any)
	if len(rffs) != 2 {
		t.Fatalf("rff rows: %v", res["rff"])
	}
	// 300 rows, below the sample: the rows in order, as the command saw them.
	ecfg := exact.DefaultConfig()
	er, err := exact.Estimate(matrix(x, 2), matrix(y, 2), ecfg)
	if err != nil {
		t.Fatal(err)
	}
	perms := exact.Permutations(300, ecfg.Permutations, ecfg.Seed)
	for i, D := range []int{16, 32} {
		r := rffs[i].(map[string]any)
		cfg := stream.Config{Kernel: ecfg.Kernel, Alpha: ecfg.Alpha, BandwidthX: vocab.Sigma(er.SigmaX), BandwidthY: vocab.Sigma(er.SigmaY),
			Features: D, Permutations: ecfg.Permutations, Seed: ecfg.Seed}
		want, err := stream.EstimateWithPermutations(matrix(x, 2), matrix(y, 2), cfg, perms)
		if err != nil {
			t.Fatal(err)
		}
		// The command is built without build tags, this test maybe with
		// -tags openblas: the backends agree to round-off (1e-14, README),
		// and in one build JSON carries the float64 bit for bit.
		near := func(got, want float64) bool { return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) }
		if r["dime_analytic"] == nil || !near(num(t, r, "dime_analytic"), want.DiMEAnalytic) || !near(num(t, r, "dime"), want.DiME) {
			t.Errorf("D = %d: dime_analytic %v dime %v, library %v %v", D, r["dime_analytic"], r["dime"], want.DiMEAnalytic, want.DiME)
		}
		// The default estimator of dime score, on the same rows.
		defs, _ := res["rff_default"].([]any)
		if len(defs) != 2 {
			t.Fatalf("rff_default rows: %v", res["rff_default"])
		}
		dcfg := stream.DefaultConfig()
		dcfg.BandwidthX, dcfg.BandwidthY, dcfg.Features, dcfg.Seed, dcfg.SkipNormalized = vocab.Sigma(er.SigmaX), vocab.Sigma(er.SigmaY), D, ecfg.Seed, true
		// The rows as the command estimated them: --standardize=false, the
		// values as they are (compare never standardizes its sample twice).
		dcfg.Standardize = false
		wantDef, err := stream.EstimateMatrices(matrix(x, 2), matrix(y, 2), dcfg)
		if err != nil {
			t.Fatal(err)
		}
		d := defs[i].(map[string]any)
		if d["dime_estimator"] != "analytic-jackknife" || !near(num(t, d, "dime"), wantDef.DiME) {
			t.Errorf("D = %d: default %v %v, library %v", D, d["dime_estimator"], d["dime"], wantDef.DiME)
		}
	}
	code, out, _ = runBinary(t, nil, args...)
	if code != 0 || !regexp.MustCompile(`(?m)^ +DiME plug-in\* +- +\d`).MatchString(out) || !regexp.MustCompile(`(?m)^ +DiME default\* +- +\d`).MatchString(out) ||
		!strings.Contains(out, fmt.Sprintf("jackknife over %d groups", stream.DefaultConfig().Groups)) {
		t.Errorf("table:\n%s", out)
	}
	noTrailingSpaces(t, "compare", out)
	// --normalized=false skips exact's normalized score, nothing else.
	code, out, errs = runBinary(t, nil, append(args, "--json", "--normalized=false")...)
	if code != 0 {
		t.Fatalf("--normalized=false: exit %d: %s", code, errs)
	}
	skip := decodeJSON(t, out)
	ex, exSkip := res["exact"].(map[string]any), skip["exact"].(map[string]any)
	if ex["dime_normalized"] == nil || exSkip["dime_normalized"] != nil || ex["dime"] != exSkip["dime"] {
		t.Errorf("exact: dime %v, normalized %v; with --normalized=false %v, %v", ex["dime"], ex["dime_normalized"], exSkip["dime"], exSkip["dime_normalized"])
	}
}

func noTrailingSpaces(t *testing.T, what, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.TrimRight(l, " \t") != l {
			t.Errorf("%s: trailing spaces in %q", what, l)
		}
	}
}

// TestFlagsAgree checks what the issue found inconsistent: --features is one
// D in score and monitor (a list is refused saying where lists go), the
// default --sample is the same in exact, compare and sweep, and sweep's
// table has no trailing spaces.
func TestFlagsAgree(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 1, Noise: 0.2, Seed: 4}, 200)
	for _, args := range [][]string{{"score"}, {"monitor", "--window-rows", "100"}} {
		cmd := args[0]
		code, _, errs := run(t, append(args, path, "--x", "x0", "--y", "y0", "--features", "64,256")...)
		if code != 2 || !strings.Contains(errs, "--features") || !strings.Contains(errs, "dime compare compares several") {
			t.Errorf("%s --features 64,256: exit %d, %q", cmd, code, errs)
		}
	}
	for _, cmd := range []string{"exact", "compare", "sweep"} {
		_, out, _ := run(t, cmd, "--help")
		if !regexp.MustCompile(`--sample int\n[^\n]*\(default 1024\)`).MatchString(out) {
			t.Errorf("%s: --sample's default is not 1024:\n%s", cmd, out)
		}
	}
	code, out, errs := runBinary(t, nil, "sweep", path, "--x", "x0", "--y", "y0")
	if code != 0 || !strings.Contains(out, "<- auto") {
		t.Fatalf("sweep: exit %d %s\n%s", code, errs, out)
	}
	noTrailingSpaces(t, "sweep", out)
	_, out, _ = runBinary(t, nil, "score", path, "--x", "x0", "--y", "y0")
	noTrailingSpaces(t, "score", out)
}

// TestColumnGlobs checks that score --x 'x*' --y 'y*' reads the columns the
// globs pick (in schema order) and gives what naming them gives, and that a
// column given twice, or in both views, is warned about on stderr (once).
func TestColumnGlobs(t *testing.T) {
	path := filepath.Join(t.TempDir(), "g.parquet")
	writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 3, Noise: 0.2, Seed: 8}, 500)
	common := []string{"score", path, "--features", "16", "--json"}
	code, out, errs := runBinary(t, nil, append(common, "--x", "x*", "--y", "y*")...)
	if code != 0 || errs != "" {
		t.Fatalf("globs: exit %d, %q", code, errs)
	}
	_, named, _ := runBinary(t, nil, append(common, "--x", "x0,x1,x2", "--y", "y0,y1,y2")...)
	g, n := decodeJSON(t, out), decodeJSON(t, named)
	for _, f := range []string{"dime", "entropy_joint", "mutual_information", "sigma_x", "rows"} {
		if g[f] != n[f] {
			t.Errorf("%s: globs %v, names %v", f, g[f], n[f])
		}
	}
	if cols, _ := g["x_columns"].([]any); len(cols) != 3 || cols[0] != "x0" || cols[2] != "x2" {
		t.Errorf("x_columns %v", g["x_columns"])
	}
	for _, c := range []struct {
		x, y string
		want []string
	}{
		{"x0,x0", "y0", []string{`column "x0" is in X more than once`}},
		{"x*", "y0,x1", []string{`column "x1" is in both X and Y`}},
		{"x0,x*", "y0", []string{`column "x0" is in X more than once`}},
		{"x0", "y0", nil},
	} {
		code, _, errs := runBinary(t, nil, "score", path, "--features", "16", "--x", c.x, "--y", c.y)
		if code != 0 || strings.Count(errs, "\n") != len(c.want) {
			t.Errorf("--x %s --y %s: exit %d, stderr %q", c.x, c.y, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, "dime: warning: "+w) {
				t.Errorf("--x %s --y %s: stderr %q, want %q", c.x, c.y, errs, w)
			}
		}
	}
	code, _, errs = runBinary(t, nil, "score", path, "--x", "emb_*", "--y", "y0")
	if code != 2 || !strings.Contains(errs, `column pattern "emb_*" matches no column`) {
		t.Errorf("glob matching nothing: exit %d, %q", code, errs)
	}
}

// TestColumnGlobsOverDataset expands globs over a hive-partitioned dataset:
// the partition key is a column a glob can pick, and every file agrees.
func TestColumnGlobsOverDataset(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ds")
	if code, _, errs := runBinary(t, nil, "gen", "--kind", "sine", "--dim", "2", "--rows", "3000", "--files", "3", "--out", dir); code != 0 {
		t.Fatalf("gen: exit %d %s", code, errs)
	}
	// The partition column is constant in the first file, where the
	// scales are chosen: the values as they are.
	_, globbed, errs := runBinary(t, nil, "score", dir, "--x", "x*,p*", "--y", "y?", "--features", "16", "--json", "--standardize=false")
	_, named, _ := runBinary(t, nil, "score", dir, "--x", "x0,x1,part", "--y", "y0,y1", "--features", "16", "--json", "--standardize=false")
	g, n := decodeJSON(t, globbed), decodeJSON(t, named)
	if cols, _ := g["x_columns"].([]any); len(cols) != 3 || cols[2] != "part" || g["dime"] != n["dime"] || g["rows"] != 3000.0 {
		t.Errorf("globs over a dataset: %v (stderr %q); named: %v", g, errs, n)
	}
}
