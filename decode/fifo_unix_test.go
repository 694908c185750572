//go:build unix

package decode_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// A named pipe (as from a shell's <(…)) is read as a stream, not taken for
// an empty file; a directory is an error.
func TestNamedPipe(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	w, err := tablewriter.New(&buf, dataset.IPCStream, []string{"a", "b"}, tablewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]float64{1, 2, 3, 4}, 2)
	w.Close()
	for _, tc := range []struct {
		name string
		data []byte
		opts decode.Options
		want string // error, or "" for the rows [1 3]
	}{
		{"p.arrows", buf.Bytes(), decode.Options{}, ""},
		{"p.csv", []byte("a,b\n1,2\n3,4\n"), decode.Options{}, ""},
		{"p.parquet", []byte("PAR1"), decode.Options{}, "parquet needs a regular file"},
	} {
		path := filepath.Join(dir, tc.name)
		if err := syscall.Mkfifo(path, 0o600); err != nil {
			t.Skip("no named pipes:", err)
		}
		go func() { // opening a pipe to read waits for a writer
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				return
			}
			f.Write(tc.data)
			f.Close()
		}()
		opts := tc.opts
		opts.Columns.X, opts.Columns.Y = []string{"a"}, []string{"b"}
		x, _, _, _, err := readAll(t, path, nil, opts)
		switch {
		case tc.want == "" && (err != nil || len(x) != 2 || x[0] != 1 || x[1] != 3):
			t.Errorf("%s: %v, X %v", tc.name, err, x)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
	if _, err := decode.Open(context.Background(), dir, nil, decode.Options{Files: dataset.Options{Format: dataset.CSV}, Columns: columns.Spec{X: []string{"a"}}}); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("directory: error %v", err)
	}
}
