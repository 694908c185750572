package main

import (
	"bytes"
	"context"
	"flag"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/options/jobopts"
	"strings"
	"testing"
)

// TestRunnerNamedAsGiven: an unknown runner is named as the user gave it.
// Before, --runner nosuchrunner was reported as "nosuch".
func TestRunnerNamedAsGiven(t *testing.T) {
	o := options{runner: "nosuchrunner"}
	o.est.X, o.est.Y = "a", "b"
	o.inputs = inputList{t.TempDir()}
	var out, errb bytes.Buffer
	code := run(context.Background(), o, &out, &errb)
	if code != 2 || !strings.Contains(errb.String(), `--runner "nosuchrunner"`) {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// TestAsyncLocalRefused: --async with a runner whose workers run in this
// process is a usage error, one line, exit 2. Before, the job's workers died
// with the launcher and the SDK panicked with a stack trace.
func TestAsyncLocalRefused(t *testing.T) {
	old := *jobopts.Async
	*jobopts.Async = true
	defer func() { *jobopts.Async = old }()
	for _, runner := range []string{"prism", "direct"} {
		fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
		var o options
		o.register(fs)
		var out, errb bytes.Buffer
		if _, ok := parseFlags(fs, []string{"--input", t.TempDir(), "--x", "a", "--y", "b"}, &errb, false); !ok {
			t.Fatalf("flags: %s", errb.String())
		}
		o.runner = runner
		code := run(context.Background(), o, &out, &errb)
		if code != 2 || strings.Count(errb.String(), "\n") != 1 || !strings.Contains(errb.String(), "--async") {
			t.Errorf("%s: exit %d, stderr %q", runner, code, errb.String())
		}
	}
}

// TestFlagErrorOneLine: a bad flag is one line and exit 2, and -h the
// usage with exit 0. Before, a bad flag printed the 60-line usage.
func TestFlagErrorOneLine(t *testing.T) {
	for _, c := range []struct {
		args  []string
		code  int
		lines int
	}{
		{[]string{"--nosuchflag"}, 2, 1},
		{[]string{"--features", "many"}, 2, 1},
		{[]string{"--sigma", "wide"}, 2, 1},
		{[]string{"--kernel", "cosine"}, 2, 1},
	} {
		fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
		var o options
		o.register(fs)
		var out bytes.Buffer
		code, ok := parseFlags(fs, c.args, &out, false)
		if ok || code != c.code || strings.Count(out.String(), "\n") != c.lines || !strings.HasPrefix(out.String(), "dimebeam: ") {
			t.Errorf("%v: exit %d, output %q", c.args, code, out.String())
		}
	}
	fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
	var o options
	o.register(fs)
	var out bytes.Buffer
	if code, ok := parseFlags(fs, []string{"-h"}, &out, false); ok || code != 0 || !strings.Contains(out.String(), "usage: dimebeam") {
		t.Errorf("-h: exit %d, output %.80q", code, out.String())
	}
}
