package cli

import (
	"errors"
	"flag"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/monitor/metrics"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"

	"github.com/dime-project/dime/redact"
)

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

// monitorFeatures is monitor's default D (--features), half of score's:
// the cost of a window's Result falls about 6 times. RFF DiME grows with D,
// so a window's DiME is lower than score's at D = 256 on the same rows (by
// 6 to 40% on the families measured; dime_normalized by at most 4%): see
// docs/monitoring.md.
const monitorFeatures = 128

// monitorGroups is monitor's default number of jackknife groups (--groups),
// where score's is stream.DefaultGroups (7). A window's Result solves 2.4
// times fewer eigenproblems with 4 groups (0.17 against 0.41 CPU-s at D =
// 128 and 2,000 rows), and the serial test, monitor's default, stays
// calibrated at 2,000-row windows of AR(1) rows with phi = 0.9 (9 of 120
// at 0.05 with 4 groups, 14 with 7: blocks of 250 rows, not 143). The
// p-values do not depend on the groups; the window's DiME keeps the small
// null bias of 4 groups (CALIBRATION.md), at D = 128 with the last level
// of the jackknife at twice the rows of the features at 2,000 rows.
const monitorGroups = 4

// windowFlags are the flags of dime monitor's windows, metrics and gate,
// shared by a monitor of one pair and one of many (--rank-y).
type windowFlags struct {
	windowRows         *int64
	timeCol, timeUnit  *string
	window             *time.Duration
	halfLife           *float64
	listen             *string
	serveAfter         *time.Duration
	failIf             *gate
	failFast           *bool
	rank               cliflag.MonitorRank
	above, below, pthr *threshold
	changeP            *threshold
	baselinePath, save *string
	blocks             *int
}

