package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/rank"
	rpt "github.com/dime-project/dime/report"
)

// Screening defaults of rank and matrix: the number of frequencies D
// (BENCHMARKS.md and CALIBRATION.md, "Screening defaults", measure the
// ranking error against exact DiME and the cost).
const (
	defaultRankFeatures   = cliflag.DefaultRankFeatures
	defaultMatrixFeatures = cliflag.DefaultRankFeatures
)

// multiFlags are the flags shared by rank and matrix.
type multiFlags struct {
	ef     estimatorFlags
	in     inputFlags
	groups cliflag.Groups
	save   *string
	force  *bool
}

// register adds the flags of rank (with r: --group, --top, --csv) or
// matrix (r nil: --group), features the default of --features.
func (m *multiFlags) register(fs *flagSet, features int, r *cliflag.Rank) {
	m.ef.register(fs)
	m.ef.registerRFF(fs)
	if r != nil {
		r.Register(fs.FlagSet, &m.ef.Estimator, features)
	} else {
		m.ef.RegisterMulti(fs.FlagSet, &m.groups, features)
	}
	m.in.register(fs)
	m.in.showListing(fs.e, &m.ef.progress)
	m.in.workers = 1
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
	if err := m.ef.checkProgress(); err != nil {
		return rank.Config{}, err
	}
	cfg, err := m.ef.MultiConfig()
	if err != nil {
		return rank.Config{}, err
	}
	if err := checkRFFMemory(m.ef.Features, m.ef.Permutations, m.ef.Groups); err != nil {
		return rank.Config{}, err
	}
	return rank.Config{Stream: cfg}, nil
}

