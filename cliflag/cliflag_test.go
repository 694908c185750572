package cliflag

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

func parse(t *testing.T, args ...string) (*Estimator, *Input, error) {
	t.Helper()
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var e Estimator
	var in Input
	e.Register(fs)
	e.RegisterRFF(fs)
	e.RegisterRows(fs)
	e.RegisterPilot(fs)
	in.Register(fs)
	return &e, &in, fs.Parse(args)
}

// TestDefaults: the flags at their defaults give stream.DefaultConfig's
// estimator settings.
func TestDefaults(t *testing.T) {
	e, in, err := parse(t, "--x", "a", "--y", "b,c")
	if err != nil {
		t.Fatal(err)
	}
	c, err := e.StreamConfig([]string{"a"}, []string{"b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	d := stream.DefaultConfig()
	if c.Kernel != d.Kernel || c.Alpha != d.Alpha || c.Features != d.Features || c.Groups != d.Groups || c.Precision != d.Precision ||
		c.Seed != d.Seed || c.Standardize != d.Standardize || c.Jackknife != d.Jackknife || c.Permutations != 0 || c.PilotRows != stream.DefaultPilotRows {
		t.Errorf("config %+v, defaults %+v", c, d)
	}
	opts, err := in.Options([]string{"a"}, []string{"b"})
	if err != nil || opts.Values.MaxAbs != vocab.MaxAbsValue || opts.Values.SkipInvalid {
		t.Errorf("options %+v, %v: want MaxAbs %g", opts, err, vocab.MaxAbsValue)
	}
}

// TestTextFlags: the vocabulary binds to flags by its text, and a bad
// value fails at parse time naming the flag.
func TestTextFlags(t *testing.T) {
	e, _, err := parse(t, "--kernel", "Laplacian", "--sigma", "median", "--sigma-y", "0.5", "--precision", "float64", "--rows", "serial")
	if err != nil {
		t.Fatal(err)
	}
	bx, by := e.Bandwidths()
	if e.Kernel != vocab.Laplacian || bx != vocab.Median() || by != vocab.Sigma(0.5) || e.Precision != vocab.Float64 || e.Rows != vocab.SerialRows {
		t.Errorf("kernel %v, bandwidths %v %v, precision %v, rows %v", e.Kernel, bx, by, e.Precision, e.Rows)
	}
	for _, args := range [][]string{{"--kernel", "cosine"}, {"--sigma", "wide"}, {"--sigma-x", "-1"}, {"--variant", "sparse"}, {"--precision", "float16"}, {"--rows", "daily"}, {"--features", "64,256"}} {
		if _, _, err := parse(t, args...); err == nil || !strings.Contains(err.Error(), args[0][1:]) {
			t.Errorf("%v: %v, want an error naming the flag", args, err)
		}
	}
}

// TestChecks: out-of-range values are usage errors naming the flag.
func TestChecks(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--features", "0"}, "--features 0"},
		{[]string{"--groups", "0"}, "--groups 0"},
		{[]string{"--alpha", "-1"}, "--alpha -1"},
		{[]string{"--permutations", "-1"}, "--permutations -1"},
		{[]string{"--variant", "orthogonal", "--kernel", "laplacian"}, "--variant orthogonal needs --kernel gaussian"},
		{[]string{"--rows", "serial", "--permutations", "2"}, "--rows serial needs the analytic estimator"},
		{[]string{"--pilot-rows", "1"}, "--pilot-rows 1"},
		{[]string{"--shuffle-buffer", "-3"}, "--shuffle-buffer -3"},
	} {
		e, _, err := parse(t, c.args...)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.StreamConfig([]string{"a"}, []string{"b"})
		if err == nil || !strings.Contains(err.Error(), c.want) || !vocab.IsUsage(err) {
			t.Errorf("%v: %v, want a usage error with %q", c.args, err, c.want)
		}
	}
	e, in, _ := parse(t, "--batch-size", "0")
	if _, err := in.Options(nil, nil); err == nil || !vocab.IsUsage(err) {
		t.Errorf("--batch-size 0: %v", err)
	}
	if _, _, err := e.Views(); err == nil || !strings.Contains(err.Error(), "--x is required") {
		t.Errorf("no --x: %v", err)
	}
	e, _, _ = parse(t, "--like", "ref.state", "--features", "64")
	if err := e.CheckLike(); err == nil || !strings.Contains(err.Error(), "--features with --like") {
		t.Errorf("--like with --features: %v", err)
	}
}

// TestPilotRowsAlone: RegisterPilotRows adds --pilot-rows without --like,
// and ExactConfig checks it as StreamConfig does.
func TestPilotRowsAlone(t *testing.T) {
	for _, tc := range []struct {
		rows string
		bad  bool
	}{{"1", true}, {"2", false}, {"4096", false}, {"99999999", true}} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var e Estimator
		e.Register(fs)
		e.RegisterPilotRows(fs)
		if fs.Lookup("like") != nil {
			t.Fatal("RegisterPilotRows added --like")
		}
		if err := fs.Parse([]string{"--permutations", "5", "--pilot-rows", tc.rows}); err != nil {
			t.Fatal(err)
		}
		_, err := e.ExactConfig()
		if bad := err != nil; bad != tc.bad || bad && !strings.Contains(err.Error(), "--pilot-rows "+tc.rows+": want 2 to") {
			t.Errorf("--pilot-rows %s: %v", tc.rows, err)
		}
	}
}

// TestApplyLike: without --like the config is kept and nothing is read;
// an estimator flag given with --like is refused before the state is read.
func TestApplyLike(t *testing.T) {
	read := func(string) (*stream.Estimator, error) {
		t.Fatal("the state was read")
		return nil, nil
	}
	e, _, err := parse(t, "--x", "a", "--y", "b")
	if err != nil {
		t.Fatal(err)
	}
	c := stream.DefaultConfig()
	if got, err := e.ApplyLike(c, read, nil, nil); err != nil || got.Features != c.Features {
		t.Errorf("without --like: %v", err)
	}
	e, _, err = parse(t, "--x", "a", "--y", "b", "--like", "s.state", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.ApplyLike(c, read, nil, nil); err == nil || !strings.Contains(err.Error(), "--seed with --like") {
		t.Errorf("--seed with --like: %v", err)
	}
}
