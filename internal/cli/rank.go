package cli

import (
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
)

// Screening defaults of rank and matrix: the number of frequencies D
// (BENCHMARKS.md and CALIBRATION.md, "Screening defaults", measure the
// ranking error against exact DiME and the cost).
const (
	defaultRankFeatures   = 32
	defaultMatrixFeatures = 32
)

// groupFlags is the repeatable --group name=a,b,c.
type groupFlags []namedGroup

type namedGroup struct {
	name string
	sel  []string
}

func (g *groupFlags) String() string { return "" }

func (g *groupFlags) Set(s string) error {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return fmt.Errorf("want name=col,col,... (a name for the group, then its columns)")
	}
	var sel []string
	for _, c := range strings.Split(list, ",") {
		if c = strings.TrimSpace(c); c == "" {
			return fmt.Errorf("group %q has an empty column name", name)
		}
		sel = append(sel, c)
	}
	for _, o := range *g {
		if o.name == name {
			return fmt.Errorf("group %q given twice", name)
		}
	}
	*g = append(*g, namedGroup{name, sel})
	return nil
}

// multiFlags are the flags shared by rank and matrix.
type multiFlags struct {
	ef     estimatorFlags
	in     inputFlags
	groups groupFlags
	save   *string
	force  *bool
}

func (m *multiFlags) register(fs *flagSet, features int) {
	m.ef.register(fs)
	m.ef.registerRFF(fs)
	m.ef.Features = features
	fs.Lookup("features").DefValue = strconv.Itoa(features)
	m.in.register(fs)
	m.in.showListing(fs.e, &m.ef.progress)
	m.in.workers = 1
	fs.Var(&m.groups, "group", "a named group of columns scored as one view, name=a,b,c (names, globs or slices; repeat for more groups)")
	m.save = fs.String("save-state", "", "save the state of every pair to this file (combine shards with dime merge)")
	m.force = fs.Bool("force", false, "let --save-state or --plot write through a symbolic link, FIFO or device")
}

// config returns the settings of the run.
func (m *multiFlags) config(fs *flagSet) (rank.Config, error) {
	if m.ef.Like != "" {
		if err := m.ef.CheckLike(); err != nil {
			return rank.Config{}, err
		}
		st, err := readRankState(m.ef.Like)
		if err != nil {
			return rank.Config{}, err
		}
		return st.Config(), nil
	}
	cfg, err := m.ef.streamConfig(nil, nil)
	if err != nil {
		return rank.Config{}, err
	}
	switch {
	case cfg.Permutations != 0:
		return rank.Config{}, usagef("--permutations %d: rank and matrix use the analytic estimator (0)", cfg.Permutations)
	case m.ef.Given("sigma-x") || m.ef.Given("sigma-y"):
		return rank.Config{}, usagef("--sigma-x and --sigma-y: one --sigma rule applies to every view")
	case cfg.BandwidthX.Rule == exact.AutoRule:
		return rank.Config{}, usagef("--sigma auto chooses one pair's bandwidths together: use fixed, median or a number")
	case m.ef.PilotRows < 2 || m.ef.PilotRows > stream.MaxPilotRows:
		return rank.Config{}, usagef("--pilot-rows %d: want 2 to %d", m.ef.PilotRows, stream.MaxPilotRows)
	}
	cfg.PilotRows = m.ef.PilotRows
	return rank.Config{Stream: cfg}, nil
}

// prepare parses the selectors of one list flag (optional when --group
// names views), and returns them with the run's settings and its
// --save-state output; need is the usage error when neither names a view.
func (m *multiFlags) prepare(e *env, fs *flagSet, inputs []string, flag, list, need string) ([]string, rank.Config, *output, error) {
	var sel []string
	if strings.TrimSpace(list) != "" {
		var err error
		if sel, err = cliflag.Columns(flag, list); err != nil {
			return nil, rank.Config{}, nil, err
		}
	}
	if len(sel) == 0 && len(m.groups) == 0 {
		return nil, rank.Config{}, nil, usagef("%s", need)
	}
	cfg, err := m.config(fs)
	if err != nil {
		return nil, rank.Config{}, nil, err
	}
	out, err := newOutput(e, "--save-state", *m.save, *m.force, inputs...)
	if err != nil {
		return nil, rank.Config{}, nil, err
	}
	return sel, cfg, out, nil
}

