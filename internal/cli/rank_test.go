package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// rankJSON is the part of dime rank's JSON the tests read.
type rankJSON struct {
	Rows       int64 `json:"rows"`
	Candidates []struct {
		Rank         int      `json:"rank"`
		Name         string   `json:"name"`
		Columns      []string `json:"columns"`
		DiME         *float64 `json:"dime"`
		StdErr       *float64 `json:"dime_stderr"`
		Normalized   *float64 `json:"dime_normalized"`
		PValue       *float64 `json:"p_value"`
		QValue       *float64 `json:"q_value"`
		DiMEAnalytic *float64 `json:"dime_analytic"`
	} `json:"candidates"`
}

func decodeRank(t *testing.T, s string) rankJSON {
	t.Helper()
	var r rankJSON
	if err := json.Unmarshal([]byte(s), &r); err != nil {
		t.Fatalf("not rank JSON: %v: %q", err, s)
	}
	return r
}

// genScreenTable writes a screening table and returns the dependent
// candidates, strongest first (as gen prints them).
func genScreenTable(t *testing.T, path string, rows, candidates int, seed string) []string {
	t.Helper()
	code, _, errs := run(t, "gen", "--kind", "screen", "--rows", itoa(rows), "--dim", itoa(candidates), "--seed", seed, "--out", path)
	if code != 0 {
		t.Fatalf("gen: exit %d: %s", code, errs)
	}
	i := strings.Index(errs, "strongest first: [")
	if i < 0 {
		t.Fatalf("gen did not name the dependent columns: %s", errs)
	}
	list := errs[i+len("strongest first: ["):]
	return strings.Fields(list[:strings.Index(list, "]")])
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRankFindsTheDependentInOrder: on a held-out screening table (12
// candidates, 6 of them dependent on y with distinct strengths through
// even functions of y, Pearson correlation 0; the others Gaussian,
// Student-t, log-normal and Poisson noise in arbitrary units), dime rank at
// its defaults puts the six on top in the order of their strength, with q
// below 0.01, and the independent ones after them. (Seeds 101 and 102,
// not looked at while choosing the defaults.)
func TestRankFindsTheDependentInOrder(t *testing.T) {
	dir := t.TempDir()
	for _, seed := range []string{"101", "102"} {
		path := filepath.Join(dir, "screen"+seed+".parquet")
		want := genScreenTable(t, path, 20000, 12, seed)
		code, out, errs := run(t, "rank", path, "--y", "y", "--x", "x*", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs)
		}
		r := decodeRank(t, out)
		if len(r.Candidates) != 12 || r.Rows != 20000 {
			t.Fatalf("%d candidates, %d rows", len(r.Candidates), r.Rows)
		}
		var got []string
		for i, c := range r.Candidates {
			if c.Rank != i+1 {
				t.Fatalf("candidate %d has rank %d: not sorted", i, c.Rank)
			}
			if i < 6 {
				got = append(got, c.Name)
				if c.QValue == nil || *c.QValue > 0.01 {
					t.Errorf("seed %s: %s (dependent) has q %v", seed, c.Name, c.QValue)
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("seed %s: top six %v, want %v (true order)", seed, got, want)
		}
	}
}

// TestRankOneCandidateIsScore: dime rank of one candidate reports dime
// score's numbers for that pair, to the bit (the same rows, blocks, groups
// and feature maps, the same pilot: the first rows of a CSV file, a
// seeded sample of a Parquet file's rows).
func TestRankOneCandidateIsScore(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"s.csv", "s.parquet"} {
		path := filepath.Join(dir, name)
		want := genScreenTable(t, path, 6000, 8, "7")
		code, out, errs := run(t, "rank", path, "--y", "y", "--x", want[1], "--features", "48", "--json")
		if code != 0 {
			t.Fatalf("%s: rank: exit %d: %s", name, code, errs)
		}
		r := decodeRank(t, out)
		code, out, errs = run(t, "score", path, "--y", "y", "--x", want[1], "--features", "48", "--json")
		if code != 0 {
			t.Fatalf("%s: score: exit %d: %s", name, code, errs)
		}
		s := decodeJSON(t, out)
		c := r.Candidates[0]
		for _, f := range []struct {
			name string
			got  *float64
		}{{"dime", c.DiME}, {"dime_stderr", c.StdErr}, {"dime_normalized", c.Normalized}, {"p_value", c.PValue}, {"dime_analytic", c.DiMEAnalytic}} {
			if f.got == nil || *f.got != num(t, s, f.name) {
				t.Errorf("%s: %s: rank %v, score %v", name, f.name, f.got, s[f.name])
			}
		}
	}
}

// TestRankDirectoryIsMergeOfFiles: dime rank over a directory of three
// files equals dime merge of the rank states of the files (the first
// file's settings taken with --like), in the quantities that do not depend
// on how rows are cut into scopes; DiME agrees within its standard errors.
func TestRankDirectoryIsMergeOfFiles(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, seed := range []string{"31", "32", "33"} {
		genScreenTable(t, filepath.Join(data, "part"+itoa(i)+".csv"), 3000, 6, seed)
	}
	args := []string{"--y", "y", "--x", "x*", "--features", "16", "--precision", "float64", "--json"}
	code, out, errs := run(t, append([]string{"rank", data}, args...)...)
	if code != 0 {
		t.Fatalf("rank dir: exit %d: %s", code, errs)
	}
	whole := decodeRank(t, out)
	var states []string
	for i := range 3 {
		st := filepath.Join(dir, "p"+itoa(i)+".state")
		a := []string{"rank", filepath.Join(data, "part"+itoa(i)+".csv"), "--y", "y", "--x", "x*", "--save-state", st, "--json"}
		if i == 0 {
			a = append(a, "--features", "16", "--precision", "float64")
		} else {
			a = append(a, "--like", states[0])
		}
		if code, _, errs := run(t, a...); code != 0 {
			t.Fatalf("rank part %d: exit %d: %s", i, code, errs)
		}
		states = append(states, st)
	}
	code, out, errs = run(t, "merge", states[2], states[0], states[1], "--json")
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errs)
	}
	merged := decodeRank(t, out)
	if merged.Rows != whole.Rows || len(merged.Candidates) != len(whole.Candidates) {
		t.Fatalf("merged %d rows, %d candidates; one run %d, %d", merged.Rows, len(merged.Candidates), whole.Rows, len(whole.Candidates))
	}
	byName := map[string]int{}
	for i, c := range whole.Candidates {
		byName[c.Name] = i
	}
	var worstA, worstP float64
	defer func() { t.Logf("largest differences: dime_analytic %.2g nats, p_value %.2g relative", worstA, worstP) }()
	for _, m := range merged.Candidates {
		w := whole.Candidates[byName[m.Name]]
		worstA = max(worstA, math.Abs(*m.DiMEAnalytic-*w.DiMEAnalytic))
		worstP = max(worstP, math.Abs(*m.PValue-*w.PValue)/math.Max(*w.PValue, 1e-300))
		// Measured: 1.8e-15 nats and 7.8e-13 relative (float64 products).
		if d := math.Abs(*m.DiMEAnalytic - *w.DiMEAnalytic); d > 1e-12 {
			t.Errorf("%s: dime_analytic %v merged, %v one run", m.Name, *m.DiMEAnalytic, *w.DiMEAnalytic)
		}
		if d := math.Abs(*m.PValue-*w.PValue) / math.Max(*w.PValue, 1e-300); d > 1e-9 {
			t.Errorf("%s: p_value %v merged, %v one run", m.Name, *m.PValue, *w.PValue)
		}
		if d := math.Abs(*m.DiME - *w.DiME); d > 4*math.Hypot(*m.StdErr, *w.StdErr) {
			t.Errorf("%s: DiME %v ± %v merged, %v ± %v one run", m.Name, *m.DiME, *m.StdErr, *w.DiME, *w.StdErr)
		}
	}
}