func runMonitor(e *env, args []string) error {
	fs := newFlagSet(e, "monitor", "INPUT...|-|'kafka://HOST:PORT/TOPIC?group=G&format=json|arrow' (--x COLS --y COLS | --rank-y TARGET --x 'PATTERN,...') (--window-rows N | --time-col COL --window DUR | --half-life N) [flags]")
	var ef estimatorFlags
	ef.register(fs)
	ef.registerRFF(fs)
	ef.registerJSON(fs, true, "print one JSON line per window (--json=false: a table, one line per window)")
	// A monitored stream is a time series: its rows are serial by default.
	ef.Rows = vocab.SerialRows
	if fl := fs.Lookup("rows"); fl != nil {
		fl.DefValue = "serial"
		fl.Usage += " (monitor's default: serial, or iid with --permutations or --groups 1)"
	}
	// A window's Result solves 53 eigenproblems of size 2D whatever its
	// rows: at D = 256 about 1 CPU-second, which caps small windows near
	// 2,000 rows/s; D = 128 makes it about 6 times cheaper.
	ef.Features = monitorFeatures
	ef.Groups = monitorGroups
	if fl := fs.Lookup("groups"); fl != nil {
		fl.DefValue = strconv.Itoa(monitorGroups)
		fl.Usage += " (monitor's default: 4, score's 7, with --rank-y 7; a --baseline's or --like's settings take precedence)"
	}
	if fl := fs.Lookup("features"); fl != nil {
		fl.DefValue = strconv.Itoa(monitorFeatures)
		fl.Usage += fmt.Sprintf(" (monitor's default: 128, score's 256, with --rank-y %d; a --baseline's or --like's settings take precedence)", defaultRankFeatures)
	}
	var in inputFlags
	in.register(fs)
	in.showListing(e, &ef.progress)
	in.workers = 1 // as for score: the estimator is the bottleneck
	var mf windowFlags
	mf.windowRows = fs.Int64("window-rows", 0, "tumbling windows of N rows (with --half-life: rows between reports, default the half-life)")
	mf.timeCol = fs.String("time-col", "", "time column (Arrow timestamp, or int64 epoch in --time-unit) for --window")
	mf.timeUnit = fs.String("time-unit", "s", "unit of an int64 time column: s, ms, us or ns")
	mf.window = fs.Duration("window", 0, "tumbling windows of this duration (e.g. 5m), by --time-col")
	mf.halfLife = fs.Float64("half-life", 0, "exponential decay: a row's weight halves every N rows (a sliding view)")
	mf.above, mf.below, mf.pthr = &threshold{}, &threshold{}, &threshold{}
	fs.Var(mf.above, "alert-above", "alert when DiME exceeds this value")
	fs.Var(mf.below, "alert-below", "alert when DiME falls below this value")
	fs.Var(mf.pthr, "alert-p", "alert when the p-value of independence falls below this value (e.g. 0.01)")
	mf.listen = fs.String("listen", "", "serve Prometheus metrics at this address (host:port; a bare :port binds 127.0.0.1)")
	mf.serveAfter = fs.Duration("serve-after-end", 0, "with --listen: keep serving metrics this long after the input ends (e.g. 5m; SIGINT/SIGTERM stop it)")
	mf.baselinePath = fs.String("baseline", "", "compare each window with this reference state (from score --save-state; with --rank-y from rank --save-state): its estimator settings are used")
	mf.blocks = fs.Int("baseline-blocks", monitor.DefaultBaselineBlocks, "with --baseline: blocks per window for the jackknife of the change test (memory: one estimator each)")
	mf.changeP = &threshold{}
	fs.Var(mf.changeP, "alert-change-p", fmt.Sprintf("with --baseline: alert when the p-value of a change from the baseline falls below this value (e.g. 0.01); with --rank-y: a candidate changed when the Benjamini-Hochberg q-value of its change over the window's candidates falls below it (default %g)", monitor.DefaultRankChangeP))
	mf.failIf = newGate(fs, windowLine{}, rankWindowLine{})
	mf.save = fs.String("save-state", "", "on exit, save the state of the last window (its settings, scales and bandwidths; a restart given it with --like estimates on the same feature maps)")
	mf.failFast = fs.Bool("fail-fast", false, "with --fail-if: stop at the first window that meets the gate (exit 3 at once) instead of at the end of the input")
	mf.rank.Register(fs.FlagSet, monitor.DefaultRankTop)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs, err := datasetArgs("monitor", pos)
	if err != nil {
		return err
	}
	if fs.given("rank-y") {
		return runRankMonitor(e, fs, &ef, &in, &mf, inputs)
	}
	if fs.given("group") || fs.given("top") {
		return usagef("--group and --top need --rank-y (a monitor of many pairs)")
	}
	if err := mf.failIf.only(windowLine{}, "a monitor of one pair"); err != nil {
		return err
	}
	xcols, ycols, err := ef.views()
	if err != nil {
		return err
	}
	if !fs.given("rows") && (ef.Permutations > 0 || ef.Groups < 2) {
		ef.Rows = vocab.IIDRows // serial rows need the analytic estimator over 2 groups or more
	}
	scfg, err := ef.streamConfig(xcols, ycols)
	if err != nil {
		return err
	}
	if ef.Like != "" && *mf.baselinePath != "" {
		return usagef("--like with --baseline: the windows already take the baseline's settings; drop --like")
	}
	if scfg, err = ef.like(scfg, xcols, ycols); err != nil {
		return err
	}
	if err := mf.checkWindows(fs); err != nil {
		return err
	}
	changeP, baselinePath, blocks := mf.changeP, mf.baselinePath, mf.blocks
	switch pthr := mf.pthr; {
	case pthr.v != nil && !(*pthr.v > 0 && *pthr.v < 1):
		return usagef("--alert-p %v: want a value between 0 and 1", *pthr.v)
	case *baselinePath == "" && (changeP.v != nil || fs.given("baseline-blocks")):
		return usagef("--alert-change-p and --baseline-blocks need --baseline")
	case *baselinePath != "" && (*blocks < 2 || *blocks > monitor.MaxBaselineBlocks):
		return usagef("--baseline-blocks %d: want 2 to %d", *blocks, monitor.MaxBaselineBlocks)
	case *baselinePath != "" && *mf.halfLife != 0:
		return usagef("--baseline compares tumbling windows (--window-rows or --window), not --half-life")
	case *mf.save != "" && *baselinePath != "":
		return usagef("--save-state with --baseline: the windows take the baseline's settings; restart with the same --baseline")
	}
	saveOut, err := newOutput(e, "--save-state", *mf.save, false, inputs...)
	if err != nil {
		return err
	}
	if *baselinePath == "" {
		for _, f := range []string{"baseline_dime", "dime_change", "dime_change_stderr", "change_df", "change_p_value"} {
			if mf.failIf.uses(f) {
				return usagef("--fail-if %s needs --baseline", f)
			}
		}
	}
	mcfg := monitor.Config{Stream: scfg, WindowRows: *mf.windowRows, Window: *mf.window, HalfLife: *mf.halfLife,
		SkipLate: in.SkipInvalid, AlertAbove: mf.above.v, AlertBelow: mf.below.v, AlertP: mf.pthr.v}
	if *baselinePath != "" {
		// The windows are estimated as the baseline was: flags that would
		// choose otherwise are refused rather than ignored.
		if err := refuseBaselineSettings(fs, "windows"); err != nil {
			return err
		}
		base, err := readStateFile(*baselinePath)
		if err != nil {
			return err
		}
		mcfg.Baseline, mcfg.BaselineBlocks, mcfg.AlertChangeP = base, *blocks, changeP.v
		if err := checkBaselineMemory(base.Config(), *blocks); err != nil {
			return err
		}
	}
	opts, err := in.options(xcols, ycols)
	if err != nil {
		return err
	}
	if err := mf.timeOptions(&opts); err != nil {
		return err
	}
	ww := &windowWriter{w: e.stdout, stderr: e.stderr, json: ef.asJSON, timed: *mf.window != 0, baseline: mcfg.Baseline != nil}
	warned := false
	newMetrics := func() *metrics.Metrics {
		return metrics.New(metrics.Labels{X: strings.Join(xcols, ","), Y: strings.Join(ycols, ",")})
	}
	return mf.run(e, inputs, opts, mcfg, saveOut, newMetrics, func(w monitor.Window) (any, error) {
		if !warned && w.Result.LooksSerial() {
			warnSerial(e, w.Result)
			warned = true
		}
		return ww.write(w)
	})
}

