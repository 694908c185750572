package cli

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
)

// estimatorFlags are the flags shared by the commands that estimate.
type estimatorFlags struct {
	x, y                  string
	kernel                string
	sigma, sigmaX, sigmaY string
	alpha                 float64
	features              int
	variant               string
	permutations          int
	groups                int
	normalized            bool
	precision             string
	seed                  uint64
	shuffle               int
	rows                  string
	asJSON                bool
	progress              string
	standardize           bool
}

// register adds the shared flags to fs.
func (f *estimatorFlags) register(fs *flagSet) {
	fs.StringVar(&f.x, "x", "", "columns of view X, comma-separated: names, globs ('emb_*', 'x[0-9]') or slices of a fixed-size list ('emb[0:128]'); a list column counts for its list size")
	fs.StringVar(&f.y, "y", "", "columns of view Y, as --x")
	fs.StringVar(&f.kernel, "kernel", "gaussian", "kernel: gaussian, laplacian or elliptical")
	fs.StringVar(&f.sigma, "sigma", "fixed", "bandwidth of both views: fixed (sqrt(d/2)), median, auto or a number")
	fs.StringVar(&f.sigmaX, "sigma-x", "", "bandwidth of X (overrides --sigma)")
	fs.StringVar(&f.sigmaY, "sigma-y", "", "bandwidth of Y (overrides --sigma)")
	fs.Float64Var(&f.alpha, "alpha", 1.01, "order alpha > 0 of the Renyi entropies")
	fs.IntVar(&f.permutations, "permutations", 5, "number P of permutations")
	fs.Uint64Var(&f.seed, "seed", 1, "random seed (frequencies, permutations, samples)")
	fs.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (when stderr is a terminal), always or never")
	fs.BoolVar(&f.standardize, "standardize", true, "standardize every column, (x - median)/(1.4826 MAD), with both chosen on the first --pilot-rows rows, so that units do not matter; false uses the values as they are (for pre-scaled data)")
}

// registerJSON adds --json with the given default.
func (f *estimatorFlags) registerJSON(fs *flagSet, def bool, usage string) {
	fs.BoolVar(&f.asJSON, "json", def, usage)
}

// registerRFF adds the flags of the RFF estimator.
func (f *estimatorFlags) registerRFF(fs *flagSet) {
	f.features = 256
	fs.Var((*oneD)(&f.features), "features", "number `D` of random frequencies (2D features; memory grows as D²)")
	fs.StringVar(&f.variant, "variant", "plain", "frequencies: plain or orthogonal (gaussian kernel only)")
	fs.IntVar(&f.shuffle, "shuffle-buffer", 0, "rows to mix before they are paired for the permutations and cut into groups (0: each batch; raise it for sorted input)")
	fs.StringVar(&f.rows, "rows", "iid", "what the rows are: iid (independent draws) or serial (a time series: the p-value and dime_stderr allow for dependence between neighbouring rows; analytic estimator only)")
	fs.IntVar(&f.groups, "groups", stream.DefaultGroups, "groups K of rows of the jackknife (bias and standard error of DiME; K-1 degrees of freedom)")
	fs.StringVar(&f.precision, "precision", "float32", "products of the accumulators' rank-k updates: float32 (summed into float64 every 256 rows: updates about twice as fast; DiME moved by at most about 1e-6 nats, 1e-9 at 10 columns per view) or float64")
	fs.BoolVar(&f.normalized, "normalized", true, "report dime_normalized (its self terms: about 8% more work on long inputs, most of a short monitor window's)")
	// The RFF estimator's default is the analytic one, without permutations.
	f.permutations = 0
	if fl := fs.Lookup("permutations"); fl != nil {
		fl.DefValue = "0"
		fl.Usage = "number P of permutations: 0 is the analytic estimator, its bias removed by the jackknife over --groups; P >= 1 the paper's permutation estimator"
	}
}

// oneD is the --features flag of the commands that run one RFF estimator:
// one number, where compare takes a list.
type oneD int

func (d *oneD) String() string { return strconv.Itoa(int(*d)) }

func (d *oneD) Set(s string) error {
	if strings.Contains(s, ",") {
		return fmt.Errorf("one D per run (dime compare compares several)")
	}
	v, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	*d = oneD(v)
	return nil
}

// columnList splits a comma-separated list of column names.
func columnList(flag, list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, usagef("--%s is required: name the columns of the view, e.g. --%s a,b,c", flag, flag)
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, usagef("--%s %q has an empty column name", flag, list)
		}
		names = append(names, n)
	}
	return names, nil
}

