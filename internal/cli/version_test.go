package cli

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/internal/linalg"
)

// TestVersion checks dime version, --version and version --json, in
// process (the test binary's build information) and in the built command.
func TestVersion(t *testing.T) {
	code, out, errs := run(t, "version")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	first := regexp.MustCompile(`^dime (\S+) (go1\.\S+) (\w+/\w+)\n`)
	m := first.FindStringSubmatch(out)
	if m == nil || m[2] != runtime.Version() || m[3] != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("first line of %q", out)
	}
	for _, want := range []string{"\ncommit ", "\nbuild ", "\nlinalg   " + linalg.Current().String() + "\n",
		"\nkernels  " + strings.Join(linalg.Kernels(), " ") + "\n", "\ncpu "} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in %q", want, out)
		}
	}
	if code, out2, _ := run(t, "--version"); code != 0 || out2 != out {
		t.Errorf("--version: exit %d, %q, want %q", code, out2, out)
	}
	code, out, _ = run(t, "version", "--json")
	var v buildVersion
	if err := json.Unmarshal([]byte(out), &v); code != 0 || err != nil {
		t.Fatalf("version --json: exit %d, %v: %q", code, err, out)
	}
	if v.GoVersion != runtime.Version() || v.Backend != linalg.Current().String() || v.Version == "" || v.CPU == nil || v.Tags == nil {
		t.Errorf("version --json: %+v", v)
	}
	// The build tag openblas and the backend go together.
	if linalg.OpenBLAS.Available() != slices.Contains(v.Tags, "openblas") {
		t.Errorf("OpenBLAS compiled in: %v, build tags %v", linalg.OpenBLAS.Available(), v.Tags)
	}
	// The command built by TestMain: the main module's version line.
	code, out, errs = runBinary(t, nil, "--version")
	if code != 0 || !first.MatchString(out) || errs != "" {
		t.Errorf("dime --version: exit %d, %q, %q", code, out, errs)
	}
	if code, _, errs := run(t, "version", "extra"); code != 2 || !strings.Contains(errs, "no arguments") {
		t.Errorf("version extra: exit %d, %q", code, errs)
	}
	if testing.Short() {
		return // one more link of the command
	}
	// A commit given to the linker, for a build without a git checkout.
	ldflags := "-X github.com/dime-project/dime/internal/cli.commit=0123456789abcdef"
	bin := filepath.Join(t.TempDir(), "dime")
	build := exec.Command("go", "build", "-buildvcs=false", "-ldflags", ldflags, "-o", bin, "github.com/dime-project/dime/cmd/dime")
	if msg, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -ldflags: %v: %s", err, msg)
	}
	if out, err := exec.Command(bin, "version").Output(); err != nil || !strings.Contains(string(out), "\ncommit   0123456789abcdef\n") {
		t.Errorf("a commit set by the linker: %v, %q", err, out)
	}
}

// TestHelpSpellsTwoDashes checks that a command's help spells its flags as
// the README does (--x), and that "dime help CMD" prints it.
func TestHelpSpellsTwoDashes(t *testing.T) {
	for _, args := range [][]string{{"score", "--help"}, {"help", "score"}, {"monitor", "-h"}} {
		code, out, _ := run(t, args...)
		if code != 0 || !strings.Contains(out, "\n  --x string\n") || !strings.Contains(out, "\n  --features D\n") {
			t.Errorf("%v: exit %d:\n%s", args, code, out)
		}
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "  -") && !strings.HasPrefix(l, "  --") {
				t.Errorf("%v: one dash: %q", args, l)
			}
		}
	}
	if _, out, _ := run(t, "help"); !strings.Contains(out, "version") || !strings.Contains(out, "--help") {
		t.Errorf("help: %q", out)
	}
}
