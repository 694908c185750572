package cli

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// checkPlotPath refuses a plot file whose format the commands cannot write
// ("-" is a PNG on stdout).
func checkPlotPath(path string) error {
	if path == "" || path == "-" {
		return nil
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return usagef("--plot %q: want a .png or .svg file, or - for a PNG on stdout", path)
}

// plotCompare draws |rff − exact| against D, log-log, one line per quantity,
// with a c/√D guide through the first point of the joint entropy, for a file
// of path's format.
func plotCompare(path string, out compareOutput) (io.WriterTo, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("RFF vs exact on %d rows", out.Exact.Rows)
	p.X.Label.Text = "D (random frequencies)"
	p.Y.Label.Text = "|RFF − exact| (nats)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	errs := compareErrors(out)
	var lines []any
	for i, q := range compareQuantities {
		pts := make(plotter.XYs, 0, len(out.RFF))
		for j, r := range out.RFF {
			if e := errs[i][j]; e > 0 {
				pts = append(pts, plotter.XY{X: float64(r.Features), Y: e})
			}
		}
		if len(pts) > 0 {
			name := q.name
			if q.exact != nil {
				name = strings.TrimSuffix(name, "*") + " (vs exact DiME)"
			}
			lines = append(lines, name, pts)
		}
	}
	if len(out.RFF) > 1 && errs[2][0] > 0 {
		c := errs[2][0] * math.Sqrt(float64(out.RFF[0].Features))
		guide := make(plotter.XYs, len(out.RFF))
		for j, r := range out.RFF {
			guide[j] = plotter.XY{X: float64(r.Features), Y: c / math.Sqrt(float64(r.Features))}
		}
		l, err := plotter.NewLine(guide)
		if err != nil {
			return nil, err
		}
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(l)
		p.Legend.Add("c/√D", l)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, err
	}
	p.Legend.Top = true
	return drawPlots(path, 6*vg.Inch, 4.5*vg.Inch, p)
}

// plotSweep draws DiME (top) and MI_α (bottom) against σ of X on a log axis,
// with the σ that auto picks marked, for a file of path's format.
func plotSweep(path string, out sweepOutput) (io.WriterTo, error) {
	dime, mi := plot.New(), plot.New()
	dime.Title.Text = fmt.Sprintf("DiME and MI against the bandwidth (%d rows)", out.Rows)
	for _, p := range []*plot.Plot{dime, mi} {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Label.Text = "sigma of X"
	}
	dime.Y.Label.Text = "DiME (nats)"
	mi.Y.Label.Text = "MI_alpha (nats)"
	var dp, mp plotter.XYs
	for _, pt := range out.Points {
		dp = append(dp, plotter.XY{X: pt.SigmaX, Y: finite(float64(pt.DiME))})
		mp = append(mp, plotter.XY{X: pt.SigmaX, Y: finite(float64(pt.MI))})
	}
	if err := plotutil.AddLinePoints(dime, "DiME", dp); err != nil {
		return nil, err
	}
	if err := plotutil.AddLinePoints(mi, "MI_alpha", mp); err != nil {
		return nil, err
	}
	for i, p := range []*plot.Plot{dime, mi} {
		p.Legend.Top = true
		mark, err := autoMarker(out.AutoSigmaX, []plotter.XYs{dp, mp}[i])
		if err != nil {
			return nil, err
		}
		p.Add(mark)
	}
	dime.Legend.Add(fmt.Sprintf("auto: sigma %.3g", out.AutoSigmaX), autoLineStyle())
	return drawPlots(path, 6*vg.Inch, 7*vg.Inch, dime, mi)
}

func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}

// autoMarker is a vertical dashed line at sigma across the range of pts.
func autoMarker(sigma float64, pts plotter.XYs) (*plotter.Line, error) {
	_, _, ymin, ymax := plotter.XYRange(pts)
	l, err := plotter.NewLine(plotter.XYs{{X: sigma, Y: ymin}, {X: sigma, Y: ymax}})
	if err != nil {
		return nil, err
	}
	l.LineStyle = autoLineStyle().LineStyle
	return l, nil
}

func autoLineStyle() *plotter.Line {
	l := &plotter.Line{}
	l.LineStyle = draw.LineStyle{Color: plotutil.Color(3), Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)}}
	return l
}

// drawPlots draws plots stacked vertically on a canvas of path's format: SVG
// for .svg, PNG otherwise.
func drawPlots(path string, w, h vg.Length, plots ...*plot.Plot) (io.WriterTo, error) {
	var canvas interface {
		vg.CanvasWriterTo
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(w, h)
	default:
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(w, h)}
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadY: vg.Millimeter * 4, PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	grid := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	return canvas, nil
}
