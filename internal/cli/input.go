package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/cliflag"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/internal/redact"
	"github.com/dime-project/dime/stream"
)

// inputFlags are the flags of the commands that read a dataset: those
// dimebeam takes too (package cliflag) and dime's own.
type inputFlags struct {
	cliflag.Input
	limit  int64
	strict bool
	stall  time.Duration
	// workers is the number of decoding goroutines (0: the reader's
	// default); not a flag.
	workers int
	// e and progress (the command's --progress, read once the flags are
	// parsed) show the listing of object storage on stderr; see
	// showListing.
	e        *env
	progress *string
}

// showListing makes the reader show how a listing of object storage goes
// (objects listed so far) on stderr, as mode (--progress) says.
func (f *inputFlags) showListing(e *env, mode *string) { f.e, f.progress = e, mode }

func (f *inputFlags) register(fs *flagSet) {
	f.Input.Register(fs.FlagSet)
	fs.BoolVar(&f.strict, "strict", false, "make an Arrow IPC stream without its end-of-stream marker (truncated?) an error rather than a warning")
	fs.Int64Var(&f.limit, "limit", 0, "stop after this many rows (0: all)")
	fs.DurationVar(&f.stall, "stall-timeout", 0, "abandon a request to object storage that sends nothing for this long (default $DIME_STALL_TIMEOUT, or 2m)")
}

// options returns the reader options for the given views.
func (f *inputFlags) options(xcols, ycols []string) (decode.Options, error) {
	opts, err := f.Input.Options(xcols, ycols)
	if err != nil {
		return opts, err
	}
	if f.limit < 0 {
		return opts, usagef("--limit %d: want a number of rows, or 0 for all", f.limit)
	}
	opts.Strict, opts.Limit, opts.Workers, opts.Files.StallTimeout = f.strict, f.limit, f.workers, f.stall
	if f.e != nil && f.progress != nil {
		opts.Files.Listing = newProgress(f.e, *f.progress, "listing", -1).listing()
	}
	return opts, nil
}

// warnColumns says on stderr when a column is in a view twice (it then
// counts twice, as a column of the view's width and weight) or in both
// views (X and Y then share it), or when two selections of one list column
// ('emb[0:128]' and 'emb', or two slices) share elements: allowed, and
// sometimes meant, but more often a slip of a glob or of the command line.
func warnColumns(e *env, sel columns.Selection) {
	for _, v := range []struct {
		name string
		cols columns.View
	}{{"X", sel.X}, {"Y", sel.Y}} {
		seen := map[string]bool{}
		for _, c := range v.cols {
			if l := c.Label(); seen[l] {
				fmt.Fprintf(e.stderr, "dime: warning: column %q is in %s more than once; each copy counts as a column\n", l, v.name)
			}
			seen[c.Label()] = true
		}
	}
	inX := map[string]bool{}
	for _, c := range sel.X {
		inX[c.Label()] = true
	}
	warned := map[string]bool{}
	for _, c := range sel.Y {
		if l := c.Label(); inX[l] && !warned[l] {
			warned[l] = true
			fmt.Fprintf(e.stderr, "dime: warning: column %q is in both X and Y\n", l)
		}
	}
	warnSliceOverlaps(e, sel)
}

// warnSliceOverlaps is warnColumns for slices of list columns ('emb[0:128]'):
// elements read twice, in one view or in both.
func warnSliceOverlaps(e *env, sel columns.Selection) {
	warned := map[[2]string]bool{}
	warn := func(a, b columns.Column, where string) {
		if k := [2]string{a.Label(), b.Label() + where}; !warned[k] {
			warned[k] = true
			fmt.Fprintf(e.stderr, "dime: warning: %q and %q share elements of %q %s\n", a.Label(), b.Label(), a.Name, where)
		}
	}
	for _, v := range []struct {
		name string
		cols columns.View
	}{{"X", sel.X}, {"Y", sel.Y}} {
		for i, a := range v.cols {
			for _, b := range v.cols[i+1:] {
				if a.Overlaps(b) {
					warn(a, b, "in "+v.name+"; each copy counts")
				}
			}
		}
	}
	for _, a := range sel.X {
		for _, b := range sel.Y {
			if a.Overlaps(b) {
				warn(a, b, "in X and Y")
			}
		}
	}
}

// inputError marks an error of reading the input as a usage error (exit 2):
// a missing or unreadable file, a bad dataset, a bad column, bad data.
func inputError(err error) error {
	var pe *fs.PathError
	if errors.Is(err, decode.ErrColumn) || errors.Is(err, decode.ErrFormat) || errors.Is(err, decode.ErrInvalidValue) ||
		errors.Is(err, decode.ErrDataset) || errors.As(err, &pe) {
		return asUsage(err)
	}
	return err
}