// checkWindows checks the flags of the windows, the metrics and the gate.
func (mf *windowFlags) checkWindows(fs *flagSet) error {
	explicit := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { explicit[f.Name] = true })
	windowRows, window, halfLife := mf.windowRows, mf.window, mf.halfLife
	switch {
	case explicit["window-rows"] && *windowRows <= 0:
		return usagef("--window-rows %d: want a window of at least 1 row", *windowRows)
	case explicit["window"] && *window <= 0:
		return usagef("--window %v: want a positive duration, e.g. 5m", *window)
	case explicit["half-life"] && !(*halfLife > 0):
		return usagef("--half-life %v: want a positive number of rows", *halfLife)
	}
	kinds := 0
	for _, set := range []bool{*windowRows != 0 && *halfLife == 0, *window != 0, *halfLife != 0} {
		if set {
			kinds++
		}
	}
	switch changeP := mf.changeP; {
	case kinds != 1:
		return usagef("choose one kind of window: --window-rows N, --time-col COL --window DUR, or --half-life N")
	case *window != 0 && *mf.timeCol == "":
		return usagef("--window needs --time-col")
	case *mf.timeCol != "" && *window == 0:
		return usagef("--time-col needs --window (e.g. --window 5m)")
	case *window < 0:
		return usagef("--window %v: want a positive duration", *window)
	case *windowRows < 0:
		return usagef("--window-rows %d: want at least 1", *windowRows)
	case *halfLife < 0 || math.IsNaN(*halfLife) || math.IsInf(*halfLife, 0):
		return usagef("--half-life %v: want a positive number of rows", *halfLife)
	case changeP.v != nil && !(*changeP.v > 0 && *changeP.v < 1):
		return usagef("--alert-change-p %v: want a value between 0 and 1", *changeP.v)
	case *mf.serveAfter < 0:
		return usagef("--serve-after-end %v: want a duration of 0 or more", *mf.serveAfter)
	case *mf.serveAfter > 0 && *mf.listen == "":
		return usagef("--serve-after-end needs --listen")
	case *mf.failFast && !mf.failIf.set():
		return usagef("--fail-fast needs --fail-if")
	}
	return nil
}

