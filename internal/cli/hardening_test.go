package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dime-project/dime/dimetest/s3test"
)

// TestTinyMagnitudes: a column of valid values of magnitude 1e-200 is
// scored, monitored and compared without a panic. Before, the RFF-HSIC
// test's eigensolver panicked ("lapack: insufficient length of a").
func TestTinyMagnitudes(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("x,y\n")
	for i := range 600 {
		k := float64(i%37 + 1)
		fmt.Fprintf(&b, "%g,%g\n", k*1e-200, k*k*1e-200)
	}
	path := filepath.Join(dir, "tiny.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"score", path, "--x", "x", "--y", "y", "--features", "16", "--json"},
		{"monitor", path, "--x", "x", "--y", "y", "--features", "16", "--window-rows", "200"},
		{"compare", path, "--x", "x", "--y", "y", "--sample", "100", "--features", "16"},
	} {
		code, out, errs := run(t, args...)
		if code != 0 || out == "" {
			t.Errorf("%s: exit %d, stderr %q", args[0], code, errs)
		}
	}
}

// TestStatesFromDevicesAndDirectories: merge and monitor --baseline end with
// exit 2 and one line on /dev/zero, /dev/urandom and a directory. Before,
// /dev/zero was read whole (out of memory), /dev/urandom grew the process to
// 1.6 GB, and a directory exited 1.
func TestStatesFromDevicesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.csv")
	os.WriteFile(data, []byte("x,y\n1,2\n2,3\n3,5\n"), 0o644)
	for _, state := range []string{"/dev/zero", "/dev/urandom", dir} {
		for _, args := range [][]string{
			{"merge", state},
			{"monitor", data, "--x", "x", "--y", "y", "--window-rows", "2", "--baseline", state},
		} {
			code, out, errs := runBinaryIn(t, dir, nil, args...)
			if code != 2 || out != "" || !strings.HasPrefix(errs, "dime: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, state) {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line naming %s", args, code, out, errs, state)
			}
		}
	}
}

// TestNoSecretsInMessages: credentials planted in a URL's user information
// and in an Azure SAS token appear in no output or message of score (its
// --json input, its table, its errors), on a real S3-protocol server and a
// refused loopback port. Before, s3://KEY:SECRET@bucket/… was echoed in
// --json's input and in errors, and the SAS token's sig=… in transport
// errors.
func TestNoSecretsInMessages(t *testing.T) {
	srv := s3test.Start(t, "bucket")
	srv.Put(t, "bucket", "a.csv", []byte("x,y\n1,2\n2,3\n3,5\n4,4\n5,7\n"))
	withSecret := func(key string) string {
		return "s3://AKIAPLANTED:PLANTEDsecret@bucket/" + key + "?" + srv.Params()
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"score", withSecret("a.csv"), "--x", "x", "--y", "y", "--features", "8", "--json"}, 0},
		{[]string{"score", withSecret("a.csv"), "--x", "x", "--y", "y", "--features", "8"}, 0},
		{[]string{"score", withSecret("missing.csv"), "--x", "x", "--y", "y"}, 2},
		{[]string{"score", withSecret("a.csv"), "--x", "nope", "--y", "y"}, 2},
	} {
		code, out, errs := run(t, c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d: %s", c.args[1:], code, c.code, errs)
		}
		if strings.Contains(out+errs, "PLANTED") {
			t.Errorf("%v: a planted secret in the output: %q %q", c.args[1:], out, errs)
		}
		if c.code == 0 && !strings.Contains(out, "REDACTED@bucket/a.csv") {
			t.Errorf("%v: the input is not named: %q", c.args[1:], out)
		}
	}

	// An Azure SAS token in the environment, and a transport error that
	// quotes the request's URL.
	for k, v := range map[string]string{
		"AZURE_STORAGE_ACCOUNT": "devacct", "AZURE_STORAGE_DOMAIN": "127.0.0.1:1", "AZURE_STORAGE_PROTOCOL": "http",
		"AZURE_STORAGE_IS_LOCAL_EMULATOR": "true", "AZURE_STORAGE_SAS_TOKEN": "sv=2024-01-01&se=2030-01-01&sp=r&sig=PLANTEDsig%2B",
	} {
		t.Setenv(k, v)
	}
	code, out, errs := runBinaryIn(t, t.TempDir(), nil, "score", "azblob://c/a.csv", "--x", "x", "--y", "y")
	if code == 0 || strings.Contains(out+errs, "PLANTED") || !strings.Contains(errs, "sig=REDACTED") {
		t.Errorf("azblob with a SAS token: exit %d, stdout %q, stderr %q; want an error with sig=REDACTED", code, out, errs)
	}
}

