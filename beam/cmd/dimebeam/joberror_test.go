package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/vocab"
)

// writeCSV writes a CSV file of the header and rows of three columns
// (u, v and w: v depends on u), with text in place of the value of row bad
// of column v (none for bad < 0).
func writeCSV(t *testing.T, path, header string, rows, bad int, text string) {
	t.Helper()
	var b strings.Builder
	b.WriteString(header + "\n")
	for i := range rows {
		u := math.Sin(float64(i) * 0.7)
		v := fmt.Sprintf("%.6f", u*u+0.1*math.Cos(float64(i)))
		if i == bad {
			v = text
		}
		fmt.Fprintf(&b, "%.6f,%s,%.6f\n", u, v, math.Cos(float64(i)*1.3))
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestWorkerErrorKinds: an error that only a stage of the pipeline can
// find (in a file that the launcher does not read: no pilot is needed, and
// dimebeam.Check opens the first file only) is classified by its kind,
// which crosses the runner in the stage's error (dimebeam.TagJobError,
// ReadJobError), not by its text: a value that is not a number and a
// column missing from one file of the dataset are the input's, exit 2; an
// output or a state that cannot be created (its temporary's name is too
// long, as for root) is the machine's, exit 1. Each is one line on stderr,
// the stage's message. Before, every stage error whose text began with
// "dimebeam: " was exit 2, a failure to write the output included.
func TestWorkerErrorKinds(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	badValue := filepath.Join(dir, "bad-value")
	noColumn := filepath.Join(dir, "no-column")
	for _, d := range []string{good, badValue, noColumn} {
		os.Mkdir(d, 0o755)
		writeCSV(t, filepath.Join(d, "a.csv"), "u,v,w", 300, -1, "")
	}
	writeCSV(t, filepath.Join(good, "b.csv"), "u,v,w", 300, -1, "")
	writeCSV(t, filepath.Join(badValue, "b.csv"), "u,v,w", 300, 7, "oops")
	writeCSV(t, filepath.Join(noColumn, "b.csv"), "u,x,w", 300, -1, "")
	// The base name fits (255 bytes), but not that of the temporary file
	// next to it (".NAME.tmp-…").
	long := filepath.Join(dir, strings.Repeat("r", 240)+".json")
	flags := []string{"--x", "u", "--y", "v,w", "--sigma", "1", "--standardize=false", "--features", "8"}
	for _, c := range []struct {
		name  string
		args  []string
		code  int
		want  string
		never string // a file that must not be written
	}{
		{"a value that is not a number", []string{"--input", badValue}, 2, `b.csv: column "v", row 7: text "oops" is not a number`, ""},
		{"a column missing from one file", []string{"--input", noColumn}, 2, `b.csv: no column "v"`, ""},
		{"an output that cannot be created", []string{"--input", good, "--output", long}, 1, "file name too long", long},
		{"a state that cannot be created", []string{"--input", good, "--save-state", long}, 1, "file name too long", long},
	} {
		args := append(c.args, flags...)
		// The launcher finds nothing wrong: only a stage can.
		o := parseOptions(t, args)
		cfg, inputs, err := o.config()
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		d, err := dimebeam.Resolve(context.Background(), inputs, cfg)
		if err != nil {
			t.Fatalf("%s: the launcher's dataset: %v", c.name, err)
		}
		// No pilot to read: ChoosePilot checks the first file's columns.
		if _, _, err := dimebeam.ChoosePilot(context.Background(), d, cfg); err != nil {
			t.Fatalf("%s: the launcher's pilot and check: %v", c.name, err)
		}
		code, out, errs := runCmd(t, args...)
		t.Logf("%s: exit %d: %s", c.name, code, strings.TrimSpace(errs))
		if code != c.code || out != "" || !strings.HasPrefix(errs, "dimebeam: ") || strings.HasPrefix(errs, "dimebeam: dimebeam: ") ||
			strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "dimebeam-job-error") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d and one line with %q", c.name, code, out, errs, c.code, c.want)
		}
		if c.never != "" {
			if _, err := os.Stat(c.never); err == nil {
				t.Errorf("%s: wrote %s", c.name, c.never)
			}
		}
	}
	// The same files score when they are good, and the long name is the
	// only thing wrong with the output.
	if code, _, errs := runCmd(t, append([]string{"--input", good}, flags...)...); code != 0 {
		t.Errorf("the good files: exit %d: %s", code, errs)
	}
}

// TestRankWorkerInputError: an invalid value that only a stage of dimebeam
// rank reads (the pilot reads the first 100 rows of the first file) is the
// input's: exit 2, one line naming it.
func TestRankWorkerInputError(t *testing.T) {
	dir := t.TempDir()
	writeCSV(t, filepath.Join(dir, "a.csv"), "y,x1,x2", 300, -1, "")
	writeCSV(t, filepath.Join(dir, "b.csv"), "y,x1,x2", 300, 5, "oops")
	code, out, errs := runRank(t, "--y", "y", "--x", "x*", "--features", "8", "--pilot-rows", "100", dir)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, `b.csv: column "x1", row 5: text "oops" is not a number`) {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2 and one line naming the value", code, out, errs)
	}
}

// TestJobError: the launcher's reading of beam.Run's error. A stage's
// tagged error is returned with its message and kind, wherever the runner
// put it; an error that no stage tagged (the runner or the connection to
// it failed) is a failure, the runner's message on one line.
func TestJobError(t *testing.T) {
	if jobError(nil) != nil {
		t.Error("jobError(nil) is not nil")
	}
	tagged := dimebeam.TagJobError(vocab.Errorf("a.csv: no column \"v\""))
	err := jobError(fmt.Errorf("job failed:\n\tstage-002 failed:\n%v\n\tgoroutine 7", tagged))
	if !vocab.IsUsage(err) || err.Error() != `dimebeam: a.csv: no column "v"` {
		t.Errorf("a stage's input error: %q, usage %v", err, vocab.IsUsage(err))
	}
	err = jobError(fmt.Errorf("job failed:\n%v", dimebeam.TagJobError(errors.New("writing r.json: no space left on device"))))
	if vocab.IsUsage(err) || err.Error() != "dimebeam: writing r.json: no space left on device" {
		t.Errorf("a stage's failure: %q, usage %v", err, vocab.IsUsage(err))
	}
	err = jobError(errors.New("failed to connect to the job server:\n\tcaused by:\n\trpc error: code = Unavailable desc = dimebeam: connection refused"))
	if vocab.IsUsage(err) || err.Error() != "failed to connect to the job server: caused by: rpc error: code = Unavailable desc = dimebeam: connection refused" {
		t.Errorf("the runner's failure: %q, usage %v", err, vocab.IsUsage(err))
	}
}

// parseOptions parses dimebeam's flags as runCmd does.
func parseOptions(t *testing.T, args []string) options {
	t.Helper()
	fs := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
	var o options
	o.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	o.args = fs.Args()
	return o
}
