package metrics

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"math"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"

	"github.com/dime-project/dime/monitor"
)

// Namespace prefixes every metric of this package.
const Namespace = "dime"

// MaxLabelBytes bounds the value of the labels x and y (see Labels).
const MaxLabelBytes = 128

// Labels are the constant labels of every dime metric: the columns of the
// two views, as the user named them (patterns unexpanded, so that a view of
// 768 embedding columns does not make a label of 768 names). A value longer
// than MaxLabelBytes keeps the first columns that fit and ends with
// ",…+N more #h", h eight hex digits of a hash of the whole list, so that
// monitors of different long lists keep different series; invalid UTF-8 is
// replaced. A monitor exports one series per metric: the labels bound its
// cardinality to the number of monitors.
type Labels struct {
	X, Y string
}

// boundLabel returns the value of a label of the column list s (names
// separated by commas), at most MaxLabelBytes long.
func boundLabel(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= MaxLabelBytes {
		return s
	}
	h := fnv.New32a()
	h.Write([]byte(s))
	cols := strings.Split(s, ",")
	keep := ""
	for i, c := range cols {
		tail := fmt.Sprintf(",…+%d more #%08x", len(cols)-i, h.Sum32())
		next := keep
		if i > 0 {
			next += ","
		}
		next += c
		if len(next)+len(fmt.Sprintf(",…+%d more #%08x", len(cols)-i-1, h.Sum32())) > MaxLabelBytes {
			if keep == "" { // the first name alone is too long: cut it at a rune
				cut := MaxLabelBytes - len(tail)
				for cut > 0 && !utf8.RuneStart(c[cut]) {
					cut--
				}
				return c[:cut] + tail
			}
			return keep + tail
		}
		keep = next
	}
	return keep
}

// gauge is one gauge of the last closed window: its name, the name it had
// before it took a unit suffix (exported as well, for one release, as a
// deprecated duplicate), its help, and its value.
type gauge struct {
	name, old, help string
	value           func(w monitor.Window) float64
}

// estimateGauges are the gauges of the last closed window's estimate of
// one pair.
var estimateGauges = []gauge{
	{"dime_nats", "dime", "DiME of the last closed window (analytic with a jackknife over groups of rows, or over permutations).", func(w monitor.Window) float64 { return w.Result.DiME }},
	{"dime_stderr_nats", "dime_stderr", "Standard error of DiME (jackknife over groups, or over permutations), last closed window.", func(w monitor.Window) float64 { return w.Result.DiMEStdErr }},
	{"dime_analytic_nats", "dime_analytic", "Plug-in analytic DiME of the last closed window (biased upward by about D/rows).", func(w monitor.Window) float64 { return w.Result.DiMEAnalytic }},
	{"dime_normalized", "", "Normalized DiME of the last closed window: DiME / sqrt(DiME(X;X') * DiME(Y;Y')), 0 if independent, 1 if Y = X.", func(w monitor.Window) float64 { return w.Result.DiMENormalized }},
	{"mutual_information_nats", "mutual_information", "Matrix-based mutual information of the last closed window.", func(w monitor.Window) float64 { return w.Result.MutualInformation }},
	{"p_value", "", "p-value of independence of the last closed window.", func(w monitor.Window) float64 { return w.Result.PValue }},
	{"entropy_x_nats", "entropy_x", "Entropy of X in the last closed window.", func(w monitor.Window) float64 { return w.Result.EntropyX }},
	{"entropy_y_nats", "entropy_y", "Entropy of Y in the last closed window.", func(w monitor.Window) float64 { return w.Result.EntropyY }},
	{"entropy_joint_nats", "entropy_joint", "Joint entropy in the last closed window.", func(w monitor.Window) float64 { return w.Result.EntropyJoint }},
}

// positionGauges are the gauges of the last closed window that a monitor
// of one pair and one of many (a ranking) share.
var positionGauges = []gauge{
	{"window", "", "Index of the last closed window (from 0).", func(w monitor.Window) float64 { return float64(w.Index) }},
	{"window_rows", "", "Rows in the last closed window.", func(w monitor.Window) float64 { return float64(w.Rows) }},
	{"alert", "", "1 if the last closed window raised an alert, else 0.", func(w monitor.Window) float64 {
		if w.Alert {
			return 1
		}
		return 0
	}},
}

