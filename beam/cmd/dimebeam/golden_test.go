package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// updateGolden rewrites testdata/golden from the current build:
//
//	go test ./cmd/dimebeam -run TestGoldenJSON -update-golden
//
// Only do that for a change that is meant to move a number, and say so in
// the commit.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden/*.json from this build")

// goldenVolatile are fields that differ from run to run by nature.
var goldenVolatile = map[string]bool{"elapsed_seconds": true}

// TestGoldenJSON pins dimebeam's JSON on examples like those of
// docs/beam.md (smaller files, same commands) on Prism: one file (one
// split), a directory cut into several splits, --sigma auto and median, and
// --like a saved state. A restructuring of the code must leave every field
// identical, to the bit. Paths are relative to the test's directory, so the
// JSON names no temporary directory.
func TestGoldenJSON(t *testing.T) {
	if testing.Short() {
		t.Skip("runs several pipelines")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	gen(t, filepath.Join(dir, "one.parquet"), 3000, 5)
	for i, rows := range []int{1500, 2500, 3000} {
		gen(t, filepath.Join(dir, "data", fmt.Sprintf("part-%d.parquet", i)), rows, 30+i)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cases := []struct {
		name string
		args []string
	}{
		{"one_split", []string{"--input", "one.parquet", "--x", "x0,x1", "--y", "y0,y1", "--sigma", "1"}},
		{"splits", []string{"--input", "data", "--x", "x0,x1", "--y", "y0,y1", "--sigma", "1", "--split-rows", "2000", "--save-state", "all.state"}},
		{"splits_auto", []string{"--input", "data/part-*.parquet", "--x", "x0,x1", "--y", "y0,y1", "--sigma", "auto", "--split-rows", "2000"}},
		{"splits_median_perm", []string{"--input", "data", "--x", "x0,x1", "--y", "y0,y1", "--sigma", "median", "--features", "64", "--permutations", "3", "--precision", "float64", "--split-rows", "2500"}},
		{"like", []string{"--input", "one.parquet", "--x", "x0,x1", "--y", "y0,y1", "--like", "all.state"}},
	}
	for _, c := range cases {
		code, stdout, stderr := runCmd(t, c.args...)
		if code != 0 {
			t.Fatalf("%s: dimebeam %v: exit %d: %s", c.name, c.args, code, stderr)
		}
		got := canonicalGolden(t, c.name, stdout)
		path := filepath.Join(wd, "testdata", "golden", c.name+".json")
		if *updateGolden {
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v (run with -update-golden to create it)", c.name, err)
		}
		if !bytes.Equal(want, got) {
			t.Errorf("%s: dimebeam %s: differs from testdata/golden:\n%s\nwant\n%s", c.name, strings.Join(c.args, " "), got, want)
		}
	}
}

// canonicalGolden decodes the JSON document out, drops the volatile fields
// and re-encodes it indented with sorted keys.
func canonicalGolden(t *testing.T, name, out string) []byte {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: decoding the output: %v\n%s", name, err, out)
	}
	if dec.More() {
		t.Fatalf("%s: more than one document:\n%s", name, out)
	}
	for k := range goldenVolatile {
		delete(v, k)
	}
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}