// warnInput prints the reader's warnings on stderr, one line each.
func warnInput(e *env, r *decode.DatasetReader) {
	for _, w := range r.Warnings() {
		fmt.Fprintf(e.stderr, "dime: warning: %s (--strict makes this an error)\n", redact.String(oneLine(w)))
	}
}

// datasetArgs returns the positional arguments of a command: the files,
// directories, globs and URLs of its dataset.
func datasetArgs(command string, pos []string) ([]string, error) {
	if len(pos) == 0 {
		return nil, usagef("%s needs input: files, directories, quoted globs, s3:// (gs://, azblob://, file://) URLs, or - for an Arrow IPC stream on stdin", command)
	}
	return pos, nil
}

// describeInput names the input of a report: the arguments, and the number
// of files when it is not one.
func describeInput(args []string, r *decode.DatasetReader) string {
	s := redact.String(strings.Join(args, " "))
	if n := r.Files(); n != 1 || len(args) != 1 {
		s += fmt.Sprintf(" (%d files)", n)
	}
	return s
}

// sampleStream is the PCG stream constant of row samples ("dimesamp").
const sampleStream = 0x64696d6573616d70

// sample is a uniform random sample of the rows of an input.
type sample struct {
	x, y         *mat.Dense
	pilot        decode.Pilot // the rows the scales and bandwidths are chosen on
	xcols, ycols []string     // the columns read, globs expanded
	seen         int64        // rows kept by the reader (the population sampled)
	skipped      int64
	input        string // the dataset, described
}

// readSample reads every row of the dataset and keeps a uniform random
// sample of at most n of them (reservoir sampling, Algorithm R, seeded), in
// constant memory whatever the dataset's size: every row of every file has
// the same chance.
//
// It also keeps the first prefix rows, in the order read: the pilot of a
// stream, which cannot be read twice (decode.Pilot.Deferred).
func readSample(e *env, r *decode.DatasetReader, args []string, n, prefix int, seed uint64, prog string) (sample, error) {
	dx, dy := r.DimX(), r.DimY()
	xs, ys := make([]float64, 0, n*dx), make([]float64, 0, n*dy)
	var px, py []float64
	rng := rand.New(rand.NewPCG(seed, sampleStream))
	p := newProgress(e, prog, "reading", r.TotalRows()).files(r)
	var seen int64
	for r.Next() {
		x, y := r.X(), r.Y()
		for i := 0; i < r.Rows(); i++ {
			xr, yr := x[i*dx:(i+1)*dx], y[i*dy:(i+1)*dy]
			if seen < int64(prefix) {
				px, py = append(px, xr...), append(py, yr...)
			}
			switch {
			case seen < int64(n):
				xs, ys = append(xs, xr...), append(ys, yr...)
			default:
				if j := rng.Int64N(seen + 1); j < int64(n) {
					copy(xs[j*int64(dx):], xr)
					copy(ys[j*int64(dy):], yr)
				}
			}
			seen++
		}
		p.update(r.RowsRead())
	}
	p.done()
	if err := r.Err(); err != nil {
		return sample{}, inputError(err)
	}
	warnInput(e, r)
	rows := len(xs) / dx
	if rows < 2 {
		return sample{}, usagef("%s: %d rows (%d skipped): need at least 2", strings.Join(args, " "), rows, r.Skipped())
	}
	sel := r.Columns()
	xcols, ycols := sel.X.Labels(), sel.Y.Labels()
	pilot := decode.Pilot{X: px, Y: py, Rows: len(px) / dx, DimX: dx, DimY: dy, Method: decode.PilotPrefix, Columns: sel, Population: -1}
	return sample{x: mat.NewDense(rows, dx, xs), y: mat.NewDense(rows, dy, ys), pilot: pilot, xcols: xcols, ycols: ycols,
		seen: seen, skipped: r.Skipped(), input: describeInput(args, r)}, nil
}

// checkSampleSize refuses sizes that the exact estimator cannot afford.
func checkSampleSize(n int, force bool) error {
	const limit = 8192
	switch {
	case n < 2:
		return usagef("--sample %d: want at least 2 rows", n)
	case n > limit && !force:
		return usagef("--sample %d: the exact estimator costs O(n³) time and %d MB per n×n matrix; above %d add --force", n, 8*n*n>>20, limit)
	}
	return checkMemory(fmt.Sprintf("--sample %d", n), exactMemory(n), "lower --sample")
}

// describeSample says what the exact commands looked at.
func describeSample(s sample) string {
	rows, _ := s.x.Dims()
	if int64(rows) < s.seen {
		return fmt.Sprintf("%s (random sample of %d of %d rows)", s.input, rows, s.seen)
	}
	return s.input
}

