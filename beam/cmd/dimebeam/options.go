package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"os"
	"strings"

	dimebeam "github.com/dime-project/dime/beam"
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
)

// options are dimebeam's own flags (the Beam SDK's are on flag.CommandLine
// too).
type options struct {
	inputs                inputList
	x, y                  string
	kernel                string
	sigma, sigmaX, sigmaY string
	alpha                 float64
	features              int
	variant               string
	permutations          int
	precision             string
	groups                int
	seed                  uint64
	shuffle               int
	format                string
	where                 string
	batchSize             int
	skipInvalid           bool
	splitRows             int64
	pilotRows             int
	standardize           bool
	like                  string
	flags                 *flag.FlagSet // where register put the flags above
	output                string
	saveState             string
	verbose               bool
	args                  []string // positional arguments: more inputs
	runner                string   // set by run from --runner
}

// inputList is a repeatable flag.
type inputList []string

func (l *inputList) String() string { return strings.Join(*l, " ") }

func (l *inputList) Set(v string) error {
	*l = append(*l, v)
	return nil
}

func (o *options) register(fs *flag.FlagSet) {
	o.flags = fs
	fs.Var(&o.inputs, "input", "data file, directory (read recursively) or quoted glob; repeat for more (positional arguments count too)")
	fs.StringVar(&o.x, "x", "", "comma-separated columns of view X (a FixedSizeList column counts for its list size)")
	fs.StringVar(&o.y, "y", "", "comma-separated columns of view Y")
	fs.StringVar(&o.kernel, "kernel", "gaussian", "kernel: gaussian, laplacian or elliptical")
	fs.StringVar(&o.sigma, "sigma", "fixed", "bandwidth of both views: fixed (sqrt(d/2)), median, auto or a number")
	fs.StringVar(&o.sigmaX, "sigma-x", "", "bandwidth of X (overrides --sigma)")
	fs.StringVar(&o.sigmaY, "sigma-y", "", "bandwidth of Y (overrides --sigma)")
	fs.Float64Var(&o.alpha, "alpha", 1.01, "order alpha > 0 of the Renyi entropies")
	fs.IntVar(&o.features, "features", 256, "number D of random frequencies (2D features; memory grows as D²)")
	fs.StringVar(&o.variant, "variant", "plain", "frequencies: plain or orthogonal (gaussian kernel only)")
	fs.StringVar(&o.precision, "precision", "float32", "products of the accumulators' rank-k updates: float32 (summed into float64 every 256 rows, as dime score's default; the digits then depend on where the splits cut the rows, by float32 round-off) or float64 (the same digits whatever the splits, and dime score --precision float64's to 1e-9)")
	fs.IntVar(&o.permutations, "permutations", 0, "number P of permutations: 0 is the analytic estimator, its bias removed by the jackknife over --groups; P >= 1 the paper's permutation estimator")
	fs.IntVar(&o.groups, "groups", stream.DefaultGroups, "groups K of rows of the jackknife (bias and standard error of DiME; K-1 degrees of freedom)")
	fs.Uint64Var(&o.seed, "seed", 1, "random seed (frequencies, permutations, the bandwidth sample)")
	fs.IntVar(&o.shuffle, "shuffle-buffer", 0, "rows to mix before pairing for the permutations, within a split (0: each batch)")
	fs.StringVar(&o.format, "format", "", "input format: parquet, ipc-file, ipc-stream or csv (default: from the extension)")
	fs.StringVar(&o.where, "where", "", "read only the files whose hive partitions (key=value directories) meet these conditions, e.g. 'region=eu,date>=2026-11-01' (comma = and; = != < <= > >=)")
	fs.IntVar(&o.batchSize, "batch-size", decode.DefaultBatchSize, "rows per record batch read")
	fs.BoolVar(&o.skipInvalid, "skip-invalid", false, "drop rows with a null, NaN or Inf in a selected column (counted) instead of failing")
	fs.Int64Var(&o.splitRows, "split-rows", dimebeam.DefaultSplitRows, "at most this many rows per split (unit of work of one worker): small Parquet files are packed together, large ones cut into runs of row groups; larger splits cost less, smaller ones spread a small dataset over more workers")
	fs.IntVar(&o.pilotRows, "pilot-rows", stream.DefaultPilotRows, "rows on which the columns' scales and the median and auto bandwidths are chosen: the first rows of the dataset (files in path order), as dime score chooses them")
	fs.BoolVar(&o.standardize, "standardize", true, "standardize every column, (x - median)/(1.4826 MAD), chosen on the first --pilot-rows rows, so that units do not matter; false uses the values as they are")
	fs.StringVar(&o.like, "like", "", "take every estimator setting (kernel, alpha, D, variant, P, groups, seed, precision, bandwidths, scales) from this saved state (a local file), so that the result merges with it")
	fs.StringVar(&o.output, "output", "", "write the JSON result to this path or URL (required unless the runner runs here: prism, direct, loopback)")
	fs.StringVar(&o.saveState, "save-state", "", "write the merged estimator state to this path or URL (dime merge reads it)")
	fs.BoolVar(&o.verbose, "verbose", false, "show the runner's logs on stderr")
}

