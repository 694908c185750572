package cli

import (
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestScoreSignalPrintsPartial starts score on a pipe, writes one batch of
// 500 rows and keeps the pipe open (a stalled upstream): once the batch is
// added (the first progress line says so), SIGINT or SIGTERM makes score
// print the result of those 500 rows marked partial, save the state if
// asked, and exit 130 or 143.
func TestScoreSignalPrintsPartial(t *testing.T) {
	for _, c := range []struct {
		sig  syscall.Signal
		code int
		json bool
	}{{syscall.SIGINT, 130, true}, {syscall.SIGTERM, 143, false}} {
		state := filepath.Join(t.TempDir(), "partial.state")
		args := []string{"score", "-", "--x", "x0,x1", "--y", "y0,y1", "--features", "16", "--progress", "always", "--save-state", state, "--standardize=false"}
		if c.json {
			args = append(args, "--json")
		}
		cmd := exec.Command(dimeBinary, args...)
		stdin, _ := cmd.StdinPipe()
		var out, errb syncBuffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		tw, err := tablewriter.New(stdin, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 500})
		if err != nil {
			t.Fatal(err)
		}
		writeSynth(t, tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 5}, 500)
		// The 500th row sends the batch; the stream stays open.
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(errb.String(), "score: 500 rows") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		cmd.Process.Signal(c.sig)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		var werr error
		select {
		case werr = <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("%v: score did not stop; stderr %q", c.sig, errb.String())
		}
		stdin.Close()
		code := -1
		if ee, ok := werr.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		stderr := errb.String()
		if code != c.code || !strings.Contains(stderr, "interrupted by") {
			t.Errorf("%v: exit %d (%v), stderr %q", c.sig, code, werr, stderr)
		}
		if c.json {
			res := decodeJSON(t, out.String())
			if res["partial"] != true || num(t, res, "rows") != 500 || num(t, res, "dime") <= 0 {
				t.Errorf("%v: %v", c.sig, res)
			}
		} else if !strings.Contains(out.String(), "500 (partial") {
			t.Errorf("%v: table %q", c.sig, out.String())
		}
		// The saved state holds the same 500 rows.
		mcode, mout, merrs := runBinary(t, nil, "merge", state, "--json")
		if mcode != 0 || num(t, decodeJSON(t, mout), "rows") != 500 {
			t.Errorf("%v: merge of the saved state: exit %d, %s %s", c.sig, mcode, mout, merrs)
		}
	}
}

// TestScoreWholeInputNotPartial checks that a run that reads its input to
// the end says nothing of partial.
func TestScoreWholeInputNotPartial(t *testing.T) {
	in := ipcStream(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 6}, 1000, 250)
	code, out, errs := runBinary(t, in, "score", "-", "--x", "x0,x1", "--y", "y0,y1", "--features", "16", "--json")
	if res := decodeJSON(t, out); code != 0 || res["partial"] != nil || num(t, res, "rows") != 1000 {
		t.Errorf("exit %d %s: %v", code, errs, res)
	}
}

// TestRankSignalPrintsPartial sends SIGINT to rank once it has added its
// first block of a 300,000-row file: its reader, opened with the context
// that the signal cancels, stops, and rank prints the ranking of the rows
// read so far marked partial and exits 130.
func TestRankSignalPrintsPartial(t *testing.T) {
	path := filepath.Join(t.TempDir(), "screen.parquet")
	genScreenTable(t, path, 300000, 6, "31")
	cmd := exec.Command(dimeBinary, "rank", path, "--y", "y", "--x", "x*", "--features", "64", "--json", "--progress", "always")
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errb.String(), "rank: ") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("rank did not stop; stderr %q", errb.String())
	}
	code := -1
	if ee, ok := werr.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code != 130 || !strings.Contains(errb.String(), "interrupted by SIGINT") {
		t.Fatalf("exit %d (%v), stderr %q", code, werr, errb.String())
	}
	r := decodeRank(t, out.String())
	if res := decodeJSON(t, out.String()); res["partial"] != true || r.Rows < 2 || r.Rows >= 300000 || len(r.Candidates) != 6 {
		t.Errorf("partial %v, %d rows, %d candidates; want partial, 2 to 299,999 rows and 6", res["partial"], r.Rows, len(r.Candidates))
	}
}
