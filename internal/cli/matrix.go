package cli

import (
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/dime-project/dime/rank"
	rpt "github.com/dime-project/dime/report"
)

// defaultMaxPairs is the default --max-pairs of matrix: 63 columns.
const defaultMaxPairs = 2000

// Cost model of a multi-pair run, for matrix's refusal message, fitted to
// rank's measured CPU time at D = 32 (40 candidates, 20,000 rows, one core
// of the development machine under load; rank/study_test.go): per row one
// rank-k update of (2D)² multiply-adds per pair and two per view (with
// their feature maps: 1.1e10 per CPU-second), and per pair the
// eigenproblems of its Result (about 60 of 2D × 2D: 13 ms at D = 32,
// growing as D³).
const (
	updateRate        = 1.1e10 // (2D)² multiply-adds per row and accumulator, per CPU-second
	resultEigenvalues = 60     // eigenproblems per pair at K = 4 with the normalized score
	eigenRate         = 1.2e9  // (2D)³ per CPU-second and eigenproblem
)

// multiSeconds estimates the CPU seconds of a multi-pair run: per million
// rows, and for the results.
func multiSeconds(views, pairs, features int) (perMillion, results float64) {
	p := float64(2 * features)
	perMillion = float64(pairs+2*views) * p * p * 1e6 / updateRate
	results = float64(pairs) * resultEigenvalues * p * p * p / eigenRate
	return perMillion, results
}

