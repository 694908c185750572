package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTinyMagnitudes: a column of valid values of magnitude 1e-200 is
// scored, monitored and compared without a panic. Before, the RFF-HSIC
// test's eigensolver panicked ("lapack: insufficient length of a").
func TestTinyMagnitudes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := range 600 {
		k := float64(i%37 + 1)
		fmt.Fprintf(&b, "%g,%g\n", k*1e-200, k*k*1e-200)
	}
	path := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"score", path, "--x", "x", "--y", "y", "--features", "16", "--json"},
		{"monitor", path, "--x", "x", "--y", "y", "--features", "16", "--window-rows", "200"},
		{"compare", path, "--x", "x", "--y", "y", "--sample", "100", "--features", "16"},
	} {
		code, out, errs := run(t, args...)
		if code != 0 || out == "" {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, errs)
		}
	}
}
