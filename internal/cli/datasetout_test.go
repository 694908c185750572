package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestOutputsRefuseDatasetFiles: no output flag of any command writes over a
// file of the dataset it reads, however the dataset names it: a directory,
// a glob, a file:// URL, a hive partition, a symbolic link into it. Before,
// the check compared the arguments as typed, and score --save-state
// ds/part=0/a.parquet with the input ds/ replaced the Parquet file with a
// state (exit 0).
func TestOutputsRefuseDatasetFiles(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Sine, Dim: 1, Noise: 0.2, Seed: 3}
	for _, p := range []string{"part=0", "part=1"} {
		os.MkdirAll(filepath.Join(dir, "ds", p), 0o755)
	}
	writeData(t, filepath.Join(dir, "ds", "part=0", "a.parquet"), spec, 400)
	writeData(t, filepath.Join(dir, "ds", "part=1", "b.parquet"), spec, 400)
	os.Symlink("ds/part=1/b.parquet", filepath.Join(dir, "b-link.parquet"))
	// A dataset read with --format, where every file is data, even p.png.
	os.Mkdir(filepath.Join(dir, "csvds"), 0o755)
	writeData(t, filepath.Join(dir, "csvds", "p.csv"), spec, 400)
	os.Rename(filepath.Join(dir, "csvds", "p.csv"), filepath.Join(dir, "csvds", "p.png"))
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := "ds/part=0/a.parquet"
	cols := []string{"--x", "x0", "--y", "y0"}
	score := func(input, out string, extra ...string) []string {
		return append(append([]string{"score", input, "--features", "16", "--save-state", out}, cols...), extra...)
	}
	sample := func(cmd, input, out string) []string {
		return append([]string{cmd, input, "--format", "csv", "--sample", "50", "--plot", out}, cols...)
	}
	same := "input"
	runHostile(t, dir, []hostileCase{
		{name: "score dir onto a data file", args: score("ds", a), code: 2, want: []string{"--save-state " + a + ": ", same}},
		{name: "score dir/ onto a data file", args: score("ds/", "./ds//part=0/../part=0/a.parquet"), code: 2, want: []string{same}},
		{name: "score glob onto a data file", args: score("ds/**/*.parquet", a), code: 2, want: []string{same}},
		{name: "score file:// onto a data file", args: score("file://"+abs+"/ds/", a), code: 2, want: []string{same}},
		{name: "score absolute path onto a data file", args: score("ds", filepath.Join(abs, a)), code: 2, want: []string{same}},
		{name: "score --where partition onto its file", args: score("ds", "ds/part=1/b.parquet", "--where", "part=1"), code: 2, want: []string{same}},
		{name: "score dir onto a link into it, forced", args: score("ds", "b-link.parquet", "--force"), code: 2, want: []string{same}},
		{name: "compare dir onto a data file", args: sample("compare", "csvds", "csvds/p.png"), code: 2, want: []string{"--plot csvds/p.png: ", same}},
		{name: "sweep glob onto a data file", args: sample("sweep", "csv*/*", "./csvds/p.png"), code: 2, want: []string{"--plot ./csvds/p.png: ", same}},
		{name: "score dir, a new state", args: score("ds", "s.state"), code: 0, creates: []string{"s.state"}},
		{name: "monitor dir onto a data file", args: append([]string{"monitor", "ds", "--features", "16", "--window-rows", "200", "--save-state", a}, cols...), code: 2, want: []string{"--save-state " + a + ": ", same}},
		{name: "monitor glob onto a data file", args: append([]string{"monitor", "ds/**/*.parquet", "--features", "16", "--window-rows", "200", "--save-state", a}, cols...), code: 2, want: []string{same}},
		{name: "monitor dir, a new state", args: append([]string{"monitor", "ds", "--features", "16", "--window-rows", "200", "--save-state", "m.state"}, cols...), code: 0, creates: []string{"m.state"}},
	})
}