// views returns the column names of both views.
func (f *estimatorFlags) views() (x, y []string, err error) {
	if x, err = columnList("x", f.x); err != nil {
		return nil, nil, err
	}
	if y, err = columnList("y", f.y); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// bandwidths parses --sigma, --sigma-x and --sigma-y.
func (f *estimatorFlags) bandwidths() (x, y exact.Bandwidth, err error) {
	parse := func(flag, v string) (exact.Bandwidth, error) {
		b, err := exact.ParseBandwidth(v)
		if err != nil {
			return b, usagef("--%s %q: want fixed, median, auto or a number > 0", flag, v)
		}
		return b, nil
	}
	both, err := parse("sigma", f.sigma)
	if err != nil {
		return x, y, err
	}
	x, y = both, both
	if f.sigmaX != "" {
		if x, err = parse("sigma-x", f.sigmaX); err != nil {
			return x, y, err
		}
	}
	if f.sigmaY != "" {
		if y, err = parse("sigma-y", f.sigmaY); err != nil {
			return x, y, err
		}
	}
	return x, y, nil
}

// common checks and parses the flags every estimator uses.
func (f *estimatorFlags) common() (kern exact.Kernel, bx, by exact.Bandwidth, err error) {
	if kern, err = exact.ParseKernel(f.kernel); err != nil {
		return kern, bx, by, usagef("--kernel %q: want gaussian, laplacian or elliptical", f.kernel)
	}
	if err := exact.CheckAlpha(f.alpha); err != nil {
		return kern, bx, by, usagef("--alpha %v: want a finite number > 0", f.alpha)
	}
	if f.permutations < 0 || f.permutations > stream.MaxPermutations {
		return kern, bx, by, usagef("--permutations %d: want 0 (analytic) to %d", f.permutations, stream.MaxPermutations)
	}
	switch f.progress {
	case "auto", "always", "never":
	default:
		return kern, bx, by, usagef("--progress %q: want auto, always or never", f.progress)
	}
	bx, by, err = f.bandwidths()
	return kern, bx, by, err
}

// exactConfig returns the configuration of the exact estimator.
func (f *estimatorFlags) exactConfig() (exact.Config, error) {
	kern, bx, by, err := f.common()
	if err != nil {
		return exact.Config{}, err
	}
	if f.permutations < 1 {
		return exact.Config{}, usagef("--permutations %d: the exact estimator needs 1 to %d", f.permutations, stream.MaxPermutations)
	}
	return exact.Config{Kernel: kern, Alpha: f.alpha, SigmaX: bx, SigmaY: by, Permutations: f.permutations, Seed: f.seed}, nil
}

// streamConfig returns the configuration of the RFF estimator, for views
// with the given column names.
func (f *estimatorFlags) streamConfig(xcols, ycols []string) (stream.Config, error) {
	kern, bx, by, err := f.common()
	if err != nil {
		return stream.Config{}, err
	}
	if f.features < 1 || f.features > rff.MaxFeatures {
		return stream.Config{}, usagef("--features %d: want 1 to %d", f.features, rff.MaxFeatures)
	}
	variant, err := rff.ParseVariant(f.variant)
	if err != nil {
		return stream.Config{}, usagef("--variant %q: want plain or orthogonal", f.variant)
	}
	if variant == rff.Orthogonal && kern != exact.Gaussian {
		return stream.Config{}, usagef("--variant orthogonal needs --kernel gaussian")
	}
	if f.shuffle < 0 {
		return stream.Config{}, usagef("--shuffle-buffer %d: want 0 or more rows", f.shuffle)
	}
	if f.groups < 1 || f.groups > stream.MaxGroups {
		return stream.Config{}, usagef("--groups %d: want 1 (no jackknife) to %d", f.groups, stream.MaxGroups)
	}
	prec, err := covariance.ParsePrecision(f.precision)
	if err != nil {
		return stream.Config{}, usagef("--precision %q: want float32 or float64", f.precision)
	}
	rowModel, err := stream.ParseRowModel(f.rows)
	if err != nil {
		return stream.Config{}, usagef("--rows %q: want iid or serial", f.rows)
	}
	if rowModel == stream.SerialRows && f.permutations > 0 {
		return stream.Config{}, usagef("--rows serial needs the analytic estimator (--permutations 0)")
	}
	if rowModel == stream.SerialRows && f.groups < 2 {
		return stream.Config{}, usagef("--rows serial needs --groups 2 or more")
	}
	if err := checkRFFMemory(f.features, f.permutations, f.groups); err != nil {
		return stream.Config{}, err
	}
	return stream.Config{
		Kernel: kern, Alpha: f.alpha, BandwidthX: bx, BandwidthY: by, Standardize: f.standardize,
		Features: f.features, Variant: variant, Permutations: f.permutations, Groups: f.groups, Seed: f.seed,
		SkipNormalized: !f.normalized, ShuffleRows: f.shuffle, XColumns: xcols, YColumns: ycols, Precision: prec,
		RowModel: rowModel, Jackknife: stream.DefaultJackknife,
	}, nil
}

// parseInts parses a comma-separated list of positive integers.
func parseInts(flag, list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || v < 1 {
			return nil, usagef("--%s %q: want a comma-separated list of positive integers", flag, list)
		}
		out = append(out, v)
	}
	return out, nil
}

// given reports whether the flag name was given on the command line.
func (fs *flagSet) given(name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == name {
			set = true
		}
	})
	return set
}

// likeFlags are the flags that --like REF.state sets from the state: a run
// that gives one of them with --like is a usage error.
var likeFlags = []string{"kernel", "sigma", "sigma-x", "sigma-y", "alpha", "features", "variant", "permutations", "groups",
	"seed", "precision", "normalized", "standardize", "shuffle-buffer", "pilot-rows"}

// likeConfig returns the estimator settings of the state at path, its
// resolved bandwidths and scales made explicit, so that a run with them
// merges with the state's; an estimator flag also given is a usage error.
func likeConfig(fs *flagSet, path string) (stream.Config, error) {
	for _, name := range likeFlags {
		if fs.Lookup(name) != nil && fs.given(name) {
			return stream.Config{}, usagef("--%s with --like: the run takes every estimator setting of %s; drop --%s", name, path, name)
		}
	}
	st, err := readStateFile(path)
	if err != nil {
		return stream.Config{}, err
	}
	c := st.Config()
	sx, sy := st.Bandwidths()
	c.BandwidthX, c.BandwidthY = exact.Sigma(sx), exact.Sigma(sy)
	c.Workers, c.HalfLife = 0, 0 // not estimator settings: the run's own
	return c, nil
}
