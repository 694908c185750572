package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
)

// rankMonitorLine is the part of a line of dime monitor --rank-y that the
// tests read.
type rankMonitorLine struct {
	Window     int      `json:"window"`
	Rows       int64    `json:"rows"`
	IsBaseline bool     `json:"is_baseline"`
	Top        []candJ  `json:"top"`
	Changes    []candJ  `json:"changes"`
	Changed    int      `json:"changed"`
	Entered    []string `json:"entered"`
	Left       []string `json:"left"`
	Alert      bool     `json:"alert"`
}

type candJ struct {
	Rank       int      `json:"rank"`
	Name       string   `json:"name"`
	DiME       *float64 `json:"dime"`
	StdErr     *float64 `json:"dime_stderr"`
	Normalized *float64 `json:"dime_normalized"`
	PValue     *float64 `json:"p_value"`
	QValue     *float64 `json:"q_value"`
	Changed    bool     `json:"changed"`
}

// switchCSV writes windows·rows rows of a screening table of c candidates
// (seed) whose third-strongest dependent candidate switches on at the half,
// as CSV, and returns the file's lines and that candidate.
func switchCSV(t *testing.T, path string, c, rows int, seed uint64) ([]string, string) {
	t.Helper()
	s, err := synth.NewScreen(c, seed)
	if err != nil {
		t.Fatal(err)
	}
	s.SwitchOn(2, int64(rows/2))
	var buf bytes.Buffer
	tw, err := tablewriter.New(&buf, dataset.CSV, s.Columns(), tablewriter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	table := make([]float64, rows*(1+c))
	s.Fill(table)
	if err := tw.Write(table, rows); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n"), s.Dependent()[2]
}

func rankMonitorLines(t *testing.T, out string) []rankMonitorLine {
	t.Helper()
	var ls []rankMonitorLine
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var w rankMonitorLine
		if err := json.Unmarshal([]byte(l), &w); err != nil {
			t.Fatalf("not a window line: %v: %q", err, l)
		}
		ls = append(ls, w)
	}
	return ls
}

// TestMonitorRankIsRankPerWindow: on a stream of 4 windows of 1,000 rows
// where a candidate's dependence on the target switches on half-way, dime
// monitor --rank-y reports in every window what dime rank reports on that
// window's rows alone (the first window with its own pilot, whose state the
// later windows' dime rank takes with --like, as the monitor keeps the first
// window's scales and bandwidths): rank the same, the numbers equal to
// round-off; and with --top 3, the windows after the switch have the
// candidate changed, in the top and entered, and --fail-if 'changed > 0'
// exits 3.
func TestMonitorRankIsRankPerWindow(t *testing.T) {
	const c, window, windows = 8, 1000, 4
	dir := t.TempDir()
	path := filepath.Join(dir, "stream.csv")
	lines, switched := switchCSV(t, path, c, window*windows, 41)
	code, out, errs := run(t, "monitor", path, "--rank-y", "y", "--x", "x*", "--window-rows", itoa(window), "--top", itoa(c))
	if code != 0 {
		t.Fatalf("monitor: exit %d: %s", code, errs)
	}
	ws := rankMonitorLines(t, out)
	if len(ws) != windows || !ws[0].IsBaseline {
		t.Fatalf("%d windows, first baseline %v", len(ws), ws[0].IsBaseline)
	}
	worst := 0.0
	for k, w := range ws {
		file := filepath.Join(dir, "w"+itoa(k)+".csv")
		body := append([]string{lines[0]}, lines[1+k*window:1+(k+1)*window]...)
		if err := os.WriteFile(file, []byte(strings.Join(body, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"rank", file, "--y", "y", "--x", "x*", "--rows", "serial", "--json"}
		if k == 0 {
			args = append(args, "--save-state", filepath.Join(dir, "w0.state"))
		} else {
			args = append(args, "--like", filepath.Join(dir, "w0.state"))
		}
		code, out, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("rank window %d: exit %d: %s", k, code, errs)
		}
		r := decodeRank(t, out)
		if len(r.Candidates) != c || len(w.Top) != c {
			t.Fatalf("window %d: %d and %d candidates", k, len(r.Candidates), len(w.Top))
		}
		for i, rc := range r.Candidates {
			mc := w.Top[i]
			if mc.Name != rc.Name || mc.Rank != rc.Rank {
				t.Fatalf("window %d: monitor's rank %d is %s, rank's %s", k, i+1, mc.Name, rc.Name)
			}
			for _, f := range [][3]any{{"dime", mc.DiME, rc.DiME}, {"dime_stderr", mc.StdErr, rc.StdErr}, {"dime_normalized", mc.Normalized, rc.Normalized},
				{"p_value", mc.PValue, rc.PValue}, {"q_value", mc.QValue, rc.QValue}} {
				a, b := f[1].(*float64), f[2].(*float64)
				if a == nil || b == nil {
					t.Fatalf("window %d, %s: %s null", k, mc.Name, f[0])
				}
				d := math.Abs(*a-*b) / math.Max(math.Abs(*b), 1e-300)
				if *a == *b {
					d = 0
				}
				worst = math.Max(worst, d)
				if d > 1e-9 {
					t.Errorf("window %d, %s: %s monitor %v, rank %v", k, mc.Name, f[0], *a, *b)
				}
			}
		}
	}
	t.Logf("largest relative difference between monitor's windows and dime rank: %.3g", worst)

	code, out, errs = run(t, "monitor", path, "--rank-y", "y", "--x", "x*", "--window-rows", itoa(window), "--top", "3", "--fail-if", "changed > 0")
	if code != exitGate || !strings.Contains(errs, "--fail-if met in") {
		t.Fatalf("monitor --fail-if: exit %d: %s", code, errs)
	}
	for _, w := range rankMonitorLines(t, out)[windows/2:] {
		top := []string{}
		for _, c := range w.Top {
			top = append(top, c.Name)
		}
		changed := slices.ContainsFunc(w.Changes, func(c candJ) bool { return c.Name == switched && c.Changed })
		if !changed || !slices.Contains(top, switched) || !slices.Contains(w.Entered, switched) || !w.Alert {
			t.Errorf("window %d after the switch: %s changed %v, top %v, entered %v, alert %v", w.Window, switched, changed, top, w.Entered, w.Alert)
		}
	}
}

// TestMonitorRankUsage: flags that do not fit a monitor of many pairs
// exit 2 with one line.
func TestMonitorRankUsage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.csv")
	switchCSV(t, path, 6, 200, 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rank-y", "y", "--y", "y", "--x", "x*"}, "--rank-y with --y"},
		{[]string{"--rank-y", "y"}, "--rank-y needs candidates"},
		{[]string{"--rank-y", "y", "--x", "x*", "--top", "0"}, "--top 0"},
		{[]string{"--rank-y", "y", "--x", "x*", "--alert-p", "0.01"}, "--alert-p with --rank-y"},
		{[]string{"--rank-y", "y", "--x", "x*", "--save-state", filepath.Join(dir, "st")}, "--save-state with --rank-y"},
		{[]string{"--rank-y", "y", "--x", "x*", "--fail-if", "p_value < 0.01"}, `has no field "p_value"`},
		{[]string{"--rank-y", "y", "--x", "x*", "--baseline-blocks", "3"}, "--baseline-blocks with --rank-y"},
		{[]string{"--y", "y", "--x", "x00", "--top", "3"}, "--group and --top need --rank-y"},
		{[]string{"--y", "y", "--x", "x00", "--fail-if", "changed > 0"}, `has no field "changed"`},
	} {
		args := append([]string{"monitor", path, "--window-rows", "100"}, tc.args...)
		code, _, errs := run(t, args...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line with %q", tc.args, code, errs, tc.want)
		}
	}
	code, _, errs := run(t, "monitor", path, "--half-life", "100", "--rank-y", "y", "--x", "x*")
	if code != 2 || !strings.Contains(errs, "--half-life with --rank-y") {
		t.Errorf("--half-life: exit %d, %q", code, errs)
	}
}

