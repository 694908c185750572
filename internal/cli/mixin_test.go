package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/dimetest"
	"github.com/dime-project/dime/monitor/metrics"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
	"github.com/prometheus/client_golang/prometheus"
)

// mixinDir holds the mixin: alerting and recording rules, their promtool
// tests, a Grafana dashboard.
const mixinDir = "../../deploy/mixin"

// prometheusTool returns the path of a Prometheus binary (prometheus or
// promtool). The test is skipped if it is absent, unless
// DIME_REQUIRE_PROMETHEUS is set (CI installs Debian's prometheus package
// and sets it): then it fails.
func prometheusTool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("DIME_REQUIRE_PROMETHEUS") != "" {
			t.Fatalf("%s not found and DIME_REQUIRE_PROMETHEUS is set: %v", name, err)
		}
		t.Skipf("%s not found (apt-get install prometheus); CI runs this test", name)
	}
	return path
}

// exportedNames returns the names of the metrics the exporter describes.
func exportedNames(t *testing.T) map[string]bool {
	t.Helper()
	ch := make(chan *prometheus.Desc, 256)
	metrics.New(metrics.Labels{X: "a", Y: "b"}).Describe(ch)
	metrics.NewRank(metrics.Labels{X: "a", Y: "b"}, rank.Plan{}, 1).Describe(ch)
	close(ch)
	re := regexp.MustCompile(`fqName: "([a-z_]+)"`)
	names := map[string]bool{}
	for d := range ch {
		if m := re.FindStringSubmatch(d.String()); m != nil {
			names[m[1]] = true
		}
	}
	return names
}

// dashboardExprs returns the PromQL of every target of the dashboard.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mixinDir, "dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string `json:"title"`
		UID    string `json:"uid"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("dashboard.json: %v", err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) < 5 {
		t.Fatalf("dashboard.json: title %q, uid %q, %d panels", d.Title, d.UID, len(d.Panels))
	}
	var exprs []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	return exprs
}

// TestMixinNames checks that the rules and the dashboard read only metrics
// the exporter exports under their current names (no deprecated ones) or
// the mixin's recording rules, so that a rename cannot leave them reading
// nothing.
func TestMixinNames(t *testing.T) {
	exported := exportedNames(t)
	recorded := map[string]bool{}
	var texts []string
	for _, f := range []string{"alerts.yaml", "rules.yaml"} {
		b, err := os.ReadFile(filepath.Join(mixinDir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`record: (\S+)`).FindAllStringSubmatch(string(b), -1) {
			recorded[m[1]] = true
		}
		// The expressions, not the comments or annotations.
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "description:") && !strings.HasPrefix(l, "summary:") {
				texts = append(texts, l)
			}
		}
	}
	texts = append(texts, dashboardExprs(t)...)
	used := 0
	for _, text := range texts {
		for _, name := range regexp.MustCompile(`\bdime[_:][a-z_:0-9]+`).FindAllString(text, -1) {
			used++
			switch {
			case strings.Contains(name, ":"):
				if !recorded[name] {
					t.Errorf("%q reads %s, which no recording rule records", text, name)
				}
			case !exported[name]:
				t.Errorf("%q reads %s, which the exporter does not export", text, name)
			}
		}
	}
	// The deprecated duplicates are exported but must not be read.
	for _, old := range []string{"dime_dime", "dime_dime_stderr", "dime_mutual_information", "dime_dime_change", "dime_baseline_dime"} {
		for _, text := range texts {
			if regexp.MustCompile(`\b` + old + `\b`).MatchString(text) {
				t.Errorf("%q reads the deprecated %s", text, old)
			}
		}
	}
	if used < 20 {
		t.Errorf("only %d metric references found", used)
	}
}

// TestMixinPromtool runs promtool's checks of the rules and their unit
// tests (tests.yaml).
func TestMixinPromtool(t *testing.T) {
	promtool := prometheusTool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", "alerts.yaml", "rules.yaml"}, {"test", "rules", "tests.yaml"}} {
		cmd := exec.Command(promtool, args...)
		cmd.Dir = mixinDir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// monitorProcess is a running dime monitor --listen fed on its stdin.
type monitorProcess struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	tw    *tablewriter.Writer
	addr  string // of its metrics
	done  chan error
}

// startMonitor starts dime monitor on stdin with the given flags and
// returns once it serves metrics. Cleanup closes its input and waits for
// it (killing it after 10 s).
func startMonitor(t *testing.T, args ...string) *monitorProcess {
	t.Helper()
	cmd := exec.Command(dimeBinary, append([]string{"monitor", "-", "--listen", "127.0.0.1:0"}, args...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m := &monitorProcess{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a := regexp.MustCompile(`http://(\S+)/metrics`).FindStringSubmatch(sc.Text()); a != nil {
				select {
				case addr <- a[1]:
				default:
				}
			}
		}
	}()
	go func() { m.done <- cmd.Wait() }()
	t.Cleanup(func() {
		stdin.Close()
		select {
		case <-m.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-m.done
		}
	})
	select {
	case m.addr = <-addr:
	case err := <-m.done:
		t.Fatalf("dime monitor ended: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("dime monitor: no metrics address")
	}
	tw, err := tablewriter.New(stdin, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	m.tw = tw
	return m
}

// promServer is a Prometheus server of the test's own (its own port,
// configuration and data directory).
type promServer struct {
	base string
}

// startPrometheus starts Prometheus scraping the targets (name → address)
// every second with the mixin's rules, evaluated every second, and returns
// once it is ready. Cleanup stops it (SIGTERM, then SIGKILL after 10 s).
func startPrometheus(t *testing.T, targets map[string]string) *promServer {
	t.Helper()
	bin := prometheusTool(t, "prometheus")
	dir := t.TempDir()
	rules, err := filepath.Abs(mixinDir)
	if err != nil {
		t.Fatal(err)
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n")
	fmt.Fprintf(&cfg, "rule_files:\n  - %s\n  - %s\n", filepath.Join(rules, "alerts.yaml"), filepath.Join(rules, "rules.yaml"))
	fmt.Fprintf(&cfg, "scrape_configs:\n  - job_name: dime\n    static_configs:\n")
	for name, addr := range targets {
		fmt.Fprintf(&cfg, "      - targets: ['%s']\n        labels: {stream: '%s'}\n", addr, name)
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	listen := dimetest.FreeAddr(t)
	cmd := exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+listen, "--log.level=warn")
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus log:\n%s", logs.String())
		}
	})
	p := &promServer{base: "http://" + listen}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return p
			}
		}
		select {
		case err := <-done:
			t.Fatalf("prometheus ended: %v\n%s", err, logs.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready after 30 s\n%s", logs.String())
		}
	}
}

