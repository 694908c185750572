package outfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

func writeString(s string) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := io.WriteString(w, s)
		return err
	}
}

// entries returns the names in dir.
func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func umask() fs.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return fs.FileMode(m)
}

func TestWriteNewAndReplace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.state")
	if err := Write(path, Options{}, writeString("one")); err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(path)
	if want := 0o666 &^ umask(); info.Mode().Perm() != want {
		t.Errorf("new file mode %v, want %v (0666 minus the umask)", info.Mode().Perm(), want)
	}
	// A replaced file keeps its permissions and gets the new content.
	os.Chmod(path, 0o640)
	if err := Write(path, Options{}, writeString("two")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	info, _ = os.Stat(path)
	if string(b) != "two" || info.Mode().Perm() != 0o640 {
		t.Errorf("replaced: %q, mode %v", b, info.Mode().Perm())
	}
	// A failing writer leaves the old file and no temporary.
	boom := errors.New("boom")
	err := Write(path, Options{}, func(w io.Writer) error {
		io.WriteString(w, "half")
		return boom
	})
	if err != boom {
		t.Errorf("error %v, want the writer's", err)
	}
	b, _ = os.ReadFile(path)
	if string(b) != "two" {
		t.Errorf("after a failure the file holds %q", b)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
	// A failure to write the temporary names the path, not the temporary.
	err = Write(path, Options{}, func(w io.Writer) error {
		return fmt.Errorf("writing rows: %w", &fs.PathError{Op: "write", Path: w.(*os.File).Name(), Err: syscall.ENOSPC})
	})
	if err == nil || err.Error() != path+": writing the output: no space left on device" {
		t.Errorf("disk full: %v", err)
	}
	if names := entries(t, dir); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
	// "-" is standard output.
	var out bytes.Buffer
	if err := Write("-", Options{Stdout: &out}, writeString("three")); err != nil || out.String() != "three" {
		t.Errorf("stdout: %q, %v", out.String(), err)
	}
}

// TestRefused checks every target that must not be replaced (issue 13, item
// 1: a symlink, a FIFO and a device were replaced by a regular file, and an
// input was destroyed), with and without Force.
func TestRefused(t *testing.T) {
	dir := t.TempDir()
	input := filepath.Join(dir, "data.csv")
	os.WriteFile(input, []byte("x,y\n1,2\n"), 0o644)
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("keep"), 0o644)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	inputLink := filepath.Join(dir, "input-link")
	os.Symlink(input, inputLink)
	hard := filepath.Join(dir, "hard.csv")
	os.Link(input, hard)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	dirLink := filepath.Join(dir, "dir-link")
	os.Symlink(sub, dirLink)
	inputs := []string{input}
	cases := []struct {
		path  string
		force bool
		want  string
	}{
		{link, false, "is a symbolic link, which dime does not replace; use --force"},
		{fifo, false, "is a FIFO (named pipe)"},
		{nullDevice(t, dir), false, "is a character device"},
		{sub, false, "is a directory"},
		{sub, true, "is a directory"},
		{dirLink, true, "leads to a directory"},
		{input, false, "is an input of this command"},
		{input, true, "is an input of this command"},
		{hard, false, "is the same file as the input " + input},
		{inputLink, true, "is the same file as the input"},
		{filepath.Join(dir, "missing", "out"), false, "no directory"},
		{filepath.Join(input, "out"), false, "is not a directory"},
	}
	for _, c := range cases {
		before := entries(t, dir)
		opts := Options{Force: c.force, Inputs: inputs}
		for name, err := range map[string]error{
			"Check": Check(c.path, opts),
			"Write": Write(c.path, opts, writeString("new")),
		} {
			var e *Error
			if err == nil || !errors.As(err, &e) || !strings.HasPrefix(err.Error(), c.path+": ") || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s %s (force %v): %v, want an error naming it and %q", name, c.path, c.force, err, c.want)
			}
		}
		if after := entries(t, dir); strings.Join(after, ",") != strings.Join(before, ",") {
			t.Errorf("%s: files %v became %v", c.path, before, after)
		}
	}
	for _, p := range []string{target, input} {
		if b, _ := os.ReadFile(p); string(b) == "new" {
			t.Errorf("%s was overwritten", p)
		}
	}
	if info, _ := os.Lstat(link); info.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	if !errors.Is(Check(fifo, Options{}), ErrRefused) || errors.Is(Check(filepath.Join(dir, "missing", "out"), Options{}), ErrRefused) {
		t.Error("ErrRefused matches refusals only")
	}
}

// TestForceWritesThrough writes through a link, a FIFO with a reader (what
// the shell's >(cmd) gives) and /dev/null.
func TestForceWritesThrough(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	os.WriteFile(target, []byte("old content"), 0o600)
	link := filepath.Join(dir, "link")
	os.Symlink(target, link)
	if err := Write(link, Options{Force: true}, writeString("via link")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "via link" {
		t.Errorf("target holds %q", b)
	}
	if info, _ := os.Lstat(link); info.Mode()&fs.ModeSymlink == 0 {
		t.Error("the link was replaced")
	}
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	got := make(chan string)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- string(b)
	}()
	if err := Write(fifo, Options{Force: true}, writeString("via fifo")); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "via fifo" {
		t.Errorf("the FIFO's reader got %q", s)
	}
	null := nullDevice(t, dir)
	if err := Write(null, Options{Force: true}, writeString("gone")); err != nil {
		t.Error(err)
	}
	if info, _ := os.Stat(null); info.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device", null)
	}
	if names := entries(t, dir); len(names) != 3+boolInt(os.Geteuid() == 0) {
		t.Errorf("files: %v", names)
	}
}

func TestUnwritableDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root may write in any directory")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	os.Mkdir(ro, 0o555)
	path := filepath.Join(ro, "out.state")
	err := Write(path, Options{}, writeString("x"))
	if err == nil || !strings.HasPrefix(err.Error(), path+": cannot write in "+ro) || strings.Contains(err.Error(), ".tmp-") {
		t.Errorf("error %v, want one naming %s and not the temporary", err, path)
	}
}

// nullDevice returns a device that behaves as /dev/null: as root, a node of
// its own in dir (a regression would otherwise replace the system's, which
// root can do); otherwise /dev/null, which only root could replace.
func nullDevice(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return "/dev/null"
	}
	path := filepath.Join(dir, "null")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	if err := syscall.Mknod(path, syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	return path
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
