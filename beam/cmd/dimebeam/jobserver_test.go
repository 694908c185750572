//go:build unix

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dime-project/dime/dimetest"
)

// goBuild builds a package of this module's build list (the Beam SDK at the
// version of go.mod) into dir and returns the binary's path.
func goBuild(t *testing.T, dir, name, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// TestJobServerProcess submits dimebeam, as a cluster would run it, to
// Prism started as a standalone job server on loopback (the prism command
// of the Beam SDK at go.mod's version): the launcher is a separate process
// that only submits the job, and the runner starts each worker as a
// process of the SDK's boot program (--environment_type process), which
// fetches the staged --worker_binary from the job server and runs it, as a
// Flink or Spark worker's container does. The result must equal dime
// score's on the same files: every field but the elapsed time and the
// input's name (one split: the same rows in the same blocks).
func TestJobServerProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Prism and runs a job server (-short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build Prism with")
	}
	bin := t.TempDir()
	prism := goBuild(t, bin, "prism", "github.com/apache/beam/sdks/v2/go/cmd/prism")
	boot := goBuild(t, bin, "boot", "github.com/apache/beam/sdks/v2/go/container")
	worker := goBuild(t, bin, "dimebeam", ".")
	// Prism passes the worker id quoted for a shell (--id='…'), which boot
	// would send on as it is: unquote it, and keep boot's staging
	// directory here rather than in /tmp.
	persist := t.TempDir()
	wrapper := filepath.Join(bin, "boot.sh")
	script := fmt.Sprintf(`#!/bin/sh
for a; do
  shift
  case $a in --id=\'*\') a="--id=${a#--id=\'}"; a="${a%%\'}";; esac
  set -- "$@" "$a"
done
exec %s --semi_persist_dir=%s "$@"
`, boot, persist)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	// boot copies the worker binary to a directory /tmp/bin* of its own
	// (a noexec staging volume is common in containers) and leaves it:
	// remove the ones this test's workers made.
	before, _ := filepath.Glob("/tmp/bin*")
	t.Cleanup(func() {
		after, _ := filepath.Glob("/tmp/bin*")
		for _, d := range after {
			if _, err := os.Stat(filepath.Join(d, "worker")); err == nil && !slices.Contains(before, d) {
				os.RemoveAll(d)
			}
		}
	})

	_, port, err := net.SplitHostPort(dimetest.FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// Prism and the workers it starts (boot, then the worker binary) form
	// a process group of their own, ended as one; their output goes to a
	// file, which a worker outliving Prism cannot hold open for Wait.
	logFile, err := os.Create(filepath.Join(bin, "prism.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	server := exec.Command(prism, "--job_port="+port, "--serve_http=false", "--log_level=warn")
	server.Stdout, server.Stderr = logFile, logFile
	server.Dir = t.TempDir() // boot writes pipeline_options.json in its working directory
	server.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		syscall.Kill(-server.Process.Pid, syscall.SIGKILL)
		server.Wait()
	}()
	prismLog := func() string {
		b, _ := os.ReadFile(logFile.Name())
		return string(b)
	}
	endpoint := "localhost:" + port
	for deadline := time.Now().Add(time.Minute); ; {
		c, err := net.Dial("tcp", endpoint)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prism does not listen on %s: %v\n%s", endpoint, err, prismLog())
		}
		time.Sleep(100 * time.Millisecond)
	}

	data := t.TempDir()
	for i, rows := range []int{3000, 2000} {
		gen(t, filepath.Join(data, fmt.Sprintf("part-%d.parquet", i)), rows, i+1)
	}
	result := filepath.Join(t.TempDir(), "result.json")
	// The workers write the sums under --temp_location (a directory they
	// share with the launcher here), which the launcher removes.
	temp := t.TempDir()
	args := append([]string{"--input", data, "--runner", "flink", "--endpoint", endpoint,
		"--environment_type", "PROCESS", "--environment_config", fmt.Sprintf(`{"command":%q}`, wrapper),
		"--worker_binary", worker, "--output", result, "--temp_location", temp}, flags...)
	var stdout, stderr bytes.Buffer
	launcher := exec.CommandContext(ctx, worker, args...)
	launcher.Stdout, launcher.Stderr = &stdout, &stderr
	if err := launcher.Run(); err != nil {
		t.Fatalf("dimebeam %s: %v\n%s\nPrism:\n%s", strings.Join(args, " "), err, stderr.String(), prismLog())
	}
	got := decodeJSON(t, stdout.String())
	written, err := os.ReadFile(result)
	if err != nil || !bytes.Equal(written, stdout.Bytes()) {
		t.Errorf("the result file %s holds %q (%v), stdout %q", result, written, err, stdout.String())
	}
	want := decodeJSON(t, dime(t, append([]string{"score", data, "--json"}, flags...)...))
	for _, m := range []map[string]any{got, want} {
		delete(m, "elapsed_seconds")
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("dimebeam on the job server:\n%v\ndime score:\n%v", got, want)
	}
	if left, _ := os.ReadDir(temp); len(left) != 0 {
		t.Errorf("%d entries left in --temp_location, want none: %v", len(left), left)
	}
}
