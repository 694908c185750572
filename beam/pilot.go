package dimebeam

import (
	"context"
	"fmt"
	"strings"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// Pilot describes the rows on which ChoosePilot chose the settings: the
// pilot that decode.ReadPilot read, without its rows and columns (X, Y and
// Columns are empty), so that it travels to the workers with a report.
// Rows is the number of pilot rows read; DimX and DimY are the widths of
// the views (0 when no pilot was needed); Method says how the rows were
// chosen: a seeded sample of a Parquet dataset's rows, or the first rows
// of other files.
type Pilot struct{ decode.Pilot }

// Resolve returns the dataset that inputs name (files, directories, globs,
// object-storage URLs): its data files sorted by path, each once, as the
// pipeline's workers resolve them and dime score resolves its arguments.
// A launcher resolves them once, for ChoosePilot (or ChooseRankPilot,
// with RankConfig.Reading) and for the files that an output must not
// overwrite (dataset.Dataset.LocalFiles).
func Resolve(ctx context.Context, inputs []string, cfg Config) (*dataset.Dataset, error) {
	return dataset.Resolve(ctx, inputs, cfg.Read.opts.Files)
}

// ChoosePilot resolves the settings of cfg that look at the data, the
// columns' scales (Stream.Standardize) and the median and auto bandwidths,
// as dime score resolves them: with stream.ResolvePilot on the pilot that
// decode.ReadPilot reads, of Stream.PilotRows rows (default
// stream.DefaultPilotRows) of the dataset d (Resolve): a sample of a
// Parquet dataset's rows seeded by Stream.Seed, the first rows of other
// files (files in path order). It reads those rows here, in the launcher.
// The same rows give the same choices whatever the spelling of the inputs
// (relative or absolute paths), their order, and however the rows are cut
// into files, and with the choices explicit in the returned Config
// (Stream.Scaling, explicit bandwidths) every split uses them, so that the
// splits' states merge. A Config that needs nothing from the data is
// returned as it is, once the first data file is opened with its columns.
// Either way a bad column is reported here, at once, rather than from the
// workers.
func ChoosePilot(ctx context.Context, d *dataset.Dataset, cfg Config) (Config, Pilot, error) {
	c := cfg.Stream
	if !c.NeedsPilot() {
		return cfg, Pilot{}, checkColumns(ctx, d, cfg)
	}
	p, what, err := readPilot(ctx, d, cfg, c.PilotRows)
	if err != nil {
		return cfg, Pilot{}, err
	}
	sp, err := stream.ResolvePilot(p.X, p.Y, p.Rows, p.DimX, p.DimY, c)
	if err != nil {
		return cfg, Pilot{}, fmt.Errorf("%w: choosing the scales and bandwidths on %s: %s", ErrConfig, what,
			strings.TrimPrefix(err.Error(), stream.ErrInvalidInput.Error()+": "))
	}
	c.Scaling = sp.Scaling
	c.BandwidthX, c.BandwidthY = vocab.Sigma(sp.SigmaX), vocab.Sigma(sp.SigmaY)
	cfg.Stream = c
	return cfg, p.description(), nil
}

// checkColumns opens the first data file of d with cfg's columns, as the
// pilot does, and reads no rows.
func checkColumns(ctx context.Context, d *dataset.Dataset, cfg Config) error {
	r, err := decode.OpenInput(ctx, d.Inputs[0], nil, cfg.Read.opts)
	if err != nil {
		return err
	}
	return r.Close()
}

// readPilot reads the pilot that dime reads (decode.ReadPilot) of n rows
// (stream.DefaultPilotRows when n ≤ 0) of the dataset d, seeded by
// cfg.Stream.Seed, and names its rows for messages.
func readPilot(ctx context.Context, d *dataset.Dataset, cfg Config, n int) (Pilot, string, error) {
	if n <= 0 {
		n = stream.DefaultPilotRows
	}
	p, err := decode.ReadPilot(ctx, d, cfg.Read.opts, n, cfg.Stream.Seed)
	if err != nil {
		return Pilot{p}, "", err
	}
	if p.Deferred {
		return Pilot{p}, "", fmt.Errorf("%w: a pipeline reads files, not a stream", ErrConfig)
	}
	what := fmt.Sprintf("the first %d rows", p.Rows)
	if p.Method == decode.PilotSample {
		what = fmt.Sprintf("a sample of %d of the %d rows", p.Rows, p.Population)
	}
	return Pilot{p}, what, nil
}

// description returns the pilot without its rows and columns.
func (p Pilot) description() Pilot {
	p.X, p.Y, p.Columns = nil, nil, columns.Selection{}
	return p
}