// api gets a Prometheus HTTP API path and decodes its data.
func (p *promServer) api(t *testing.T, path string, data any) {
	t.Helper()
	resp, err := http.Get(p.base + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if r.Status != "success" {
		t.Fatalf("%s: %s %s", path, r.Status, r.Error)
	}
	if err := json.Unmarshal(r.Data, data); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// query returns the values of an instant query, by the series' stream
// label.
func (p *promServer) query(t *testing.T, q string) map[string]string {
	t.Helper()
	var d struct {
		Result []struct {
			Metric map[string]string `json:"metric"`
			Value  [2]any            `json:"value"`
		} `json:"result"`
	}
	p.api(t, "/api/v1/query?query="+url.QueryEscape(q), &d)
	out := map[string]string{}
	for _, r := range d.Result {
		s, _ := r.Value[1].(string)
		out[r.Metric["stream"]] = s
	}
	return out
}

// alertStates returns the state ("pending", "firing") of each active alert
// of a rule, by stream label, and the rule's own state and health.
func (p *promServer) alertStates(t *testing.T, rule string) (states map[string]string, ruleState, health string) {
	t.Helper()
	var d struct {
		Groups []struct {
			Rules []struct {
				Name   string `json:"name"`
				State  string `json:"state"`
				Health string `json:"health"`
				Alerts []struct {
					Labels map[string]string `json:"labels"`
					State  string            `json:"state"`
				} `json:"alerts"`
			} `json:"rules"`
		} `json:"groups"`
	}
	p.api(t, "/api/v1/rules?type=alert", &d)
	states = map[string]string{}
	for _, g := range d.Groups {
		for _, r := range g.Rules {
			if r.Name != rule {
				continue
			}
			ruleState, health = r.State, r.Health
			for _, a := range r.Alerts {
				states[a.Labels["stream"]] = a.State
			}
		}
	}
	if health == "" {
		t.Fatalf("no rule %s loaded", rule)
	}
	return states, ruleState, health
}

// waitFor polls cond every 250 ms until it holds or the timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > timeout {
			t.Fatalf("%s: not after %v", what, timeout)
		}
		time.Sleep(250 * time.Millisecond)
	}
	return time.Since(start)
}

