package cli

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// hostileCase is one run of the dime binary on hostile input (issue 13):
// its exit status, words its one-line message must contain, and the files it
// may create in the fixture directory (every other file must be left as it
// was: nothing clobbered, nothing half-written, no temporary left behind).
type hostileCase struct {
	name    string
	args    []string
	stdin   []byte
	code    int
	want    []string
	creates []string // names in the fixture directory the run may create
	output  bool     // stdout may hold output before the error (monitor's windows)
}

// snapshot maps the names of a directory (recursively) to their kind, mode
// and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := info.Mode().String()
		if info.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			desc += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		rel, _ := filepath.Rel(dir, p)
		m[rel] = desc
		return nil
	})
	return m
}

// diffSnapshots lists what changed between two snapshots, ignoring allowed.
func diffSnapshots(before, after map[string]string, allowed []string) []string {
	var diffs []string
	for name, a := range after {
		if b, ok := before[name]; !ok && !contains(allowed, name) {
			diffs = append(diffs, "created "+name)
		} else if ok && a != b {
			diffs = append(diffs, "changed "+name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			diffs = append(diffs, "removed "+name)
		}
	}
	sort.Strings(diffs)
	return diffs
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// runHostile runs the cases in the fixture directory dir (the binary's
// working directory is dir, so that cases can use relative paths).
func runHostile(t *testing.T, dir string, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		before := snapshot(t, dir)
		var code int
		var out, errs string
		if c.args[0] == "sh" { // a shell that sets a limit, then runs dime
			code, out, errs = runCommand(t, dir, c.stdin, "sh", c.args[1:]...)
		} else {
			code, out, errs = runBinaryIn(t, dir, c.stdin, c.args...)
		}
		after := snapshot(t, dir)
		for _, name := range c.creates {
			os.Remove(filepath.Join(dir, name))
		}
		if code != c.code {
			t.Errorf("%s: exit %d, want %d (stderr %q)", c.name, code, c.code, errs)
		}
		if strings.Contains(errs, "goroutine ") || strings.Contains(errs, "panic") || strings.Contains(errs, "runtime error") {
			t.Errorf("%s: a Go runtime message: %q", c.name, errs)
		}
		if c.code != 0 {
			if out != "" && !c.output {
				t.Errorf("%s: output on stdout despite the error: %q", c.name, out)
			}
			if !strings.HasPrefix(errs, "dime: ") || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s: stderr is not one line starting \"dime: \": %q", c.name, errs)
			}
		}
		for _, w := range c.want {
			if !strings.Contains(errs, w) {
				t.Errorf("%s: stderr %q does not mention %q", c.name, errs, w)
			}
		}
		if d := diffSnapshots(before, after, c.creates); len(d) > 0 {
			t.Errorf("%s: files changed: %v", c.name, d)
		}
	}
}