// windowGauges are the gauges of the last closed window of one pair.
var windowGauges = slices.Concat(estimateGauges, positionGauges)

// baselineGauges are the gauges of the comparison of the last closed window
// with the baseline.
var baselineGauges = []gauge{
	{"baseline_dime_nats", "baseline_dime", "DiME of the baseline (the reference state).", func(w monitor.Window) float64 { return w.Change.BaselineDiME }},
	{"dime_change_nats", "dime_change", "DiME of the last closed window minus the baseline's, corrected for their finite-sample biases.", func(w monitor.Window) float64 { return w.Change.Difference }},
	{"dime_change_stderr_nats", "dime_change_stderr", "Standard error of dime_change_nats.", func(w monitor.Window) float64 { return w.Change.StdErr }},
	{"change_p_value", "", "p-value of the test that the dependence changed from the baseline, last closed window.", func(w monitor.Window) float64 { return w.Change.PValue }},
}

// gauges are the prometheus gauges of a list of gauge: the new names, then
// the deprecated duplicates.
type gauges struct {
	spec     []gauge
	new, old []prometheus.Gauge // old[i] nil for a gauge that was not renamed
}

func newGauges(spec []gauge, make func(name, help string) prometheus.Gauge) gauges {
	g := gauges{spec: spec}
	for _, s := range spec {
		g.new = append(g.new, make(s.name, s.help))
		var old prometheus.Gauge
		if s.old != "" {
			old = make(s.old, fmt.Sprintf("Deprecated: renamed %s_%s; removed in the next release. %s", Namespace, s.name, s.help))
		}
		g.old = append(g.old, old)
	}
	return g
}

func (g gauges) set(w monitor.Window) {
	for i, s := range g.spec {
		v := s.value(w)
		g.new[i].Set(v)
		if g.old[i] != nil {
			g.old[i].Set(v)
		}
	}
}

func (g gauges) collectors() []prometheus.Collector {
	var cs []prometheus.Collector
	for _, c := range g.new {
		cs = append(cs, c)
	}
	for _, c := range g.old {
		if c != nil {
			cs = append(cs, c)
		}
	}
	return cs
}

// Metrics are the Prometheus metrics of one monitor: gauges of the last
// closed window and counters of everything seen. It is a
// prometheus.Collector (register it in a registry of your own), and Handler
// serves it with the Go and process collectors. Observe and the collection
// of a scrape exclude each other, so a scrape never mixes two windows.
type Metrics struct {
	mu  sync.Mutex
	now func() time.Time // the clock of the last-window timestamp

	window                         gauges
	lastEnd                        prometheus.Gauge
	rows, skipped, windows, alerts prometheus.Counter

	// The baseline's gauges are collected once a window with a baseline
	// comparison has been observed.
	haveBaseline bool
	base         gauges

	// rank holds the gauges of a monitor of many pairs (NewRank), nil
	// for one pair.
	rank *rankGauges

	all, baseAll []prometheus.Collector
	labels       prometheus.Labels // the constant labels x and y
}

// New returns the metrics of a monitor of the views with the given labels.
// Until the first window closes, the gauges of the last window are NaN (an
// alert on dime_p_value_nats < 0.01 does not fire on a restart) and the
// counters 0.
func New(l Labels) *Metrics { return newMetrics(l, windowGauges) }

// newMetrics returns the metrics of a monitor with the given gauges of the
// last window.
func newMetrics(l Labels, window []gauge) *Metrics {
	labels := prometheus.Labels{"x": boundLabel(l.X), "y": boundLabel(l.Y)}
	newGauge := func(name, help string) prometheus.Gauge {
		g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help, ConstLabels: labels})
		g.Set(math.NaN())
		return g
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help, ConstLabels: labels})
	}
	m := &Metrics{
		now:     time.Now,
		labels:  labels,
		window:  newGauges(window, newGauge),
		lastEnd: newGauge("last_window_end_timestamp_seconds", "Wall-clock time at which the last window closed, seconds since the Unix epoch (NaN before the first)."),
		rows:    counter("rows_total", "Rows monitored."),
		skipped: counter("skipped_rows_total", "Rows dropped for invalid values or late times."),
		windows: counter("windows_total", "Windows closed."),
		alerts:  counter("alerts_total", "Windows that raised an alert."),
		base:    newGauges(baselineGauges, newGauge),
	}
	m.all = append(m.window.collectors(), m.lastEnd, m.rows, m.skipped, m.windows, m.alerts, buildInfo())
	m.baseAll = m.base.collectors()
	return m
}

