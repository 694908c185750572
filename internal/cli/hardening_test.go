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

// TestStatesFromDevicesAndDirectories: merge and monitor --baseline end with
// exit 2 and one line on /dev/zero, /dev/urandom and a directory. Before,
// /dev/zero was read whole (out of memory), /dev/urandom grew the process to
// 1.6 GB, and a directory exited 1.
func TestStatesFromDevicesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.csv")
	os.WriteFile(data, []byte("x,y\n1,2\n2,3\n3,5\n"), 0o644)
	for _, state := range []string{"/dev/zero", "/dev/urandom", dir} {
		for _, args := range [][]string{
			{"merge", state},
			{"monitor", data, "--x", "x", "--y", "y", "--window-rows", "2", "--baseline", state},
		} {
			code, out, errs := runBinaryIn(t, dir, nil, args...)
			if code != 2 || out != "" || !strings.HasPrefix(errs, "dime: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, state) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args, code, out, errs, state)
			}
		}
	}
}
