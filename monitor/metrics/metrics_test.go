package metrics

import (
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// serve starts m on a loopback listener and returns its base URL.
func serve(t *testing.T, m *Metrics) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := m.Serve(ln)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return "http://" + s.Addr().String()
}

// Scrape gets /metrics with a real client and parses the exposition.
func Scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	return fams
}

// value returns the value of the only metric of a family, checking its
// labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok {
		t.Fatalf("no metric %s", name)
	}
	if len(f.Metric) != 1 {
		t.Fatalf("%s: %d series", name, len(f.Metric))
	}
	mt := f.Metric[0]
	labels := map[string]string{}
	for _, l := range mt.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["x"] != "a,b" || labels["y"] != "c" {
		t.Errorf("%s: labels %v", name, labels)
	}
	switch {
	case mt.Gauge != nil:
		return mt.Gauge.GetValue()
	case mt.Counter != nil:
		return mt.Counter.GetValue()
	}
	t.Fatalf("%s: neither gauge nor counter", name)
	return 0
}

// windows runs a monitor over 2500 sine rows in windows of 1000 and returns
// what it emitted; with a baseline, if not nil.
func windows(t *testing.T, base *stream.Estimator) []monitor.Window {
	t.Helper()
	cfg := monitor.Config{Stream: stream.DefaultConfig(), WindowRows: 1000, AlertP: monitor.Threshold(0.01), Baseline: base}
	// Raw columns: the metrics, not the estimates, are under test, and the
	// alerts were set on the sine kind at unit scale.
	cfg.Stream.Features, cfg.Stream.Standardize = 32, false
	var ws []monitor.Window
	m, err := monitor.New(2, 1, cfg, func(w monitor.Window) error { ws = append(ws, w); return nil })
	if err != nil {
		t.Fatal(err)
	}
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}, 2500)
	if err != nil {
		t.Fatal(err)
	}
	yd := y.RawMatrix().Data
	y1 := make([]float64, 2500)
	for i := range y1 {
		y1[i] = yd[2*i]
	}
	if err := m.Add(x.RawMatrix().Data, y1, nil, 2500); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestScrape(t *testing.T) {
	m := New(Labels{X: "a,b", Y: "c"})
	clock := time.Date(2026, 3, 1, 12, 0, 0, 5e8, time.UTC)
	m.now = func() time.Time { return clock }
	base := serve(t, m)

	// Before any window: the counters are 0, the gauges of the last window
	// NaN (not 0: an alert on dime_p_value < 0.01 must not fire on a
	// restart), the Go and process collectors and dime_build_info are
	// there, the baseline's gauges are not.
	fams := Scrape(t, base)
	for _, name := range []string{"dime_windows_total", "dime_rows_total", "dime_skipped_rows_total", "dime_alerts_total"} {
		if v := value(t, fams, name); v != 0 {
			t.Errorf("%s %v before any window", name, v)
		}
	}
	nGauges := 0
	for name, f := range fams {
		if strings.HasPrefix(name, "dime_") && f.GetType() == dto.MetricType_GAUGE && name != "dime_build_info" {
			nGauges++
			if v := value(t, fams, name); !math.IsNaN(v) {
				t.Errorf("%s = %v before any window, want NaN", name, v)
			}
		}
	}
	// 12 of the window, 7 deprecated duplicates, the timestamp.
	if nGauges != 20 {
		t.Errorf("%d gauges before any window, want 20", nGauges)
	}
	for _, name := range []string{"dime_p_value", "dime_dime_nats", "dime_dime", "dime_alert", "dime_last_window_end_timestamp_seconds"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s before any window", name)
		}
	}
	if f, ok := fams["dime_build_info"]; !ok || len(f.Metric) != 1 || f.Metric[0].Gauge.GetValue() != 1 {
		t.Errorf("dime_build_info: %v", f)
	} else {
		labels := map[string]string{}
		for _, l := range f.Metric[0].Label {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["goversion"] != runtime.Version() || labels["version"] == "" || labels["revision"] == "" {
			t.Errorf("dime_build_info labels %v", labels)
		}
	}
	for _, name := range []string{"go_goroutines", "go_memstats_heap_alloc_bytes", "go_build_info"} {
		if _, ok := fams[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	if runtime.GOOS == "linux" {
		for _, name := range []string{"process_cpu_seconds_total", "process_resident_memory_bytes"} {
			if _, ok := fams[name]; !ok {
				t.Errorf("no %s", name)
			}
		}
	}
	if _, ok := fams["dime_change_p_value"]; ok {
		t.Error("baseline metrics without a baseline")
	}

	ws := windows(t, nil)
	for _, w := range ws {
		m.Observe(w)
	}
	last := ws[len(ws)-1]
	fams = Scrape(t, base)
	for name, want := range map[string]float64{
		"dime_dime_nats": last.Result.DiME, "dime_dime_stderr_nats": last.Result.DiMEStdErr, "dime_dime_analytic_nats": last.Result.DiMEAnalytic,
		"dime_dime_normalized": last.Result.DiMENormalized, "dime_mutual_information_nats": last.Result.MutualInformation,
		"dime_p_value": last.Result.PValue, "dime_entropy_x_nats": last.Result.EntropyX, "dime_entropy_y_nats": last.Result.EntropyY, "dime_entropy_joint_nats": last.Result.EntropyJoint,
		// The deprecated names, kept one release.
		"dime_dime": last.Result.DiME, "dime_dime_stderr": last.Result.DiMEStdErr, "dime_dime_analytic": last.Result.DiMEAnalytic,
		"dime_mutual_information": last.Result.MutualInformation, "dime_entropy_x": last.Result.EntropyX, "dime_entropy_y": last.Result.EntropyY, "dime_entropy_joint": last.Result.EntropyJoint,
		"dime_window": 2, "dime_window_rows": 500, "dime_alert": 1,
		"dime_rows_total": 2500, "dime_windows_total": 3, "dime_alerts_total": 3, "dime_skipped_rows_total": 0,
		"dime_last_window_end_timestamp_seconds": 1772366400.5,
	} {
		// The text format prints floats in their shortest exact form, so
		// the values come back bit for bit.
		if got := value(t, fams, name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if math.IsNaN(last.Result.DiME) || math.IsNaN(last.Result.DiMENormalized) {
		t.Fatalf("last window has no estimate: DiME %v, normalized %v", last.Result.DiME, last.Result.DiMENormalized)
	}
	// The normalized score is a gauge of its own, with a help line that says
	// what it is.
	if f := fams["dime_dime_normalized"]; f.GetType() != dto.MetricType_GAUGE || !strings.Contains(f.GetHelp(), "1 if Y = X") {
		t.Errorf("dime_dime_normalized: type %v, help %q", f.GetType(), f.GetHelp())
	}

	// Windows compared with a baseline add the comparison's gauges.
	cfg := stream.DefaultConfig()
	cfg.Features = 32
	ref, _ := stream.New(2, 1, cfg)
	x, y, _ := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 2}, 3000)
	y1 := make([]float64, 3000)
	for i := range y1 {
		y1[i] = y.At(i, 0)
	}
	if err := ref.Add(x.RawMatrix().Data, y1, 3000); err != nil {
		t.Fatal(err)
	}
	ws = windows(t, ref)
	m.Observe(ws[1])
	c := ws[1].Change
	fams = Scrape(t, base)
	for name, want := range map[string]float64{"dime_baseline_dime_nats": c.BaselineDiME, "dime_dime_change_nats": c.Difference,
		"dime_dime_change_stderr_nats": c.StdErr, "dime_change_p_value": c.PValue, "dime_windows_total": 4,
		"dime_baseline_dime": c.BaselineDiME, "dime_dime_change": c.Difference, "dime_dime_change_stderr": c.StdErr} {
		if got := value(t, fams, name); got != want || math.IsNaN(got) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
}

func TestHTTPHabits(t *testing.T) {
	base := serve(t, New(Labels{X: "a,b", Y: "c"}))
	do := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(method, base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	for _, c := range []struct {
		method, path string
		status       int
		body         string // a substring of the body
	}{
		{"GET", "/metrics", 200, "# TYPE dime_dime_nats gauge"},
		{"HEAD", "/metrics", 200, ""},
		{"POST", "/metrics", 405, ""},
		{"PUT", "/metrics", 405, ""},
		{"DELETE", "/metrics", 405, ""},
		{"GET", "/healthz", 200, "ok"},
		{"GET", "/", 200, "/metrics"},
		{"GET", "/nothing", 404, ""},
	} {
		resp, body := do(c.method, c.path)
		if resp.StatusCode != c.status || !strings.Contains(body, c.body) {
			t.Errorf("%s %s: %s, body %.80q", c.method, c.path, resp.Status, body)
		}
		if c.status == 405 {
			allow := resp.Header.Get("Allow")
			if !strings.Contains(allow, "GET") || !strings.Contains(allow, "HEAD") {
				t.Errorf("%s %s: Allow %q", c.method, c.path, allow)
			}
		}
		if c.method == "HEAD" && body != "" {
			t.Errorf("HEAD %s has a body", c.path)
		}
	}
	if resp, _ := do("GET", "/metrics"); !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("Content-Type %q", resp.Header.Get("Content-Type"))
	}
}

// TestMetricsDocumented checks that every dime metric the collector
// describes is named in the package documentation and in docs/monitoring.md,
// so that the lists there stay complete.
func TestMetricsDocumented(t *testing.T) {
	docs := map[string]string{}
	for _, path := range []string{"doc.go", "../../docs/monitoring.md"} {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		docs[path] = string(b)
	}
	ch := make(chan *prometheus.Desc, 64)
	New(Labels{X: "a", Y: "b"}).Describe(ch)
	close(ch)
	re := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	n := 0
	for d := range ch {
		m := re.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("no name in %v", d)
		}
		n++
		for path, text := range docs {
			// docs/monitoring.md quotes names in backquotes; doc.go writes them in prose.
			if !regexp.MustCompile(`\b` + m[1] + `\b`).MatchString(text) {
				t.Errorf("%s is not in %s", m[1], path)
			}
		}
	}
	if n < 21 {
		t.Errorf("%d metrics described", n)
	}
}

// TestNames checks the exposition against Prometheus' naming conventions:
// counters end in _total, estimates in nats carry _nats, the deprecated
// names say so and name their successor.
func TestNames(t *testing.T) {
	ch := make(chan *prometheus.Desc, 64)
	New(Labels{X: "a", Y: "b"}).Describe(ch)
	close(ch)
	m := New(Labels{X: "a", Y: "b"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	m.Observe(windows(t, nil)[0])
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range fams {
		name, help := f.GetName(), f.GetHelp()
		seen[name] = true
		if !strings.HasPrefix(name, "dime_") {
			t.Errorf("%s: no dime_ prefix", name)
		}
		if f.GetType() == dto.MetricType_COUNTER && !strings.HasSuffix(name, "_total") {
			t.Errorf("counter %s without _total", name)
		}
		if strings.HasPrefix(help, "Deprecated: renamed ") {
			succ := strings.TrimSuffix(strings.Fields(help)[2], ";")
			if !strings.HasSuffix(succ, "_nats") || !strings.HasPrefix(succ, name) {
				t.Errorf("%s: deprecated for %q", name, succ)
			}
			continue
		}
		if (strings.Contains(help, "nats") || strings.Contains(name, "entropy") || strings.Contains(name, "mutual")) && !strings.HasSuffix(name, "_nats") {
			t.Errorf("%s: an estimate in nats without the unit in its name", name)
		}
	}
	for _, gs := range [][]gauge{windowGauges} {
		for _, g := range gs {
			if !seen["dime_"+g.name] || (g.old != "" && !seen["dime_"+g.old]) {
				t.Errorf("%s (was %s) not exported", g.name, g.old)
			}
		}
	}
}

// TestBoundLabel: short lists are kept as given; long ones are cut at a
// column, counted and hashed, within MaxLabelBytes; invalid UTF-8 never
// reaches the exposition.
func TestBoundLabel(t *testing.T) {
	if got := boundLabel("a,b,c"); got != "a,b,c" {
		t.Errorf("short: %q", got)
	}
	var cols []string
	for i := range 768 {
		cols = append(cols, fmt.Sprintf("emb_%03d", i))
	}
	long := strings.Join(cols, ",")
	got := boundLabel(long)
	if len(got) > MaxLabelBytes || !strings.HasPrefix(got, "emb_000,emb_001,") || !regexp.MustCompile(`,…\+\d+ more #[0-9a-f]{8}$`).MatchString(got) {
		t.Errorf("long: %q (%d bytes)", got, len(got))
	}
	kept := strings.Count(got, "emb_")
	if !strings.Contains(got, fmt.Sprintf("+%d more", 768-kept)) {
		t.Errorf("long: %q keeps %d columns", got, kept)
	}
	other := boundLabel(strings.Join(append(cols[:767:767], "emb_x"), ","))
	if other == got {
		t.Errorf("two long lists, one label %q", got)
	}
	one := boundLabel(strings.Repeat("é", 200))
	if len(one) > MaxLabelBytes || !utf8.ValidString(one) || !strings.Contains(one, "+1 more") {
		t.Errorf("one long name: %q", one)
	}
	if bad := boundLabel("a\xff,b"); !utf8.ValidString(bad) {
		t.Errorf("invalid UTF-8 kept: %q", bad)
	}
	// A scrape of such labels succeeds.
	m := New(Labels{X: long, Y: "y\xff"})
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}
