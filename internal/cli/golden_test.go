package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// updateGolden rewrites testdata/golden from the current build:
//
//	go test ./internal/cli -run TestGoldenJSON -update-golden
//
// Only do that for a change that is meant to move a number, and say so in
// the commit.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*.json from this build")

// goldenRelTol is the relative tolerance on numbers: 0, the same bits.
const goldenRelTol = 0

// goldenVolatile are fields that differ from run to run by nature.
var goldenVolatile = map[string]bool{"elapsed_seconds": true}

// goldenCase is one command of the README's examples with its arguments;
// the inputs are written by dime gen in the test's directory first, and
// every path is relative to it, so the JSON names no temporary directory.
type goldenCase struct {
	name string
	args []string
}

// TestGoldenJSON pins the JSON of score, exact, compare, sweep, monitor and
// merge on the README's examples (smaller files, same commands): a
// restructuring of the code must leave every field identical, to the bit.
// The commands run the binary that TestMain builds without build tags (the
// pure-Go linear algebra), also under go test -tags openblas.
func TestGoldenJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs about 15 commands")
	}
	dir := t.TempDir()
	gen := [][]string{
		{"gen", "--kind", "people", "--rows", "4000", "--out", "people.csv"},
		{"gen", "--kind", "sine", "--dim", "2", "--rows", "20000", "--out", "data.parquet"},
		{"gen", "--kind", "sine", "--dim", "2", "--noise", "0.4", "--rows", "10000", "--seed", "7", "--out", "today.parquet"},
		{"gen", "--kind", "circle", "--dim", "3", "--rows", "5000", "--out", "circle.arrow"},
	}
	for _, args := range gen {
		if code, _, stderr := runBinaryIn(t, dir, nil, args...); code != 0 {
			t.Fatalf("dime %v: exit %d: %s", args, code, stderr)
		}
	}
	cases := []goldenCase{
		{"score_people", []string{"score", "people.csv", "--x", "age,income", "--y", "spend"}},
		{"score_people_null", []string{"score", "people.csv", "--x", "height", "--y", "spend"}},
		{"score_sine", []string{"score", "data.parquet", "--x", "x0,x1", "--y", "y0,y1"}},
		{"score_sine_auto", []string{"score", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--sigma", "auto"}},
		{"score_sine_raw_median", []string{"score", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--standardize=false", "--sigma", "median", "--variant", "orthogonal"}},
		{"score_circle_serial", []string{"score", "circle.arrow", "--x", "x0,x1,x2", "--y", "y0,y1,y2", "--rows", "serial"}},
		{"exact_sine", []string{"exact", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--sample", "512"}},
		{"compare_sine", []string{"compare", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--features", "64,256", "--sample", "512"}},
		{"sweep_sine", []string{"sweep", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--sample", "512"}},
		{"ref_state", []string{"score", "data.parquet", "--x", "x*", "--y", "y*", "--limit", "10000", "--save-state", "ref.state"}},
		{"monitor_baseline", []string{"monitor", "today.parquet", "--x", "x*", "--y", "y*", "--window-rows", "5000", "--baseline", "ref.state", "--alert-change-p", "0.01"}},
		{"monitor_plain", []string{"monitor", "data.parquet", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "10000", "--alert-p", "0.01"}},
		{"score_like", []string{"score", "today.parquet", "--x", "x0,x1", "--y", "y0,y1", "--like", "ref.state", "--save-state", "today.state"}},
		{"merge", []string{"merge", "ref.state", "today.state"}},
		{"score_baseline", []string{"score", "today.parquet", "--x", "x*", "--y", "y*", "--baseline", "ref.state"}},
	}
	for _, c := range cases {
		args := append(append([]string(nil), c.args...), "--json")
		code, stdout, stderr := runBinaryIn(t, dir, nil, args...)
		if code != 0 {
			t.Fatalf("%s: dime %v: exit %d: %s", c.name, args, code, stderr)
		}
		got := canonicalGolden(t, c.name, stdout)
		path := filepath.Join("testdata", "golden", c.name+".json")
		if *updateGolden {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update-golden to create it)", c.name, err)
		}
		if err := sameGolden(want, got); err != nil {
			t.Errorf("%s: dime %s: %v", c.name, strings.Join(args, " "), err)
		}
	}
}

// canonicalGolden decodes one JSON document per line of out, drops the
// volatile fields and re-encodes them indented with sorted keys, one
// document after another.
func canonicalGolden(t *testing.T, name, out string) []byte {
	t.Helper()
	var buf bytes.Buffer
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	for dec.More() {
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s: decoding the output: %v\n%s", name, err, out)
		}
		dropVolatile(v)
		b, err := json.MarshalIndent(v, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func dropVolatile(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if goldenVolatile[k] {
				delete(v, k)
				continue
			}
			dropVolatile(e)
		}
	case []any:
		for _, e := range v {
			dropVolatile(e)
		}
	}
}

// sameGolden compares two canonical documents: byte for byte when
// goldenRelTol is 0, else field by field with numbers to goldenRelTol.
func sameGolden(want, got []byte) error {
	if goldenRelTol == 0 {
		if bytes.Equal(want, got) {
			return nil
		}
	}
	decodeAll := func(b []byte) ([]any, error) {
		var docs []any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		for dec.More() {
			var v any
			if err := dec.Decode(&v); err != nil {
				return nil, err
			}
			docs = append(docs, v)
		}
		return docs, nil
	}
	w, err := decodeAll(want)
	if err != nil {
		return err
	}
	g, err := decodeAll(got)
	if err != nil {
		return err
	}
	var diffs []string
	if len(w) != len(g) {
		return fmt.Errorf("%d documents, want %d", len(g), len(w))
	}
	for i := range w {
		diffGolden(fmt.Sprintf("[%d]", i), w[i], g[i], &diffs)
	}
	if len(diffs) == 0 {
		if goldenRelTol == 0 {
			return fmt.Errorf("same values, different encoding:\n%s", got)
		}
		return nil
	}
	sort.Strings(diffs)
	if len(diffs) > 12 {
		diffs = append(diffs[:12], fmt.Sprintf("... and %d more", len(diffs)-12))
	}
	return fmt.Errorf("differs from testdata/golden:\n  %s", strings.Join(diffs, "\n  "))
}

func diffGolden(path string, w, g any, diffs *[]string) {
	switch w := w.(type) {
	case map[string]any:
		gm, ok := g.(map[string]any)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want an object", path, g))
			return
		}
		for k, wv := range w {
			gv, ok := gm[k]
			if !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: missing", path, k))
				continue
			}
			diffGolden(path+"."+k, wv, gv, diffs)
		}
		for k := range gm {
			if _, ok := w[k]; !ok {
				*diffs = append(*diffs, fmt.Sprintf("%s.%s: new field", path, k))
			}
		}
	case []any:
		ga, ok := g.([]any)
		if !ok || len(ga) != len(w) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, g, w))
			return
		}
		for i := range w {
			diffGolden(fmt.Sprintf("%s[%d]", path, i), w[i], ga[i], diffs)
		}
	case json.Number:
		gn, ok := g.(json.Number)
		if !ok {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, g, w))
			return
		}
		wf, err1 := w.Float64()
		gf, err2 := gn.Float64()
		if err1 != nil || err2 != nil {
			if w != gn {
				*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, gn, w))
			}
			return
		}
		if wf == gf {
			return
		}
		if goldenRelTol > 0 && math.Abs(wf-gf) <= goldenRelTol*math.Max(math.Abs(wf), math.Abs(gf)) {
			return
		}
		*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, gn, w))
	default:
		if fmt.Sprint(w) != fmt.Sprint(g) {
			*diffs = append(*diffs, fmt.Sprintf("%s: %v, want %v", path, g, w))
		}
	}
}
