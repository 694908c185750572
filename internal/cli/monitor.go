package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	dimeio "github.com/dime-project/dime/io"
	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/stream"
)

// windowLine is one JSON line of dime monitor.
type windowLine struct {
	Window        int      `json:"window"`
	StartRow      int64    `json:"start_row"`
	EndRow        int64    `json:"end_row"`
	StartTime     string   `json:"start_time,omitempty"`
	EndTime       string   `json:"end_time,omitempty"`
	Rows          int64    `json:"rows"`
	SkippedRows   int64    `json:"skipped_rows"`
	EffectiveRows number   `json:"effective_rows"`
	Partial       bool     `json:"partial"`
	SigmaX        float64  `json:"sigma_x"`
	SigmaY        float64  `json:"sigma_y"`
	EntropyX      number   `json:"entropy_x"`
	EntropyY      number   `json:"entropy_y"`
	EntropyJoint  number   `json:"entropy_joint"`
	MI            number   `json:"mutual_information"`
	DiME          number   `json:"dime"`
	DiMEStdErr    number   `json:"dime_stderr"`
	DiMEAnalytic  number   `json:"dime_analytic"`
	PValue        number   `json:"p_value"`
	Alert         bool     `json:"alert"`
	AlertReasons  []string `json:"alert_reasons,omitempty"`
}

func newWindowLine(w monitor.Window) windowLine {
	r := w.Result
	l := windowLine{Window: w.Index, StartRow: w.StartRow, EndRow: w.EndRow, Rows: w.Rows, SkippedRows: w.Skipped,
		EffectiveRows: number(r.EffectiveRows), Partial: w.Partial, SigmaX: r.SigmaX, SigmaY: r.SigmaY,
		EntropyX: number(r.EntropyX), EntropyY: number(r.EntropyY), EntropyJoint: number(r.EntropyJoint),
		MI: number(r.MutualInformation), DiME: number(r.DiME), DiMEStdErr: number(r.DiMEStdErr),
		DiMEAnalytic: number(r.DiMEAnalytic), PValue: number(r.PValue), Alert: w.Alert, AlertReasons: w.AlertReasons}
	if !w.StartTime.IsZero() {
		l.StartTime, l.EndTime = w.StartTime.Format(time.RFC3339Nano), w.EndTime.Format(time.RFC3339Nano)
	}
	return l
}

// threshold is a float flag that is unset (nil) until given.
type threshold struct{ v *float64 }

func (t *threshold) String() string {
	if t.v == nil {
		return ""
	}
	return fmt.Sprint(*t.v)
}

func (t *threshold) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("want a finite number")
	}
	t.v = &v
	return nil
}

// block is a copy of one block of the input, handed from the reading
// goroutine to the monitoring one.
type block struct {
	x, y    []float64
	times   []int64
	rows    int
	skipped int64 // rows dropped in this block
}

