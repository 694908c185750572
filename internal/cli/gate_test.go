package cli

import (
	"bytes"
	"github.com/dime-project/dime/dataset"
	rpt "github.com/dime-project/dime/report"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"math"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseCondition(t *testing.T) {
	fields := numericFields(reflectType(scoreOutput{}))
	for _, f := range []string{"p_value", "change_p_value", "dime", "dime_normalized", "rows", "skipped_rows", "dime_change"} {
		if !slices.Contains(fields, f) {
			t.Errorf("score's numeric fields lack %s: %v", f, fields)
		}
	}
	for _, f := range []string{"estimator", "x_columns", "kernel", "partial"} {
		if slices.Contains(fields, f) {
			t.Errorf("score's numeric fields have %s", f)
		}
	}
	wfields := numericFields(reflectType(windowLine{}))
	for _, f := range []string{"p_value", "change_p_value", "dime", "dime_normalized", "window", "skipped_rows"} {
		if !slices.Contains(wfields, f) {
			t.Errorf("monitor's numeric fields lack %s: %v", f, wfields)
		}
	}
	for _, c := range []struct {
		in   string
		want condition
	}{
		{"p_value < 0.01", condition{"p_value", "<", 0.01}},
		{"p_value<0.01", condition{"p_value", "<", 0.01}},
		{" dime >= 1e-3 ", condition{"dime", ">=", 1e-3}},
		{"dime_normalized<=-0.5", condition{"dime_normalized", "<=", -0.5}},
		{"rows > 10", condition{"rows", ">", 10}},
	} {
		got, err := parseCondition(c.in, fields)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v, %v", c.in, got, err)
		}
	}
	for _, bad := range []string{"", "p_value", "p_value = 0.01", "p_value == 0.01", "p_value < ", "p_value < x", "p_value < NaN",
		"p_value < Inf", "< 0.01", "bogus < 1", "estimator < 1", "p_value <> 1", "p_value =< 1", "p_value < 1 2"} {
		if c, err := parseCondition(bad, fields); err == nil {
			t.Errorf("%q accepted: %+v", bad, c)
		}
	}
	// Conditions on what the JSON says: NaN (null) and absent fields meet
	// none.
	g := &gate{fields: fields}
	if err := g.Set("p_value < 0.5, dime > 1"); err != nil {
		t.Fatal(err)
	}
	nan, half := number(math.NaN()), number(0.25)
	for _, c := range []struct {
		o    scoreOutput
		want int
	}{
		{scoreOutput{}, 0}, // no p_value, DiME 0
		{scoreOutput{report: report{PValue: &nan, Scores: rpt.Scores{DiME: nan}}}, 0},
		{scoreOutput{report: report{PValue: &half}}, 1},
		{scoreOutput{report: report{PValue: &half, Scores: rpt.Scores{DiME: 2}}}, 2},
	} {
		met, err := g.check(c.o)
		if err != nil || len(met) != c.want {
			t.Errorf("%+v: met %v, %v", c.o.report, met, err)
		}
	}
}

