package dimebeam

import (
	"context"
	"fmt"
	"strings"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// Pilot describes the rows on which ChoosePilot chose the settings.
type Pilot struct {
	// Rows is the number of pilot rows read; DimX and DimY are the widths
	// of the views (0 when no pilot was needed).
	Rows, DimX, DimY int
	// Method says how the rows were chosen: a seeded sample of a Parquet
	// dataset's rows, or the first rows of other files.
	Method decode.PilotMethod
}

// ChoosePilot resolves the settings of cfg that look at the data, the
// columns' scales (Stream.Standardize) and the median and auto bandwidths,
// as dime score resolves them: with stream.ResolvePilot on the pilot that
// decode.ReadPilot reads, of Stream.PilotRows rows (default
// stream.DefaultPilotRows) of the dataset that inputs name: a sample of a
// Parquet dataset's rows seeded by Stream.Seed, the first rows of other
// files (files in path order). It reads those rows here, in the launcher.
// The same rows give the same choices whatever the spelling of the inputs
// (relative or absolute paths), their order, and however the rows are cut
// into files, and with the choices explicit in the returned Config
// (Stream.Scaling, explicit bandwidths) every split uses them, so that the
// splits' states merge. A Config that needs nothing from the data is
// returned as it is.
func ChoosePilot(ctx context.Context, inputs []string, cfg Config) (Config, Pilot, error) {
	c := cfg.Stream
	if !c.NeedsPilot() {
		return cfg, Pilot{}, nil
	}
	p, what, err := readPilot(ctx, inputs, cfg, c.PilotRows)
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
	return cfg, Pilot{Rows: p.Rows, DimX: p.DimX, DimY: p.DimY, Method: p.Method}, nil
}

// readPilot reads the pilot that dime reads (decode.ReadPilot) of n rows
// (stream.DefaultPilotRows when n ≤ 0) of the dataset that inputs name,
// seeded by cfg.Stream.Seed, and names its rows for messages.
func readPilot(ctx context.Context, inputs []string, cfg Config, n int) (decode.Pilot, string, error) {
	if n <= 0 {
		n = stream.DefaultPilotRows
	}
	opts := cfg.Read.opts
	d, err := dataset.Resolve(ctx, inputs, opts.Files)
	if err != nil {
		return decode.Pilot{}, "", err
	}
	p, err := decode.ReadPilot(ctx, d, opts, n, cfg.Stream.Seed)
	if err != nil {
		return p, "", err
	}
	if p.Deferred {
		return p, "", fmt.Errorf("%w: a pipeline reads files, not a stream", ErrConfig)
	}
	what := fmt.Sprintf("the first %d rows", p.Rows)
	if p.Method == decode.PilotSample {
		what = fmt.Sprintf("a sample of %d of the %d rows", p.Rows, p.Population)
	}
	return p, what, nil
}
