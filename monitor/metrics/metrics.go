package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"

	"github.com/dime-project/dime/monitor"
)

// Namespace prefixes every metric of this package.
const Namespace = "dime"

// Labels are the constant labels of every dime metric: the columns of the
// two views, as the user named them (patterns unexpanded, so that a view of
// 768 embedding columns does not make a label of 768 names).
type Labels struct {
	X, Y string
}

// Metrics are the Prometheus metrics of one monitor: gauges of the last
// closed window and counters of everything seen. It is a
// prometheus.Collector (register it in a registry of your own), and Handler
// serves it with the Go and process collectors. Observe and the collection
// of a scrape exclude each other, so a scrape never mixes two windows.
type Metrics struct {
	mu  sync.Mutex
	now func() time.Time // the clock of the last-window timestamp

	dime, stderr, analytic, normalized prometheus.Gauge
	mi, pValue                         prometheus.Gauge
	entropyX, entropyY, entropyJoint   prometheus.Gauge
	window, windowRows, alert, lastEnd prometheus.Gauge
	rows, skipped, windows, alerts     prometheus.Counter

	// The baseline's gauges are collected once a window with a baseline
	// comparison has been observed.
	haveBaseline                                 bool
	baseline, change, changeStderr, changePValue prometheus.Gauge

	all, base []prometheus.Collector
}

// New returns the metrics of a monitor of the views with the given labels.
func New(l Labels) *Metrics {
	labels := prometheus.Labels{"x": l.X, "y": l.Y}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help, ConstLabels: labels})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help, ConstLabels: labels})
	}
	m := &Metrics{
		now:          time.Now,
		dime:         gauge("dime", "DiME of the last closed window (analytic with a jackknife over groups of rows, or over permutations), nats."),
		stderr:       gauge("dime_stderr", "Standard error of DiME (jackknife over groups, or over permutations), last closed window, nats."),
		analytic:     gauge("dime_analytic", "Plug-in analytic DiME of the last closed window (biased upward by about D/rows), nats."),
		normalized:   gauge("dime_normalized", "Normalized DiME of the last closed window: DiME / sqrt(DiME(X;X') * DiME(Y;Y')), 0 if independent, 1 if Y = X."),
		mi:           gauge("mutual_information", "Matrix-based mutual information of the last closed window, nats."),
		pValue:       gauge("p_value", "p-value of independence of the last closed window."),
		entropyX:     gauge("entropy_x", "Entropy of X in the last closed window, nats."),
		entropyY:     gauge("entropy_y", "Entropy of Y in the last closed window, nats."),
		entropyJoint: gauge("entropy_joint", "Joint entropy in the last closed window, nats."),
		window:       gauge("window", "Index of the last closed window."),
		windowRows:   gauge("window_rows", "Rows in the last closed window."),
		alert:        gauge("alert", "1 if the last closed window raised an alert, else 0."),
		lastEnd:      gauge("last_window_end_timestamp_seconds", "Wall-clock time at which the last window closed, seconds since the Unix epoch."),
		rows:         counter("rows_total", "Rows monitored."),
		skipped:      counter("skipped_rows_total", "Rows dropped for invalid values or late times."),
		windows:      counter("windows_total", "Windows closed."),
		alerts:       counter("alerts_total", "Windows that raised an alert."),
		baseline:     gauge("baseline_dime", "DiME of the baseline (the reference state), nats."),
		change:       gauge("dime_change", "DiME of the last closed window minus the baseline's, nats."),
		changeStderr: gauge("dime_change_stderr", "Standard error of dime_change, nats."),
		changePValue: gauge("change_p_value", "p-value of the test that the dependence changed from the baseline, last closed window."),
	}
	m.all = []prometheus.Collector{m.dime, m.stderr, m.analytic, m.normalized, m.mi, m.pValue, m.entropyX, m.entropyY, m.entropyJoint,
		m.window, m.windowRows, m.alert, m.lastEnd, m.rows, m.skipped, m.windows, m.alerts}
	m.base = []prometheus.Collector{m.baseline, m.change, m.changeStderr, m.changePValue}
	return m
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, c := range append(m.all[:len(m.all):len(m.all)], m.base...) {
		c.Describe(ch)
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
		for _, c := range m.base {
			c.Collect(ch)
		}
	}
}

// Observe records a closed window: call it from the monitor's emit function.
func (m *Metrics) Observe(w monitor.Window) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r := w.Result
	m.dime.Set(r.DiME)
	m.stderr.Set(r.DiMEStdErr)
	m.analytic.Set(r.DiMEAnalytic)
	m.normalized.Set(r.DiMENormalized)
	m.mi.Set(r.MutualInformation)
	m.pValue.Set(r.PValue)
	m.entropyX.Set(r.EntropyX)
	m.entropyY.Set(r.EntropyY)
	m.entropyJoint.Set(r.EntropyJoint)
	m.window.Set(float64(w.Index))
	m.windowRows.Set(float64(w.Rows))
	m.lastEnd.Set(float64(m.now().UnixNano()) / 1e9)
	m.rows.Add(float64(w.Rows))
	m.skipped.Add(float64(w.Skipped))
	m.windows.Inc()
	if c := w.Change; c != nil {
		m.haveBaseline = true
		m.baseline.Set(c.BaselineDiME)
		m.change.Set(c.Difference)
		m.changeStderr.Set(c.StdErr)
		m.changePValue.Set(c.PValue)
	}
	if w.Alert {
		m.alert.Set(1)
		m.alerts.Inc()
	} else {
		m.alert.Set(0)
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