func runMatrix(e *env, args []string) error {
	start := time.Now()
	fs := newFlagSet(e, "matrix", "INPUT... --cols 'PATTERN,...' [--plot heat.png] [flags]")
	var m multiFlags
	m.register(fs, defaultMatrixFeatures, nil)
	m.ef.registerJSON(fs, false, "print one JSON object (every pair) instead of a table")
	cols := fs.String("cols", "", "the columns, comma-separated names, globs or slices: every pair of them (and of the --group views) is scored")
	plotPath := fs.String("plot", "", "draw a heatmap of dime_normalized to this .png or .svg file")
	order := fs.String("order", "cluster", "order of the heatmap's rows and columns: cluster (average-linkage clustering on 1 - dime_normalized) or name")
	maxPairs := fs.Int("max-pairs", defaultMaxPairs, "refuse to score more pairs than this (memory and time grow with the pairs: the error estimates both)")
	top := fs.Int("top", 20, "the table lists the first K pairs by DiME (0: all; --json lists every pair)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs, err := datasetArgs("matrix", pos)
	if err != nil {
		return err
	}
	if err := checkInputs("matrix", inputs); err != nil {
		return err
	}
	if err := checkPlotPath(*plotPath); err != nil {
		return err
	}
	if *order != "cluster" && *order != "name" {
		return usagef("--order %q: want cluster or name", *order)
	}
	if *maxPairs < 1 {
		return usagef("--max-pairs %d: want at least 1", *maxPairs)
	}
	if *top < 0 {
		return usagef("--top %d: want 0 (all) or more", *top)
	}
	if fs.given("x") || fs.given("y") {
		return usagef("matrix takes --cols (every pair of them), not --x or --y")
	}
	sel, err := m.ef.Multi("cols", *cols, m.groups, "matrix needs columns: --cols 'pattern,...' (each column one view) or --group name=a,b,c")
	if err != nil {
		return err
	}
	cfg, out, err := m.prepare(e, fs, inputs)
	if err != nil {
		return err
	}
	var plotOut *output
	if *plotPath != "" {
		if plotOut, err = newOutput(e, "--plot", *plotPath, *m.force, inputs...); err != nil {
			return err
		}
	}
	var lay rank.Layout
	opts, err := m.in.options(nil, nil)
	if err != nil {
		return err
	}
	probe := m.in.probe(e, inputs, opts)
	var first []string
	if len(sel) > 0 {
		first = sel[:1]
	} else {
		first = m.groups[0].Columns[:1]
	}
	if len(sel) > 0 {
		labels, widths, err := rank.Expand(probe, sel, first)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for i, l := range labels {
			if seen[l] {
				continue
			}
			seen[l] = true
			lay.AddView(l, []string{l}, widths[i:i+1])
		}
	}
	for _, g := range m.groups {
		labels, widths, err := rank.Expand(probe, g.Columns, first)
		if err != nil {
			return err
		}
		lay.AddView(g.Name, labels, widths)
	}
	V := len(lay.Plan.Views)
	if V < 2 {
		return usagef("matrix needs at least 2 columns or groups, got %d", V)
	}
	pairs := V * (V - 1) / 2
	if pairs > *maxPairs {
		perM, res := multiSeconds(V, pairs, cfg.Stream.Features)
		return usagef("matrix: %d views make %d pairs, more than --max-pairs %d: at D = %d they would take about %s of memory and %.0f CPU-seconds per million rows plus %.0f for the results; select fewer columns, lower --features, or raise --max-pairs",
			V, pairs, *maxPairs, cfg.Stream.Features, fmtBytes(multiMemory(lay.Plan.Views, pairs, cfg)), perM, res)
	}
	perM, resSec := multiSeconds(V, pairs, cfg.Stream.Features)
	if err := checkMultiMemory(fmt.Sprintf("matrix of %d pairs at D = %d (about %.0f CPU-seconds per million rows)", pairs, cfg.Stream.Features, perM+resSec), lay.Plan.Views, pairs, cfg,
		"select fewer columns, or lower --features"); err != nil {
		return err
	}
	// The reader's Y: the first view's first column (read, not scored).
	lay.YColumns = lay.Plan.Views[0].Columns[:1]
	plan := &lay.Plan
	for i := range V {
		plan.OrderX = append(plan.OrderX, i)
		for j := i + 1; j < V; j++ {
			plan.Pairs = append(plan.Pairs, [2]int{i, j})
		}
	}
	// Its width: probe again (a list column counts for its size).
	_, yw, err := rank.Expand(probe, lay.YColumns, lay.YColumns)
	if err != nil {
		return err
	}
	lay.DimY = yw[0]
	plan.Width = lay.DimX + lay.DimY
	res, err := m.run(e, "matrix", inputs, lay, withViews(opts, lay.XColumns, lay.YColumns), cfg)
	if err != nil {
		return err
	}
	defer res.sigs.stop()
	results, err := res.acc.Results()
	if err != nil {
		return err
	}
	if err := m.saveState(out, res.acc); err != nil {
		return err
	}
	o := matrixReport(res.acc, results, res.input, *order)
	o.Partial, o.Pilot, o.PilotRows = res.stopped, res.pilot, res.pilotRows
	o.Elapsed = time.Since(start).Seconds()
	if plotOut != nil {
		img, err := plotMatrix(*plotPath, o)
		if err != nil {
			return err
		}
		if err := plotOut.write(writerTo(img)); err != nil {
			return err
		}
	}
	if m.ef.asJSON {
		err = writeJSON(e.stdout, o)
	} else {
		err = writeMatrixTable(e.stdout, o, *top)
	}
	if err != nil {
		return err
	}
	if res.stopped {
		return res.sigs.err("the matrix of the rows read so far")
	}
	return nil
}

// matrixReport builds matrix's output from the results of every pair, in
// rank order, with the heatmap's order of the views.
func matrixReport(acc *rank.Accumulator, results []rank.PairResult, input, order string) rpt.Matrix {
	o := rpt.MatrixOf(acc, results, input)
	idx := make([]int, len(o.Columns))
	for i := range idx {
		idx[i] = i
	}
	if order == "name" {
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(o.Columns[a], o.Columns[b]) })
	} else {
		idx = clusterOrder(similarity(o))
	}
	for _, i := range idx {
		o.Order = append(o.Order, o.Columns[i])
	}
	return o
}

// similarity returns the symmetric matrix of dime_normalized (1 on the
// diagonal, NaN where unknown), indexed as Columns.
func similarity(o rpt.Matrix) [][]float64 {
	V := len(o.Columns)
	at := map[string]int{}
	for i, c := range o.Columns {
		at[c] = i
	}
	s := make([][]float64, V)
	for i := range s {
		s[i] = make([]float64, V)
		for j := range s[i] {
			s[i][j] = math.NaN()
		}
		s[i][i] = 1
	}
	for _, p := range o.Pairs {
		i, j := at[p.X], at[p.Y]
		s[i][j], s[j][i] = float64(p.DiMENormalized), float64(p.DiMENormalized)
	}
	return s
}

