package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/stream"
)

// The pilot of every command that reads a dataset (score, exact, compare,
// sweep, rank, matrix) is read by decode.ReadPilot: a seeded sample of the
// rows of a Parquet dataset, the first rows of other files, and the first
// rows of the one reading of a stream (stdin), which a streaming estimator
// holds back itself. The settings are then chosen on it by
// stream.ResolvePilot (rank.ResolvePilot for rank and matrix).

// resolveDataset resolves a command's dataset once, for the pilot and for
// the reading (openResolved), with the reader options of its views
// (options).
func resolveDataset(ctx context.Context, args []string, opts decode.Options) (*dataset.Dataset, error) {
	d, err := dataset.Resolve(ctx, args, opts.Files)
	if err != nil {
		return nil, inputError(err)
	}
	return d, nil
}

// openResolved opens a dataset that resolveDataset resolved, and warns
// about its columns (warnColumns).
func (f *inputFlags) openResolved(ctx context.Context, e *env, d *dataset.Dataset, opts decode.Options) (*decode.DatasetReader, error) {
	r, err := decode.NewDatasetReader(ctx, d, e.stdin, opts)
	if err != nil {
		return nil, inputError(err)
	}
	if err := e.excludeDataset(r.Dataset()); err != nil {
		r.Close()
		return nil, err
	}
	warnColumns(e, r.Columns())
	return r, nil
}

// readPilot reads the pilot of at most rows rows (0: the default) of a
// resolved dataset (decode.ReadPilot), and returns the reader options opts
// of the reading that follows, bound to the columns that the pilot
// selected on the first input (decode.Options.Selected), so that they are
// not selected again.
func readPilot(ctx context.Context, d *dataset.Dataset, opts decode.Options, rows int, seed uint64) (decode.Pilot, decode.Options, error) {
	if rows <= 0 {
		rows = stream.DefaultPilotRows
	}
	p, err := decode.ReadPilot(ctx, d, opts, rows, seed)
	if err != nil {
		return p, opts, inputError(err)
	}
	if !p.Deferred {
		opts.Selected = &p.Columns
	}
	return p, opts, nil
}

// pilotRows names the rows of a pilot in messages.
func pilotRows(p decode.Pilot) string {
	if p.Method == decode.PilotSample {
		return fmt.Sprintf("a sample of %d of the %d rows", p.Rows, p.Population)
	}
	return fmt.Sprintf("the first %d rows", p.Rows)
}

// describePilotRows names the rows of a report's pilot ("sample",
// "prefix" or "" if not known).
func describePilotRows(method string, rows int) string {
	switch method {
	case "sample":
		return fmt.Sprintf("a seeded sample of %d rows", rows)
	case "prefix":
		return fmt.Sprintf("the first %d rows", rows)
	}
	return fmt.Sprintf("%d rows", rows)
}

// resolvePilot chooses the data-dependent settings of cfg on a pilot that
// was read (stream.ResolvePilot), with a usage error naming the input and
// the rows.
func resolvePilot(input string, p decode.Pilot, cfg stream.Config) (stream.Pilot, error) {
	sp, err := stream.ResolvePilot(p.X, p.Y, p.Rows, p.DimX, p.DimY, cfg)
	if err != nil {
		return sp, usagef("%s: choosing the scales and bandwidths on %s: %s", input, pilotRows(p),
			strings.TrimPrefix(err.Error(), stream.ErrInvalidInput.Error()+": "))
	}
	return sp, nil
}