// TestPrometheusChangeAlert runs the mixin's rules on a real Prometheus
// server scraping two real dime monitor --listen processes compared with
// the same baseline: one whose dependence switches (sine, then
// independent rows) and one whose dependence stays the baseline's. The
// change alert must be inactive on the first before the switch and fire
// after it, and never fire on the second. Every query of the dashboard
// must also run on the server.
func TestPrometheusChangeAlert(t *testing.T) {
	prometheusTool(t, "prometheus")
	dir := t.TempDir()
	ref, state := filepath.Join(dir, "ref.parquet"), filepath.Join(dir, "ref.state")
	writeData(t, ref, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 81}, 20000)
	if code, _, errs := runBinary(t, nil, "score", ref, "--x", "x0,x1", "--y", "y0,y1", "--features", "64", "--save-state", state); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	args := []string{"--x", "x0,x1", "--y", "y0,y1", "--window-rows", "1000", "--baseline", state}
	sw, null := startMonitor(t, args...), startMonitor(t, args...)
	prom := startPrometheus(t, map[string]string{"switch": sw.addr, "null": null.addr})
	// Before any window: the gauges are NaN, the rule is healthy and
	// nothing fires.
	waitFor(t, "first scrape", 30*time.Second, func() bool { return len(prom.query(t, `up{job="dime"} == 1`)) == 2 })

	// Three windows like the baseline on both.
	windows := func(want int) func() bool {
		return func() bool {
			v := prom.query(t, fmt.Sprintf(`dime_windows_total >= %d`, want))
			return v["switch"] != "" && v["null"] != ""
		}
	}
	writeSynth(t, sw.tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 82}, 3000)
	writeSynth(t, null.tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 83}, 3000)
	waitFor(t, "3 windows scraped", 60*time.Second, windows(3))
	time.Sleep(3 * time.Second) // three evaluations of the rules on them
	if p := prom.query(t, `dime_change_p_value`); p["switch"] == "" || p["null"] == "" {
		t.Fatalf("no change p-values in Prometheus: %v", p)
	}
	states, ruleState, health := prom.alertStates(t, "DimeDependenceChanged")
	if health != "ok" || states["switch"] != "" || states["null"] != "" {
		t.Fatalf("before the switch: rule %s (%s), alerts %v", ruleState, health, states)
	}
	t.Logf("before the switch: rule %s, change p-values %v", ruleState, prom.query(t, `dime_change_p_value`))

	// The switch: independent rows on one, more sine rows on the other.
	writeSynth(t, sw.tw, synth.Spec{Kind: synth.Independent, Dim: 2, Seed: 84}, 3000)
	writeSynth(t, null.tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 85}, 3000)
	took := waitFor(t, "the change alert firing", 60*time.Second, func() bool {
		states, _, _ := prom.alertStates(t, "DimeDependenceChanged")
		return states["switch"] == "firing"
	})
	t.Logf("change alert firing %v after the switch was written; change p-values %v", took.Round(100*time.Millisecond), prom.query(t, `dime_change_p_value`))
	waitFor(t, "6 windows scraped", 60*time.Second, windows(6))
	time.Sleep(3 * time.Second)
	// Never on the null stream: no ALERTS sample for it over the run.
	if a := prom.query(t, `max_over_time(ALERTS{alertname="DimeDependenceChanged"}[10m])`); a["null"] != "" || a["switch"] == "" {
		t.Errorf("ALERTS over the run: %v (want the switching stream only)", a)
	}
	for _, rule := range []string{"DimeMonitorStalled", "DimeSkippedRows", "DimeMonitorDown"} {
		if states, _, health := prom.alertStates(t, rule); len(states) != 0 || health != "ok" {
			t.Errorf("%s: %v (%s)", rule, states, health)
		}
	}

	// Every dashboard query runs on this server and, but for the
	// dashboard's variables, finds series.
	for _, e := range dashboardExprs(t) {
		q := strings.NewReplacer("$job", ".*", "$instance", ".*").Replace(e)
		var d struct {
			Result []json.RawMessage `json:"result"`
		}
		prom.api(t, "/api/v1/query?query="+url.QueryEscape(q), &d)
		if len(d.Result) == 0 && !strings.Contains(q, "ALERTS") && !strings.Contains(q, "dime:") {
			t.Errorf("dashboard query %q: no series", q)
		}
	}
}