// clusterOrder returns the leaf order of an average-linkage clustering of
// the views on the distance 1 − max(0, min(1, s)) (unknown: 1): views that
// depend on each other end up next to each other. Ties merge the lowest
// indices first, so the order is deterministic.
func clusterOrder(s [][]float64) []int {
	V := len(s)
	dist := func(i, j int) float64 {
		v := s[i][j]
		if math.IsNaN(v) {
			return 1
		}
		return 1 - math.Max(0, math.Min(1, v))
	}
	type cluster struct{ members []int }
	cl := make([]cluster, V)
	for i := range cl {
		cl[i] = cluster{[]int{i}}
	}
	alive := make([]bool, V)
	for i := range alive {
		alive[i] = true
	}
	link := func(a, b cluster) float64 {
		var sum float64
		for _, i := range a.members {
			for _, j := range b.members {
				sum += dist(i, j)
			}
		}
		return sum / float64(len(a.members)*len(b.members))
	}
	for left := V; left > 1; left-- {
		bi, bj, best := -1, -1, math.Inf(1)
		for i := range cl {
			if !alive[i] {
				continue
			}
			for j := i + 1; j < len(cl); j++ {
				if !alive[j] {
					continue
				}
				if d := link(cl[i], cl[j]); d < best {
					bi, bj, best = i, j, d
				}
			}
		}
		// Join so that the closest ends meet.
		a, b := cl[bi].members, cl[bj].members
		if dist(a[0], b[0]) < dist(a[len(a)-1], b[0]) {
			a = reversed(a)
		}
		if dist(a[len(a)-1], b[len(b)-1]) < dist(a[len(a)-1], b[0]) {
			b = reversed(b)
		}
		cl[bi] = cluster{slices.Concat(a, b)}
		alive[bj] = false
	}
	for i := range cl {
		if alive[i] {
			return cl[i].members
		}
	}
	return nil
}

func reversed(v []int) []int {
	out := slices.Clone(v)
	slices.Reverse(out)
	return out
}

