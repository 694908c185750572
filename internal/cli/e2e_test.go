package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// dimeBinary is the command built once for the end-to-end tests.
var dimeBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dime-e2e")
	if err != nil {
		panic(err)
	}
	dimeBinary = filepath.Join(dir, "dime")
	if runtime.GOOS == "windows" {
		dimeBinary += ".exe"
	}
	build := exec.Command("go", "build", "-o", dimeBinary, "github.com/dime-project/dime/cmd/dime")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		panic("building dime: " + err.Error())
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// runBinary runs the built command.
func runBinary(t *testing.T, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runBinaryIn(t, "", stdin, args...)
}

// runBinaryIn runs the built command in the working directory dir ("" for
// the test's).
func runBinaryIn(t *testing.T, dir string, stdin []byte, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runCommand(t, dir, stdin, dimeBinary, args...)
}

// runCommand runs a program in the working directory dir.
func runCommand(t *testing.T, dir string, stdin []byte, name string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errb.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errb.String()
}

// writeData writes n rows of spec as columns x0.., y0.. in the format of the
// path's extension, IPC record batches of ipcBatch rows (0: the default).
// (The blocks of an IPC input are its record batches, whatever --batch-size
// says, and blocks are shuffle scopes: comparisons need the same blocks.)
func writeData(t *testing.T, path string, spec synth.Spec, n int) (x, y []float64) {
	return writeDataBatches(t, path, spec, n, 0)
}

func writeDataBatches(t *testing.T, path string, spec synth.Spec, n, ipcBatch int) (x, y []float64) {
	t.Helper()
	xm, ym, err := synth.Generate(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	x, y = xm.RawMatrix().Data, ym.RawMatrix().Data
	d := spec.Dim
	w, err := tablewriter.Create(path, dataset.Auto, append(tablewriter.ColumnNames("x", d), tablewriter.ColumnNames("y", d)...), tablewriter.Options{BatchRows: ipcBatch})
	if err != nil {
		t.Fatal(err)
	}
	row := make([]float64, 2*d)
	for i := 0; i < n; i++ {
		copy(row, x[i*d:(i+1)*d])
		copy(row[d:], y[i*d:(i+1)*d])
		if err := w.Write(row, 1); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return x, y
}

// requiredFields are the JSON fields the issue asks of score and exact.
var requiredFields = []string{"estimator", "rows", "skipped_rows", "x_columns", "y_columns", "kernel", "alpha",
	"sigma_x", "sigma_y", "permutations", "seed", "entropy_x", "entropy_y", "entropy_joint",
	"mutual_information", "dime", "dime_stderr", "elapsed_seconds"}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not one JSON object: %v: %q", err, s)
	}
	return m
}

func num(t *testing.T, m map[string]any, key string) float64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("field %q is %v, want a number", key, m[key])
	}
	return v
}

