package cli

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestPrecisionFlag: score's default is --precision float32 (the same DiME
// to the bit), --precision float64 moves DiME by round-off only (bound:
// stream's precisionBounds for d ≤ 2, 6e-6, about 5 times the largest effect
// measured on its held-out datasets), and an unknown precision is a usage
// error (exit 2) that names the flag.
func TestPrecisionFlag(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.parquet")
	writeData(t, path, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 8}, 4000)
	common := []string{"score", "--json", path, "--x", "x0,x1", "--y", "y0,y1", "--features", "32"}
	var dimes []float64
	for _, extra := range [][]string{nil, {"--precision", "float32"}, {"--precision", "float64"}} {
		code, out, errs := run(t, append(append([]string(nil), common...), extra...)...)
		if code != 0 {
			t.Fatalf("score %v: exit %d: %s", extra, code, errs)
		}
		dimes = append(dimes, num(t, decodeJSON(t, out), "dime"))
	}
	if dimes[0] != dimes[1] {
		t.Errorf("DiME %v by default, %v with --precision float32: want the same", dimes[0], dimes[1])
	}
	if d := math.Abs(dimes[1] - dimes[2]); !(d <= 6e-6) {
		t.Errorf("DiME %v (float32) and %v (float64) differ by %.2e, above 6e-6", dimes[1], dimes[2], d)
	}
	code, _, errs := run(t, append(append([]string(nil), common...), "--precision", "float16")...)
	if code != 2 || !strings.Contains(errs, "--precision") || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
		t.Errorf("--precision float16: exit %d, stderr %q; want 2 and one line naming the flag", code, errs)
	}
}