func writeMatrixTable(w io.Writer, o rpt.Matrix, top int) error {
	head := newTable(w, 0)
	fmt.Fprintf(head, "input\t%s\n", o.Input)
	rows := fmt.Sprintf("%d", o.Rows)
	if o.Skipped > 0 {
		rows += fmt.Sprintf(" (%d skipped)", o.Skipped)
	}
	if o.Partial {
		rows += " partial"
	}
	fmt.Fprintf(head, "rows\t%s\n", rows)
	fmt.Fprintf(head, "views\t%d (%d pairs)\n", len(o.Columns), o.Count)
	fmt.Fprintf(head, "estimator\trff, D = %d, %s kernel, sigma %s, %d groups (jackknife)\n", o.Features, o.Kernel, o.Sigma, o.Groups)
	shown := o.Pairs
	if top > 0 && top < len(shown) {
		shown = shown[:top]
		fmt.Fprintf(head, "shown\tthe first %d pairs by DiME (--top 0 for all, --json for every field)\n", top)
	}
	if err := head.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := newTable(w, 0)
	fmt.Fprintf(t, "rank\tpair\tdime\t± stderr\tnormalized\tp_value\tq_value\t\n")
	for _, p := range shown {
		fmt.Fprintf(t, "%d\t%s ~ %s\t%s\t%s\t%s\t%s\t%s\t\n", p.Rank, cellText(p.X), cellText(p.Y), fmtSigned(p.DiME), fmtSigned(p.DiMEStdErr), fmtSigned(p.DiMENormalized), fmtPValue(p.PValue), fmtPValue(p.QValue))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nelapsed %.1fs\n", o.Elapsed)
	return err
}

// heatGrid is the heatmap's grid: cell (c, r) is the pair of the views at
// positions c and r of the order.
type heatGrid struct {
	z [][]float64
}

func (g heatGrid) Dims() (c, r int)   { return len(g.z), len(g.z) }
func (g heatGrid) Z(c, r int) float64 { return g.z[r][c] }
func (g heatGrid) X(c int) float64    { return float64(c) }
func (g heatGrid) Y(r int) float64    { return float64(r) }

// nameTicks labels the integer positions with names.
type nameTicks []string

func (t nameTicks) Ticks(min, max float64) []plot.Tick {
	out := make([]plot.Tick, len(t))
	for i, n := range t {
		out[i] = plot.Tick{Value: float64(i), Label: n}
	}
	return out
}

// plotMatrix draws the heatmap of dime_normalized in the output's order,
// the first view at the top left, with a colour bar, on a canvas of
// path's format.
func plotMatrix(path string, o rpt.Matrix) (io.WriterTo, error) {
	V := len(o.Order)
	sim := similarity(o)
	at := map[string]int{}
	for i, c := range o.Columns {
		at[c] = i
	}
	// The colour scale runs from 0 to the largest off-diagonal value (at
	// least 0.05): dependence between different columns is mostly far below
	// the diagonal's 1, which is drawn at the top colour.
	lo, hi := 0.0, 0.05
	for i := range V {
		for j := range V {
			if v := sim[i][j]; i != j && v > hi {
				hi = math.Min(1, v)
			}
		}
	}
	z := make([][]float64, V)
	for r := range V {
		z[r] = make([]float64, V)
		for c := range V {
			// Row r from the top: the view at position V−1−r.
			v := sim[at[o.Order[V-1-r]]][at[o.Order[c]]]
			switch {
			case o.Order[V-1-r] == o.Order[c]:
				v = math.Inf(1) // the diagonal, grey
			case math.IsNaN(v):
				v = 0
			default:
				v = math.Max(lo, math.Min(hi, v))
			}
			z[r][c] = v
		}
	}
	cm := moreland.Kindlmann()
	cm.SetMin(lo)
	cm.SetMax(hi)
	pal := cm.Palette(256)
	hm := plotter.NewHeatMap(heatGrid{z}, pal)
	hm.Min, hm.Max = lo, hi
	hm.Overflow = color.Gray{Y: 0xc8}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("dime_normalized, %d rows, D = %d (colours 0 to %.3g; diagonal grey)", o.Rows, o.Features, hi)
	p.Add(hm)
	names := slices.Clone(o.Order)
	yNames := make([]string, V)
	for r := range V {
		yNames[r] = o.Order[V-1-r]
	}
	fontSize := vg.Points(math.Max(5, math.Min(10, 420/float64(V))))
	// The column names are drawn below the cells by hand (rotated tick
	// labels of the plot overlap the cells).
	p.X.Tick.Marker = plot.ConstantTicks(nil)
	p.Y.Tick.Marker = nameTicks(yNames)
	colStyle := p.Y.Tick.Label
	colStyle.Rotation = math.Pi / 2
	colStyle.XAlign = draw.XRight
	colStyle.YAlign = draw.YCenter
	colStyle.Font.Size = fontSize
	p.Y.Tick.Label.Font.Size = fontSize
	// A hair wider than the cells: the heatmap skips a cell whose corner
	// falls outside the canvas by round-off.
	p.X.Min, p.X.Max = -0.5001, float64(V)-0.4999
	p.Y.Min, p.Y.Max = -0.5001, float64(V)-0.4999
	p.X.Padding, p.Y.Padding = 0, 0
	p.X.LineStyle.Width, p.Y.LineStyle.Width = 0, 0
	p.X.Tick.LineStyle.Width, p.Y.Tick.LineStyle.Width = 0, 0
	bar := plot.New()
	bar.Title.Text = "dime_normalized"
	bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	bar.HideX()
	size := vg.Length(math.Max(6, math.Min(14, 3+0.22*float64(V)))) * vg.Inch
	var canvas vg.CanvasWriterTo
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		canvas = vgsvg.New(size+1.6*vg.Inch, size)
	default:
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(size+1.6*vg.Inch, size), vgimg.UseDPI(110))}
	}
	dc := draw.New(canvas)
	// The plot reserves a line for the column names, which are rotated:
	// leave room below for the longest.
	var longest vg.Length
	for _, n := range names {
		longest = max(longest, colStyle.Width(n))
	}
	left := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X, Y: dc.Min.Y + longest + 8}, Max: vg.Point{X: dc.Min.X + size, Y: dc.Max.Y}}}
	right := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: dc.Min.X + size + 0.2*vg.Inch, Y: dc.Min.Y + size*0.15}, Max: vg.Point{X: dc.Max.X - 0.2*vg.Inch, Y: dc.Max.Y - size*0.15}}}
	p.Draw(left)
	da := p.DataCanvas(left)
	w := da.Max.X - da.Min.X
	for c, n := range names {
		x := da.Min.X + w*vg.Length((float64(c)+0.5)/float64(V))
		dc.FillText(colStyle, vg.Point{X: x, Y: da.Min.Y - 3}, n)
	}
	bar.Draw(right)
	return canvas, nil
}

// fmtBytes formats a size in MiB or GiB.
func fmtBytes(b uint64) string {
	if b >= 1<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20))
}