// TestScoreEachFormatMatchesLibrary scores the same data written in every
// format (and piped on stdin) and checks the JSON against the library fed
// the same blocks.
func TestScoreEachFormatMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 7}
	const n, batch = 5000, 1250
	var x, y []float64
	for _, ext := range []string{"parquet", "arrow", "arrows", "csv"} {
		x, y = writeDataBatches(t, filepath.Join(dir, "data."+ext), spec, n, batch)
	}
	// The library, fed the blocks the reader gives, after the pilot the
	// command reads: the first rows (its own), or for Parquet a seeded
	// sample of the rows (decode.ReadPilot, then stream.NewResolved).
	cfg := stream.DefaultConfig()
	cfg.Features, cfg.Permutations = 32, 3
	cfg.XColumns, cfg.YColumns = []string{"x0", "x1"}, []string{"y0", "y1"}
	d, err := dataset.Resolve(context.Background(), []string{filepath.Join(dir, "data.parquet")}, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sample, err := decode.ReadPilot(context.Background(), d, decode.Options{Columns: columns.Spec{X: cfg.XColumns, Y: cfg.YColumns}}, stream.DefaultPilotRows, cfg.Seed)
	if err != nil || sample.Method != decode.PilotSample {
		t.Fatalf("pilot %v: %v", sample.Method, err)
	}
	library := func(cfg stream.Config, sampled bool) stream.Result {
		t.Helper()
		est, err := stream.New(2, 2, cfg)
		if sampled {
			var p stream.Pilot
			if p, err = stream.ResolvePilot(sample.X, sample.Y, sample.Rows, 2, 2, cfg); err == nil {
				est, err = stream.NewResolved(2, 2, cfg, p)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i += batch {
			est.Add(x[i*2:(i+batch)*2], y[i*2:(i+batch)*2], batch)
		}
		r, err := est.Result()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	prefix, sampled := library(cfg, false), library(cfg, true)
	stdinData, _ := os.ReadFile(filepath.Join(dir, "data.arrows"))
	for _, input := range []string{"data.parquet", "data.arrow", "data.arrows", "data.csv", "-"} {
		path := filepath.Join(dir, input)
		var stdin []byte
		if input == "-" {
			path, stdin = "-", stdinData
		}
		code, out, errs := runBinary(t, stdin, "score", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32",
			"--permutations", "3", "--batch-size", "1250", "--json")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", input, code, errs)
		}
		m := decodeJSON(t, out)
		for _, f := range append(requiredFields, "features", "dime_analytic") {
			if _, ok := m[f]; !ok {
				t.Errorf("%s: no field %q", input, f)
			}
		}
		if m["estimator"] != "rff" || num(t, m, "rows") != n || num(t, m, "features") != 32 {
			t.Errorf("%s: %v", input, m)
		}
		want := prefix
		if input == "data.parquet" {
			want = sampled
		}
		for key, v := range map[string]float64{"entropy_x": want.EntropyX, "entropy_joint": want.EntropyJoint,
			"mutual_information": want.MutualInformation, "dime": want.DiME, "dime_analytic": want.DiMEAnalytic} {
			if got := num(t, m, key); math.Abs(got-v) > 1e-12 {
				t.Errorf("%s: %s = %.15g, library %.15g", input, key, got, v)
			}
		}
		if errs != "" {
			t.Errorf("%s: stderr not empty without a terminal: %q", input, errs)
		}
	}
	// At the defaults: the analytic estimator with the jackknife, the test
	// and the normalized score.
	cfg.Permutations = 0
	want := library(cfg, true)
	code, out, errs := runBinary(t, nil, "score", filepath.Join(dir, "data.parquet"), "--x", "x0,x1", "--y", "y0,y1", "--features", "32",
		"--batch-size", "1250", "--json")
	if code != 0 {
		t.Fatalf("defaults: exit %d: %s", code, errs)
	}
	m := decodeJSON(t, out)
	if m["dime_estimator"] != "analytic-jackknife" || num(t, m, "groups") != stream.DefaultGroups || num(t, m, "permutations") != 0 {
		t.Errorf("defaults: %v", m)
	}
	if _, ok := m["p_value_permutations"]; ok {
		t.Errorf("defaults: a permutation p-value without permutations: %v", m)
	}
	for key, v := range map[string]float64{"dime": want.DiME, "dime_stderr": want.DiMEStdErr, "dime_analytic": want.DiMEAnalytic,
		"dime_normalized": want.DiMENormalized, "dime_self_x": want.DiMESelfX, "p_value": want.PValue, "test_statistic": want.TestStatistic} {
		if got := num(t, m, key); math.Abs(got-v) > 1e-12 {
			t.Errorf("defaults: %s = %.15g, library %.15g", key, got, v)
		}
	}
}

// TestExactMatchesLibrary checks dime exact against exact.Estimate on all the
// rows (a sample larger than the input keeps every row, in order).
func TestExactMatchesLibrary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.parquet")
	x, y := writeData(t, path, synth.Spec{Kind: synth.Gaussian, Dim: 3, MI: 1, Seed: 2}, 300)
	code, out, errs := runBinary(t, nil, "exact", path, "--x", "x0,x1,x2", "--y", "y0,y1,y2", "--kernel", "laplacian", "--sigma", "median", "--json", "--standardize=false")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := decodeJSON(t, out)
	for _, f := range requiredFields {
		if _, ok := m[f]; !ok {
			t.Errorf("no field %q", f)
		}
	}
	cfg := exact.DefaultConfig()
	cfg.Kernel, cfg.SigmaX, cfg.SigmaY = vocab.Laplacian, vocab.Median(), vocab.Median()
	want, _ := exact.Estimate(matrix(x, 3), matrix(y, 3), cfg)
	if m["estimator"] != "exact" || num(t, m, "rows") != 300 || math.Abs(num(t, m, "dime")-want.DiME) > 1e-12 ||
		math.Abs(num(t, m, "sigma_x")-want.SigmaX) > 1e-15 {
		t.Errorf("exact %v; library DiME %v sigma %v", m, want.DiME, want.SigmaX)
	}
	// A sample smaller than the input.
	code, out, _ = runBinary(t, nil, "exact", path, "--x", "x0", "--y", "y0", "--sample", "100", "--json")
	if m := decodeJSON(t, out); code != 0 || num(t, m, "rows") != 100 || num(t, m, "sampled_from_rows") != 300 {
		t.Errorf("sample: exit %d, %v", code, m)
	}
}

// TestExactDefaultPValue checks the p-value of dime exact at its defaults
// (HSIC test, issue 12): the sine toy with 2000 rows (d = 2, noise 0.2,
// sampled to 1024 rows) gives p ≤ 0.01 (measured: 3e-69), and
// --test-permutations B selects the permutation test, whose floor is
// 1/(B + 1).
func TestExactDefaultPValue(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sine.parquet")
	if code, _, errs := runBinary(t, nil, "gen", "--kind", "sine", "--dim", "2", "--rows", "2000", "--out", path); code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	code, out, errs := runBinary(t, nil, "exact", path, "--x", "x0,x1", "--y", "y0,y1", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	m := decodeJSON(t, out)
	if p := num(t, m, "p_value"); !(p <= 0.01) || m["p_value_test"] != "hsic" || m["test_permutations"] != nil || num(t, m, "rows") != 1024 {
		t.Errorf("sine toy at the defaults: p = %v, test %v, B %v, rows %v", p, m["p_value_test"], m["test_permutations"], m["rows"])
	}
	code, out, errs = runBinary(t, nil, "exact", path, "--x", "x0,x1", "--y", "y0,y1", "--sample", "300", "--test-permutations", "19")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if !strings.Contains(out, "0.0500 (independence; permutation test, 19 null replicates: at least 0.05)") {
		t.Errorf("permutation test table:\n%s", out)
	}
	code, out, _ = runBinary(t, nil, "exact", path, "--x", "x0,x1", "--y", "y0,y1", "--sample", "300")
	if code != 0 || !strings.Contains(out, "(independence; HSIC test of the same Gram matrices)") {
		t.Errorf("HSIC test table: exit %d\n%s", code, out)
	}
}

// TestExactNormalized checks dime_normalized in dime exact's reports:
// exactly 1 when Y is X, in (0, 1) on the sine toy, absent with
// --normalized=false, and on the table.
func TestExactNormalized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sine.csv")
	writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 5}, 400)
	run := func(args ...string) (map[string]any, string) {
		t.Helper()
		code, out, errs := runBinary(t, nil, append([]string{"exact", path, "--sample", "200", "--standardize=false"}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		if strings.Contains(strings.Join(args, " "), "--json") {
			return decodeJSON(t, out), out
		}
		return nil, out
	}
	m, _ := run("--x", "x0,x1", "--y", "x0,x1", "--json")
	if m["dime_normalized"] != 1.0 {
		t.Errorf("Y = X: dime_normalized %v, want exactly 1", m["dime_normalized"])
	}
	m, _ = run("--x", "x0,x1", "--y", "y0,y1", "--json")
	if v := num(t, m, "dime_normalized"); !(v > 0.1 && v < 1) {
		t.Errorf("sine: dime_normalized %v", v)
	}
	if m, _ = run("--x", "x0,x1", "--y", "y0,y1", "--json", "--normalized=false"); m["dime_normalized"] != nil {
		t.Errorf("--normalized=false: dime_normalized %v", m["dime_normalized"])
	}
	if _, out := run("--x", "x0,x1", "--y", "y0,y1"); !strings.Contains(out, "DiME normalized") {
		t.Errorf("no normalized line in the table:\n%s", out)
	}
}

// TestScoreSeparatesDependence checks that score finds DiME near 0 on
// independent data and clearly larger on sine data.
func TestScoreSeparatesDependence(t *testing.T) {
	dir := t.TempDir()
	dims := map[string]float64{}
	for _, kind := range []synth.Kind{synth.Independent, synth.Sine} {
		path := filepath.Join(dir, kind.String()+".parquet")
		writeData(t, path, synth.Spec{Kind: kind, Dim: 2, Noise: 0.2, Seed: 3}, 20000)
		code, out, errs := runBinary(t, nil, "score", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "64", "--json", "--standardize=false")
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", kind, code, errs)
		}
		dims[kind.String()] = num(t, decodeJSON(t, out), "dime")
	}
	// Measured on the values as they are: independent 0.0003, sine 0.36
	// (standardized, sine's DiME is 0.06: its period is short against the
	// spread of x, which the fixed bandwidth then measures).
	if math.Abs(dims["independent"]) > 0.005 || dims["sine"] < 0.2 {
		t.Errorf("DiME independent %.4f (want |.| <= 0.005), sine %.4f (want >= 0.2)", dims["independent"], dims["sine"])
	}
}