// TestMonitorRankMetrics: dime monitor --rank-y --listen serves, after the
// input ends (--serve-after-end), the last window's top candidates labelled
// by candidate with the values of its JSON line, and no series for the
// others: at most 2·--top per gauge.
func TestMonitorRankMetrics(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.csv")
	switchCSV(t, path, 8, 3000, 43)
	stderrR, stderrW := io.Pipe()
	var stdout bytes.Buffer
	done := make(chan int)
	go func() {
		code := Main([]string{"monitor", path, "--rank-y", "y", "--x", "x*", "--window-rows", "1000", "--top", "2",
			"--listen", "127.0.0.1:0", "--serve-after-end", "2s"}, strings.NewReader(""), &stdout, stderrW)
		stderrW.Close()
		done <- code
	}()
	var base string
	sc := bufio.NewScanner(stderrR)
	for sc.Scan() {
		if m := regexp.MustCompile(`input ended; serving metrics at (http://\S+)/metrics`).FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
			break
		}
	}
	if base == "" {
		t.Fatal("no metrics address on stderr")
	}
	fams := scrape(t, base)
	go io.Copy(io.Discard, stderrR)
	if code := <-done; code != 0 {
		t.Fatalf("exit %d", code)
	}
	ws := rankMonitorLines(t, stdout.String())
	last := ws[len(ws)-1]
	want := map[string]float64{}
	for _, c := range last.Top {
		want[c.Name] = *c.DiME
	}
	for _, c := range last.Changes {
		want[c.Name] = *c.DiME
	}
	f, ok := fams["dime_rank_dime_nats"]
	if !ok || len(f.Metric) != len(want) || len(want) > 4 {
		t.Fatalf("dime_rank_dime_nats: %d series, want %d (top 2 and changed)", len(f.GetMetric()), len(want))
	}
	for _, m := range f.Metric {
		var cand string
		for _, l := range m.Label {
			if l.GetName() == "candidate" {
				cand = l.GetValue()
			}
		}
		if v, ok := want[cand]; !ok || v != m.GetGauge().GetValue() {
			t.Errorf("candidate %q: %v, want %v (%v)", cand, m.GetGauge().GetValue(), v, ok)
		}
	}
	if _, ok := fams["dime_dime_nats"]; ok {
		t.Error("dime_dime_nats (one pair's) exported by a ranking")
	}
}
