package decode_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
)

// TestLocate reads two files as one dataset in blocks that straddle them and
// finds the file and the row in it of rows of the dataset.
func TestLocate(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	os.WriteFile(a, []byte("x,y\n1,1\n2,2\n3,3\n"), 0o644)
	os.WriteFile(b, []byte("x,y\n4,4\n5,5\n"), 0o644)
	r, err := decode.OpenDataset(context.Background(), []string{a, b}, nil, decode.Options{Columns: columns.Spec{X: []string{"x"}, Y: []string{"y"}}, BatchSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	for row, want := range []struct {
		file string
		row  int64
	}{{a, 0}, {a, 1}, {a, 2}, {b, 0}, {b, 1}} {
		file, fileRow, ok := r.Locate(int64(row))
		if !ok || file != want.file || fileRow != want.row {
			t.Errorf("row %d: %s row %d (%v), want %s row %d", row, file, fileRow, ok, want.file, want.row)
		}
	}
	if _, _, ok := r.Locate(-1); ok {
		t.Error("row -1 located")
	}
}
