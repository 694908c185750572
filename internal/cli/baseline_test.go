package cli

import (
	"bytes"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"path/filepath"
	"strings"
	"testing"
)

// TestMonitorBaseline makes a reference with score --save-state and
// monitors a stream whose first half is like it and whose second half is
// independent: every window carries the comparison, the windows after the
// switch alert on change, and the baseline's DiME is score's.
func TestMonitorBaseline(t *testing.T) {
	dir := t.TempDir()
	ref, state := filepath.Join(dir, "ref.parquet"), filepath.Join(dir, "ref.state")
	writeData(t, ref, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 31}, 20000)
	code, out, errs := runBinary(t, nil, "score", ref, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--save-state", state, "--json")
	if code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	refDiME := num(t, decodeJSON(t, out), "dime")

	// 8 windows of 2000 sine rows, then 8 of independent rows.
	var in bytes.Buffer
	tw, err := tablewriter.New(&in, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	writeSynth(t, tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 32}, 16000)
	writeSynth(t, tw, synth.Spec{Kind: synth.Independent, Dim: 2, Seed: 33}, 16000)
	tw.Close()
	args := []string{"monitor", "-", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "2000", "--baseline", state, "--alert-change-p", "0.01"}
	code, out, errs = runBinary(t, in.Bytes(), args...)
	if code != 0 {
		t.Fatalf("monitor: exit %d: %s", code, errs)
	}
	ws := windowLines(t, out)
	if len(ws) != 16 {
		t.Fatalf("%d windows", len(ws))
	}
	for i, w := range ws {
		if num(t, w, "baseline_dime") != refDiME || num(t, w, "change_df") != 4 {
			t.Errorf("window %d: baseline %v (score said %v), df %v", i, w["baseline_dime"], refDiME, w["change_df"])
		}
		p := num(t, w, "change_p_value")
		reasons, _ := w["alert_reasons"].([]any)
		if i >= 8 && (w["alert"] != true || len(reasons) != 1 || !strings.Contains(reasons[0].(string), "changed from the baseline")) {
			t.Errorf("window %d after the switch: p %v, alert %v %v", i, p, w["alert"], reasons)
		}
		if i >= 8 && num(t, w, "dime_change") >= 0 {
			t.Errorf("window %d: dependence gone, change %v", i, w["dime_change"])
		}
	}
	// The table has the comparison's columns.
	code, out, _ = runBinary(t, in.Bytes(), append(args, "--json=false")...)
	if lines := strings.Split(out, "\n"); code != 0 || !strings.Contains(lines[0], "baseline") || !strings.Contains(lines[0], "change p") || len(lines) != 18 {
		t.Errorf("table: exit %d\n%s", code, out)
	}
	// Misuse: estimator flags with a baseline, change flags without one.
	for _, c := range []struct {
		args []string
		want string
	}{
		{append(args, "--features", "64"), "--features with --baseline"},
		{append(args, "--sigma", "2"), "--sigma with --baseline"},
		{[]string{"monitor", "-", "--x", "x0", "--y", "y0", "--window-rows", "100", "--alert-change-p", "0.01"}, "need --baseline"},
		{append(args, "--baseline-blocks", "1"), "--baseline-blocks 1"},
		{[]string{"monitor", "-", "--x", "x0,x1", "--y", "y0,y1", "--half-life", "100", "--baseline", state}, "not --half-life"},
		{[]string{"monitor", "-", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "100", "--baseline", ref}, "ref.parquet"},
	} {
		code, _, errs := runBinary(t, in.Bytes(), c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args[len(c.args)-2:], code, errs)
		}
	}
	// A reference of other widths.
	code, _, errs = runBinary(t, in.Bytes(), "monitor", "-", "--x", "x0", "--y", "y0,y1", "--window-rows", "2000", "--baseline", state)
	if code != 2 || !strings.Contains(errs, "baseline has views of 2 and 2 columns") {
		t.Errorf("other widths: exit %d, %q", code, errs)
	}
}
