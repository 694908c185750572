package cli

import (
	"context"
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
		// score keeps a fixed working set (accumulators, feature buffers,
		// the reader's pages and blocks: about 50 MB at the defaults) and
		// streams the garbage of every record batch through it; at Go's
		// default GOGC=100 the heap grows to twice the working set between
		// collections. 50 lowered the peak RSS from 142 to 121 MB on 200k
		// rows (D = 256, P = 5, OpenBLAS) at no measurable cost.
		defer debug.SetGCPercent(debug.SetGCPercent(50))
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
	defer r.Close()
	est, err := stream.New(r.DimX(), r.DimY(), cfg)
	if err != nil {
		return err
	}
	p := newProgress(e, ef.progress, "score", r.TotalRows()).files(r)
	for r.Next() {
		if err := est.Add(r.X(), r.Y(), r.Rows()); err != nil {
			return err
		}
		p.update(r.RowsRead())
	}
	p.done()
	if err := r.Err(); err != nil {
		return inputError(err)
	}
	est.Skip(r.Skipped())
	if est.Rows() < 2 {
		return usagef("%s: %d rows (%d skipped): need at least 2", strings.Join(inputs, " "), est.Rows(), r.Skipped())
	}
	res, err := est.Result()
	if err != nil {
		return err
	}
	if err := out.write(est.WriteState); err != nil {
		return err
	}
	rep := rffReport(res, time.Since(start))
	rep.Input = describeInput(inputs, r)
	return printReport(e.stdout, rep, ef.asJSON)
}