// timeOptions sets the time column of time windows.
func (mf *windowFlags) timeOptions(opts *decode.Options) error {
	if *mf.timeCol == "" {
		return nil
	}
	unit, err := columns.ParseTimeUnit(*mf.timeUnit)
	if err != nil {
		return usagef("--time-unit %q: want s, ms, us or ns", *mf.timeUnit)
	}
	opts.Columns.TimeColumn, opts.Columns.TimeUnit = *mf.timeCol, unit
	return nil
}

// run serves the metrics (--listen) and monitors the input: write prints
// each closed window and returns the value of its JSON line, which the
// gate (--fail-if) reads.
func (mf *windowFlags) run(e *env, inputs []string, opts decode.Options, mcfg monitor.Config, saveOut *output,
	newMetrics func() *metrics.Metrics, write func(monitor.Window) (any, error)) error {
	var met *metrics.Metrics
	var srv *metrics.Server
	if *mf.listen != "" {
		addr := *mf.listen
		if strings.HasPrefix(addr, ":") {
			addr = "127.0.0.1" + addr
		}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return usagef("--listen %s: %v", *mf.listen, err)
		}
		met = newMetrics()
		srv = met.Serve(ln)
		defer srv.Close()
		fmt.Fprintf(e.stderr, "dime: serving metrics at http://%s/metrics\n", srv.Addr())
	}

	// From here on SIGINT and SIGTERM end the run cleanly (reporting the
	// window in progress) rather than killing it, even while Open waits for
	// the first bytes of stdin.
	sigs := notifySignals()
	defer sigs.stop()
	var gated int       // windows that met the gate
	var firstMet string // the first of them, and what it met
	err := monitorInput(e, sigs, inputs, opts, mcfg, saveOut, func(w monitor.Window) error {
		if met != nil {
			met.Observe(w)
		}
		line, err := write(w)
		if err != nil {
			return err
		}
		conds, err := mf.failIf.check(line)
		if err != nil || len(conds) == 0 {
			return err
		}
		gated++
		if firstMet == "" {
			firstMet = fmt.Sprintf("window %d: %s", w.Index, strings.Join(conds, "; "))
		}
		if *mf.failFast {
			return gateMet{"--fail-if met in " + firstMet + " (--fail-fast: the rest of the input is not read)"}
		}
		return nil
	})
	if err == nil && gated > 0 {
		err = gateMet{fmt.Sprintf("--fail-if met in %d window(s), first in %s", gated, firstMet)}
	}
	if serr := sigs.err("the windows closed so far and the one in progress"); serr != nil {
		return serr
	}
	if *mf.serveAfter > 0 {
		// The input has ended (or failed): a scrape after a batch job still
		// finds its last window for a while.
		fmt.Fprintf(e.stderr, "dime: input ended; serving metrics at http://%s/metrics for %v more\n", srv.Addr(), *mf.serveAfter)
		t := time.NewTimer(*mf.serveAfter)
		select {
		case <-t.C:
		case <-sigs.Done(): // a signal now ends the wait, not the run: the input was read whole
		}
		t.Stop()
	}
	return err
}