// TestShardsMergeLikeOneRun scores two shards with --save-state, the second
// --like the first (its scales and bandwidths), merges them and compares
// with one run over both shards (the same batches), which chooses its
// scales on the same first rows.
func TestShardsMergeLikeOneRun(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Circle, Dim: 2, Noise: 0.1, Seed: 4}
	// The jackknife deals chunks of 256 rows to the groups in turn, counted
	// across the run: shards merge like one run to the bit when each
	// shard's scopes (its batches) hold a multiple of the groups' chunks,
	// here one chunk per group in each batch.
	batch := 256 * stream.DefaultGroups
	x, y := writeDataBatches(t, filepath.Join(dir, "all.arrow"), spec, 3*batch, batch)
	shard := func(name string, lo, hi int) string {
		p := filepath.Join(dir, name)
		w, _ := tablewriter.Create(p, dataset.Auto, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{})
		for i := lo; i < hi; i++ {
			w.Write([]float64{x[2*i], x[2*i+1], y[2*i], y[2*i+1]}, 1)
		}
		w.Close()
		return p
	}
	a, b := shard("a.csv", 0, 2*batch), shard("b.parquet", 2*batch, 3*batch)
	flags := []string{"--x", "x0,x1", "--y", "y0,y1", "--features", "24", "--batch-size", fmt.Sprint(batch), "--json"}
	if code, _, errs := runBinary(t, nil, append([]string{"score", a, "--save-state", a + ".state"}, flags...)...); code != 0 {
		t.Fatalf("score %s: %s", a, errs)
	}
	if code, _, errs := runBinary(t, nil, append([]string{"score", b, "--save-state", b + ".state"}, flags...)...); code != 0 {
		t.Fatalf("score %s: %s", b, errs)
	}
	if code, _, errs := runBinary(t, nil, "merge", a+".state", b+".state"); code != 2 || !strings.Contains(errs, "scales differ") {
		t.Errorf("shards of their own scales: exit %d, %q", code, errs)
	}
	likeFlags := []string{"--x", "x0,x1", "--y", "y0,y1", "--batch-size", fmt.Sprint(batch), "--json", "--like", a + ".state"}
	if code, _, errs := runBinary(t, nil, append([]string{"score", b, "--save-state", b + ".state", "--force"}, likeFlags...)...); code != 0 {
		t.Fatalf("score %s --like: %s", b, errs)
	}
	if code, _, errs := runBinary(t, nil, append([]string{"score", b, "--features", "32"}, likeFlags...)...); code != 2 || !strings.Contains(errs, "--features with --like") || strings.Count(errs, "\n") != 1 {
		t.Errorf("--features with --like: exit %d, %q", code, errs)
	}
	code, merged, errs := runBinary(t, nil, "merge", a+".state", b+".state", "--json")
	if code != 0 {
		t.Fatalf("merge: %s", errs)
	}
	_, one, _ := runBinary(t, nil, append([]string{"score", filepath.Join(dir, "all.arrow")}, flags...)...)
	mm, om := decodeJSON(t, merged), decodeJSON(t, one)
	for _, k := range []string{"rows", "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime", "dime_stderr", "dime_analytic"} {
		if d := math.Abs(num(t, mm, k) - num(t, om, k)); d > 1e-9 {
			t.Errorf("%s: merged %v, one run %v", k, mm[k], om[k])
		}
	}
}