// TestHostileOutputs: outputs that never clobber (issue 13, items 1, 4 and
// 10). Before, --save-state replaced a symlink, a FIFO and /dev/full with a
// regular file and destroyed an input, merge left an unreadable file behind
// when an input was bad, an unwritable directory was reported by the name of
// the temporary, and states and plots were created 0600.
func TestHostileOutputs(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}
	writeData(t, filepath.Join(dir, "data.csv"), spec, 3000)
	cfg := stream.DefaultConfig()
	cfg.Features = 16
	cfg.Standardize = false // shards of their own scales would not merge
	cfg.XColumns, cfg.YColumns = []string{"x0", "x1"}, []string{"y0", "y1"}
	writeShardState(t, filepath.Join(dir, "a.state"), spec, 2000, cfg)
	writeShardState(t, filepath.Join(dir, "b.state"), synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 2}, 2000, cfg)
	writeShardState(t, filepath.Join(dir, "one-row.state"), spec, 1, cfg)
	os.WriteFile(filepath.Join(dir, "garbage.state"), []byte("not a state at all"), 0o644)
	os.Symlink("a.state", filepath.Join(dir, "link.state"))
	os.Symlink("data.csv", filepath.Join(dir, "data-link.csv"))
	for _, name := range []string{"fifo", "fifo.png"} {
		if err := syscall.Mkfifo(filepath.Join(dir, name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	full := fullDevice(t, dir)

	score := func(extra ...string) []string {
		return append([]string{"score", "data.csv", "--x", "x0,x1", "--y", "y0,y1", "--features", "16"}, extra...)
	}
	refused := "which dime does not replace; use --force to write through it, or - for standard output"
	runHostile(t, dir, []hostileCase{
		{name: "state onto a symlink", args: score("--save-state", "link.state"), code: 2, want: []string{"--save-state link.state: is a symbolic link, " + refused}},
		{name: "state onto a FIFO", args: score("--save-state", "fifo"), code: 2, want: []string{"--save-state fifo: is a FIFO (named pipe), " + refused}},
		{name: "state onto /dev/full", args: score("--save-state", full), code: 2, want: []string{"--save-state " + full + ": is a character device"}},
		{name: "state onto the input", args: score("--save-state", "data.csv"), code: 2, want: []string{"--save-state data.csv: is an input of this command"}},
		{name: "state onto a link to the input", args: score("--save-state", "data-link.csv", "--force"), code: 2, want: []string{"is the same file as the input data.csv"}},
		{name: "state onto a directory", args: score("--save-state", "sub"), code: 2, want: []string{"--save-state sub: is a directory"}},
		{name: "state in a missing directory", args: score("--save-state", "nowhere/x.state"), code: 2, want: []string{"--save-state nowhere/x.state: no directory nowhere"}},
		{name: "state onto /dev/full, forced", args: score("--save-state", full, "--force"), code: 1, want: []string{"--save-state " + full + ": writing the output: no space left on device"}},
		{name: "merge with a bad input", args: []string{"merge", "a.state", "garbage.state", "--save-state", "ab.state"}, code: 2, want: []string{"garbage.state"}},
		{name: "merge a state of one row", args: []string{"merge", "one-row.state", "--save-state", "one.state"}, code: 2, want: []string{"1 rows, want at least 2"}},
		{name: "merge a state twice", args: []string{"merge", "a.state", "a.state", "--save-state", "ab.state"}, code: 2, want: []string{"a.state: stream: overlapping states", "count twice"}},
		{name: "merge onto an input", args: []string{"merge", "a.state", "b.state", "--save-state", "b.state"}, code: 2, want: []string{"--save-state b.state: is an input"}},
		{name: "merge onto a link to an input", args: []string{"merge", "a.state", "b.state", "--save-state", "link.state"}, code: 2, want: []string{"--save-state link.state: is the same file as the input a.state"}},
		{name: "plot onto a FIFO", args: []string{"sweep", "data.csv", "--x", "x0", "--y", "y0", "--sample", "50", "--plot", "fifo.png"}, code: 2, want: []string{"--plot fifo.png: is a FIFO"}},
		{name: "plot onto the input", args: []string{"compare", "data.csv", "--x", "x0", "--y", "y0", "--sample", "50", "--plot", "data.csv"}, code: 2, want: []string{".png"}},
		{name: "gen onto a symlink", args: []string{"gen", "--rows", "10", "--dim", "1", "--out", "data-link.csv"}, code: 2, want: []string{"--out data-link.csv: is a symbolic link"}},
		{name: "gen onto a directory", args: []string{"gen", "--rows", "10", "--dim", "1", "--out", "sub", "--format", "csv"}, code: 2, want: []string{"--out sub: is a directory"}},
		{name: "merge saved", args: []string{"merge", "a.state", "b.state", "--save-state", "ab.state"}, code: 0, creates: []string{"ab.state"}},
	})
	if info, err := os.Stat(filepath.Join(dir, full)); err != nil || info.Mode()&fs.ModeCharDevice == 0 {
		t.Fatalf("%s is no longer a device: %v", full, err)
	}

	// Outputs are created with the umask's permissions, like gen's.
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	for _, args := range [][]string{
		score("--save-state", "s.state"),
		{"sweep", "data.csv", "--x", "x0", "--y", "y0", "--sample", "50", "--plot", "s.png"},
		{"gen", "--rows", "10", "--dim", "1", "--out", "s.csv"},
	} {
		if code, _, errs := runBinaryIn(t, dir, nil, args...); code != 0 {
			t.Fatalf("%v: %s", args, errs)
		}
		out := args[len(args)-1]
		if info, err := os.Stat(filepath.Join(dir, out)); err != nil || info.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v, want 0644 (0666 minus the umask 022): %v", out, info.Mode().Perm(), err)
		}
	}
	// A forced write through a FIFO reaches its reader (as >(wc -c) would).
	got := make(chan int)
	go func() {
		f, err := os.Open(filepath.Join(dir, "fifo"))
		if err != nil {
			got <- -1
			return
		}
		b, _ := readAllFile(f)
		got <- len(b)
	}()
	if code, _, errs := runBinaryIn(t, dir, nil, score("--save-state", "fifo", "--force")...); code != 0 {
		t.Errorf("--save-state fifo --force: %s", errs)
	}
	if n := <-got; n < 1000 {
		t.Errorf("the FIFO's reader got %d bytes", n)
	}
	// "-" puts the state on stdout and the report on stderr.
	code, out, errs := runBinaryIn(t, dir, nil, score("--save-state", "-")...)
	if code != 0 || !strings.HasPrefix(out, "dimeST") || !strings.Contains(errs, "DiME") {
		t.Errorf("--save-state -: exit %d, stdout %.20q, stderr %.60q", code, out, errs)
	}
}

// fullDevice returns a device that behaves as /dev/full: as root, a node of
// its own in dir (a regression of the kind issue 13 found would otherwise
// replace the system's /dev/full, which root can do); otherwise /dev/full,
// which only root could replace.
func fullDevice(t *testing.T, dir string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		return "/dev/full"
	}
	if err := syscall.Mknod(filepath.Join(dir, "full"), syscall.S_IFCHR|0o666, int(unix.Mkdev(1, 7))); err != nil {
		t.Fatalf("mknod: %v", err)
	}
	return "full"
}

