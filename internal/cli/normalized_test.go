package cli

import (
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
)

// Bounds of TestNormalizedEndToEnd, on X ~ N(0, I_3), 20 000 rows, D = 64
// (the regime of the library's TestNormalizedIdentical, whose bound is 0.03,
// about three times the largest deviation it measured, 0.011 over 25
// seeds). Measured through the command (dime gen --kind independent --dim 3,
// seeds 1 to 40, not the test's):
//
//   - score, Y = X: 0.983 to 1.015 over 40 seeds (D = 256, the default:
//     0.990 to 1.008 over 31);
//   - score, independent views: |normalized| ≤ 0.0021 over 40 seeds;
//   - monitor, 4 windows of 5000 rows, seeds 11 to 40 (120 windows): Y = X
//     0.990 to 1.009; independent views |normalized| ≤ 0.0066.
//
// The bounds are about twice the largest deviation measured.
const (
	normalizedTolIdentical  = 0.03  // score and monitor windows, Y = X
	normalizedTolScoreNull  = 0.005 // score, independent views
	normalizedTolWindowNull = 0.015 // monitor windows of 5000 rows, independent views
)

// TestNormalizedEndToEnd is the criterion through the command: the
// normalized score is 1 on Y = X (the same columns as both views) and near 0
// on independent views, in score --json and in every window of monitor; and
// it is the ratio of the DiME and self terms the command reports.
func TestNormalizedEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("3 × 20 000 rows, scored and monitored")
	}
	const rows, window = 20000, 5000
	dir := t.TempDir()
	x := "x0,x1,x2"
	// Held-out seeds: the bounds above were set on seeds 1 to 40.
	for _, seed := range []uint64{101, 102, 103} {
		path := filepath.Join(dir, fmt.Sprintf("n%d.parquet", seed))
		writeData(t, path, synth.Spec{Kind: synth.Independent, Dim: 3, Seed: seed}, rows)
		for _, c := range []struct {
			name, y string
			want    float64 // the normalized score
			tol     float64 // of score
			tolWin  float64 // of a monitor window
		}{
			{"Y = X", x, 1, normalizedTolIdentical, normalizedTolIdentical},
			{"independent", "y0,y1,y2", 0, normalizedTolScoreNull, normalizedTolWindowNull},
		} {
			common := []string{path, "--x", x, "--y", c.y, "--features", "64", "--seed", fmt.Sprint(seed)}
			code, out, errs := runBinary(t, nil, append([]string{"score", "--json"}, common...)...)
			if code != 0 {
				t.Fatalf("seed %d, %s: score exit %d: %s", seed, c.name, code, errs)
			}
			r := decodeJSON(t, out)
			norm := num(t, r, "dime_normalized")
			t.Logf("seed %d, %s: score normalized %.4f", seed, c.name, norm)
			if math.Abs(norm-c.want) > c.tol {
				t.Errorf("seed %d, %s: score dime_normalized %.4f, want %g ± %g", seed, c.name, norm, c.want, c.tol)
			}
			if want := num(t, r, "dime") / math.Sqrt(num(t, r, "dime_self_x")*num(t, r, "dime_self_y")); math.Abs(norm-want) > 1e-12 {
				t.Errorf("seed %d, %s: dime_normalized %v is not dime / sqrt(dime_self_x·dime_self_y) = %v", seed, c.name, norm, want)
			}

			code, out, errs = runBinary(t, nil, append([]string{"monitor", "--window-rows", fmt.Sprint(window)}, common...)...)
			if code != 0 {
				t.Fatalf("seed %d, %s: monitor exit %d: %s", seed, c.name, code, errs)
			}
			ws := windowLines(t, out)
			if len(ws) != rows/window {
				t.Fatalf("seed %d, %s: %d windows", seed, c.name, len(ws))
			}
			var got []string
			for i, w := range ws {
				v := num(t, w, "dime_normalized")
				got = append(got, fmt.Sprintf("%.4f", v))
				if math.Abs(v-c.want) > c.tolWin {
					t.Errorf("seed %d, %s: window %d dime_normalized %.4f, want %g ± %g", seed, c.name, i, v, c.want, c.tolWin)
				}
			}
			t.Logf("seed %d, %s: monitor windows %s", seed, c.name, strings.Join(got, " "))
		}
	}
}