// TestGenFormats checks that gen writes every format (and stdout) and that
// what it writes reads back with the expected rows and columns.
func TestGenFormats(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"parquet", "arrow", "arrows", "csv"} {
		path := filepath.Join(dir, "g."+ext)
		if code, _, errs := runBinary(t, nil, "gen", "--kind", "gaussian", "--dim", "3", "--mi", "2", "--rows", "700", "--out", path); code != 0 {
			t.Fatalf("%s: %s", ext, errs)
		}
		code, out, errs := runBinary(t, nil, "exact", path, "--x", "x0,x1,x2", "--y", "y0,y1,y2", "--json")
		if m := decodeJSON(t, out); code != 0 || num(t, m, "rows") != 700 || !(num(t, m, "dime") > 0.1) {
			t.Errorf("%s: exit %d %s: %v", ext, code, errs, m)
		}
	}
	code, out, _ := runBinary(t, nil, "gen", "--kind", "independent", "--dim", "1", "--rows", "50", "--out", "-")
	if code != 0 {
		t.Fatal("gen to stdout failed")
	}
	code, res, errs := runBinary(t, []byte(out), "score", "-", "--x", "x0", "--y", "y0", "--features", "8", "--json")
	if code != 0 || num(t, decodeJSON(t, res), "rows") != 50 {
		t.Errorf("gen | score: exit %d %s %s", code, errs, res)
	}
}