func readAllFile(f *os.File) ([]byte, error) {
	defer f.Close()
	var b []byte
	buf := make([]byte, 32<<10)
	for {
		n, err := f.Read(buf)
		b = append(b, buf[:n]...)
		if err != nil {
			return b, nil
		}
	}
}

// ulimited returns the arguments that run the dime binary under ulimit -v
// kib (a shell's limit on the address space of its child).
func ulimited(kib int, args ...string) []string {
	return append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec "$0" "$@"`, kib), dimeBinary}, args...)
}

// TestHostileLimitsAndMessages: memory limits (item 3: under ulimit -v
// 3000000, --features 4096 died with a Go runtime dump of 144 lines) and the
// messages of item 9 (a value of 1e308 was reported as "exact: matrix entry
// (0, 25) is not finite", time going backwards named neither file nor
// column, a window of 0 rows said "choose one kind of window").
func TestHostileLimitsAndMessages(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}
	writeData(t, filepath.Join(dir, "data.csv"), spec, 500)
	os.WriteFile(filepath.Join(dir, "huge.csv"), []byte("x0,x1,y0,y1\n1,2,3,4\n5,6,7,8\n1,1e308,2,3\n4,5,6,7\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "times.csv"), []byte("t,x0,y0\n0,1,2\n10,2,1\n70,3,5\n30,4,4\n90,5,3\n"), 0o644)
	// Two files read in turn: the late row is row 1 of later.csv (row 4 of
	// the dataset), which the message names rather than both arguments.
	os.WriteFile(filepath.Join(dir, "early.csv"), []byte("t,x0,y0\n0,1,2\n10,2,1\n20,3,5\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "later.csv"), []byte("t,x0,y0\n70,4,4\n30,5,3\n90,6,1\n"), 0o644)
	score := []string{"score", "data.csv", "--x", "x0,x1", "--y", "y0,y1"}
	monitor := []string{"monitor", "data.csv", "--x", "x0,x1", "--y", "y0,y1", "--features", "8"}
	cases := []hostileCase{
		{name: "1e308 in score", args: []string{"score", "huge.csv", "--x", "x0,x1", "--y", "y0,y1", "--features", "8"}, code: 2,
			want: []string{"huge.csv", `column "x1"`, "row 2", "1e+308 is beyond ±1e+150"}},
		{name: "1e308 in exact", args: []string{"exact", "huge.csv", "--x", "x0,x1", "--y", "y0,y1"}, code: 2,
			want: []string{"huge.csv", `column "x1"`, "row 2", "1e+308"}},
		{name: "window of 0 rows", args: append(monitor, "--window-rows", "0"), code: 2, want: []string{"--window-rows 0: want a window of at least 1 row"}},
		{name: "window of 0 seconds", args: append(monitor, "--window", "0s", "--time-col", "x0"), code: 2, want: []string{"--window 0s: want a positive duration"}},
		{name: "half-life of 0", args: append(monitor, "--half-life", "0"), code: 2, want: []string{"--half-life 0: want a positive number of rows"}},
		{name: "time going backwards", args: []string{"monitor", "times.csv", "--x", "x0", "--y", "y0", "--features", "8", "--time-col", "t", "--window", "1m"},
			code: 2, output: true, want: []string{"times.csv", `time column "t", row 3: time goes backwards`}},
		{name: "time going backwards, second file", args: []string{"monitor", "early.csv", "later.csv", "--x", "x0", "--y", "y0", "--features", "8", "--time-col", "t", "--window", "1m"},
			code: 2, output: true, want: []string{"dime: later.csv: time column \"t\", row 1: time goes backwards: 1970-01-01T00:00:30Z is before the window that starts at 1970-01-01T00:01:00Z"}},
	}
	if runtime.GOOS == "linux" {
		cases = append(cases,
			hostileCase{name: "ulimit -v and --features 4096", args: ulimited(3000000, append(score, "--features", "4096")...), code: 2,
				want: []string{fmt.Sprintf("--features 4096 with 0 permutations and %d groups needs about", stream.DefaultGroups), "ulimit -v", "lower --features"}},
			hostileCase{name: "ulimit -v and --sample 8192", args: ulimited(3000000, "exact", "data.csv", "--x", "x0", "--y", "y0", "--sample", "8192"), code: 2,
				want: []string{"--sample 8192 needs about", "ulimit -v"}},
			hostileCase{name: "ulimit -v and a shuffle buffer of 2^29 rows", args: ulimited(3000000, append(score, "--features", "8", "--shuffle-buffer", "536870912")...), code: 2,
				want: []string{"--shuffle-buffer 536870912", "ulimit -v"}},
		)
	}
	for i := range cases {
		if cases[i].args[0] == "-c" {
			cases[i].args = append([]string{"sh"}, cases[i].args...)
		}
	}
	if len(cases) < 5 {
		t.Errorf("only %d of 30 corruptions refused", len(cases))
	}
	runHostile(t, dir, cases)

	if runtime.GOOS == "linux" {
		// monitor --baseline holds an estimator per block besides the
		// window's (65 at --baseline-blocks 64, about 3.7 GiB at D = 256):
		// only one was checked, and the run died with a Go runtime dump.
		bdir := t.TempDir()
		writeData(t, filepath.Join(bdir, "data.csv"), spec, 500)
		if code, _, errs := runBinaryIn(t, bdir, nil, append(score, "--save-state", "ref.state")...); code != 0 {
			t.Fatalf("saving the baseline: exit %d: %s", code, errs)
		}
		runHostile(t, bdir, []hostileCase{{name: "ulimit -v and --baseline-blocks 64",
			args: append([]string{"sh"}, ulimited(3000000, "monitor", "data.csv", "--x", "x0,x1", "--y", "y0,y1", "--window-rows", "200",
				"--baseline", "ref.state", "--baseline-blocks", "64")...), code: 2,
			want: []string{"--baseline with --baseline-blocks 64 (65 estimators of D = 256", "ulimit -v", "lower --baseline-blocks"}}})
	}
}

// TestHostileInputs: hostile and careless input files, each refused with
// exit 2 and one line naming the file (and the column and row where there
// is one), with nothing written: the rest of the 51-case list of issue 13,
// and items 5 and 9 (an IPC stream cut at a batch boundary read as valid
// without a word; 1_000 and 0x1p4 read as numbers from a CSV; a corrupt
// Arrow file showed "runtime error: slice bounds out of range").
func TestHostileInputs(t *testing.T) {
	dir := t.TempDir()
	spec := synth.Spec{Kind: synth.Sine, Dim: 1, Noise: 0.2, Seed: 1}
	writeDataBatches(t, filepath.Join(dir, "data.arrows"), spec, 300, 100)
	writeDataBatches(t, filepath.Join(dir, "data.parquet"), spec, 300, 0)
	stream, _ := os.ReadFile(filepath.Join(dir, "data.arrows"))
	// The end-of-stream marker is the last 8 bytes: a continuation marker
	// and a metadata length of 0.
	if len(stream) < 8 || string(stream[len(stream)-8:]) != "\xff\xff\xff\xff\x00\x00\x00\x00" {
		t.Fatalf("the stream does not end with an end-of-stream marker: % x", stream[max(0, len(stream)-8):])
	}
	files := map[string]string{
		"empty.csv":       "",
		"header-only.csv": "x0,y0\n",
		"underscore.csv":  "x0,y0\n1,2\n3,4\n1_000,5\n",
		"hex.csv":         "x0,y0\n1,2\n3,0x1p4\n",
		"nan.csv":         "x0,y0\n1,2\n3,NaN\n4,5\n",
		"inf.csv":         "x0,y0\n1,2\n3,4\n-Inf,5\n",
		"null.csv":        "x0,y0\n1,2\n,4\n4,5\n",
		"ragged.csv":      "x0,y0\n1,2\n3\n",
		"cut.arrows":      string(stream[:len(stream)-8]),
		"half.parquet":    "",
	}
	pq, _ := os.ReadFile(filepath.Join(dir, "data.parquet"))
	files["half.parquet"] = string(pq[:len(pq)/2])
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	score := func(path string, extra ...string) []string {
		return append([]string{"score", path, "--x", "x0", "--y", "y0", "--features", "8", "--save-state", "out.state"}, extra...)
	}
	runHostile(t, dir, []hostileCase{
		{name: "empty CSV", args: score("empty.csv"), code: 2, want: []string{"empty.csv"}},
		{name: "header-only CSV", args: score("header-only.csv"), code: 2, want: []string{"header-only.csv", "0 rows"}},
		{name: "1_000 in a CSV", args: score("underscore.csv"), code: 2, want: []string{"underscore.csv", `"x0"`, "row 2", "not a decimal number"}},
		{name: "0x1p4 in a CSV", args: score("hex.csv"), code: 2, want: []string{"hex.csv", `"y0"`, "row 1", "not a decimal number"}},
		{name: "NaN", args: score("nan.csv"), code: 2, want: []string{"nan.csv", `"y0"`, "row 1"}},
		{name: "-Inf", args: score("inf.csv"), code: 2, want: []string{"inf.csv", `"x0"`, "row 2"}},
		{name: "null", args: score("null.csv"), code: 2, want: []string{"null.csv", `"x0"`, "row 1"}},
		{name: "ragged CSV", args: score("ragged.csv"), code: 2, want: []string{"ragged.csv"}},
		{name: "half a Parquet file", args: score("half.parquet"), code: 2, want: []string{"half.parquet"}},
		{name: "stream cut at a batch boundary, --strict", args: score("cut.arrows", "--strict"), code: 2,
			want: []string{"cut.arrows", "ends after 300 rows without its end-of-stream marker"}},
		{name: "stream cut at a batch boundary", args: score("cut.arrows"), code: 0, creates: []string{"out.state"},
			want: []string{"dime: warning: dimeio: cut.arrows: the Arrow IPC stream ends after 300 rows without its end-of-stream marker: it may be truncated (--strict makes this an error)"}},
	})
	// Single-byte corruptions of the stream's first bytes (its schema and
	// first batch's metadata) are read or refused in one line that names the
	// file, never with the text of a Go runtime error (runHostile checks
	// that).
	var cases []hostileCase
	for i := 0; i < min(len(stream), 240); i += 8 {
		bad := append([]byte(nil), stream...)
		bad[i] ^= 0x80
		name := fmt.Sprintf("flip%d.arrows", i)
		os.WriteFile(filepath.Join(dir, name), bad, 0o644)
		code, _, _ := runBinaryIn(t, dir, nil, score(name)...)
		os.Remove(filepath.Join(dir, "out.state"))
		if code == 0 {
			continue // a flip in data bytes reads as other numbers
		}
		cases = append(cases, hostileCase{name: "corrupt stream " + name, args: score(name), code: 2, want: []string{name}})
	}
	if len(cases) < 5 {
		t.Errorf("only %d of 30 corruptions refused", len(cases))
	}
	runHostile(t, dir, cases)
}