// prepare returns the run's settings and its --save-state output.
func (m *multiFlags) prepare(e *env, fs *flagSet, inputs []string) (rank.Config, *output, error) {
	cfg, err := m.config(fs)
	if err != nil {
		return rank.Config{}, nil, err
	}
	out, err := newOutput(e, "--save-state", *m.save, *m.force, inputs...)
	if err != nil {
		return rank.Config{}, nil, err
	}
	return cfg, out, nil
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

// probe returns the prober of the dataset's columns (rank.Probe), which
// opens it with the reader options opts (options) for the views probed.
func (in *inputFlags) probe(e *env, inputs []string, opts decode.Options) rank.Probe {
	return func(x, y []string) ([]string, int, error) {
		r, err := in.openRaw(e, inputs, withViews(opts, x, y))
		if err != nil {
			return nil, 0, err
		}
		defer r.Close()
		return r.Columns().X.Labels(), r.DimX(), nil
	}
}

// rankLayout returns the layout of a ranking of the candidates (xsel and
// the groups) against the target (ysel) in the dataset: every --x column
// (a list or slice counts for its width) but the target's own, then the
// groups, then the target; and the reader options of its views.
func (in *inputFlags) rankLayout(e *env, command string, inputs, ysel, xsel []string, groups []rank.Group) (rank.Layout, decode.Options, error) {
	opts, err := in.options(nil, nil)
	if err != nil {
		return rank.Layout{}, opts, err
	}
	lay, err := rank.RankLayout(in.probe(e, inputs, opts), ysel, xsel, groups)
	if errors.Is(err, rank.ErrInvalidInput) {
		return lay, opts, usagef("%s: %s", command, strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
	}
	return lay, withViews(opts, lay.XColumns, lay.YColumns), err
}

// withViews returns the reader options opts for the views x and y.
func withViews(opts decode.Options, x, y []string) decode.Options {
	opts.Columns = columns.Spec{X: x, Y: y}
	return opts
}

// openRaw opens the dataset with the reader options opts.
func (in *inputFlags) openRaw(e *env, inputs []string, opts decode.Options) (*decode.DatasetReader, error) {
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

// run reads the dataset, with the reader options opts of the layout's
// views, through the accumulator of plan.
func (m *multiFlags) run(e *env, command string, inputs []string, lay rank.Layout, opts decode.Options, cfg rank.Config) (_ *multiResult, err error) {
	plan := lay.Plan
	start := time.Now()
	if m.ef.Like != "" {
		st, err := readRankState(m.ef.Like)
		if err != nil {
			return nil, err
		}
		if err := rank.SameViews(st.Plan(), plan); err != nil {
			return nil, usagef("--like %s: %s", m.ef.Like, strings.TrimPrefix(err.Error(), rank.ErrIncompatible.Error()+": "))
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
	d, err := resolveDataset(ctx, inputs, opts)
	if err != nil {
		return nil, err
	}
	// Every view's scales and bandwidth are chosen on the pilot that dime
	// score reads (readPilot), unless a --like state gives them.
	var pilot decode.Pilot
	if len(cfg.Sigmas) == 0 {
		if pilot, opts, err = readPilot(ctx, d, opts, cfg.Stream.PilotRows, cfg.Stream.Seed); err != nil {
			return nil, err
		}
		if pilot.DimX != lay.DimX || pilot.DimY != lay.DimY {
			return nil, fmt.Errorf("%s: the columns changed width while opening the dataset (%d+%d, expected %d+%d)", command, pilot.DimX, pilot.DimY, lay.DimX, lay.DimY)
		}
		block := lay.Row(nil, pilot.X, pilot.Y, pilot.Rows)
		if cfg, err = rank.ResolvePilot(plan, cfg, block, pilot.Rows, pilotRows(pilot)); err != nil {
			return nil, usagef("%s: %s", strings.Join(inputs, " "), strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
		}
	}
	acc, err := rank.New(plan, cfg)
	if err != nil {
		return nil, asUsage(err)
	}
	r, err := decode.NewDatasetReader(ctx, d, e.stdin, opts)
	if err != nil {
		return nil, inputError(err)
	}
	defer r.Close()
	if err := e.excludeDataset(r.Dataset()); err != nil {
		return nil, err
	}
	if r.DimX() != lay.DimX || r.DimY() != lay.DimY {
		return nil, fmt.Errorf("%s: the columns changed width while opening the dataset (%d+%d, expected %d+%d)", command, r.DimX(), r.DimY(), lay.DimX, lay.DimY)
	}
	res := &multiResult{acc: acc, input: describeInput(inputs, r), sigs: sigs.catch()}
	if len(cfg.Sigmas) > 0 && pilot.Rows > 0 {
		res.pilot, res.pilotRows = pilot.Method.String(), pilot.Rows
	}
	p := newProgress(e, m.ef.progress, command, r.TotalRows()).files(r)
	var block []float64
	var skipped int64
	for {
		if res.stopped = sigs.received(); res.stopped || !r.Next() {
			break
		}
		n := r.Rows()
		block = lay.Row(block, r.X(), r.Y(), n)
		if err := acc.Add(block, n); err != nil {
			return nil, asUsage(err)
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

func runRank(e *env, args []string) error {
	start := time.Now()
	fs := newFlagSet(e, "rank", "INPUT... --y TARGET --x 'PATTERN,...' [--group NAME=A,B] [flags]")
	var m multiFlags
	var rf cliflag.Rank
	m.register(fs, defaultRankFeatures, &rf)
	m.ef.registerJSON(fs, false, "print one JSON object instead of a table")
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
	if m.ef.asJSON && rf.CSV {
		return usagef("--json and --csv: choose one")
	}
	ysel, xsel, err := rf.Selectors(&m.ef.Estimator)
	if err != nil {
		return err
	}
	m.groups = rf.Groups
	cfg, out, err := m.prepare(e, fs, inputs)
	if err != nil {
		return err
	}
	lay, opts, err := m.in.rankLayout(e, "rank", inputs, ysel, xsel, rf.Groups)
	if err != nil {
		return err
	}
	plan := lay.Plan
	if err := checkMultiMemory(fmt.Sprintf("rank of %d candidates at D = %d", len(plan.Pairs), cfg.Stream.Features), plan.Views, len(plan.Pairs), cfg, "lower --features, or rank fewer candidates per run"); err != nil {
		return err
	}
	res, err := m.run(e, "rank", inputs, lay, opts, cfg)
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
	o := rpt.RankOf(res.acc, results, res.input)
	o.Partial, o.Pilot, o.PilotRows = res.stopped, res.pilot, res.pilotRows
	o.Elapsed = time.Since(start).Seconds()
	o.Top(rf.Top)
	switch {
	case m.ef.asJSON:
		err = writeJSON(e.stdout, o)
	case rf.CSV:
		err = o.WriteCSV(e.stdout)
	default:
		err = writeRankTable(e.stdout, o)
	}
	if err != nil {
		return err
	}
	if res.stopped {
		return res.sigs.err("the ranking of the rows read so far")
	}
	return nil
}

// fmtSigned formats a DiME for the table.
func fmtSigned(v number) string {
	if math.IsNaN(float64(v)) {
		return "n/a"
	}
	return fmt.Sprintf("%.5f", float64(v))
}

// writeRankTable writes a ranking as dime rank prints it by default.
func writeRankTable(w io.Writer, o rpt.Rank) error {
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
		o := rpt.RankOf(total, results, input)
		o.Elapsed = time.Since(start).Seconds()
		if asJSON {
			return writeJSON(e.stdout, o)
		}
		return writeRankTable(e.stdout, o)
	}
	o := matrixReport(total, results, input, "cluster")
	o.Elapsed = time.Since(start).Seconds()
	if asJSON {
		return writeJSON(e.stdout, o)
	}
	return writeMatrixTable(e.stdout, o, 20)
}
