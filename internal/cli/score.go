package cli

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/stream"
)

// scoreOutput is score's JSON: the report, and with --baseline the
// comparison with the baseline (monitor --json's fields of the same names).
type scoreOutput struct {
	report
	*baselineChange
}

// baselineFields are the fields of scoreOutput that need --baseline.
var baselineFields = []string{"baseline_dime", "baseline_rows", "dime_change", "dime_change_stderr", "change_df", "change_p_value"}

// withChange adds a comparison with the baseline to the output.
func (o *scoreOutput) withChange(c *monitor.Change) {
	o.baselineChange = changeOf(c)
	rows := number(c.BaselineRows)
	o.BaselineRows = &rows
}

// print prints the output as JSON or a table.
func (o scoreOutput) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return writeJSON(w, o)
	}
	var extra [][2]string
	if o.baselineChange != nil {
		extra = append(extra,
			[2]string{"baseline DiME", fmt.Sprintf("%s (%.0f rows)", fmtNumber(o.BaselineDiME), float64(*o.BaselineRows))},
			[2]string{"change", fmt.Sprintf("%+.6f ± %s (bias-corrected; jackknife over %d blocks of rows)", float64(o.Change), fmtNumber(o.ChangeStdErr), o.ChangeDF+1)},
			[2]string{"change p-value", fmt.Sprintf("%s (the dependence is the baseline's; Student's t, %d df)", fmtPValue(o.ChangePValue), o.ChangeDF)})
	}
	return writeTable(w, o.report, extra...)
}