// TestGCSWithoutCredentialsStdoutClean: gs:// without Google Cloud
// credentials is one line on stderr, exit 2, and nothing on stdout. Before,
// gocloud.dev printed "Warning: unable to load GCP Default Credentials" on
// stdout, ahead of the JSON.
func TestGCSWithoutCredentialsStdoutClean(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", filepath.Join(dir, "missing.json"))
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1") // never the metadata server
	code, out, errs := runBinaryIn(t, dir, nil, "score", "gs://bucket/a.csv", "--x", "x", "--y", "y", "--json")
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "no Google Cloud credentials") {
		t.Errorf("exit %d, stdout %q, stderr %q; want exit 2, no stdout, one line", code, out, errs)
	}
}

// TestHugeBatchSize: --batch-size 2000000000 on a small file reads it.
// Before, the dataset reader's blocks were made for that many rows and the
// process died with a runtime dump.
func TestHugeBatchSize(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.csv")
	os.WriteFile(path, []byte("x,y\n1,2\n2,3\n3,5\n4,4\n5,7\n"), 0o644)
	code, out, errs := run(t, "score", path, "--x", "x", "--y", "y", "--features", "8", "--batch-size", "2000000000", "--json")
	if code != 0 || !strings.Contains(out, `"rows":5`) {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestObjectStoreStall: an S3 endpoint on loopback that accepts and never
// answers ends the command after the stall timeout (--stall-timeout, or
// DIME_STALL_TIMEOUT) with exit 2 and one line that says so. Before, the
// command hung indefinitely.
func TestObjectStoreStall(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	}()
	t.Setenv("AWS_ACCESS_KEY_ID", "dime-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dime-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	url := "s3://bucket/a.csv?endpoint=" + "http%3A%2F%2F" + ln.Addr().String() + "&use_path_style=true&disable_https=true"
	for _, c := range []struct {
		args []string
		env  string
	}{
		{[]string{"--stall-timeout", "1s"}, ""},
		{nil, "1s"},
	} {
		t.Setenv("DIME_STALL_TIMEOUT", c.env)
		start := time.Now()
		code, out, errs := runBinaryIn(t, t.TempDir(), nil, append([]string{"score", url, "--x", "x", "--y", "y"}, c.args...)...)
		took := time.Since(start)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, "sent nothing for 1s") {
			t.Errorf("%v %s: exit %d, stdout %q, stderr %q; want exit 2 and one line about the stall", c.args, c.env, code, out, errs)
		}
		if took > 30*time.Second {
			t.Errorf("%v %s: took %v for a stall timeout of 1s", c.args, c.env, took)
		}
	}
}

// TestObjectStoreStallMidBody: an object on an S3 endpoint that sends part
// of a body and then nothing (s3test.StallAfter) ends score after the stall
// timeout with exit 2, one line naming the object and saying that the
// transfer stalled, and nothing on stdout: a Parquet object in the sampled
// pilot's read (no --sigma) and in the main read (--sigma), where the stall
// falls after the footer has been read, in the middle of a column chunk's
// ranged read; and a CSV object, read as one stream. Before, the pilot's
// read reported the stall as a corrupt file ("column "y0" gave 0 rows where
// "x0" gave 16384").
func TestObjectStoreStallMidBody(t *testing.T) {
	dir := t.TempDir()
	srv := s3test.Start(t, "lake")
	size := map[string]int64{}
	for _, name := range []string{"a.parquet", "a.csv"} {
		path := filepath.Join(dir, name)
		if code, _, errs := run(t, "gen", "--kind", "sine", "--dim", "2", "--rows", "40000", "--seed", "5", "--out", path); code != 0 {
			t.Fatalf("gen: %s", errs)
		}
		info, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		size["ds/"+name] = info.Size()
		srv.PutFile(t, "lake", "ds/"+name, path)
	}
	for _, c := range []struct {
		name, key string
		extra     []string
	}{
		{"Parquet, the pilot's read", "ds/a.parquet", nil},
		{"Parquet, the main read", "ds/a.parquet", []string{"--sigma", "1"}},
		{"CSV", "ds/a.csv", []string{"--sigma", "1"}},
	} {
		args := append([]string{"score", srv.URL("lake", c.key), "--x", "x0,x1", "--y", "y0,y1", "--features", "8", "--permutations", "2", "--stall-timeout", "1s", "--json"}, c.extra...)
		srv.Reset()
		if code, _, errs := runBinaryIn(t, dir, nil, args...); code != 0 {
			t.Fatalf("%s, before the stall: exit %d: %s", c.name, code, errs)
		}
		srv.Reset()
		half := int(size[c.key] / 2)
		srv.StallAfter("lake", c.key, half)
		start := time.Now()
		code, out, errs := runBinaryIn(t, dir, nil, args...)
		took := time.Since(start)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "dime: ") ||
			!strings.Contains(errs, "s3://lake/"+c.key) || !strings.Contains(errs, "sent nothing for 1s") || strings.Contains(errs, "panic") {
			t.Errorf("%s, stalled after %d of %d bytes: exit %d, stdout %q, stderr %q; want exit 2 and one line naming the object and the stall", c.name, half, size[c.key], code, out, errs)
		}
		if took > 30*time.Second {
			t.Errorf("%s: took %v for a stall timeout of 1s", c.name, took)
		}
		// A Parquet object's footer is read first, with GETs of its own.
		if n := len(srv.Gets(c.key)); n == 0 || strings.HasSuffix(c.key, ".parquet") && n < 2 {
			t.Errorf("%s: %d GETs: the stall came before the footer was read", c.name, n)
		}
	}
}