// errUsage marks errors of the command line and of the input: exit status 2.
var errUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// columns splits a comma-separated list of column names.
func columns(flag, list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, usagef("--%s is required: name the columns of the view, e.g. --%s a,b,c", flag, flag)
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			return nil, usagef("--%s %q has an empty column name", flag, list)
		}
		names = append(names, n)
	}
	return names, nil
}

// bandwidth parses a bandwidth flag.
func bandwidth(flag, v string) (exact.Bandwidth, error) {
	b, err := exact.ParseBandwidth(v)
	if err != nil {
		return b, usagef("--%s %q: want fixed, median, auto or a number > 0", flag, v)
	}
	return b, nil
}

// config checks the flags and returns the pipeline's configuration and
// inputs.
func (o *options) config() (dimebeam.Config, []string, error) {
	var cfg dimebeam.Config
	inputs := append(append([]string{}, o.inputs...), o.args...)
	if len(inputs) == 0 {
		return cfg, nil, usagef("--input is required: a data file, a directory or a quoted glob")
	}
	for _, in := range inputs {
		if in == "-" {
			return cfg, nil, usagef("--input -: a pipeline cannot read stdin; give files")
		}
	}
	xcols, err := columns("x", o.x)
	if err != nil {
		return cfg, nil, err
	}
	ycols, err := columns("y", o.y)
	if err != nil {
		return cfg, nil, err
	}
	c := stream.Config{Alpha: o.alpha, Features: o.features, Permutations: o.permutations, Groups: o.groups, Seed: o.seed, Jackknife: stream.DefaultJackknife,
		ShuffleRows: o.shuffle, XColumns: xcols, YColumns: ycols}
	if c.Precision, err = covariance.ParsePrecision(o.precision); err != nil {
		return cfg, nil, usagef("--precision %q: want float32 or float64", o.precision)
	}
	if c.Kernel, err = exact.ParseKernel(o.kernel); err != nil {
		return cfg, nil, usagef("--kernel %q: want gaussian, laplacian or elliptical", o.kernel)
	}
	if c.Variant, err = rff.ParseVariant(o.variant); err != nil {
		return cfg, nil, usagef("--variant %q: want plain or orthogonal", o.variant)
	}
	if c.BandwidthX, err = bandwidth("sigma", o.sigma); err != nil {
		return cfg, nil, err
	}
	c.BandwidthY = c.BandwidthX
	if o.sigmaX != "" {
		if c.BandwidthX, err = bandwidth("sigma-x", o.sigmaX); err != nil {
			return cfg, nil, err
		}
	}
	if o.sigmaY != "" {
		if c.BandwidthY, err = bandwidth("sigma-y", o.sigmaY); err != nil {
			return cfg, nil, err
		}
	}
	switch {
	case o.features < 1 || o.features > rff.MaxFeatures:
		return cfg, nil, usagef("--features %d: want 1 to %d", o.features, rff.MaxFeatures)
	case o.permutations < 0 || o.permutations > stream.MaxPermutations:
		return cfg, nil, usagef("--permutations %d: want 0 (analytic) to %d", o.permutations, stream.MaxPermutations)
	case o.groups < 1 || o.groups > stream.MaxGroups:
		return cfg, nil, usagef("--groups %d: want 1 (no jackknife) to %d", o.groups, stream.MaxGroups)
	case exact.CheckAlpha(o.alpha) != nil:
		return cfg, nil, usagef("--alpha %v: want a finite number > 0", o.alpha)
	case c.Variant == rff.Orthogonal && c.Kernel != exact.Gaussian:
		return cfg, nil, usagef("--variant orthogonal needs --kernel gaussian")
	case o.shuffle < 0:
		return cfg, nil, usagef("--shuffle-buffer %d: want 0 or more rows", o.shuffle)
	case o.batchSize < 1:
		return cfg, nil, usagef("--batch-size %d: want at least 1", o.batchSize)
	case o.splitRows < 1:
		return cfg, nil, usagef("--split-rows %d: want at least 1", o.splitRows)
	case o.pilotRows < 2 || o.pilotRows > dimebeam.MaxSampleRows:
		return cfg, nil, usagef("--pilot-rows %d: want 2 to %d", o.pilotRows, dimebeam.MaxSampleRows)
	}
	c.Standardize, c.PilotRows = o.standardize, o.pilotRows
	if o.like != "" {
		if c, err = likeConfig(*o, xcols, ycols); err != nil {
			return cfg, nil, err
		}
	}
	cfg = dimebeam.Config{Stream: c, BatchSize: o.batchSize, SkipInvalid: o.skipInvalid, SplitRows: o.splitRows, SampleRows: o.pilotRows}
	if o.format != "" {
		if cfg.Format, err = dataset.ParseFormat(o.format); err != nil {
			return cfg, nil, usagef("--format %q: want parquet, ipc-file, ipc-stream or csv", o.format)
		}
	}
	if cfg.Where, err = dataset.ParseWhere(o.where); err != nil {
		return cfg, nil, usagef("--where %q: %v", o.where, err)
	}
	// The scaling of standardized columns is chosen on the data, by
	// dimebeam.ChoosePilot, before the pipeline is built: check the rest.
	v := cfg
	v.Stream.Standardize = v.Stream.Standardize && !v.Stream.Scaling.Empty()
	if err := v.Validate(); err != nil {
		return cfg, nil, usagef("%v", err)
	}
	return cfg, inputs, nil
}