// buildInfo is dime_build_info: 1, labelled by the module's version, the
// VCS revision and the Go version of the binary.
func buildInfo() prometheus.Collector {
	version, revision := "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				revision = s.Value
			}
		}
	}
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: Namespace, Name: "build_info",
		Help:        "A metric with a constant '1' value labelled by the version, revision and Go version of the dime binary.",
		ConstLabels: prometheus.Labels{"version": version, "revision": revision, "goversion": runtime.Version()}},
		func() float64 { return 1 })
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range append(m.all[:len(m.all):len(m.all)], m.baseAll...) {
		c.Describe(ch)
	}
	if m.rank != nil {
		for _, c := range m.rank.collectors() {
			c.Describe(ch)
		}
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.all {
		c.Collect(ch)
	}
	if m.haveBaseline {
		for _, c := range m.baseAll {
			c.Collect(ch)
		}
	}
	if m.rank != nil {
		for _, c := range m.rank.collectors() {
			c.Collect(ch)
		}
	}
}

// Observe records a closed window: call it from the monitor's emit function.
func (m *Metrics) Observe(w monitor.Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.window.set(w)
	m.lastEnd.Set(float64(m.now().UnixNano()) / 1e9)
	m.rows.Add(float64(w.Rows))
	m.skipped.Add(float64(w.Skipped))
	m.windows.Inc()
	if w.Change != nil {
		m.haveBaseline = true
		m.base.set(w)
	}
	if w.Alert {
		m.alerts.Inc()
	}
	if m.rank != nil && w.Ranking != nil {
		m.rank.observe(w.Ranking)
	}
}

// Registry returns a new registry holding m and the Go and process
// collectors (go_*, process_*, go_build_info), as a Prometheus exporter
// serves them.
func (m *Metrics) Registry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(m, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewBuildInfoCollector())
	return reg
}

// Handler returns the HTTP handler of a metrics endpoint, in the habits of
// Prometheus exporters:
//
//   - GET or HEAD /metrics: the exposition (text format, or what the scraper
//     negotiates), m with the Go and process collectors; any other method is
//     answered 405 Method Not Allowed with an Allow header;
//   - GET /healthz: 200 "ok" while the handler is served;
//   - GET /: one line pointing to /metrics;
//   - anything else: 404.
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	// Method patterns: "GET" also matches HEAD, and the mux answers other
	// methods 405 with "Allow: GET, HEAD".
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.Registry(), promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "dime monitor: Prometheus metrics at /metrics, health at /healthz")
	})
	return mux
}

// Server serves a Handler on a listener.
type Server struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// The bounds of a metrics server: a scraper or a client that opens
// connections and leaves them idle must not take the process's file
// descriptors, or /healthz with them.
const (
	// MaxConns is the number of connections served at once; more wait to
	// be accepted until one closes.
	MaxConns = 256
	// IdleTimeout closes a keep-alive connection idle this long (a
	// scraper reconnects at its next scrape, which costs little).
	IdleTimeout = 30 * time.Second
)

// idleTimeout is IdleTimeout, but for tests.
var idleTimeout = IdleTimeout

// Serve serves m.Handler on ln in a goroutine of its own, until Close: at
// most MaxConns connections at once, each closed after IdleTimeout idle,
// 5 s to send its request headers and 30 s to read the request and write
// the answer. Errors of the server (a failed accept) are not logged.
func (m *Metrics) Serve(ln net.Listener) *Server {
	srv := &http.Server{
		Handler:           m.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	s := &Server{srv: srv, ln: netutil.LimitListener(ln, MaxConns), done: make(chan error, 1)}
	go func() { s.done <- s.srv.Serve(s.ln) }()
	return s
}

// Addr returns the address served.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Close stops the server, letting scrapes in flight finish for up to a
// second.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = s.srv.Close()
	}
	if serr := <-s.done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
