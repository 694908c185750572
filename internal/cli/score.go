package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/dime-project/dime/stream"
)

func runScore(e *env, args []string) error {
	fs := newFlagSet(e, "score", "INPUT... --x COLS --y COLS [flags]")
	var ef estimatorFlags
	ef.register(fs)
	ef.registerRFF(fs)
	ef.registerJSON(fs, false, "print one JSON object instead of a table")
	var in inputFlags
	in.register(fs)
	// One decoding goroutine ahead of the estimator: it decodes millions
	// of rows/s where the estimator adds thousands, and each more worker
	// would hold an open file and blocks in memory for nothing.
	in.workers = 1
	save := fs.String("save-state", "", "save the estimator's state to this file (combine shards with dime merge; - for stdout, the report then goes to stderr)")
	force := fs.Bool("force", false, "let --save-state write through a symbolic link, FIFO or device (as the shell's > would)")
	pilot := fs.Int("pilot-rows", stream.DefaultPilotRows, "rows held back to choose median or auto bandwidths")
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
	cfg, err := ef.streamConfig(xcols, ycols)
	if err != nil {
		return err
	}
	if *pilot < 2 {
		return usagef("--pilot-rows %d: want at least 2", *pilot)
	}
	cfg.PilotRows = *pilot
	if _, set := os.LookupEnv("GOGC"); !set {
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
		defer debug.SetGCPercent(debug.SetGCPercent(5))
	}
	start := time.Now()
	if _, err := in.options(xcols, ycols); err != nil {
		return err
	}
	// The dataset reader decodes ahead on goroutines of its own while the
	// estimator adds the current block.
	r, err := in.open(context.Background(), e, inputs, xcols, ycols)
	if err != nil {
		return err
	}
	cfg.XColumns, cfg.YColumns = r.Columns()
	if err := checkStreamMemory(cfg, r.DimX(), r.DimY()); err != nil {
		r.Close()
		return err
	}
	est, err := stream.New(r.DimX(), r.DimY(), cfg)
	if err != nil {
		r.Close()
		return err
	}
	// From here on SIGINT and SIGTERM end the reading: the batch in hand is
	// finished and the result of the rows read so far printed (and saved).
	input := describeInput(inputs, r)
	sigs := notifySignals()
	defer sigs.stop()
	src := newBlocks(r)
	defer src.close()
	p := newProgress(e, ef.progress, "score", r.TotalRows()).files(r)
	var skipped int64
	var stopped bool
	for {
		var ok bool
		if ok, stopped = src.next(sigs.Done()); !ok || stopped {
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
	// A signal wins over an input error: Ctrl-C in a terminal also stops
	// the command writing to a pipe, which cuts the stream.
	if !stopped {
		if err := r.Err(); err != nil {
			if sigs.err("") == nil {
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
	src.close()
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
	res, err := est.Result()
	if err != nil {
		return err
	}
	if err := out.write(est.WriteState); err != nil {
		return err
	}
	warnSerial(e, res)
	rep := rffReport(res, time.Since(start))
	rep.Input = input
	if stopped {
		rep.Partial = true
	}
	if err := printReport(e.stdout, rep, ef.asJSON); err != nil {
		return err
	}
	if stopped {
		what := "the result of the rows read so far"
		if *save != "" {
			what += " and saved their state to " + *save
		}
		return sigs.err(what)
	}
	return nil
}
