package cli

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/stream"
)

// writeAR1 writes n rows of independent AR(1) series x0, x1, y0, y1 of
// coefficient phi as CSV and returns the path.
func writeAR1(t *testing.T, phi float64, n int, seed uint64) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	b.WriteString("x0,x1,y0,y1\n")
	v := make([]float64, 4)
	e := math.Sqrt(1 - phi*phi)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	for range n {
		for i := range v {
			v[i] = phi*v[i] + e*rng.NormFloat64()
		}
		fmt.Fprintf(&b, "%.6f,%.6f,%.6f,%.6f\n", v[0], v[1], v[2], v[3])
	}
	path := filepath.Join(t.TempDir(), "ar.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestSerialRowsCommands: on independent AR(1) series (φ = 0.9), score
// warns on stderr that the rows look serially dependent, and names --rows
// serial; with --rows serial it does not warn and reports the serial test
// (row_model, p_value_iid, the 95% interval); monitor is serial by default,
// iid with --permutations; --rows serial with permutations is a usage error.
func TestSerialRowsCommands(t *testing.T) {
	path := writeAR1(t, 0.9, 5000, 31)
	base := []string{path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--json"}
	code, out, errs := runBinary(t, nil, append([]string{"score"}, base...)...)
	if code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	if !strings.Contains(errs, "serially dependent") || !strings.Contains(errs, "--rows serial") || strings.Count(errs, "\n") != 1 {
		t.Errorf("score (iid) on AR(1) rows: stderr %q, want one warning line", errs)
	}
	r := decodeJSON(t, out)
	if r["row_model"] != "iid" || r["p_value_iid"] != nil || num(t, r, "lag1_autocorrelation_x") < 0.8 {
		t.Errorf("score (iid): %v", r)
	}
	ci, _ := r["dime_ci95"].([]any)
	if len(ci) != 2 || num(t, r, "dime_df") != stream.DefaultGroups-1 {
		t.Errorf("score: dime_ci95 %v, dime_df %v", r["dime_ci95"], r["dime_df"])
	}

	code, out, errs = runBinary(t, nil, append([]string{"score", "--rows", "serial"}, base...)...)
	if code != 0 || errs != "" {
		t.Fatalf("score --rows serial: exit %d: %q", code, errs)
	}
	r = decodeJSON(t, out)
	if r["row_model"] != "serial" || r["p_value_iid"] == nil || num(t, r, "p_value") == num(t, r, "p_value_iid") {
		t.Errorf("score --rows serial: %v", r)
	}

	code, out, errs = runBinary(t, nil, "monitor", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--window-rows", "2500")
	if code != 0 || errs != "" {
		t.Fatalf("monitor: exit %d: %q", code, errs)
	}
	for _, w := range windowLines(t, out) {
		if w["row_model"] != "serial" {
			t.Errorf("monitor's default: %v", w)
		}
	}
	code, out, errs = runBinary(t, nil, "monitor", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32", "--window-rows", "2500", "--permutations", "2")
	if code != 0 || !strings.Contains(errs, "serially dependent") {
		t.Fatalf("monitor --permutations 2: exit %d: %q", code, errs)
	}
	for _, w := range windowLines(t, out) {
		if w["row_model"] != "iid" {
			t.Errorf("monitor --permutations 2: %v", w)
		}
	}
	for _, args := range [][]string{{"--rows", "serial", "--permutations", "3"}, {"--rows", "hourly"}, {"--rows", "serial", "--groups", "1"}} {
		code, _, errs = runBinary(t, nil, append(append([]string{"score"}, base...), args...)...)
		if code != 2 || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "--") {
			t.Errorf("score %v: exit %d, %q; want a one-line usage error", args, code, errs)
		}
	}
}
