package dimebeam

import (
	"context"
	"fmt"
	"github.com/dime-project/dime/decode"
	"strings"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// Pilot describes the rows on which ChoosePilot chose the settings.
type Pilot struct {
	// Rows is the number of pilot rows read; DimX and DimY are the widths
	// of the views (0 when no pilot was needed).
	Rows, DimX, DimY int
}

// ChoosePilot resolves the settings of cfg that look at the data, the
// columns' scales (Stream.Standardize) and the median and auto bandwidths,
// as dime score resolves them: with stream.ResolvePilot on the first
// Stream.PilotRows rows (default stream.DefaultPilotRows) of the dataset
// that inputs name, its files in path order, rows in file order. It reads
// those rows here, in the launcher. The same rows give the same choices
// whatever the spelling of the inputs (relative or absolute paths) and
// however the rows are cut into files, and with the choices explicit in
// the returned Config (Stream.Scaling, explicit bandwidths) every split
// uses them, so that the splits' states merge. A Config that needs nothing
// from the data is returned as it is.
func ChoosePilot(ctx context.Context, inputs []string, cfg Config) (Config, Pilot, error) {
	c := cfg.Stream
	if !(c.Standardize && c.Scaling.Empty()) && !c.BandwidthX.NeedsData() && !c.BandwidthY.NeedsData() {
		return cfg, Pilot{}, nil
	}
	n := c.PilotRows
	if n <= 0 {
		n = stream.DefaultPilotRows
	}
	opts := cfg.readOptions()
	opts.Prefetch, opts.Values.MaxAbs, opts.Limit = false, vocab.MaxAbsValue, int64(n)
	r, err := decode.OpenDataset(ctx, inputs, nil, opts)
	if err != nil {
		return cfg, Pilot{}, err
	}
	defer r.Close()
	var px, py []float64
	for r.Next() {
		px, py = append(px, r.X()...), append(py, r.Y()...)
	}
	if err := r.Err(); err != nil {
		return cfg, Pilot{}, err
	}
	dx, dy := r.DimX(), r.DimY()
	rows := len(px) / max(dx, 1)
	p, err := stream.ResolvePilot(px, py, rows, dx, dy, c)
	if err != nil {
		return cfg, Pilot{}, fmt.Errorf("%w: choosing the scales and bandwidths on the first %d rows: %s", ErrConfig, rows,
			strings.TrimPrefix(err.Error(), stream.ErrInvalidInput.Error()+": "))
	}
	c.Scaling = p.Scaling
	c.BandwidthX, c.BandwidthY = vocab.Sigma(p.SigmaX), vocab.Sigma(p.SigmaY)
	cfg.Stream = c
	return cfg, Pilot{Rows: rows, DimX: dx, DimY: dy}, nil
}