// TestRankAndMatrixUsage: bad flags and inputs are one-line usage errors
// (exit 2), and a matrix beyond --max-pairs says what it would cost.
func TestRankAndMatrixUsage(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.csv")
	genScreenTable(t, path, 1500, 6, "3")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rank", path, "--x", "x*"}, "needs --y"},
		{[]string{"rank", path, "--y", "y"}, "needs candidates"},
		{[]string{"rank", path, "--y", "y", "--x", "x*", "--sigma", "auto"}, "--sigma auto"},
		{[]string{"rank", path, "--y", "y", "--x", "x*", "--json", "--csv"}, "choose one"},
		{[]string{"rank", path, "--y", "y", "--x", "nope*"}, "nope"},
		{[]string{"rank", path, "--y", "y", "--group", "g"}, "name=col"},
		{[]string{"rank", path, "--y", "y", "--x", "x*", "--permutations", "3"}, "analytic"},
		{[]string{"matrix", path, "--cols", "x*", "--max-pairs", "10"}, "CPU-seconds per million rows"},
		{[]string{"matrix", path, "--cols", "x00"}, "at least 2"},
		{[]string{"matrix", path, "--cols", "x*", "--plot", filepath.Join(dir, "h.gif")}, ".png or .svg"},
		{[]string{"merge", filepath.Join(dir, "s.csv")}, "s.csv"},
		{[]string{"rank", "-", "--y", "y", "--x", "x*"}, "not - (stdin)"},
	} {
		code, _, errs := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args[1:], code, errs, c.want)
		}
	}
}

// TestMatrixPairsAndPlot: dime matrix lists every pair once in its JSON,
// finds the dependent pairs of a screening table on top, and draws a PNG
// heatmap.
func TestMatrixPairsAndPlot(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "s.parquet")
	want := genScreenTable(t, path, 5000, 7, "9")
	png := filepath.Join(dir, "heat.png")
	code, out, errs := run(t, "matrix", path, "--cols", "*", "--plot", png, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var m struct {
		Columns []string `json:"columns"`
		Order   []string `json:"order"`
		Pairs   []struct {
			X, Y string
			Rank int
		} `json:"pairs"`
	}
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatal(err)
	}
	if len(m.Columns) != 8 || len(m.Pairs) != 28 || len(m.Order) != 8 {
		t.Fatalf("%d columns, %d pairs, order %v", len(m.Columns), len(m.Pairs), m.Order)
	}
	seen := map[[2]string]bool{}
	for _, p := range m.Pairs {
		k := [2]string{min(p.X, p.Y), max(p.X, p.Y)}
		if seen[k] || p.X == p.Y {
			t.Errorf("pair %v twice or with itself", k)
		}
		seen[k] = true
	}
	// The strongest pair is y with the strongest candidate.
	if top := m.Pairs[0]; !(top.X == "y" && top.Y == want[0] || top.Y == "y" && top.X == want[0]) {
		t.Errorf("top pair %s ~ %s, want y ~ %s", top.X, top.Y, want[0])
	}
	b, err := os.ReadFile(png)
	if err != nil || len(b) < 1000 || string(b[1:4]) != "PNG" {
		t.Errorf("heatmap: %d bytes, %v", len(b), err)
	}
}