func runMonitor(e *env, args []string) error {
	fs := newFlagSet(e, "monitor", "INPUT...|- --x COLS --y COLS (--window-rows N | --time-col COL --window DUR | --half-life N) [flags]")
	var ef estimatorFlags
	ef.register(fs)
	ef.registerRFF(fs)
	var in inputFlags
	in.register(fs)
	in.workers = 1 // as for score: the estimator is the bottleneck
	windowRows := fs.Int64("window-rows", 0, "tumbling windows of N rows (with --half-life: rows between reports, default the half-life)")
	timeCol := fs.String("time-col", "", "time column (Arrow timestamp, or int64 epoch in --time-unit) for --window")
	timeUnit := fs.String("time-unit", "s", "unit of an int64 time column: s, ms, us or ns")
	window := fs.Duration("window", 0, "tumbling windows of this duration (e.g. 5m), by --time-col")
	halfLife := fs.Float64("half-life", 0, "exponential decay: a row's weight halves every N rows (a sliding view)")
	above, below, pthr := &threshold{}, &threshold{}, &threshold{}
	fs.Var(above, "alert-above", "alert when DiME exceeds this value")
	fs.Var(below, "alert-below", "alert when DiME falls below this value")
	fs.Var(pthr, "alert-p", "alert when the p-value of independence falls below this value (e.g. 0.01)")
	listen := fs.String("listen", "", "serve Prometheus metrics at this address (host:port; a bare :port binds 127.0.0.1)")
	pilot := fs.Int("pilot-rows", stream.DefaultPilotRows, "rows held back to choose median or auto bandwidths")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs, err := datasetArgs("monitor", pos)
	if err != nil {
		return err
	}
	xcols, ycols, err := ef.views()
	if err != nil {
		return err
	}
	scfg, err := ef.streamConfig(xcols, ycols)
	if err != nil {
		return err
	}
	scfg.PilotRows = *pilot
	kinds := 0
	for _, set := range []bool{*windowRows != 0 && *halfLife == 0, *window != 0, *halfLife != 0} {
		if set {
			kinds++
		}
	}
	switch {
	case kinds != 1:
		return usagef("choose one kind of window: --window-rows N, --time-col COL --window DUR, or --half-life N")
	case *window != 0 && *timeCol == "":
		return usagef("--window needs --time-col")
	case *timeCol != "" && *window == 0:
		return usagef("--time-col needs --window (e.g. --window 5m)")
	case *window < 0:
		return usagef("--window %v: want a positive duration", *window)
	case *windowRows < 0:
		return usagef("--window-rows %d: want at least 1", *windowRows)
	case *halfLife < 0 || math.IsNaN(*halfLife) || math.IsInf(*halfLife, 0):
		return usagef("--half-life %v: want a positive number of rows", *halfLife)
	case pthr.v != nil && !(*pthr.v > 0 && *pthr.v < 1):
		return usagef("--alert-p %v: want a value between 0 and 1", *pthr.v)
	}
	mcfg := monitor.Config{Stream: scfg, WindowRows: *windowRows, Window: *window, HalfLife: *halfLife,
		SkipLate: in.skipInvalid, AlertAbove: above.v, AlertBelow: below.v, AlertP: pthr.v}
	opts, err := in.options(xcols, ycols)
	if err != nil {
		return err
	}
	if *timeCol != "" {
		unit, err := dimeio.ParseTimeUnit(*timeUnit)
		if err != nil {
			return usagef("--time-unit %q: want s, ms, us or ns", *timeUnit)
		}
		opts.TimeColumn, opts.TimeUnit = *timeCol, unit
	}

	var metrics *monitorMetrics
	if *listen != "" {
		addr := *listen
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return usagef("--listen %s: %v", *listen, err)
		}
		metrics = newMonitorMetrics(xcols, ycols)
		srv := &http.Server{Handler: metrics.handler(), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(e.stderr, "dime: serving metrics at http://%s/metrics\n", ln.Addr())
	}

	// From here on SIGINT and SIGTERM end the run cleanly (reporting the
	// window in progress) rather than killing it, even while Open waits for
	// the first bytes of stdin.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	type opened struct {
		r   *dimeio.DatasetReader
		err error
	}
	openc := make(chan opened, 1)
	go func() {
		// The files of a dataset are read in order, one window after
		// another across them.
		r, err := dimeio.OpenDataset(context.Background(), inputs, e.stdin, opts)
		openc <- opened{r, err}
	}()
	var r *dimeio.DatasetReader
	select {
	case <-ctx.Done():
		return nil // interrupted before any row: nothing to report
	case o := <-openc:
		if o.err != nil {
			return inputError(o.err)
		}
		r = o.r
	}
	defer r.Close()
	emit := func(w monitor.Window) error {
		if metrics != nil {
			metrics.observe(w)
		}
		return writeJSON(e.stdout, newWindowLine(w)) // one line, written at once
	}
	mon, err := monitor.New(r.DimX(), r.DimY(), mcfg, emit)
	if err != nil {
		if errors.Is(err, monitor.ErrConfig) {
			return usageError{err}
		}
		return err
	}

	// Read on a goroutine, monitor on this one: a signal can then end the
	// run even while a read blocks on stdin.
	blocks := make(chan block, 2)
	readErr := make(chan error, 1)
	go func() {
		defer close(blocks)
		var skipped int64
		for r.Next() {
			b := block{x: append([]float64(nil), r.X()...), y: append([]float64(nil), r.Y()...), rows: r.Rows()}
			if t := r.Times(); t != nil {
				b.times = append([]int64(nil), t...)
			}
			b.skipped, skipped = r.Skipped()-skipped, r.Skipped()
			select {
			case blocks <- b:
			case <-ctx.Done():
				return
			}
		}
		readErr <- r.Err()
	}()
	for {
		select {
		case <-ctx.Done():
			// SIGINT or SIGTERM: report the current window and stop cleanly.
			return mon.Close()
		case b, ok := <-blocks:
			if !ok {
				var err error
				select {
				case err = <-readErr:
				default:
				}
				// The rows read so far form a last, partial window, also
				// when the input ends with an error.
				if cerr := mon.Close(); cerr != nil {
					return cerr
				}
				if err != nil {
					return inputError(err)
				}
				return nil
			}
			mon.Skip(b.skipped)
			if err := mon.Add(b.x, b.y, b.times, b.rows); err != nil {
				if errors.Is(err, monitor.ErrLate) {
					mon.Close()
					return usageError{err}
				}
				return err
			}
		}
	}
}