// monitorOnlyFields are the fields of a monitor window line that score
// --json does not have: the window's place, its alert and the baseline
// comparison. Every other field is a quantity score reports too, under the
// same name.
var monitorOnlyFields = map[string]bool{"window": true, "start_row": true, "end_row": true, "start_time": true,
	"end_time": true, "effective_rows": true, "partial": true, "alert": true, "alert_reasons": true,
	"baseline_dime": true, "dime_change": true, "dime_change_stderr": true, "change_df": true, "change_p_value": true}

// TestMonitorFieldsMatchScore checks that a monitor window over the whole
// input is score's estimate under score's names: every field of the window
// line that is not about the window is a field of score --json with the
// same value (same rows, same estimator with serial rows, one batch of IPC
// blocks).
func TestMonitorFieldsMatchScore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.arrow")
	writeDataBatches(t, path, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 5}, 3000, 500)
	common := []string{path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32"}
	// monitor's rows are serial by default, and its jackknife has
	// monitorGroups groups: score is asked for the same.
	code, out, errs := runBinary(t, nil, append([]string{"score", "--json", "--rows", "serial", "--groups", strconv.Itoa(monitorGroups)}, common...)...)
	if code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	s := decodeJSON(t, out)
	code, out, errs = runBinary(t, nil, append([]string{"monitor", "--window-rows", "3000"}, common...)...)
	if code != 0 {
		t.Fatalf("monitor: exit %d: %s", code, errs)
	}
	ws := windowLines(t, out)
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1:\n%s", len(ws), out)
	}
	for k, v := range ws[0] {
		if monitorOnlyFields[k] {
			continue
		}
		sv, ok := s[k]
		switch {
		case !ok:
			t.Errorf("monitor field %q is not in score --json: a quantity score has under another name, or a new window field (add it to monitorOnlyFields)", k)
		case !reflect.DeepEqual(v, sv):
			t.Errorf("%s: monitor %v, score %v", k, v, sv)
		}
	}
	if _, ok := ws[0]["dime_normalized"]; !ok {
		t.Error("no dime_normalized in the window line")
	}
}

// TestNormalizedOff: --normalized=false drops the self terms; score and
// monitor then report dime_normalized as absent or null (never a number) and
// the same DiME as with them (the self terms use their own frequencies and
// accumulators, and leave DiME's alone).
func TestNormalizedOff(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.parquet")
	writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 7}, 4000)
	common := []string{path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32"}
	var dimes []float64
	for _, flag := range []string{"--normalized=true", "--normalized=false"} {
		code, out, errs := runBinary(t, nil, append([]string{"score", "--json", flag}, common...)...)
		if code != 0 {
			t.Fatalf("score %s: exit %d: %s", flag, code, errs)
		}
		r := decodeJSON(t, out)
		v, present := r["dime_normalized"]
		if off := flag == "--normalized=false"; off && present && v != nil {
			t.Errorf("score %s: dime_normalized %v, want it absent or null", flag, v)
		} else if !off && !present {
			t.Errorf("score %s: no dime_normalized", flag)
		}
		dimes = append(dimes, num(t, r, "dime"))
	}
	if dimes[0] != dimes[1] {
		t.Errorf("DiME %v with the self terms, %v without: want the same", dimes[0], dimes[1])
	}
	code, out, errs := runBinary(t, nil, append([]string{"monitor", "--window-rows", "2000", "--normalized=false"}, common...)...)
	if code != 0 {
		t.Fatalf("monitor --normalized=false: exit %d: %s", code, errs)
	}
	for _, w := range windowLines(t, out) {
		if v, ok := w["dime_normalized"]; ok && v != nil {
			t.Errorf("monitor --normalized=false: window dime_normalized %v, want null", v)
		}
	}
}