// likeFlags are the estimator flags that --like sets from the state.
var likeFlags = []string{"kernel", "sigma", "sigma-x", "sigma-y", "alpha", "features", "variant", "permutations", "groups",
	"seed", "precision", "standardize", "shuffle-buffer", "pilot-rows"}

// likeConfig returns the estimator settings of the state o.like, its
// bandwidths and scales explicit; an estimator flag also given is a usage
// error.
func likeConfig(o options, xcols, ycols []string) (stream.Config, error) {
	for _, name := range likeFlags {
		if o.given(name) {
			return stream.Config{}, usagef("--%s with --like: the run takes every estimator setting of %s; drop --%s", name, o.like, name)
		}
	}
	f, err := os.Open(o.like)
	if err != nil {
		return stream.Config{}, usagef("--like: %v", err)
	}
	defer f.Close()
	st, err := stream.ReadState(f)
	if err != nil {
		return stream.Config{}, usagef("--like %s: %v", o.like, err)
	}
	c := st.Config()
	sx, sy := st.Bandwidths()
	c.BandwidthX, c.BandwidthY = exact.Sigma(sx), exact.Sigma(sy)
	c.Workers, c.HalfLife = 0, 0
	c.XColumns, c.YColumns = xcols, ycols
	return c, nil
}

// given reports whether the flag name was given on the command line.
func (o options) given(name string) bool {
	set := false
	if o.flags != nil {
		o.flags.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	}
	return set
}