func runScore(e *env, args []string) error {
	fs := newFlagSet(e, "score", "INPUT... --x COLS --y COLS [flags]")
	var ef estimatorFlags
	ef.register(fs)
	ef.registerRFF(fs)
	ef.registerJSON(fs, false, "print one JSON object instead of a table")
	var in inputFlags
	in.register(fs)
	in.showListing(e, &ef.progress)
	// One decoding goroutine ahead of the estimator: it decodes millions
	// of rows/s where the estimator adds thousands, and each more worker
	// would hold an open file and blocks in memory for nothing.
	in.workers = 1
	save := fs.String("save-state", "", "save the estimator's state to this file (combine shards with dime merge; - for stdout, the report then goes to stderr)")
	force := fs.Bool("force", false, "let --save-state write through a symbolic link, FIFO or device (as the shell's > would)")
	baselinePath := fs.String("baseline", "", "compare the rows with this reference state (from score --save-state) by monitor's change test: its estimator settings are used")
	blocks := fs.Int("baseline-blocks", monitor.DefaultBaselineBlocks, "with --baseline: blocks for the jackknife of the change test (between K and 2K are used; memory: one estimator each)")
	failIf := newGate(fs, scoreOutput{})
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs, err := datasetArgs("score", pos)
	if err != nil {
		return err
	}
	out, err := newOutput(e, "--save-state", *save, *force, inputs...)
	if err != nil {
		return err
	}
	xcols, ycols, err := ef.views()
	if err != nil {
		return err
	}
	// The views' labels are the columns selected (below), patterns
	// expanded: they are set there alone.
	cfg, err := ef.streamConfig(nil, nil)
	if err != nil {
		return err
	}
	if cfg, err = ef.like(cfg, nil, nil); err != nil {
		return err
	}
	var base *stream.Estimator
	if *baselinePath == "" {
		if fs.given("baseline-blocks") {
			return usagef("--baseline-blocks needs --baseline")
		}
		for _, f := range baselineFields {
			if failIf.uses(f) {
				return usagef("--fail-if %s needs --baseline", f)
			}
		}
	} else {
		if *blocks < 2 || *blocks > monitor.MaxBaselineBlocks {
			return usagef("--baseline-blocks %d: want 2 to %d", *blocks, monitor.MaxBaselineBlocks)
		}
		if err := refuseBaselineSettings(fs, "rows"); err != nil {
			return err
		}
		if base, err = readStateFile(*baselinePath); err != nil {
			return err
		}
	}
	// score keeps a fixed working set (the accumulators: 56 MiB at the
	// defaults, D = 256 and 4 groups with the self terms; feature
	// buffers, the reader's pages and blocks: about 45 MB) and
	// streams the garbage of every record batch (about 8 MB of Arrow
	// buffers) through it; the heap grows to (1 + GOGC/100) times the
	// working set between collections. Most of that set holds no
	// pointers, so that a collection costs little: on 200k rows at the
	// defaults GOGC=10 ran 35 collections instead of 12 at GOGC=50, in
	// the same user time (6.5–6.8 s), and lowered the peak RSS from
	// 189–200 to 169 MB. GOGC=5 (63 collections instead of 42 over
	// 300k rows) lowers the peak RSS over 10⁶ rows by 5–9 MiB more
	// (158–159 against 161–167 MiB) for 1% more CPU time (11.04
	// against 10.91 s, runs at the same time); GOGC=2, 2–3 MiB more
	// for 2% (BENCHMARKS.md, "Peak RSS at the analytic defaults").
	// Since io pools the Parquet decoder's value and level buffers,
	// the garbage is mostly its page buffers: 87 collections over 10⁶
	// rows instead of 185, at the same peak RSS.
	defer lowerGC(5)()
	start := time.Now()
	opts, err := in.options(xcols, ycols)
	if err != nil {
		return err
	}
	// The reader is opened with the context that the first SIGINT or
	// SIGTERM cancels once the reading starts (sigs.catch, below).
	sigs := newSignals()
	defer sigs.stop()
	ctx := sigs.Context()
	d, err := resolveDataset(ctx, inputs, opts)
	if err != nil {
		return err
	}
	// The scales and data-dependent bandwidths are chosen on the pilot
	// (readPilot), unless a baseline's or --like state's settings are
	// used; the pilot of a stream is its first rows, which the estimator
	// holds back itself.
	var pilot decode.Pilot
	needPilot := base == nil && cfg.NeedsPilot()
	if needPilot {
		if pilot, opts, err = readPilot(ctx, d, opts, cfg.PilotRows, cfg.Seed); err != nil {
			return err
		}
	}
	// The dataset reader decodes ahead on goroutines of its own while the
	// estimator adds the current block.
	r, err := in.openResolved(ctx, e, d, opts)
	if err != nil {
		return err
	}
	defer r.Close()
	sel := r.Columns()
	cfg.XColumns, cfg.YColumns = sel.X.Labels(), sel.Y.Labels()
	if err := checkStreamMemory(cfg, r.DimX(), r.DimY(), r.HeldBatchBytes()); err != nil {
		return err
	}
	// est takes the rows: the estimator, or with --baseline the batch
	// compared with it.
	var est interface {
		Add(x, y []float64, rows int) error
		Rows() int64
		Skip(n int64)
	}
	var plain *stream.Estimator
	var batch *monitor.Batch
	if base != nil {
		// K blocks when the length is known (Parquet footers), else up to
		// 2K (monitor.Batch): one estimator each, and the scratch.
		n := *blocks + 1
		if r.TotalRows() < 0 {
			n = 2*(*blocks) + 1
		}
		if err := checkBaselineMemory(base.Config(), n); err != nil {
			return err
		}
		batch, err = monitor.NewBatch(r.DimX(), r.DimY(), monitor.Config{Stream: cfg, Baseline: base, BaselineBlocks: *blocks})
		if err != nil {
			return err
		}
		batch.ExpectRows(r.TotalRows())
		est = batch
	} else {
		if needPilot && !pilot.Deferred {
			var sp stream.Pilot
			if sp, err = resolvePilot(strings.Join(inputs, " "), pilot, cfg); err == nil {
				plain, err = stream.NewResolved(r.DimX(), r.DimY(), cfg, sp)
			}
		} else {
			plain, err = stream.New(r.DimX(), r.DimY(), cfg)
		}
		if err != nil {
			return err
		}
		est = plain
	}
	// From here on SIGINT and SIGTERM end the reading: the batch in hand is
	// finished and the result of the rows read so far printed (and saved).
	input := describeInput(inputs, r)
	sigs.catch()
	p := newProgress(e, ef.progress, "score", r.TotalRows()).files(r)
	var skipped int64
	var stopped bool
	for {
		if stopped = sigs.received(); stopped || !r.Next() {
			break
		}
		if err := est.Add(r.X(), r.Y(), r.Rows()); err != nil {
			return err
		}
		skipped = r.Skipped()
		p.update(r.RowsRead())
		if memoryHook != nil {
			memoryHook("stream")
		}
	}
	p.done()
	// A signal wins over an input error (the reader's error is the
	// context's when the signal came during Next): Ctrl-C in a terminal
	// also stops the command writing to a pipe, which cuts the stream.
	if !stopped {
		if err := r.Err(); err != nil {
			if !sigs.received() {
				return inputError(err)
			}
			stopped = true
		} else {
			skipped = r.Skipped()
		}
	}
	warnInput(e, r)
	// The reader is done with (stopped by a signal or --limit, its decoding
	// goroutine may still hold an open file and blocks), and the heap's free
	// pages go back to the system: 9–25 MiB after 10⁵ rows of 20 columns at
	// GOGC=10, 23–70 at GOGC=100 (TestScoreReturnsFreeMemory), which the
	// Result would otherwise keep.
	r.Close()
	releaseMemory()
	est.Skip(skipped)
	if est.Rows() < 2 {
		if stopped {
			return sigs.err(fmt.Sprintf("nothing (%d rows read, need at least 2)", est.Rows()))
		}
		return usagef("%s: %d rows (%d skipped): need at least 2", strings.Join(inputs, " "), est.Rows(), skipped)
	}
	if memoryHook != nil {
		memoryHook("result")
	}
	var res stream.Result
	var change *monitor.Change
	if batch != nil {
		res, change, err = batch.Result()
		plain = batch.Estimator()
	} else {
		res, err = plain.Result()
	}
	if err != nil {
		return err
	}
	if err := out.write(plain.WriteState); err != nil {
		return err
	}
	warnSerial(e, res)
	o := scoreOutput{report: rffReport(res, time.Since(start))}
	o.Input = input
	if stopped {
		o.Partial = true
	}
	if change != nil {
		o.withChange(change)
	}
	// The pilot's rows: those read, or the estimator's first ones, or
	// (a baseline's or --like state's scaling) the state's setting.
	prows, method := pilot.Rows, pilot.Method.String()
	switch {
	case !needPilot:
		prows, method = cfg.PilotRows, ""
	case pilot.Deferred:
		prows = int(min(int64(cmp.Or(cfg.PilotRows, stream.DefaultPilotRows)), plain.Rows()))
	}
	o.report.SetScaling(plain.Scaling(), prows, method)
	warnReport(e, &o.report, r.DimX(), r.DimY(), math.Log(float64(2*cfg.Features)))
	if err := o.print(e.stdout, ef.asJSON); err != nil {
		return err
	}
	if stopped {
		what := "the result of the rows read so far"
		if *save != "" {
			what += " and saved their state to " + *save
		}
		return sigs.err(what)
	}
	met, err := failIf.check(o)
	if err != nil {
		return err
	}
	if len(met) > 0 {
		return gateMet{"--fail-if met: " + strings.Join(met, "; ")}
	}
	return nil
}