// checkInputs refuses stdin: the views are found by opening the dataset
// before its rows are read.
func checkInputs(command string, inputs []string) error {
	for _, in := range inputs {
		if in == "-" {
			return usagef("%s reads the dataset's columns before its rows: give files, directories or URLs, not - (stdin)", command)
		}
	}
	return nil
}

// expand returns the labels that selectors pick in the dataset (with
// target as the other view) and the width of each: list columns count
// for their list size.
func (m *multiFlags) expand(e *env, inputs, sel, target []string) (labels []string, widths []int, err error) {
	r, err := m.openRaw(e, inputs, sel, target)
	if err != nil {
		return nil, nil, err
	}
	labels = r.Columns().X.Labels()
	total := r.DimX()
	r.Close()
	widths = make([]int, len(labels))
	if total == len(labels) {
		for i := range widths {
			widths[i] = 1
		}
		return labels, widths, nil
	}
	// A list column or a slice among them: one look per label.
	for i, l := range labels {
		r, err := m.openRaw(e, inputs, []string{l}, target)
		if err != nil {
			return nil, nil, err
		}
		widths[i] = r.DimX()
		r.Close()
	}
	return labels, widths, nil
}

// openRaw opens the dataset for the given views.
func (m *multiFlags) openRaw(e *env, inputs, x, y []string) (*decode.DatasetReader, error) {
	opts, err := m.in.options(x, y)
	if err != nil {
		return nil, err
	}
	r, err := decode.OpenDataset(context.Background(), inputs, e.stdin, opts)
	if err != nil {
		return nil, inputError(err)
	}
	if err := e.excludeDataset(r.Dataset()); err != nil {
		r.Close()
		return nil, err
	}
	return r, nil
}

// layout is the views of a run and the reader's columns that hold them.
type layout struct {
	views      []rank.View
	xcols      []string // the reader's X: every view's columns but the target's
	ycols      []string // the reader's Y: the target's (rank), or one column (matrix)
	dimX, dimY int
}

// addView appends a view of the given label columns and widths, read as
// the next columns of the reader's X.
func (l *layout) addView(name string, labels []string, widths []int) {
	v := rank.View{Name: name, Columns: labels}
	for i, w := range widths {
		_ = i
		for range w {
			v.Index = append(v.Index, l.dimX)
			l.dimX++
		}
	}
	l.xcols = append(l.xcols, labels...)
	l.views = append(l.views, v)
}

// multiResult is what a run of rank or matrix read and estimated.
type multiResult struct {
	acc     *rank.Accumulator
	input   string
	stopped bool
	sigs    *signals
	elapsed time.Duration
	// pilot ("sample" or "prefix", "" with --like) and pilotRows say
	// which rows the scales and bandwidths were chosen on.
	pilot     string
	pilotRows int
}