// sampleFlags are the flags of the commands that work on a sample of the
// input with the exact estimator: exact, compare and sweep.
type sampleFlags struct {
	est   estimatorFlags
	in    inputFlags
	n     int
	force bool
}

// defaultSampleRows is the default --sample of exact, compare and sweep: the
// same for all three, so that with the same --seed they look at the same
// rows and their numbers line up.
const defaultSampleRows = 1024

func (f *sampleFlags) register(fs *flagSet, help string) {
	f.est.register(fs)
	f.est.registerJSON(fs, false, "print one JSON object instead of a table")
	f.in.register(fs)
	f.in.showListing(fs.e, &f.est.progress)
	fs.IntVar(&f.n, "sample", defaultSampleRows, help)
	f.est.RegisterPilotRows(fs.FlagSet)
	fs.BoolVar(&f.force, "force", false, "allow --sample above 8192 (O(n³) time, 8n² bytes per matrix), and let --plot write through a symbolic link, FIFO or device")
}

// parse parses the command line and checks everything the sample commands
// share, before any input is read: it returns the inputs, the reader
// options of the views and the estimator's settings.
func (f *sampleFlags) parse(fs *flagSet, command string, args []string) (inputs []string, opts decode.Options, cfg exact.Config, err error) {
	pos, err := parseFlags(fs, args)
	if err != nil {
		return nil, opts, cfg, err
	}
	if inputs, err = datasetArgs(command, pos); err != nil {
		return nil, opts, cfg, err
	}
	xcols, ycols, err := f.est.views()
	if err != nil {
		return nil, opts, cfg, err
	}
	if cfg, err = f.est.exactConfig(); err != nil {
		return nil, opts, cfg, err
	}
	if opts, err = f.in.options(xcols, ycols); err != nil {
		return nil, opts, cfg, err
	}
	return inputs, opts, cfg, checkSampleSize(f.n, f.force)
}

// read reads the pilot (readPilot: a seeded sample of a Parquet dataset's
// rows, as dime score reads it) and the sample, with the reader options
// that parse returned.
func (f *sampleFlags) read(e *env, inputs []string, opts decode.Options) (sample, error) {
	ctx := context.Background()
	d, err := resolveDataset(ctx, inputs, opts)
	if err != nil {
		return sample{}, err
	}
	pilot, opts, err := readPilot(ctx, d, opts, f.est.PilotRows, f.est.Seed)
	if err != nil {
		return sample{}, err
	}
	r, err := f.in.openResolved(ctx, e, d, opts)
	if err != nil {
		return sample{}, err
	}
	defer r.Close()
	prefix := 0
	if pilot.Deferred {
		prefix = f.est.PilotRows
	}
	s, err := readSample(e, r, inputs, f.n, prefix, f.est.Seed, f.est.progress)
	if err == nil && !pilot.Deferred {
		s.pilot = pilot
	}
	return s, err
}

// resolve chooses the data-dependent settings of cfg on the sample's pilot
// rows as dime score does (stream.ResolvePilot): it
// standardizes the sample in place (with --standardize) and returns cfg
// with the bandwidths of median and auto rules made explicit (fixed and
// explicit ones are the same in either form). autoX and autoY resolve
// that view with the auto rule whatever cfg says (dime sweep's choice).
func (f *sampleFlags) resolve(s *sample, cfg exact.Config, autoX, autoY bool) (exact.Config, stream.Pilot, error) {
	_, dx := s.x.Dims()
	_, dy := s.y.Dims()
	scfg := stream.Config{Kernel: cfg.Kernel, Alpha: cfg.Alpha, BandwidthX: cfg.SigmaX, BandwidthY: cfg.SigmaY,
		Permutations: cfg.Permutations, Seed: cfg.Seed, Standardize: f.est.Standardize, XColumns: s.xcols, YColumns: s.ycols}
	if autoX {
		scfg.BandwidthX = exact.Auto()
	}
	if autoY {
		scfg.BandwidthY = exact.Auto()
	}
	p, err := resolvePilot(s.input, s.pilot, scfg)
	if err != nil {
		return cfg, p, err
	}
	if !p.Scaling.Empty() {
		rows, _ := s.x.Dims()
		sx, sy := p.Scaling.Apply(s.x.RawMatrix().Data, s.y.RawMatrix().Data)
		s.x, s.y = mat.NewDense(rows, dx, sx), mat.NewDense(rows, dy, sy)
	}
	if scfg.BandwidthX.NeedsData() {
		cfg.SigmaX = exact.Sigma(p.SigmaX)
	}
	if scfg.BandwidthY.NeedsData() {
		cfg.SigmaY = exact.Sigma(p.SigmaY)
	}
	return cfg, p, nil
}