// monitorMetrics are the Prometheus metrics of a monitor: gauges of the last
// closed window and counters of rows, labelled by the views' columns.
type monitorMetrics struct {
	reg                              *prometheus.Registry
	dime, analytic, mi, pValue       prometheus.Gauge
	entropyX, entropyY, entropyJoint prometheus.Gauge
	window, alert                    prometheus.Gauge
	rows, skipped, windows, alerts   prometheus.Counter
}

func newMonitorMetrics(xcols, ycols []string) *monitorMetrics {
	labels := prometheus.Labels{"x": strings.Join(xcols, ","), "y": strings.Join(ycols, ",")}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "dime", Name: name, Help: help, ConstLabels: labels})
	}
	counter := func(name, help string) prometheus.Counter {
		return prometheus.NewCounter(prometheus.CounterOpts{Namespace: "dime", Name: name, Help: help, ConstLabels: labels})
	}
	m := &monitorMetrics{
		reg:          prometheus.NewRegistry(),
		dime:         gauge("dime", "DiME (permutations) of the last closed window, nats."),
		analytic:     gauge("dime_analytic", "Analytic DiME of the last closed window, nats."),
		mi:           gauge("mutual_information", "Matrix-based mutual information of the last closed window, nats."),
		pValue:       gauge("p_value", "p-value of independence of the last closed window."),
		entropyX:     gauge("entropy_x", "Entropy of X in the last closed window, nats."),
		entropyY:     gauge("entropy_y", "Entropy of Y in the last closed window, nats."),
		entropyJoint: gauge("entropy_joint", "Joint entropy in the last closed window, nats."),
		window:       gauge("window", "Index of the last closed window."),
		alert:        gauge("alert", "1 if the last closed window raised an alert, else 0."),
		rows:         counter("rows_total", "Rows monitored."),
		skipped:      counter("skipped_rows_total", "Rows dropped for invalid values or late times."),
		windows:      counter("windows_total", "Windows closed."),
		alerts:       counter("alerts_total", "Windows that raised an alert."),
	}
	m.reg.MustRegister(m.dime, m.analytic, m.mi, m.pValue, m.entropyX, m.entropyY, m.entropyJoint,
		m.window, m.alert, m.rows, m.skipped, m.windows, m.alerts)
	return m
}

func (m *monitorMetrics) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return mux
}

// observe records a closed window.
func (m *monitorMetrics) observe(w monitor.Window) {
	r := w.Result
	m.dime.Set(r.DiME)
	m.analytic.Set(r.DiMEAnalytic)
	m.mi.Set(r.MutualInformation)
	m.pValue.Set(r.PValue)
	m.entropyX.Set(r.EntropyX)
	m.entropyY.Set(r.EntropyY)
	m.entropyJoint.Set(r.EntropyJoint)
	m.window.Set(float64(w.Index))
	m.rows.Add(float64(w.Rows))
	m.skipped.Add(float64(w.Skipped))
	m.windows.Inc()
	if w.Alert {
		m.alert.Set(1)
		m.alerts.Inc()
	} else {
		m.alert.Set(0)
	}
}