// run reads the dataset through the accumulator of plan.
func (m *multiFlags) run(e *env, command string, inputs []string, lay layout, plan rank.Plan, cfg rank.Config) (_ *multiResult, err error) {
	start := time.Now()
	if m.ef.Like != "" {
		st, err := readRankState(m.ef.Like)
		if err != nil {
			return nil, err
		}
		sp := st.Plan()
		if !slices.EqualFunc(sp.Views, plan.Views, func(a, b rank.View) bool {
			return a.Name == b.Name && slices.Equal(a.Columns, b.Columns) && slices.Equal(a.Index, b.Index)
		}) || !slices.Equal(sp.Pairs, plan.Pairs) {
			return nil, usagef("--like %s: the state scores other views or pairs; give the same columns and groups", m.ef.Like)
		}
	}
	// The reader honours the context that the first SIGINT or SIGTERM
	// cancels once the reading starts (catch, below).
	sigs := newSignals()
	defer func() {
		if err != nil {
			sigs.stop()
		}
	}()
	ctx := sigs.Context()
	d, opts, err := m.in.resolveDataset(ctx, inputs, lay.xcols, lay.ycols)
	if err != nil {
		return nil, err
	}
	// Every view's scales and bandwidth are chosen on the pilot that dime
	// score reads (readPilot), unless a --like state gives them.
	var pilot decode.Pilot
	if len(cfg.Sigmas) == 0 {
		if pilot, err = readPilot(ctx, d, opts, cfg.Stream.PilotRows, cfg.Stream.Seed); err != nil {
			return nil, err
		}
		if pilot.DimX != lay.dimX || pilot.DimY != lay.dimY {
			return nil, fmt.Errorf("%s: the columns changed width while opening the dataset (%d+%d, expected %d+%d)", command, pilot.DimX, pilot.DimY, lay.dimX, lay.dimY)
		}
		block := interleave(nil, pilot.X, pilot.Y, pilot.Rows, lay.dimX, lay.dimY)
		if cfg, err = rank.ResolvePilot(plan, cfg, block, pilot.Rows, pilotRows(pilot)); err != nil {
			return nil, usagef("%s: %s", strings.Join(inputs, " "), strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
		}
	}
	acc, err := rank.New(plan, cfg)
	if err != nil {
		return nil, usageError{err}
	}
	r, err := decode.NewDatasetReader(ctx, d, e.stdin, opts)
	if err != nil {
		return nil, inputError(err)
	}
	defer r.Close()
	if err := e.excludeDataset(r.Dataset()); err != nil {
		return nil, err
	}
	if r.DimX() != lay.dimX || r.DimY() != lay.dimY {
		return nil, fmt.Errorf("%s: the columns changed width while opening the dataset (%d+%d, expected %d+%d)", command, r.DimX(), r.DimY(), lay.dimX, lay.dimY)
	}
	res := &multiResult{acc: acc, input: describeInput(inputs, r), sigs: sigs.catch()}
	if len(cfg.Sigmas) > 0 && pilot.Rows > 0 {
		res.pilot, res.pilotRows = pilot.Method.String(), pilot.Rows
	}
	p := newProgress(e, m.ef.progress, command, r.TotalRows()).files(r)
	dx, dy := lay.dimX, lay.dimY
	var block []float64
	var skipped int64
	for {
		if res.stopped = sigs.received(); res.stopped || !r.Next() {
			break
		}
		n := r.Rows()
		block = interleave(block, r.X(), r.Y(), n, dx, dy)
		if err := acc.Add(block, n); err != nil {
			return nil, usageError{err}
		}
		skipped = r.Skipped()
		p.update(r.RowsRead())
	}
	p.done()
	if !res.stopped {
		if err := r.Err(); err != nil {
			if !sigs.received() {
				return nil, inputError(err)
			}
			res.stopped = true
		} else {
			skipped = r.Skipped()
		}
	}
	warnInput(e, r)
	r.Close()
	acc.Skip(skipped)
	if acc.Rows() < 2 {
		if res.stopped {
			return nil, res.sigs.err(fmt.Sprintf("nothing (%d rows read, need at least 2)", acc.Rows()))
		}
		return nil, usagef("%s: %d rows (%d skipped): need at least 2", strings.Join(inputs, " "), acc.Rows(), skipped)
	}
	res.elapsed = time.Since(start)
	return res, nil
}

// interleave writes n rows of x (dx values each) and y (dy) into dst as
// rows of dx+dy values, growing it as needed, and returns it.
func interleave(dst, x, y []float64, n, dx, dy int) []float64 {
	W := dx + dy
	dst = slices.Grow(dst[:0], n*W)[:n*W]
	for i := range n {
		copy(dst[i*W:i*W+dx], x[i*dx:(i+1)*dx])
		copy(dst[i*W+dx:(i+1)*W], y[i*dy:(i+1)*dy])
	}
	return dst
}

// saveState writes the accumulator's state if asked, after its results.
func (m *multiFlags) saveState(out *output, acc *rank.Accumulator) error {
	return out.write(acc.WriteState)
}

// readRankState reads a multi-pair state; a file that is not one is a usage
// error naming the file.
func readRankState(path string) (*rank.Accumulator, error) {
	return readStateWith(path, rank.ReadState, rank.ErrState)
}

// isRankState reports whether the file at path starts as a multi-pair state.
func isRankState(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	b := make([]byte, len(rank.StateMagic))
	_, err = io.ReadFull(f, b)
	return err == nil && string(b) == rank.StateMagic
}

// checkMultiMemory refuses a plan whose accumulators do not fit.
func checkMultiMemory(what string, views []rank.View, pairs int, cfg rank.Config, fix string) error {
	return checkMemory(what, multiMemory(views, pairs, cfg), fix)
}

// multiMemory estimates the bytes of a multi-pair run: per pair K joint
// accumulators and means; per view (at most two maps, as X and as Y) K part
// accumulators and means, and with the normalized score K copies and self
// joints per map; the feature buffers of a chunk; the base.
func multiMemory(views []rank.View, pairs int, cfg rank.Config) uint64 {
	D := cfg.Stream.Features
	K := uint64(cfg.Stream.GroupCount())
	acc := uint64(covariance.StoredSize(D))
	mean := uint64(16 * D)
	perView := 2 * K * (acc + mean)
	if !cfg.Stream.SkipNormalized {
		perView += 4 * K * acc
	}
	p := uint64(2 * D)
	buffers := uint64(len(views)) * 4 * 256 * p * 8
	return uint64(pairs)*K*(acc+mean) + uint64(len(views))*perView + buffers + baseMemory
}

// rankCandidate is one line of dime rank's output.
type rankCandidate struct {
	Rank           int      `json:"rank"`
	Name           string   `json:"name"`
	Columns        []string `json:"columns"`
	DiME           number   `json:"dime"`
	DiMEStdErr     number   `json:"dime_stderr"`
	DiMENormalized number   `json:"dime_normalized"`
	PValue         number   `json:"p_value"`
	QValue         number   `json:"q_value"`
	DiMEAnalytic   number   `json:"dime_analytic"`
	MI             number   `json:"mutual_information"`
	SigmaX         number   `json:"sigma_x"`
}

// rankOutput is dime rank's JSON.
type rankOutput struct {
	Estimator   string          `json:"estimator"`
	Input       string          `json:"input"`
	Rows        int64           `json:"rows"`
	Skipped     int64           `json:"skipped_rows"`
	Target      []string        `json:"target"`
	Kernel      string          `json:"kernel"`
	Alpha       float64         `json:"alpha"`
	Features    int             `json:"features"`
	Groups      int             `json:"groups"`
	Seed        uint64          `json:"seed"`
	Sigma       string          `json:"sigma_rule"`
	SigmaY      number          `json:"sigma_y"`
	Standardize bool            `json:"standardize"`
	Pilot       string          `json:"pilot,omitempty"` // "sample" or "prefix": the rows the scales and bandwidths were chosen on
	PilotRows   int             `json:"pilot_rows,omitempty"`
	Candidates  []rankCandidate `json:"candidates"`
	Count       int             `json:"candidates_total"`
	Partial     bool            `json:"partial,omitempty"`
	Elapsed     float64         `json:"elapsed_seconds"`
}

func runRank(e *env, args []string) error {
	start := time.Now()
	fs := newFlagSet(e, "rank", "INPUT... --y TARGET --x 'PATTERN,...' [--group NAME=A,B] [flags]")
	var m multiFlags
	m.register(fs, defaultRankFeatures)
	m.ef.registerJSON(fs, false, "print one JSON object instead of a table")
	asCSV := fs.Bool("csv", false, "print the table as CSV (one line per candidate)")
	top := fs.Int("top", 0, "print only the first K candidates (0: all)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	inputs, err := datasetArgs("rank", pos)
	if err != nil {
		return err
	}
	if err := checkInputs("rank", inputs); err != nil {
		return err
	}
	if m.ef.asJSON && *asCSV {
		return usagef("--json and --csv: choose one")
	}
	if *top < 0 {
		return usagef("--top %d: want 0 (all) or more", *top)
	}
	ysel, err := cliflag.Columns("y", m.ef.Y)
	if err != nil {
		return usagef("rank needs --y: the target's columns")
	}
	xsel, cfg, out, err := m.prepare(e, fs, inputs, "x", m.ef.X,
		"rank needs candidates: --x 'pattern,...' (each column one candidate) or --group name=a,b,c")
	if err != nil {
		return err
	}
	if _, err := m.in.options(ysel, ysel); err != nil {
		return err
	}
	// The views: every --x column (a list or slice counts for its width)
	// but the target's own, then the groups, then the target.
	var lay layout
	tlabels, twidths, err := m.expand(e, inputs, ysel, ysel)
	if err != nil {
		return err
	}
	isTarget := map[string]bool{}
	for _, l := range tlabels {
		isTarget[l] = true
	}
	if len(xsel) > 0 {
		labels, widths, err := m.expand(e, inputs, xsel, ysel)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		for i, l := range labels {
			if isTarget[l] || seen[l] {
				continue
			}
			seen[l] = true
			lay.addView(l, []string{l}, widths[i:i+1])
		}
	}
	for _, g := range m.groups {
		labels, widths, err := m.expand(e, inputs, g.sel, ysel)
		if err != nil {
			return err
		}
		lay.addView(g.name, labels, widths)
	}
	if len(lay.views) == 0 {
		return usagef("rank: no candidate left once the target's columns are set aside")
	}
	plan := rank.Plan{}
	target := rank.View{Name: strings.Join(tlabels, ","), Columns: tlabels}
	for i, w := range twidths {
		_ = i
		for range w {
			target.Index = append(target.Index, lay.dimX+lay.dimY)
			lay.dimY++
		}
	}
	lay.ycols = tlabels
	for i := range lay.views {
		plan.Pairs = append(plan.Pairs, [2]int{i, len(lay.views)})
		plan.OrderX = append(plan.OrderX, i)
	}
	plan.Views = append(slices.Clone(lay.views), target)
	plan.OrderY = []int{len(lay.views)}
	plan.Width = lay.dimX + lay.dimY
	if err := checkMultiMemory(fmt.Sprintf("rank of %d candidates at D = %d", len(lay.views), cfg.Stream.Features), plan.Views, len(plan.Pairs), cfg, "lower --features, or rank fewer candidates per run"); err != nil {
		return err
	}
	res, err := m.run(e, "rank", inputs, lay, plan, cfg)
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
	o := rankReport(res.acc, results, res.input)
	o.Partial, o.Pilot, o.PilotRows = res.stopped, res.pilot, res.pilotRows
	o.Elapsed = time.Since(start).Seconds()
	if *top > 0 && *top < len(o.Candidates) {
		o.Candidates = o.Candidates[:*top]
	}
	switch {
	case m.ef.asJSON:
		err = writeJSON(e.stdout, o)
	case *asCSV:
		err = o.writeCSV(e.stdout)
	default:
		err = o.writeTable(e.stdout)
	}
	if err != nil {
		return err
	}
	if res.stopped {
		return res.sigs.err("the ranking of the rows read so far")
	}
	return nil
}

// rankReport builds rank's output from the results of every pair, in rank
// order.
func rankReport(acc *rank.Accumulator, results []rank.PairResult, input string) rankOutput {
	plan := acc.Plan()
	cfg := acc.Settings()
	target := plan.Views[plan.OrderY[0]]
	o := rankOutput{Estimator: "rff", Input: input, Rows: acc.Rows(), Target: target.Columns, Kernel: cfg.Kernel.String(), Alpha: cfg.Alpha,
		Features: cfg.Features, Groups: cfg.GroupCount(), Seed: cfg.Seed, Sigma: cfg.BandwidthX.String(),
		Standardize: cfg.Standardize, Count: len(results)}
	if len(results) > 0 {
		o.Skipped = results[0].SkippedRows
		o.SigmaY = number(results[0].SigmaY)
	}
	sorted := slices.Clone(results)
	slices.SortStableFunc(sorted, func(a, b rank.PairResult) int { return a.Rank - b.Rank })
	for _, r := range sorted {
		v := plan.Views[r.X]
		o.Candidates = append(o.Candidates, rankCandidate{Rank: r.Rank, Name: v.Name, Columns: v.Columns, DiME: number(r.DiME), DiMEStdErr: number(r.DiMEStdErr),
			DiMENormalized: number(r.DiMENormalized), PValue: number(r.PValue), QValue: number(r.QValue), DiMEAnalytic: number(r.DiMEAnalytic),
			MI: number(r.MutualInformation), SigmaX: number(r.SigmaX)})
	}
	return o
}

// fmtSigned formats a DiME for the table.
func fmtSigned(v number) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	return fmt.Sprintf("%.5f", float64(v))
}

func (o rankOutput) writeTable(w io.Writer) error {
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
	fmt.Fprintf(head, "target\t%s\n", cellText(strings.Join(o.Target, ", ")))
	fmt.Fprintf(head, "estimator\trff, D = %d, %s kernel, sigma %s, %d groups (jackknife)\n", o.Features, o.Kernel, o.Sigma, o.Groups)
	if o.Pilot != "" {
		fmt.Fprintf(head, "pilot\tscales and bandwidths chosen on %s\n", describePilotRows(o.Pilot, o.PilotRows))
	}
	shown := ""
	if len(o.Candidates) < o.Count {
		shown = fmt.Sprintf(" (first %d shown)", len(o.Candidates))
	}
	fmt.Fprintf(head, "candidates\t%d%s; q: Benjamini-Hochberg over all %d\n", o.Count, shown, o.Count)
	if err := head.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	t := newTable(w, 0)
	fmt.Fprintf(t, "rank\tcandidate\tdime\t± stderr\tnormalized\tp_value\tq_value\t\n")
	for _, c := range o.Candidates {
		name := c.Name
		if len(c.Columns) > 1 || c.Columns[0] != c.Name {
			name += " (" + strings.Join(c.Columns, ",") + ")"
		}
		fmt.Fprintf(t, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Rank, cellText(name), fmtSigned(c.DiME), fmtSigned(c.DiMEStdErr), fmtSigned(c.DiMENormalized), fmtPValue(c.PValue), fmtPValue(c.QValue))
	}
	if err := t.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nelapsed %.1fs\n", o.Elapsed)
	return err
}

func (o rankOutput) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"rank", "candidate", "columns", "dime", "dime_stderr", "dime_normalized", "p_value", "q_value", "rows"})
	f := func(v number) string {
		if math.IsNaN(float64(v)) {
			return ""
		}
		return strconv.FormatFloat(float64(v), 'g', -1, 64)
	}
	for _, c := range o.Candidates {
		_ = cw.Write([]string{strconv.Itoa(c.Rank), c.Name, strings.Join(c.Columns, ";"), f(c.DiME), f(c.DiMEStdErr), f(c.DiMENormalized), f(c.PValue), f(c.QValue), strconv.FormatInt(o.Rows, 10)})
	}
	cw.Flush()
	return cw.Error()
}

// mergeRankStates merges multi-pair states (of rank or matrix) and prints
// the result as the command that wrote them does.
func mergeRankStates(e *env, paths []string, out *output, asJSON bool) error {
	start := time.Now()
	total, err := mergeFiles(paths, readRankState)
	if err != nil {
		return err
	}
	results, err := total.Results()
	if err != nil {
		return err
	}
	if err := out.write(total.WriteState); err != nil {
		return err
	}
	input := fmt.Sprintf("%d states", len(paths))
	plan := total.Plan()
	if len(plan.OrderY) == 1 {
		o := rankReport(total, results, input)
		o.Elapsed = time.Since(start).Seconds()
		if asJSON {
			return writeJSON(e.stdout, o)
		}
		return o.writeTable(e.stdout)
	}
	o := matrixReport(total, results, input, "cluster")
	o.Elapsed = time.Since(start).Seconds()
	if asJSON {
		return writeJSON(e.stdout, o)
	}
	return o.writeTable(e.stdout, 20)
}
