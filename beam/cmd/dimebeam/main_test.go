package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"

	"github.com/dime-project/dime/beam/internal/statetest"
	"github.com/dime-project/dime/stream"
)

// dimeBinary is the dime command, built for the tests from this
// repository, which compare dimebeam with it and make their data with it.
var dimeBinary string

func TestMain(m *testing.M) {
	beam.Init()
	dir, err := os.MkdirTemp("", "dimebeam-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	dimeBinary = filepath.Join(dir, "dime")
	build := exec.Command("go", "build", "-o", dimeBinary, "github.com/dime-project/dime/cmd/dime")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dime:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runCmd runs dimebeam in this process, on Prism.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runWith(t, (*options).register, args...)
}

// runWith runs dimebeam in this process, on Prism, with the flags that
// register registers.
func runWith(t *testing.T, register func(*options, *flag.FlagSet), args ...string) (code int, stdout, stderr string) {
	t.Helper()
	fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
	var o options
	register(&o, fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.args = fs.Args()
	var out, errb bytes.Buffer
	code = run(context.Background(), o, &out, &errb)
	return code, out.String(), errb.String()
}

// dime runs the dime command and returns its stdout.
func dime(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(dimeBinary, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("dime %v: %v: %s", args, err, errb.String())
	}
	return out.String()
}

// gen writes rows of sine data with the given seed to path.
func gen(t *testing.T, path string, rows int, seed int) {
	t.Helper()
	dime(t, "gen", "--kind", "sine", "--dim", "2", "--noise", "0.3", "--rows", fmt.Sprint(rows), "--seed", fmt.Sprint(seed), "--out", path)
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not JSON: %v: %q", err, s)
	}
	return m
}

// sameFields checks that two reports have the same fields and agree on the
// quantities to 1e-9 relative.
func sameFields(t *testing.T, got, want map[string]any, quantities ...string) {
	t.Helper()
	var gk, wk []string
	for k := range got {
		gk = append(gk, k)
	}
	for k := range want {
		wk = append(wk, k)
	}
	slices.Sort(gk)
	slices.Sort(wk)
	if !slices.Equal(gk, wk) {
		t.Errorf("fields %v, dime score has %v", gk, wk)
	}
	for _, q := range quantities {
		g, w := got[q].(float64), want[q].(float64)
		if math.Abs(g-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s: %.17g, dime %.17g", q, g, w)
		}
	}
	if got["rows"] != want["rows"] {
		t.Errorf("rows %v, dime %v", got["rows"], want["rows"])
	}
}

var flags = []string{"--x", "x0,x1", "--y", "y0,y1", "--sigma", "1", "--features", "32", "--permutations", "3", "--precision", "float64"}

// TestMatchesDimeScore checks that dimebeam prints the fields of dime score
// --json, with the same entropies, MI and analytic DiME: on one file
// (one split: DiME by permutations agrees too, the scopes being the same),
// and on a directory, against the merge of dime score's states of each file.
func TestMatchesDimeScore(t *testing.T) {
	dir := t.TempDir()
	files := []string{filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet"), filepath.Join(dir, "c.parquet")}
	for i, f := range files {
		gen(t, f, 1000+700*i, i+1)
	}
	code, out, errs := runCmd(t, append([]string{"--input", files[0]}, flags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// Both with --precision float64 (flags): the default float32 products
	// depend on where chunks of 256 rows start, at about 1e-7 relative
	// with two columns per view (TestDefaultPrecision).
	one := decodeJSON(t, dime(t, append([]string{"score", files[0], "--json"}, flags...)...))
	sameFields(t, decodeJSON(t, out), one, "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic", "dime")

	// dime score of the directory chooses the scales on the directory's
	// pilot (a seeded sample of its rows, as dimebeam's); each file takes
	// them with --like.
	ref := filepath.Join(t.TempDir(), "dir.state")
	dime(t, append([]string{"score", dir, "--json", "--save-state", ref}, flags...)...)
	var states []string
	for i, f := range files {
		st := filepath.Join(t.TempDir(), fmt.Sprintf("%d.state", i))
		dime(t, "score", f, "--json", "--save-state", st, "--x", "x0,x1", "--y", "y0,y1", "--like", ref)
		states = append(states, st)
	}
	merged := decodeJSON(t, dime(t, append([]string{"merge", "--json"}, states...)...))
	code, out, errs = runCmd(t, append([]string{"--input", dir}, flags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := decodeJSON(t, out)
	delete(merged, "input") // dime merge names its states
	delete(got, "input")
	sameFields(t, got, merged, "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic")
}

// TestDefaultPrecision checks dimebeam at the defaults (float32 products)
// against dime score at the defaults over a directory of files of uneven
// sizes read in blocks that cross the files (--batch-size 1500 on both;
// blocks under stream.DefaultMinScopeRows would be pooled into the same
// scopes anyway): one split cuts its rows into blocks as dime score's
// dataset reader does, so
// that every field is the same to the bit, the jackknifed DiME and the
// normalized score included (before the split re-cut its blocks they
// differed by 5e-8 and 1.2% relative: the chunks' float32 sums and the
// jackknife's groups follow the blocks).
func TestDefaultPrecision(t *testing.T) {
	dir := t.TempDir()
	for i, rows := range []int{1000, 2300, 2900} {
		gen(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), rows, 40+i)
	}
	f := []string{"--x", "x0,x1", "--y", "y0,y1", "--sigma", "1", "--features", "32", "--batch-size", "1500"}
	code, out, errs := runCmd(t, append([]string{"--input", dir}, f...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	got := decodeJSON(t, out)
	want := decodeJSON(t, dime(t, append(append([]string{"score", "--json"}, f...), dir)...))
	for _, q := range []string{"entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic", "dime", "dime_stderr", "dime_normalized", "p_value",
		"lag1_autocorrelation_x", "lag1_autocorrelation_y"} {
		if got[q] != want[q] {
			t.Errorf("%s: %v, dime score %v", q, got[q], want[q])
		}
	}
}

// TestSameDigitsTwice runs dimebeam twice over a directory with --output and
// --save-state: the states are identical and so is every digit of the JSON
// (but the elapsed time); dime merge and stream.ReadState read the state.
func TestSameDigitsTwice(t *testing.T) {
	dir := t.TempDir()
	for i := range 4 {
		gen(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), 600+300*i, 10+i)
	}
	out := t.TempDir()
	var outputs []map[string]any
	var states [][]byte
	for run := range 2 {
		res, st := filepath.Join(out, fmt.Sprint(run, ".json")), filepath.Join(out, fmt.Sprint(run, ".state"))
		code, stdout, errs := runCmd(t, append([]string{"--input", dir, "--output", res, "--save-state", st}, flags...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		written, err := os.ReadFile(res)
		if err != nil || string(written) != stdout {
			t.Fatalf("--output holds %q (%v), stdout %q", written, err, stdout)
		}
		m := decodeJSON(t, stdout)
		delete(m, "elapsed_seconds")
		outputs = append(outputs, m)
		b, err := os.ReadFile(st)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, b)
	}
	if !bytes.Equal(statetest.WithoutShards(states[0]), statetest.WithoutShards(states[1])) {
		t.Error("two runs saved different states (shard ids, random, aside)")
	}
	a, _ := json.Marshal(outputs[0])
	b, _ := json.Marshal(outputs[1])
	if !bytes.Equal(a, b) {
		t.Errorf("two runs printed\n%s\n%s", a, b)
	}
	e, err := stream.ReadState(bytes.NewReader(states[0]))
	if err != nil || e.Rows() != 600+900+1200+1500 {
		t.Fatalf("state: %v, rows %d", err, e.Rows())
	}
	merged := decodeJSON(t, dime(t, "merge", "--json", filepath.Join(out, "0.state")))
	if merged["entropy_joint"] != outputs[0]["entropy_joint"] {
		t.Errorf("dime merge reads entropy_joint %v, dimebeam printed %v", merged["entropy_joint"], outputs[0]["entropy_joint"])
	}
}

// TestMedianPrinted checks that with --sigma median the chosen σ is printed
// on stderr and reported with its rule.
func TestMedianPrinted(t *testing.T) {
	dir := t.TempDir()
	for i := range 2 {
		gen(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", i)), 800, 20+i)
	}
	code, out, errs := runCmd(t, "--input", dir, "--x", "x0,x1", "--y", "y0,y1", "--sigma", "median", "--features", "16", "--pilot-rows", "500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := decodeJSON(t, out)
	if m["sigma_rule_x"] != "median" || m["sigma_rule_y"] != "median" {
		t.Errorf("rules %v, %v", m["sigma_rule_x"], m["sigma_rule_y"])
	}
	want := fmt.Sprintf("dimebeam: sigma_x %.9g (median), sigma_y %.9g (median), chosen on a seeded sample of 500 rows of the dataset and used by every split",
		m["sigma_x"], m["sigma_y"])
	if !strings.HasPrefix(errs, want) || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q", errs, want)
	}
}

// TestWhere checks that --where keeps the hive partitions that dime score
// --where keeps: over a dataset of two partitions, one of them.
func TestWhere(t *testing.T) {
	dir := t.TempDir()
	for i, region := range []string{"eu", "us"} {
		sub := filepath.Join(dir, "region="+region)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		gen(t, filepath.Join(sub, "part-0.parquet"), 800+400*i, 20+i)
	}
	code, out, errs := runCmd(t, append([]string{"--input", dir, "--where", "region=us"}, flags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := decodeJSON(t, dime(t, append(append([]string{"score", "--json", "--where", "region=us"}, flags...), dir)...))
	got := decodeJSON(t, out)
	if got["input"] != want["input"] {
		t.Errorf("input %q, dime score %q", got["input"], want["input"])
	}
	if got["rows"] != float64(1200) {
		t.Errorf("rows %v, want the 1200 of region=us", got["rows"])
	}
	sameFields(t, got, want, "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic", "dime")
}

// TestBadInput checks that bad flags and bad data give one line on stderr,
// exit status 2 and no output file.
func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	gen(t, filepath.Join(dir, "a.parquet"), 100, 1)
	csvDir := t.TempDir()
	os.WriteFile(filepath.Join(csvDir, "a.csv"), []byte("u,v\n1,2\n3,4\n"), 0o644)
	os.WriteFile(filepath.Join(csvDir, "b.csv"), []byte("u,v\n1,2\n3,oops\n"), 0o644)
	empty := t.TempDir()
	views := []string{"--x", "x0,x1", "--y", "y0,y1"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--input", dir, "--x", "x0,nope", "--y", "y0"}, `no column "nope"`},
		{append([]string{"--input", filepath.Join(dir, "missing")}, views...), "no such file"},
		{append([]string{"--input", empty}, views...), "no data files"},
		{[]string{"--input", csvDir, "--x", "u", "--y", "v", "--sigma", "1"}, `b.csv: column "v", row 1: text "oops" is not a number`},
		{append([]string{"--input", dir, "--features", "0"}, views...), "--features 0"},
		{[]string{"--input", dir, "--x", "x0"}, "--y is required"},
		{append([]string{"--input", dir, "--where", "region"}, views...), `--where "region": "region" has no operator`},
		{views, "--input is required"},
		{append([]string{"--input", dir, "--output", filepath.Join(dir, "a.parquet")}, views...), "is an input of this command"},
	} {
		res := filepath.Join(t.TempDir(), "r.json")
		args := c.args
		if !slices.Contains(args, "--output") {
			args = append(slices.Clone(args), "--output", res)
		}
		code, out, errs := runCmd(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "dimebeam: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.args, code, out, errs, c.want)
		}
		if _, err := os.Stat(res); err == nil {
			t.Errorf("%v: wrote %s", c.args, res)
		}
	}
}
