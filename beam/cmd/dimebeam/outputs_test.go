package main

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// nullDevice returns a device that behaves as /dev/null: as root, a node of
// its own in dir (a regression would otherwise replace the system's
// /dev/null, which root can do); otherwise /dev/null, which only root could
// replace.
func nullDevice(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return "/dev/null"
	}
	p := filepath.Join(dir, "null")
	if err := syscall.Mknod(p, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	return p
}

// describeTree maps the names below dir to their kind, mode and content
// hash (links not followed).
func describeTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		m[p] = desc
		return nil
	})
	return m
}

// TestOutputTargets: dimebeam's --output and --save-state refuse what dime
// refuses (they share package outfile): a symbolic link, a FIFO, a device,
// a directory, a missing directory, and every file of the resolved dataset,
// with exit 2, one line, and nothing changed. Before, a temporary file was
// renamed over the target whatever it was: --output /dev/null as root
// replaced the device with a regular file, a FIFO and a link were replaced
// too, and --output /nonexistent/a/b/r.json created the directories.
func TestOutputTargets(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	for _, p := range []string{"part=0", "part=1"} {
		os.MkdirAll(filepath.Join(ds, p), 0o755)
	}
	gen(t, filepath.Join(ds, "part=0", "a.parquet"), 300, 1)
	gen(t, filepath.Join(ds, "part=1", "b.parquet"), 300, 2)
	os.WriteFile(filepath.Join(dir, "old.json"), []byte("{}\n"), 0o644)
	os.Symlink("old.json", filepath.Join(dir, "link.json"))
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	null := nullDevice(t, dir)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	a := filepath.Join(ds, "part=0", "a.parquet")
	views := []string{"--x", "x0,x1", "--y", "y0,y1", "--features", "16"}
	for _, c := range []struct {
		flag, path, input, want string
	}{
		{"--output", null, ds, "is a character device, which dimebeam does not replace"},
		{"--output", filepath.Join(dir, "fifo"), ds, "is a FIFO (named pipe), which dimebeam does not replace"},
		{"--output", filepath.Join(dir, "link.json"), ds, "is a symbolic link, which dimebeam does not replace"},
		{"--output", filepath.Join(dir, "sub"), ds, "is a directory"},
		{"--output", filepath.Join(dir, "nonexistent", "a", "b", "r.json"), ds, "no directory"},
		{"--save-state", null, ds, "is a character device"},
		{"--save-state", filepath.Join(dir, "fifo"), ds, "is a FIFO"},
		{"--save-state", filepath.Join(dir, "link.json"), ds, "is a symbolic link"},
		{"--save-state", a, ds + "/", "input"},
		{"--save-state", a, filepath.Join(dir, "*", "*", "*.parquet"), "input"},
		{"--save-state", a, "file://" + ds + "/", "input"},
		{"--output", filepath.Join(ds, "part=1", ".", "b.parquet"), ds, "input"},
	} {
		before := describeTree(t, dir)
		args := append([]string{"--input", c.input, c.flag, c.path}, views...)
		code, out, errs := runCmd(t, args...)
		if code != 2 || out != "" || !strings.HasPrefix(errs, "dimebeam: "+c.flag+" ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s %s (input %s): exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.flag, c.path, c.input, code, out, errs, c.want)
		}
		after := describeTree(t, dir)
		for p, d := range before {
			if after[p] != d {
				t.Errorf("%s %s: %s changed: %s, was %s", c.flag, c.path, p, after[p], d)
			}
		}
		for p := range after {
			if _, ok := before[p]; !ok {
				t.Errorf("%s %s: created %s", c.flag, c.path, p)
			}
		}
	}
	// A regular file and a new path are written.
	for _, name := range []string{"old.json", "new.json"} {
		out := filepath.Join(dir, name)
		code, _, errs := runCmd(t, append([]string{"--input", ds, "--output", out, "--save-state", filepath.Join(dir, "s-"+name)}, views...)...)
		if code != 0 {
			t.Fatalf("--output %s: exit %d: %s", name, code, errs)
		}
		if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), `"dime"`) {
			t.Errorf("--output %s: %v %q", name, err, b)
		}
	}
	if info, err := os.Lstat(null); err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v", null, err)
	}
}
