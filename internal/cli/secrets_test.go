package cli

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/dimetest/planted"
	"github.com/dime-project/dime/dimetest/s3test"
)

// TestNoSecretsInAnyCommand: credentials planted in an input's URL (the
// user information of s3://KEY:SECRET@bucket/…, a SAS-style sig=… and a
// signed URL's X-Amz-Signature=… in its query) and in the environment
// (AZURE_STORAGE_SAS_TOKEN) appear on no command's stdout or stderr, in
// neither --json nor the table, nor in any file it writes (--save-state,
// --plot), nor in the message about a flag's bad value: for every command
// that reads a dataset or a state, on the loopback S3 server when the read
// succeeds and when the object is absent, and for an Azure endpoint whose
// port refuses connections.
func TestNoSecretsInAnyCommand(t *testing.T) {
	srv := s3test.Start(t, "bucket")
	var csv strings.Builder
	csv.WriteString("x,y,z\n")
	for i := range 60 {
		fmt.Fprintf(&csv, "%d,%d,%d\n", i%7, (i*i)%11, (i*3)%5)
	}
	srv.Put(t, "bucket", "a.csv", []byte(csv.String()))
	srv.Put(t, "bucket", "b.csv", []byte(csv.String()))
	dir := t.TempDir()
	// Planted secrets: every URL below holds one or more of them.
	userinfo := func(key string) string { return planted.UserInfo(srv, "bucket", key) }
	sas := func(key string) string { return planted.SAS(srv, "bucket", key) }
	signed := func(key string) string { return planted.Signed(srv, "bucket", key) }
	// A state of the data, for merge and monitor --baseline, written by
	// score from an input with planted credentials: the state must not
	// keep them either.
	state, other := filepath.Join(dir, "a.state"), filepath.Join(dir, "b.state")
	for _, s := range []struct{ in, path string }{{"a.csv", state}, {"b.csv", other}} {
		code, out, errs := runBinaryIn(t, dir, nil, "score", userinfo(s.in), "--x", "x", "--y", "y", "--features", "8", "--save-state", s.path)
		if code != 0 || strings.Contains(out+errs, planted.Mark) {
			t.Fatalf("score --save-state %s: exit %d, stdout %q, stderr %q", s.path, code, out, errs)
		}
	}

	// Each command that reads a dataset, with the flags it needs.
	type command struct {
		name  string
		flags []string
	}
	commands := []command{
		{"score", []string{"--x", "x", "--y", "y", "--features", "8"}},
		{"monitor", []string{"--x", "x", "--y", "y", "--features", "8", "--window-rows", "20"}},
		{"exact", []string{"--x", "x", "--y", "y"}},
		{"compare", []string{"--x", "x", "--y", "y", "--sample", "40", "--features", "8"}},
		{"sweep", []string{"--x", "x", "--y", "y", "--sample", "40"}},
		{"rank", []string{"--y", "y", "--x", "x,z", "--features", "8"}},
		{"matrix", []string{"--cols", "x,y,z", "--features", "8"}},
	}
	type run struct {
		args []string
		code int
	}
	var runs []run
	for _, c := range commands {
		with := func(in string, more ...string) []string {
			return append(append([]string{c.name, in}, c.flags...), more...)
		}
		runs = append(runs,
			run{with(userinfo("a.csv"), "--json"), 0},
			run{with(userinfo("a.csv"), "--json=false"), 0},
			run{with(userinfo("missing.csv"), "--json"), 2},
			run{with(userinfo("dir/"), "--json"), 2},
			// Parameters an s3:// URL does not take: refused, never echoed.
			run{with(sas("a.csv"), "--json"), 2},
			run{with(signed("a.csv"), "--json"), 2},
		)
	}
	// Files written: a state and a plot of a successful read.
	runs = append(runs,
		run{[]string{"rank", userinfo("a.csv"), "--y", "y", "--x", "x,z", "--features", "8", "--save-state", filepath.Join(dir, "rank.state")}, 0},
		run{[]string{"matrix", userinfo("a.csv"), "--cols", "x,y,z", "--features", "8", "--plot", filepath.Join(dir, "heat.svg")}, 0},
		run{[]string{"monitor", userinfo("a.csv"), "--x", "x", "--y", "y", "--window-rows", "20", "--baseline", state}, 0},
		run{[]string{"monitor", userinfo("a.csv"), "--x", "x", "--y", "y", "--window-rows", "20", "--save-state", filepath.Join(dir, "m.state")}, 0},
		run{[]string{"merge", state, other, "--json"}, 0},
		run{[]string{"merge", state, other, "--save-state", filepath.Join(dir, "merged.state")}, 0},
		// A flag's bad value is echoed without its secrets.
		run{[]string{"score", userinfo("a.csv"), "--x", "x", "--y", "y", "--features", sas("x")}, 2},
		// merge reads local files only: a URL is a path that does not exist.
		run{[]string{"merge", state, userinfo("s.state")}, 2},
		run{[]string{"merge", sas("s.state"), signed("s.state")}, 2},
		run{[]string{"monitor", userinfo("a.csv"), "--x", "x", "--y", "y", "--window-rows", "20", "--baseline", userinfo("s.state")}, 2},
	)
	for _, r := range runs {
		code, out, errs := runBinaryIn(t, dir, nil, r.args...)
		if code != r.code {
			t.Errorf("%s: exit %d, want %d: %s", strings.Join(r.args, " "), code, r.code, errs)
		}
		if strings.Contains(out+errs, planted.Mark) {
			t.Errorf("%s: a planted secret in the output:\nstdout %q\nstderr %q", strings.Join(r.args, " "), out, errs)
		}
		if code != 0 && (out != "" || strings.Count(errs, "\n") != 1) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want one line on stderr only", strings.Join(r.args, " "), code, out, errs)
		}
	}
	if planted.CheckFiles(t, dir) == 0 {
		t.Errorf("no files written under %s", dir)
	}

	// An Azure SAS token in the environment, and an endpoint that refuses
	// connections: the transport error quotes the request's URL.
	planted.AzureRefused(t)
	for _, c := range commands {
		args := append(append([]string{c.name, "azblob://c/a.csv"}, c.flags...), "--json", "--stall-timeout", "5s")
		code, out, errs := runBinaryIn(t, dir, nil, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || strings.Contains(out+errs, planted.Mark) {
			t.Errorf("%s with a SAS token: exit %d, stdout %q, stderr %q; want exit 2 and one line without the token", strings.Join(args, " "), code, out, errs)
		}
	}
	planted.CheckFiles(t, dir)
}