// TestScoreFailIf: exit 3 when the gate holds (the result printed all the
// same), 0 when it does not, 2 for a gate that cannot be read; with
// --baseline, on the change test.
func TestScoreFailIf(t *testing.T) {
	dir := t.TempDir()
	ref, state := filepath.Join(dir, "ref.parquet"), filepath.Join(dir, "ref.state")
	same, indep := filepath.Join(dir, "same.parquet"), filepath.Join(dir, "indep.parquet")
	writeData(t, ref, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 61}, 20000)
	writeData(t, same, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 62}, 5000)
	writeData(t, indep, synth.Spec{Kind: synth.Independent, Dim: 2, Seed: 63}, 5000)
	if code, _, errs := runBinary(t, nil, "score", ref, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--standardize=false", "--save-state", state); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	// Raw columns: the gates, not the estimates, are under test, and the
	// thresholds were set on the sine kind at unit scale.
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--standardize=false", "--json"}
	for _, c := range []struct {
		input string
		gate  string
		code  int
	}{
		{same, "p_value < 0.01", 3},  // dependent: independence rejected
		{indep, "p_value < 0.01", 0}, // independent: not rejected at this seed
		{indep, "dime > 0.1, p_value < 0.01", 0},
		{same, "dime > 10, dime_normalized >= 0.1", 3},
		{same, "rows < 5000", 0},
		{same, "rows <= 5000", 3},
	} {
		code, out, errs := runBinary(t, nil, append([]string{"score", c.input, "--fail-if", c.gate}, views...)...)
		if code != c.code {
			t.Errorf("%s %q: exit %d, want %d: %s", filepath.Base(c.input), c.gate, code, c.code, errs)
			continue
		}
		r := decodeJSON(t, out) // printed in either case
		if num(t, r, "rows") != 5000 {
			t.Errorf("%s %q: %v rows", filepath.Base(c.input), c.gate, r["rows"])
		}
		if c.code == 3 && (!strings.Contains(errs, "--fail-if met") || strings.Count(strings.TrimSpace(errs), "\n") != 0) {
			t.Errorf("%q: stderr %q", c.gate, errs)
		}
	}
	// With --baseline: the change test, its fields in the JSON.
	for _, c := range []struct {
		input string
		code  int
	}{{same, 0}, {indep, 3}} {
		code, out, errs := runBinary(t, nil, "score", c.input, "--x", "x0,x1", "--y", "y0,y1", "--baseline", state, "--json", "--fail-if", "change_p_value < 0.001")
		if code != c.code {
			t.Errorf("%s --baseline: exit %d, want %d: %s", filepath.Base(c.input), code, c.code, errs)
			continue
		}
		r := decodeJSON(t, out)
		p, df := num(t, r, "change_p_value"), num(t, r, "change_df")
		if df < 4 || df > 9 || num(t, r, "features") != 32 {
			t.Errorf("%s: change df %v, D %v", filepath.Base(c.input), df, r["features"])
		}
		if c.code == 3 && !(p < 1e-6 && num(t, r, "dime_change") < 0) {
			t.Errorf("vanished dependence: change %v, p %v", r["dime_change"], p)
		}
	}
	// The table carries the change too.
	if code, out, _ := runBinary(t, nil, "score", same, "--x", "x0,x1", "--y", "y0,y1", "--baseline", state); code != 0 || !strings.Contains(out, "change p-value") {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fail-if", "bogus < 1"}, `unknown field "bogus"`},
		{[]string{"--fail-if", "p_value = 1"}, "want FIELD OP NUMBER"},
		{[]string{"--fail-if", "change_p_value < 0.01"}, "needs --baseline"},
		{[]string{"--baseline-blocks", "3"}, "needs --baseline"},
		{[]string{"--baseline", state, "--features", "64"}, "--features with --baseline"},
		{[]string{"--baseline", state, "--baseline-blocks", "1"}, "--baseline-blocks 1"},
	} {
		code, _, errs := runBinary(t, nil, append([]string{"score", same, "--x", "x0,x1", "--y", "y0,y1"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}

// TestMonitorFailIf: a gate met by some window exits 3 at the end of the
// input (every window printed), or at once with --fail-fast; 0 on a
// stream where no window meets it.
func TestMonitorFailIf(t *testing.T) {
	dir := t.TempDir()
	ref, state := filepath.Join(dir, "ref.parquet"), filepath.Join(dir, "ref.state")
	writeData(t, ref, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 71}, 20000)
	if code, _, errs := runBinary(t, nil, "score", ref, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--standardize=false", "--save-state", state); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	stream := func(switched bool) []byte {
		var in bytes.Buffer
		tw, err := tablewriter.New(&in, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 1000})
		if err != nil {
			t.Fatal(err)
		}
		writeSynth(t, tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 72}, 6000)
		if switched {
			writeSynth(t, tw, synth.Spec{Kind: synth.Independent, Dim: 2, Seed: 73}, 6000)
		} else {
			writeSynth(t, tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 74}, 6000)
		}
		tw.Close()
		return in.Bytes()
	}
	args := []string{"monitor", "-", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "2000", "--baseline", state, "--fail-if", "change_p_value < 0.001"}
	for _, c := range []struct {
		switched, fast bool
		code, windows  int
	}{
		{false, false, 0, 6},
		{false, true, 0, 6},
		{true, false, 3, 6},
		{true, true, 3, 4}, // the first window after the switch
	} {
		a := args
		if c.fast {
			a = append(a[:len(a):len(a)], "--fail-fast")
		}
		code, out, errs := runBinary(t, stream(c.switched), a...)
		ws := windowLines(t, out)
		if code != c.code || len(ws) != c.windows {
			t.Errorf("switched %v, fail-fast %v: exit %d with %d windows, want %d with %d: %s", c.switched, c.fast, code, len(ws), c.code, c.windows, errs)
		}
		if c.code == 3 && !strings.Contains(errs, "window 3: change_p_value < 0.001") {
			t.Errorf("switched, fail-fast %v: stderr %q", c.fast, errs)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--fail-if", "bogus < 1"}, `unknown field "bogus"`},
		{[]string{"--fail-fast"}, "--fail-fast needs --fail-if"},
		{[]string{"--fail-if", "change_p_value < 0.01"}, "needs --baseline"},
	} {
		code, _, errs := runBinary(t, stream(false), append([]string{"monitor", "-", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "2000"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}

func reflectType(v any) reflect.Type { return reflect.TypeOf(v) }