// TestGenFilesInterrupted: SIGINT during gen --files removes the files
// written so far and exits 130. Before, the partitions written stayed, the
// last one 0 bytes.
func TestGenFilesInterrupted(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "ds")
	cmd := exec.Command(dimeBinary, "gen", "--rows", "4000000", "--dim", "2", "--files", "2000", "--out", out)
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first partitions, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ents, _ := os.ReadDir(out); len(ents) >= 3 {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 {
		t.Errorf("gen: %v, want exit 130 (stderr %q)", err, errb.String())
	}
	if _, err := os.Stat(out); err == nil {
		ents, _ := os.ReadDir(out)
		t.Errorf("%s is still there, with %d entries", out, len(ents))
	}
}

// TestGenFileInterrupted: SIGINT while gen writes one file leaves neither
// the file nor its hidden temporary, and exits 130 as gen --files does.
// Before, a 369 MB .NAME.tmp-* stayed; then it was removed, but the exit
// status was 1.
func TestGenFileInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(dimeBinary, "gen", "--rows", "40000000", "--dim", "4", "--out", filepath.Join(dir, "big.parquet"))
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the temporary to grow, then interrupt.
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			if info, err := ents[0].Info(); err == nil && info.Size() > 1<<20 {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 130 || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("gen: %v, stderr %q; want exit 130 and one line", err, errb.String())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%d entries left in the directory, first %s", len(ents), ents[0].Name())
	}
}

// TestControlCharactersEscaped: a path or column name with an escape
// sequence reaches stderr as \xNN, not raw. Before, it went to the terminal
// as it was.
func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "a\x1b[2Jb.csv")
	code, _, errs := run(t, "score", name, "--x", "x", "--y", "y")
	if code != 2 || strings.ContainsAny(errs[:len(errs)-1], "\x1b\n\r") || !strings.Contains(errs, `a\x1b[2Jb.csv`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// TestS3ObjectGoneAfterListing: an object of an S3 dataset that is deleted
// after the listing (s3test.Vanish: it answers 404 NoSuchKey but is still
// listed) ends score with exit 2 and one line naming the object and saying
// that it is gone, whether it goes before its footer is read or in the
// middle of its read. Before, both were reported as "not a Parquet file, or
// a truncated or corrupt one".
func TestS3ObjectGoneAfterListing(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "ds")
	if code, _, errs := run(t, "gen", "--kind", "sine", "--dim", "2", "--rows", "30000", "--seed", "3", "--files", "3", "--out", ds); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	srv := s3test.Start(t, "lake")
	const victim = "sine/part=00001/part-00001.parquet"
	for k := range 3 {
		rel := fmt.Sprintf("part=%05d/part-%05d.parquet", k, k)
		srv.PutFile(t, "lake", "sine/"+rel, filepath.Join(ds, rel))
	}
	args := []string{"score", srv.URL("lake", "sine/"), "--x", "x0,x1", "--y", "y0,y1", "--sigma", "1", "--features", "16", "--permutations", "2", "--batch-size", "1000", "--json"}
	code, _, errs := run(t, args...)
	if code != 0 {
		t.Fatalf("before any delete: exit %d: %s", code, errs)
	}
	gets := len(srv.Gets(victim))
	if gets < 6 {
		t.Fatalf("%d GETs of %s: too few to delete it in the middle of its read", gets, victim)
	}
	for _, c := range []struct {
		name  string
		after int
	}{
		{"before its footer is read", 0},
		{"in the middle of its read", gets - 1}, // its last ranged read: a column chunk
	} {
		srv.Reset()
		srv.VanishAfter("lake", victim, c.after)
		code, out, errs := run(t, args...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, victim) ||
			!strings.Contains(errs, "the object is gone") || strings.Contains(errs, "Parquet") {
			t.Errorf("deleted %s: exit %d, stdout %q, stderr %q; want exit 2 and one line saying that %s is gone", c.name, code, out, errs, victim)
		}
		if n := len(srv.Gets(victim)); n <= c.after {
			t.Errorf("deleted %s: %d GETs, want more than %d", c.name, n, c.after)
		}
	}
}

