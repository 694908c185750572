package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSkipInvalidAgrees checks that dimebeam and dime score drop the same
// rows with --skip-invalid: a null, a NaN and a value beyond ±1e150 (1e200
// here: the kernels' squared distances would overflow) are each one
// skipped row, and the estimate on the rows kept is the same; without
// --skip-invalid both stop with exit status 2 naming the value. Before,
// dimebeam read 1e200 as a value and failed later in the pipeline, where
// dime score dropped it.
func TestSkipInvalidAgrees(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("u,v,w\n")
	for i := range 400 {
		x := math.Sin(float64(i) * 0.7)
		fmt.Fprintf(&b, "%.6f,%.6f,%.6f\n", x, x*x+0.1*math.Cos(float64(i)), math.Cos(float64(i)*1.3))
		switch i {
		case 100:
			b.WriteString("1e200,0.5,0.5\n")
		case 200:
			b.WriteString("0.5,NaN,0.5\n")
		case 300:
			b.WriteString("0.5,,0.5\n")
		}
	}
	path := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--x", "u", "--y", "v,w", "--sigma", "1", "--features", "32", "--precision", "float64", "--skip-invalid"}
	code, out, errs := runCmd(t, append([]string{"--input", path}, args...)...)
	if code != 0 {
		t.Fatalf("dimebeam --skip-invalid: exit %d: %s", code, errs)
	}
	got := decodeJSON(t, out)
	want := decodeJSON(t, dime(t, append([]string{"score", path, "--json"}, args...)...))
	if got["rows"] != float64(400) || got["skipped_rows"] != float64(3) {
		t.Errorf("dimebeam: rows %v, skipped_rows %v; want 400 and 3", got["rows"], got["skipped_rows"])
	}
	if got["skipped_rows"] != want["skipped_rows"] {
		t.Errorf("skipped_rows: dimebeam %v, dime score %v", got["skipped_rows"], want["skipped_rows"])
	}
	sameFields(t, got, want, "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic", "dime")

	for _, c := range []struct {
		x, want string
	}{{"u", "1e+200"}} {
		code, out, errs := runCmd(t, "--input", path, "--x", c.x, "--y", "w", "--sigma", "1", "--features", "8")
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("dimebeam without --skip-invalid: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", code, out, errs, c.want)
		}
	}
}
