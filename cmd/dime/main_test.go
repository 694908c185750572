package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dime-project/dime/internal/cli"
	"github.com/dime-project/dime/internal/linalg"
)

// runMainEnv, set to 1, makes the test binary run main with the arguments
// after "--": the dime program as built, with what its main sets up.
const runMainEnv = "DIME_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"dime"}, os.Args[i+1:]...)
				break
			}
		}
		main()
		return
	}
	os.Exit(m.Run())
}

// dime runs the program's main in a fresh process with args and returns its
// standard output.
func dime(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^$", "--"}, args...)...)
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("dime %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	return out.String()
}

// timing matches the fields that hold times, which differ between runs.
var timing = regexp.MustCompile(`"[a-z_]*seconds":[-0-9.e+]+`)

// TestMainInstalls checks that the program's main installs the
// linear-algebra backend (dime version names the fastest compiled in), and
// that dime exact and dime score in the program give the same JSON, to the
// bit, as the library with that backend installed (linalg.Install, which
// main calls through host.UseBLAS): the eigensolves of exact round off
// differently without it, so a main that forgot it fails here.
func TestMainInstalls(t *testing.T) {
	if v := dime(t, "version"); !strings.Contains(v, "\nlinalg   "+linalg.Best().String()+"\n") {
		t.Errorf("dime version does not name the backend %v:\n%s", linalg.Best(), v)
	}
	path := filepath.Join(t.TempDir(), "s.parquet")
	dime(t, "gen", "--kind", "sine", "--dim", "2", "--rows", "5000", "--out", path)
	linalg.Install()
	for _, args := range [][]string{
		{"exact", path, "--x", "x0,x1", "--y", "y0,y1", "--sample", "512", "--json"},
		{"score", path, "--x", "x0,x1", "--y", "y0,y1", "--json"},
	} {
		got := timing.ReplaceAllString(dime(t, args...), "")
		var out, errb bytes.Buffer
		if code := cli.Main(args, strings.NewReader(""), &out, &errb); code != 0 {
			t.Fatalf("%s in-process: %s", args[0], errb.String())
		}
		if want := timing.ReplaceAllString(out.String(), ""); got != want {
			t.Errorf("dime %s: the program's JSON\n%s\ndiffers from the library's with the backend installed\n%s", args[0], got, want)
		}
	}
}
