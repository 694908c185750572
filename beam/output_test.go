package dimebeam

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"
)

// TestWriteFileRefuses: WriteFile, used in a pipeline of its own, refuses a
// FIFO, a symbolic link and an input, and leaves them as they were; it
// writes a new path and replaces a regular file. Before, it renamed a
// temporary file over any target.
func TestWriteFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(dir, "in.parquet")
	os.WriteFile(input, []byte("PAR1"), 0o644)
	link := filepath.Join(dir, "link")
	os.WriteFile(filepath.Join(dir, "other"), []byte("other"), 0o644)
	os.Symlink("other", link)
	for _, c := range []struct{ path, want string }{
		{fifo, "is a FIFO"},
		{link, "is a symbolic link"},
		{filepath.Join(dir, ".", "in.parquet"), "input"},
	} {
		p, s := beam.NewPipelineWithRoot()
		WriteFile(s, beam.Create(s, []byte("state")), c.path, input)
		err := ptest.Run(p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.path, err, c.want)
		}
	}
	if info, err := os.Lstat(fifo); err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO is gone: %v", err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is gone: %v", err)
	}
	if b, _ := os.ReadFile(input); string(b) != "PAR1" {
		t.Errorf("the input was overwritten: %q", b)
	}
	for _, name := range []string{"new.state", "in.parquet"} {
		p, s := beam.NewPipelineWithRoot()
		out := filepath.Join(dir, name)
		WriteFile(s, beam.Create(s, []byte("state")), out)
		if err := ptest.Run(p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b, _ := os.ReadFile(out); string(b) != "state" {
			t.Errorf("%s holds %q", name, b)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 5 {
		t.Errorf("%d files in the directory, want 5 (a temporary left?)", len(ents))
	}
}