// monitorInput reads the input and feeds it to a monitor, until the input
// ends, fails, or a signal comes; in every case the rows read so far are
// reported as a last (partial) window.
func monitorInput(e *env, sigs *signals, inputs []string, opts decode.Options, mcfg monitor.Config, save *output, emit func(monitor.Window) error) (err error) {
	type opened struct {
		r   monitorReader
		err error
	}
	openc := make(chan opened, 1)
	go func() {
		// Kafka hook (kafkasource.go): a kafka:// URL is read as a member
		// of a consumer group, and each window's offsets are committed
		// once it is written.
		if r, ok, err := openKafka(sigs.Context(), e, inputs, opts); ok {
			openc <- opened{r, err}
			return
		}
		// The files of a dataset are read in order, one window after
		// another across them.
		r, err := decode.OpenDataset(sigs.Context(), inputs, e.stdin, opts)
		openc <- opened{r, err}
	}()
	var r monitorReader
	select {
	case <-sigs.Done():
		return nil // interrupted before any row: nothing to report
	case o := <-openc:
		if sigs.received() { // the signal came first: the open may have failed of it
			if o.err == nil {
				o.r.Close()
			}
			return nil
		}
		if errors.Is(o.err, errNoRows) {
			return nil
		}
		if o.err != nil {
			return inputError(o.err)
		}
		r = o.r
	}
	defer r.Close()
	// No output may write over a file of the dataset, however the dataset
	// names it (a directory, a glob, a file:// URL), as for score.
	if dr, ok := r.(interface{ Dataset() *dataset.Dataset }); ok {
		if err := e.excludeDataset(dr.Dataset()); err != nil {
			return err
		}
	}
	var held int64 // Kafka's fetches are bounded by franz-go, not counted
	if h, ok := r.(interface{ HeldBatchBytes() int64 }); ok {
		held = h.HeldBatchBytes()
	}
	if mcfg.Rank == nil { // a ranking's memory is checked with its plan
		if err := checkStreamMemory(mcfg.Stream, r.DimX(), r.DimY(), held); err != nil {
			return err
		}
	}
	sel := r.Columns()
	warnColumns(e, sel)
	mcfg.Stream.XColumns, mcfg.Stream.YColumns = sel.X.Labels(), sel.Y.Labels()
	if b := mcfg.Baseline; b != nil {
		bc := b.Config()
		if bc.XColumns != nil && (!slices.Equal(bc.XColumns, mcfg.Stream.XColumns) || !slices.Equal(bc.YColumns, mcfg.Stream.YColumns)) {
			fmt.Fprintf(e.stderr, "dime: warning: the baseline was estimated on columns %s / %s, the windows read %s / %s\n",
				strings.Join(bc.XColumns, ","), strings.Join(bc.YColumns, ","), strings.Join(mcfg.Stream.XColumns, ","), strings.Join(mcfg.Stream.YColumns, ","))
		}
	}
	kafkaScopes(r, &mcfg, opts)
	mon, err := monitor.New(r.DimX(), r.DimY(), mcfg, committing(e, r, emit))
	if err != nil {
		if errors.Is(err, monitor.ErrConfig) {
			return asUsage(err)
		}
		return err
	}
	defer func() {
		if serr := saveMonitorState(e, save, mon); err == nil {
			err = serr
		}
	}()

	// The reader honours the signals' context: its Next returns false at
	// the first signal, also while it waits for a block.
	var skipped int64
	for !sigs.received() && r.Next() {
		mon.Skip(r.Skipped() - skipped)
		skipped = r.Skipped()
		if err := mon.Add(r.X(), r.Y(), r.Times(), r.Rows()); err != nil {
			if errors.Is(err, monitor.ErrLate) {
				mon.Close()
				var late *monitor.LateError
				if errors.As(err, &late) {
					// Name the file and the row in it: no row was
					// skipped (--skip-invalid would drop late rows).
					if source, row, ok := locate(r, late.Row); ok {
						return usagef("%s: time column %q, row %d: time goes backwards: %s is before the window that starts at %s (--skip-invalid drops such rows)",
							source, opts.Columns.TimeColumn, row, late.Time.Format(time.RFC3339Nano), late.WindowStart.Format(time.RFC3339Nano))
					}
				}
				source := redact.String(strings.Join(inputs, " "))
				if source == "-" {
					source = "stdin"
				}
				return usagef("%s: time column %q: %v (--skip-invalid drops such rows)", source, opts.Columns.TimeColumn, err)
			}
			return err
		}
	}
	// SIGINT or SIGTERM: report the current window and stop cleanly (the
	// reader's error is then the context's). Otherwise the rows read so
	// far form a last, partial window, also when the input ends with an
	// error.
	if sigs.received() {
		return mon.Close()
	}
	if cerr := mon.Close(); cerr != nil {
		return cerr
	}
	if err := r.Err(); err != nil {
		return inputError(err)
	}
	if dr, ok := r.(*decode.DatasetReader); ok {
		warnInput(e, dr)
	}
	return nil
}

// warnSerial prints one line on stderr when the rows of an iid estimate look
// serially dependent (stream.Result.LooksSerial).
func warnSerial(e *env, r stream.Result) {
	if !r.LooksSerial() {
		return
	}
	fmt.Fprintf(e.stderr, "dime: warning: the rows look serially dependent (lag-1 autocorrelation up to %.2f in X and %.2f in Y): "+
		"the p-value and dime_stderr assume independent rows and are then too small; use --rows serial\n", r.Lag1X, r.Lag1Y)
}