func TestProgressOnlyWhenAsked(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.parquet")
	writeData(t, path, synth.Spec{Kind: synth.Independent, Dim: 1, Seed: 1}, 3000)
	_, out, errs := runBinary(t, nil, "score", path, "--x", "x0", "--y", "y0", "--features", "8", "--json", "--progress", "always", "--batch-size", "100")
	decodeJSON(t, out) // stdout stays one JSON object
	if !strings.Contains(errs, "rows/s") || !strings.Contains(errs, "%") {
		t.Errorf("no progress on stderr with --progress always: %q", errs)
	}
	_, _, errs = runBinary(t, nil, "score", path, "--x", "x0", "--y", "y0", "--features", "8", "--json")
	if errs != "" {
		t.Errorf("progress drawn without a terminal: %q", errs)
	}
}

// TestBadInputs runs every kind of bad input and checks the exit status and
// the one-line message.
func TestBadInputs(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeData(t, good, synth.Spec{Kind: synth.Gaussian, Dim: 2, MI: 1, Seed: 1}, 200)
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	empty := write("empty.csv", "")
	headerOnly := write("header.csv", "x0,x1,y0,y1\n")
	oneRow := write("one.csv", "x0,y0\n1,2\n")
	nanCSV := write("nan.csv", "x0,y0\n1,2\n3,NaN\n5,6\n7,8\n")
	nullCSV := write("null.csv", "x0,y0\n1,2\n3,\n5,6\n7,8\n")
	text := write("text.csv", "x0,name,y0\n1,a,2\n3,b,4\n")
	fakeParquet := write("fake.parquet", "x0,y0\n1,2\n")
	garbage := write("garbage.arrows", "this is not arrow")
	ragged := raggedList(t, dir)
	cut, _ := os.ReadFile(good)
	truncated := write("truncated.parquet", string(cut[:len(cut)/2]))
	base := func(file string, extra ...string) []string {
		return append([]string{"score", file, "--x", "x0,x1", "--y", "y0,y1", "--features", "8"}, extra...)
	}
	cases := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"missing file", base(filepath.Join(dir, "nope.parquet")), 2, []string{"nope.parquet"}},
		{"missing column", base(good, "--x", "x0,zz"), 2, []string{"zz", "x0", "y1"}},
		{"non-numeric column", []string{"score", text, "--x", "name", "--y", "y0"}, 2, []string{"name"}},
		{"ragged list", []string{"score", ragged, "--x", "emb", "--y", "y"}, 2, []string{"emb"}},
		{"empty file", []string{"score", empty, "--x", "x0", "--y", "y0"}, 2, []string{"empty.csv"}},
		{"header only", []string{"score", headerOnly, "--x", "x0", "--y", "y0"}, 2, []string{"header.csv", "0 rows"}},
		{"one row", []string{"score", oneRow, "--x", "x0", "--y", "y0"}, 2, []string{"one.csv", "1 rows"}},
		{"NaN", []string{"score", nanCSV, "--x", "x0", "--y", "y0"}, 2, []string{"nan.csv", "y0", "row 1"}},
		{"null", []string{"score", nullCSV, "--x", "x0", "--y", "y0"}, 2, []string{"null.csv", "y0", "row 1"}},
		{"not parquet", base(fakeParquet), 2, []string{"fake.parquet"}},
		{"garbage stream", base(garbage), 2, []string{"garbage.arrows"}},
		{"garbage stdin", base("-"), 2, []string{"stdin"}},
		{"truncated parquet", base(truncated), 2, []string{"truncated.parquet"}},
		{"no extension", base(write("data.bin", "x")), 2, []string{"data.bin", "format"}},
		{"alpha zero", base(good, "--alpha", "0"), 2, []string{"--alpha"}},
		{"alpha negative", base(good, "--alpha", "-1"), 2, []string{"--alpha"}},
		{"sigma zero", base(good, "--sigma", "0"), 2, []string{"--sigma"}},
		{"sigma negative", base(good, "--sigma-x", "-3"), 2, []string{"--sigma-x"}},
		{"sigma word", base(good, "--sigma", "wide"), 2, []string{"--sigma"}},
		{"features zero", base(good, "--features", "0"), 2, []string{"--features"}},
		{"features beyond memory", base(good, "--features", "60000"), 2, []string{"--features 60000", "GiB"}},
		{"sample beyond memory", []string{"exact", good, "--x", "x0", "--y", "y0", "--sample", "1000000", "--force"}, 2, []string{"--sample", "GiB"}},
		{"permutations negative", base(good, "--permutations", "-1"), 2, []string{"--permutations"}},
		{"exact without permutations", []string{"exact", good, "--x", "x0", "--y", "y0", "--permutations", "0"}, 2, []string{"--permutations 0"}},
		{"groups zero", base(good, "--groups", "0"), 2, []string{"--groups"}},
		{"bad kernel", base(good, "--kernel", "rbf"), 2, []string{"--kernel"}},
		{"orthogonal laplacian", base(good, "--kernel", "laplacian", "--variant", "orthogonal"), 2, []string{"orthogonal"}},
		{"no x", []string{"score", good, "--y", "y0"}, 2, []string{"--x"}},
		{"no file", []string{"score", "--x", "x0", "--y", "y0"}, 2, []string{"needs input"}},
		{"file and stdin", []string{"score", good, "-", "--x", "x0", "--y", "y0"}, 2, []string{"stdin", "cannot be combined"}},
		{"unknown flag", base(good, "--bogus"), 2, []string{"-bogus"}},
		{"bad format", base(good, "--format", "xlsx"), 2, []string{"--format"}},
		{"exact sample too large", []string{"exact", good, "--x", "x0", "--y", "y0", "--sample", "9000"}, 2, []string{"--force"}},
		{"plot format", []string{"compare", good, "--x", "x0", "--y", "y0", "--plot", "out.jpg"}, 2, []string{".png"}},
		{"gen no out", []string{"gen"}, 2, []string{"--out"}},
		{"gen mi for sine", []string{"gen", "--kind", "sine", "--mi", "3", "--out", filepath.Join(dir, "g.csv")}, 2, []string{"--mi"}},
		{"gen bad kind", []string{"gen", "--kind", "spiral", "--out", filepath.Join(dir, "g.csv")}, 2, []string{"--kind"}},
		{"unknown command", []string{"frobnicate"}, 2, []string{"unknown command"}},
	}
	for _, c := range cases {
		var stdin []byte
		if c.name == "garbage stdin" {
			stdin = []byte("definitely not an arrow stream")
		}
		code, out, errs := runBinary(t, stdin, c.args...)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errs)
			continue
		}
		if out != "" {
			t.Errorf("%s: output on stdout despite the error: %q", c.name, out)
		}
		if !strings.HasPrefix(errs, "dime: ") || strings.Count(errs, "\n") != 1 || strings.Contains(errs, "goroutine") {
			t.Errorf("%s: stderr is not one line starting \"dime: \": %q", c.name, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q does not mention %q", c.name, errs, w)
			}
		}
	}
	// With --skip-invalid the bad rows are dropped and counted.
	code, out, errs := runBinary(t, nil, "score", nanCSV, "--x", "x0", "--y", "y0", "--features", "8", "--skip-invalid", "--json")
	if m := decodeJSON(t, out); code != 0 || num(t, m, "rows") != 3 || num(t, m, "skipped_rows") != 1 {
		t.Errorf("--skip-invalid: exit %d %s %v", code, errs, m)
	}
}

// raggedList writes an IPC file with a variable-size list column "emb".
func raggedList(t *testing.T, dir string) string {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	lb := b.Field(0).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	for i, n := range []int{2, 3, 2} {
		lb.Append(true)
		for k := 0; k < n; k++ {
			vb.Append(float64(i + k))
		}
		b.Field(1).(*array.Float64Builder).Append(float64(i))
	}
	rec := b.NewRecord()
	defer rec.Release()
	path := filepath.Join(dir, "ragged.arrow")
	f, _ := os.Create(path)
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(rec)
	w.Close()
	f.Close()
	return path
}

func matrix(v []float64, d int) *mat.Dense { return mat.NewDense(len(v)/d, d, v) }
