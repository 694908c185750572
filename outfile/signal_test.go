//go:build unix

package outfile

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalWhileWriting: a SIGINT while Write writes (the second Ctrl-C of
// a command, which it does not catch) leaves neither the target nor a
// temporary file. Before, the temporary .NAME.tmp-* stayed. The write runs
// in a child process (this test binary again), which signals itself.
func TestSignalWhileWriting(t *testing.T) {
	if dir := os.Getenv("OUTFILE_SIGNAL_CHILD"); dir != "" {
		err := Write(filepath.Join(dir, "out.state"), Options{}, func(w io.Writer) error {
			w.Write([]byte("half"))
			syscall.Kill(os.Getpid(), syscall.SIGINT)
			time.Sleep(2 * time.Second) // the signal arrives while this write goes on
			_, err := w.Write([]byte(" and the rest"))
			return err
		})
		if err != nil && strings.Contains(err.Error(), "interrupted by a signal") {
			os.Exit(3)
		}
		os.Exit(4)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSignalWhileWriting$")
	cmd.Env = append(os.Environ(), "OUTFILE_SIGNAL_CHILD="+dir)
	err := cmd.Run()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 3 {
		t.Errorf("child: %v, want exit 3 (the write reported the interruption)", err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}
