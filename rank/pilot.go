package rank

import (
	"fmt"

	"github.com/dime-project/dime/stream"
)

// ResolvePilot returns cfg with every view's bandwidth and, with
// standardization, its scales (Sigmas, Centers, Scales) chosen on a pilot
// sample of rows rows (block holds rows×plan.Width values, row-major), as
// an Accumulator chooses them on its own first Config.Stream.PilotRows
// rows: per view, stream.ResolvePilot. An Accumulator made with the
// result starts at once. The dime commands give it the pilot of
// decode.ReadPilot (a seeded sample of a Parquet dataset's rows), the one
// dime score uses; what names those rows in errors ("a sample of 1000 of
// the 20000 rows"). A cfg that gives Sigmas is returned as it is.
func ResolvePilot(plan Plan, cfg Config, block []float64, rows int, what string) (Config, error) {
	if len(cfg.Sigmas) > 0 {
		return cfg, nil
	}
	if rows < 0 || plan.Width < 1 || len(block) != rows*plan.Width {
		return cfg, invalidf("pilot of %d rows has %d values, want %d", rows, len(block), rows*max(plan.Width, 0))
	}
	sigma, center, scale, err := resolveViews(plan, cfg.Stream, block, rows, what)
	if err != nil {
		return cfg, err
	}
	cfg.Sigmas, cfg.Centers, cfg.Scales = sigma, center, scale
	return cfg, nil
}

// resolveViews chooses every view's bandwidth and scales on n rows of a
// block, as stream.ResolvePilot does for one pair.
func resolveViews(plan Plan, sc stream.Config, block []float64, n int, what string) (sigma []float64, center, scale [][]float64, err error) {
	if n < 2 {
		return nil, nil, nil, invalidf("%d rows, want at least 2 to choose the scales and bandwidths", n)
	}
	V := len(plan.Views)
	sigma = make([]float64, V)
	if sc.Standardize {
		center, scale = make([][]float64, V), make([][]float64, V)
	}
	acc := Accumulator{plan: plan}
	var buf []float64
	for v, view := range plan.Views {
		buf = acc.viewRows(buf, block, n, v)
		c := sc
		c.BandwidthY = c.BandwidthX
		c.XColumns, c.YColumns = view.Columns, view.Columns
		c.Scaling = stream.Scaling{}
		p, err := stream.ResolvePilot(buf, buf, n, view.Dim(), view.Dim(), c)
		if err != nil {
			msg := err.Error()
			if i := len("X: "); len(msg) > i && msg[:i] == "X: " {
				msg = msg[i:]
			}
			return nil, nil, nil, fmt.Errorf("%w: choosing the scales and bandwidths on %s: %s: %s", ErrInvalidInput, what, view.Name, trimInvalid(msg))
		}
		sigma[v] = p.SigmaX
		if sc.Standardize {
			center[v], scale[v] = p.Scaling.CenterX, p.Scaling.ScaleX
		}
	}
	return sigma, center, scale, nil
}
