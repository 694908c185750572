package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// writeShardState streams n rows of spec into an estimator and saves it.
func writeShardState(t *testing.T, path string, spec synth.Spec, n int, cfg stream.Config) {
	t.Helper()
	est, err := stream.New(spec.Dim, spec.Dim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	x, y, _ := synth.Generate(spec, n)
	if err := est.Add(x.RawMatrix().Data, y.RawMatrix().Data, n); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := est.WriteState(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := stream.DefaultConfig()
	cfg.Features = 16
	cfg.Standardize = false // shards of their own scales would not merge
	cfg.XColumns, cfg.YColumns = []string{"x0", "x1"}, []string{"y0", "y1"}
	a, b := filepath.Join(dir, "a.state"), filepath.Join(dir, "b.state")
	writeShardState(t, a, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}, 3000, cfg)
	writeShardState(t, b, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 2}, 2000, cfg)
	out := filepath.Join(dir, "ab.state")
	code, stdout, stderr := run(t, "merge", a, b, "--save-state", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var r struct {
		Estimator string   `json:"estimator"`
		Rows      int64    `json:"rows"`
		XColumns  []string `json:"x_columns"`
		DiME      float64  `json:"dime"`
	}
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	if r.Estimator != "rff" || r.Rows != 5000 || strings.Join(r.XColumns, ",") != "x0,x1" || !(r.DiME > 0.1) {
		t.Errorf("merged result %+v", r)
	}
	// The saved merge reads back to the same result.
	code, again, _ := run(t, "merge", out, "--json")
	var r2 struct {
		Rows int64   `json:"rows"`
		DiME float64 `json:"dime"`
	}
	json.Unmarshal([]byte(again), &r2)
	if code != 0 || r2.Rows != 5000 || math.Abs(r2.DiME-r.DiME) > 1e-12 {
		t.Errorf("saved merge: exit %d, %+v", code, r2)
	}

	// Bad inputs: each a one-line error and exit 2.
	other := cfg
	other.Features = 17
	c := filepath.Join(dir, "c.state")
	writeShardState(t, c, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 3}, 1500, other)
	garbage := filepath.Join(dir, "garbage.state")
	os.WriteFile(garbage, []byte("not a state at all"), 0o644)
	full, _ := os.ReadFile(a)
	truncated := filepath.Join(dir, "truncated.state")
	os.WriteFile(truncated, full[:len(full)/2], 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge"}, "at least one state"},
		{[]string{"merge", a, c}, "c.state"},
		{[]string{"merge", garbage}, "garbage.state: stream: invalid state: not a dime state"},
		{[]string{"merge", truncated}, "truncated.state"},
		{[]string{"merge", filepath.Join(dir, "missing.state")}, "no such file"},
	} {
		code, _, stderr := run(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
}
