package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/dimetest/planted"
	"github.com/dime-project/dime/dimetest/s3test"
)

// TestNoSecrets: credentials planted in an input's URL (the user
// information of s3://KEY:SECRET@bucket/…, a SAS-style sig=… and a signed
// URL's X-Amz-Signature=… in its query), in an output's URL and in the
// environment (AZURE_STORAGE_SAS_TOKEN) appear in none of dimebeam's
// stdout, stderr, result or state: on the loopback S3 server when the read
// succeeds and when the object is absent, and for an Azure endpoint whose
// port refuses connections.
func TestNoSecrets(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "a.parquet")
	gen(t, data, 3000, 11)
	srv := s3test.Start(t, "bucket")
	srv.PutFile(t, "bucket", "a.parquet", data)
	os.Remove(data)
	userinfo := func(key string) string { return planted.UserInfo(srv, "bucket", key) }
	sas := func(key string) string { return planted.SAS(srv, "bucket", key) }
	signed := func(key string) string { return planted.Signed(srv, "bucket", key) }
	result, state := filepath.Join(dir, "r.json"), filepath.Join(dir, "s.state")
	for _, c := range []struct {
		args []string
		code int
	}{
		{append([]string{"--input", userinfo("a.parquet"), "--output", result, "--save-state", state}, flags...), 0},
		{append([]string{"--input", userinfo("missing.parquet")}, flags...), 2},
		{append([]string{"--input", userinfo("dir/")}, flags...), 2},
		{append([]string{"--input", sas("a.parquet")}, flags...), 2},
		{append([]string{"--input", signed("a.parquet")}, flags...), 2},
		// An output on a store that has no file system here, or that
		// cannot be reached: the failure names it without the secret.
		{append([]string{"--input", userinfo("a.parquet"), "--output", "azblob://AKIAPLANTEDKEY:PLANTEDSECRET@c/r.json?sig=PLANTEDSIG"}, flags...), -1},
	} {
		code, out, errs := runCmd(t, c.args...)
		if c.code >= 0 && code != c.code || c.code < 0 && code == 0 {
			t.Errorf("%v: exit %d, want %d: %s", c.args[:4], code, c.code, errs)
		}
		if strings.Contains(out+errs, planted.Mark) {
			t.Errorf("%v: a planted secret in the output:\nstdout %q\nstderr %q", c.args[:4], out, errs)
		}
		if code == 0 && !strings.Contains(out, `"input":"s3://REDACTED@bucket/a.parquet?`) {
			t.Errorf("%v: the input is not named: %q", c.args[:4], out)
		}
		if code != 0 && (out != "" || strings.Count(errs, "\n") != 1) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want one line on stderr only", c.args[:4], code, out, errs)
		}
	}

	// An Azure SAS token in the environment, and an endpoint that refuses
	// connections: the transport error quotes the request's URL.
	planted.AzureRefused(t)
	t.Setenv("DIME_STALL_TIMEOUT", "5s")
	code, out, errs := runCmd(t, append([]string{"--input", "azblob://c/a.parquet"}, flags...)...)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || strings.Contains(out+errs, planted.Mark) {
		t.Errorf("azblob with a SAS token: exit %d, stdout %q, stderr %q; want exit 2 and one line without the token", code, out, errs)
	}

	// A flag's bad value is echoed without its secrets.
	fset := flag.NewFlagSet("dimebeam", flag.ContinueOnError)
	var o options
	o.register(fset)
	var msg strings.Builder
	if code, ok := parseFlags(fset, []string{"--features", userinfo("x") + "&sig=PLANTEDSIG"}, &msg, false); ok || code != 2 || strings.Contains(msg.String(), planted.Mark) {
		t.Errorf("a bad flag: exit %d, stderr %q; want exit 2 and no secret", code, msg.String())
	}

	if n := planted.CheckFiles(t, dir); n != 2 {
		t.Errorf("%d files written, want the result and the state", n)
	}
}

// TestNoSecretsAsync: with --async, the line that says where the result
// will be written names the output without its credentials. Before, it
// printed the URL as given. (The line alone: --async with Prism in this
// process ends the job with the process.)
func TestNoSecretsAsync(t *testing.T) {
	var b strings.Builder
	printSubmitted(&b, "s3://AKIAPLANTEDKEY:PLANTEDSECRET@bucket/r.json?X-Amz-Signature=PLANTEDSIG")
	if got, want := b.String(), "dimebeam: job submitted; the result will be written to s3://REDACTED@bucket/r.json?X-Amz-Signature=REDACTED\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
