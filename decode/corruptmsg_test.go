package decode_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// TestCorruptFilesMessages flips bytes of small files in each Arrow format
// and reads each corrupted copy: every error is one line that names the
// file, and none shows the text of a Go runtime error (a corrupt Arrow file
// used to give "runtime error: slice bounds out of range", from panics that
// Arrow recovers into errors; issue 13, item 9).
func TestCorruptFilesMessages(t *testing.T) {
	dir := t.TempDir()
	for _, ext := range []string{"arrow", "arrows", "parquet"} {
		path := filepath.Join(dir, "small."+ext)
		w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", 3), tablewriter.Options{BatchRows: 16})
		if err != nil {
			t.Fatal(err)
		}
		data := make([]float64, 40*3)
		for i := range data {
			data[i] = float64(i%17) - 3.5
		}
		w.Write(data, 40)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		good, _ := os.ReadFile(path)
		bad := filepath.Join(dir, "bad."+ext)
		errs, runtimeErrs := 0, 0
		step := 3 // every third byte: the whole walk took a minute on 2 busy cores
		if testing.Short() {
			step = 7
		}
		for i := 0; i < len(good); i += step {
			for _, flip := range []byte{0x01, 0x80, 0xff} {
				corrupt := append([]byte(nil), good...)
				corrupt[i] ^= flip
				os.WriteFile(bad, corrupt, 0o644)
				r, err := decode.Open(context.Background(), bad, nil, decode.Options{Columns: columns.Spec{X: []string{"c0", "c1"}, Y: []string{"c2"}}})
				if err == nil {
					for r.Next() {
					}
					err = r.Err()
					r.Close()
				}
				if err == nil {
					continue
				}
				errs++
				msg := err.Error()
				if strings.Contains(msg, "runtime error") || strings.Contains(msg, "goroutine") || strings.Contains(msg, "nil pointer") {
					runtimeErrs++
					if runtimeErrs <= 3 {
						t.Errorf("%s byte %d ^ %#x: %s", ext, i, flip, msg)
					}
				}
				if !strings.Contains(msg, bad) || strings.Contains(msg, "\n") {
					t.Errorf("%s byte %d ^ %#x: not one line naming the file: %q", ext, i, flip, msg)
				}
			}
		}
		t.Logf("%s: %d bytes, %d errors, %d showing a runtime error", ext, len(good), errs, runtimeErrs)
	}
}