// TestObjectStoreUnreachable: an object store whose endpoint refuses every
// connection (as without a network) ends the command after the stall
// timeout with exit 2 and one line. gs:// (?anonymous=true, the endpoint
// from STORAGE_EMULATOR_HOST) retries until its context ends: the line
// names the last attempt's error. s3:// retries three times (the AWS SDK's
// standard retryer). Before, the gs:// line said that the endpoint "sent
// nothing" (an endpoint that does not answer), which it had not been asked.
func TestObjectStoreUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // connections to it are refused
	t.Setenv("STORAGE_EMULATOR_HOST", addr)
	t.Setenv("AWS_ACCESS_KEY_ID", "dime-test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "dime-test-secret")
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, c := range []struct {
		url, want string
	}{
		{"gs://bucket/a.csv?anonymous=true", "connection refused"},
		{"gs://bucket/ds/?anonymous=true", "connection refused"},
		{"s3://bucket/a.csv?endpoint=http%3A%2F%2F" + addr + "&use_path_style=true&disable_https=true", ""},
	} {
		start := time.Now()
		code, out, errs := runBinaryIn(t, t.TempDir(), nil, "score", c.url, "--x", "x", "--y", "y", "--stall-timeout", "2s")
		took := time.Since(start)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.url, code, out, errs, c.want)
		}
		if took > 30*time.Second {
			t.Errorf("%s: took %v for a stall timeout of 2s", c.url, took)
		}
	}
}

// TestListingProgress: while a prefix of object storage is listed, the
// objects listed so far are shown on stderr with --progress always (and
// with auto when stderr is a terminal), the line erased when the listing
// ends; never on stdout, and not with auto when stderr is not a terminal.
// Before, nothing showed the listing.
func TestListingProgress(t *testing.T) {
	srv := s3test.Start(t, "lake")
	for k := range 3 {
		srv.Put(t, "lake", fmt.Sprintf("ds/part-%d.csv", k), []byte("x,y\n1,2\n2,3\n3,5\n4,4\n5,7\n"))
	}
	args := []string{"score", srv.URL("lake", "ds/"), "--x", "x", "--y", "y", "--features", "8", "--json"}
	code, out, errs := runBinaryIn(t, t.TempDir(), nil, append(args, "--progress", "always")...)
	if code != 0 || !strings.HasPrefix(out, "{") || strings.Contains(out, "listing") ||
		!strings.Contains(errs, "\r\x1b[Klisting s3://lake/ds/?") || !strings.Contains(errs, ": 0 objects\r\x1b[K") {
		t.Errorf("--progress always: exit %d, stdout %q, stderr %q; want the listing on stderr only, erased", code, out, errs)
	}
	code, out, errs = runBinaryIn(t, t.TempDir(), nil, args...)
	if code != 0 || strings.Contains(out+errs, "listing") {
		t.Errorf("--progress auto, stderr not a terminal: exit %d, stdout %q, stderr %q; want no listing progress", code, out, errs)
	}
}

// TestControlCharactersInTables: column names with an escape sequence, a
// tab or a carriage return reach score's, rank's and matrix's tables as
// \xNN, neither raw (a terminal would obey them) nor as cell separators.
// Before, score printed them raw on its "x columns" and "y columns" lines.
func TestControlCharactersInTables(t *testing.T) {
	dir := t.TempDir()
	esc, tab, cr := "a\x1bcb", "c\td", "e\rf"
	var csv strings.Builder
	fmt.Fprintf(&csv, "\"%s\",\"%s\",\"%s\"\n", esc, tab, cr)
	for i := range 300 {
		v := float64(i%17) / 17
		fmt.Fprintf(&csv, "%g,%g,%g\n", v, v*v+float64(i%5)/50, float64(i%7))
	}
	path := filepath.Join(dir, "names.csv")
	if err := os.WriteFile(path, []byte(csv.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"score", path, "--x", esc, "--y", tab + "," + cr, "--features", "16"},
		{"rank", path, "--y", esc, "--x", tab + "," + cr, "--features", "16"},
		{"matrix", path, "--cols", esc + "," + tab + "," + cr, "--features", "16"},
	} {
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errs)
		}
		if strings.ContainsAny(out, "\x1b\t\r") {
			t.Errorf("%s: a control character reached the table:\n%q", args[0], out)
		}
		if !strings.Contains(out, `a\x1bcb`) || !strings.Contains(out, `c\x09d`) {
			t.Errorf("%s: the names are not shown escaped:\n%s", args[0], out)
		}
	}
}
