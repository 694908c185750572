package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/dime-project/dime/synth"
)

// TestEmbeddingSlices scores slices of a fixed-size list column: --x
// 'emb[0:2]' --y 'emb[2:]' gives what the same values as separate columns
// give, and the report names the slices.
func TestEmbeddingSlices(t *testing.T) {
	const n = 400
	xm, ym, err := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 4}, n)
	if err != nil {
		t.Fatal(err)
	}
	x, y := xm.RawMatrix().Data, ym.RawMatrix().Data
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "emb", Type: arrow.FixedSizeListOf(4, arrow.PrimitiveTypes.Float64)},
		{Name: "e0", Type: arrow.PrimitiveTypes.Float64}, {Name: "e1", Type: arrow.PrimitiveTypes.Float64},
		{Name: "e2", Type: arrow.PrimitiveTypes.Float64}, {Name: "e3", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	l := b.Field(0).(*array.FixedSizeListBuilder)
	for i := 0; i < n; i++ {
		row := []float64{x[2*i], x[2*i+1], y[2*i], y[2*i+1]}
		l.Append(true)
		l.ValueBuilder().(*array.Float64Builder).AppendValues(row, nil)
		for j, v := range row {
			b.Field(1 + j).(*array.Float64Builder).Append(v)
		}
	}
	rec := b.NewRecord()
	defer rec.Release()
	// An Arrow IPC file: Arrow Go v15's Parquet writer can write a
	// fixed-size list's values as nulls (apache/arrow-go#584); the io tests
	// cover slices of Parquet lists.
	path := filepath.Join(t.TempDir(), "emb.arrow")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := ipc.NewFileWriter(f, ipc.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	common := []string{"score", path, "--features", "16", "--json"}
	code, sliced, errs := runBinary(t, nil, append(common, "--x", "emb[0:2]", "--y", "emb[2:]")...)
	if code != 0 || errs != "" {
		t.Fatalf("slices: exit %d, %q", code, errs)
	}
	code, named, errs := runBinary(t, nil, append(common, "--x", "e0,e1", "--y", "e2,e3")...)
	if code != 0 || errs != "" {
		t.Fatalf("columns: exit %d, %q", code, errs)
	}
	s, c := decodeJSON(t, sliced), decodeJSON(t, named)
	for _, k := range []string{"rows", "sigma_x", "sigma_y", "entropy_joint", "dime", "dime_analytic"} {
		if s[k] != c[k] { // the same values in the same order: the same floating-point operations
			t.Errorf("%s: slices %v, columns %v", k, s[k], c[k])
		}
	}
	if xs, _ := s["x_columns"].([]any); len(xs) != 1 || xs[0] != "emb[0:2]" {
		t.Errorf("x_columns %v", s["x_columns"])
	}
	if ys, _ := s["y_columns"].([]any); len(ys) != 1 || ys[0] != "emb[2:4]" {
		t.Errorf("y_columns %v", s["y_columns"])
	}
	// Elements read twice are allowed, with a warning, as a column given twice.
	for _, c := range []struct {
		x, y string
		want []string
	}{
		{"emb[0:2],emb[1:3]", "e0", []string{`"emb[0:2]" and "emb[1:3]" share elements of "emb" in X; each copy counts`}},
		{"emb", "emb[3:]", []string{`"emb" and "emb[3:4]" share elements of "emb" in X and Y`}},
		{"emb[0:2]", "emb[2:]", nil},
		{"emb[:2],emb[:2]", "e0", []string{`column "emb[0:2]" is in X more than once`}},
	} {
		code, _, errs := runBinary(t, nil, "score", path, "--features", "16", "--x", c.x, "--y", c.y)
		if code != 0 || strings.Count(errs, "\n") != len(c.want) {
			t.Errorf("--x %s --y %s: exit %d, stderr %q", c.x, c.y, code, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(errs, "dime: warning: "+w) {
				t.Errorf("--x %s --y %s: stderr %q, want %q", c.x, c.y, errs, w)
			}
		}
	}
	code, _, errs = runBinary(t, nil, "score", path, "--x", "emb[2:5]", "--y", "e0")
	if code != 2 || !strings.Contains(errs, `slice [2:5]: ends at element 5, past the list's 4`) || strings.Count(errs, "\n") != 1 {
		t.Errorf("slice past the list: exit %d, %q", code, errs)
	}
}
