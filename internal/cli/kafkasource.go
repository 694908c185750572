package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/internal/redact"
	"github.com/dime-project/dime/kafka"
	"github.com/dime-project/dime/monitor"
)

// monitorReader is what monitor reads its rows from: a dataset
// (*decode.DatasetReader) or a Kafka topic (*kafka.Reader).
type monitorReader interface {
	Next() bool
	X() []float64
	Y() []float64
	Times() []int64
	Rows() int
	Skipped() int64
	Err() error
	Close() error
	DimX() int
	DimY() int
	Columns() columns.Selection
}

// errNoRows ends monitor with nothing to report and exit status 0: the
// input ended before its first row.
var errNoRows = errors.New("no rows")

// commitTimeout bounds the commit of a window's offsets.
const commitTimeout = 30 * time.Second

// openKafka opens the input of monitor when it is a kafka:// URL (package
// kafka): ok is false for any other input. It waits for the first message.
func openKafka(ctx context.Context, e *env, inputs []string, opts decode.Options) (r monitorReader, ok bool, err error) {
	if len(inputs) == 0 || !kafka.IsURL(inputs[0]) {
		return nil, false, nil
	}
	switch {
	case len(inputs) > 1:
		return nil, true, usagef("a kafka:// URL is the only input of monitor (got %d inputs)", len(inputs))
	case opts.Files.Format != dataset.Auto:
		return nil, true, usagef("--format with a kafka:// URL: the messages' format goes in the URL (format=json or format=arrow)")
	case len(opts.Files.Where) > 0:
		return nil, true, usagef("--where selects files of a dataset, not messages of a topic")
	}
	src, err := kafka.ParseURL(inputs[0])
	if err != nil {
		return nil, true, asUsage(errors.New(redact.String(err.Error())))
	}
	kr, err := kafka.Open(ctx, kafka.Config{Source: src, X: opts.Columns.X, Y: opts.Columns.Y, TimeColumn: opts.Columns.TimeColumn, TimeUnit: opts.Columns.TimeUnit,
		SkipInvalid: opts.Values.SkipInvalid, MaxAbs: opts.Values.MaxAbs, Limit: opts.Limit, BatchRows: opts.BatchSize,
		Warn: func(s string) { fmt.Fprintf(e.stderr, "dime: warning: %s\n", oneLine(s)) }})
	if errors.Is(err, kafka.ErrNoMessage) {
		// idle=, or a signal, before the first message: nothing to report.
		fmt.Fprintf(e.stderr, "dime: %s\n", oneLine(redact.String(err.Error())))
		return nil, true, errNoRows
	}
	if err != nil {
		if errors.Is(err, kafka.ErrURL) || errors.Is(err, kafka.ErrAuth) {
			return nil, true, asUsage(err)
		}
		return nil, true, err // io's sentinels: inputError makes them exit 2
	}
	return kr, true, nil
}

// committing wraps the emit function of monitor for a source that commits
// what has been emitted (Kafka): after a window is written, the offsets of
// its rows are committed; a commit that fails is a warning (the rows will be
// read again after a restart, never lost).
func committing(e *env, r monitorReader, emit func(monitor.Window) error) func(monitor.Window) error {
	c, ok := r.(interface {
		Commit(context.Context, int64) error
	})
	if !ok {
		return emit
	}
	return func(w monitor.Window) error {
		err := emit(w)
		var gm gateMet
		if err != nil && !errors.As(err, &gm) {
			return err // not written: not committed
		}
		ctx, cancel := context.WithTimeout(context.Background(), commitTimeout)
		defer cancel()
		if cerr := c.Commit(ctx, w.EndRow); cerr != nil {
			fmt.Fprintf(e.stderr, "dime: warning: %s\n", oneLine(cerr.Error()))
		}
		return err
	}
}

// saveMonitorState writes --save-state of monitor: the state of the last
// window; nothing (a warning) when no window closed.
func saveMonitorState(e *env, out *output, mon *monitor.Monitor) error {
	if out == nil || mon == nil {
		return nil
	}
	if err := mon.WriteState(io.Discard); err != nil {
		fmt.Fprintf(e.stderr, "dime: warning: --save-state %s: nothing saved: %v\n", out.path, oneLine(err.Error()))
		return nil
	}
	return out.write(mon.WriteState)
}

// locate names the file and row of a row of a dataset; ok is false for
// other inputs.
func locate(r monitorReader, row int64) (source string, fileRow int64, ok bool) {
	if dr, isDataset := r.(*decode.DatasetReader); isDataset {
		return dr.Locate(row)
	}
	return "", 0, false
}

// kafkaScopes fixes the shuffle scopes of a Kafka input (--shuffle-buffer
// not given): a file's block is a scope, but the blocks of a topic are what
// each poll returned, which depends on timing. Scopes of --batch-size rows
// from the start of each window make the windows depend on the rows only.
func kafkaScopes(r monitorReader, mcfg *monitor.Config, opts decode.Options) {
	if _, ok := r.(*kafka.Reader); ok && mcfg.Stream.ShuffleRows == 0 {
		mcfg.Stream.ShuffleRows = opts.BatchSize
	}
}
