package cliflag

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// Estimator holds the estimator flags.
type Estimator struct {
	X, Y           string
	Kernel         vocab.Kernel
	Sigma          vocab.Bandwidth
	SigmaX, SigmaY OptionalBandwidth
	Alpha          float64
	Permutations   int
	Seed           uint64
	Standardize    bool

	// The flags of the RFF estimator (RegisterRFF).
	Features    int
	Variant     vocab.Variant
	Groups      int
	Precision   vocab.Precision
	ShuffleRows int
	// RegisterRows and RegisterNormalized.
	Rows       vocab.RowModel
	Normalized bool
	// RegisterPilot.
	PilotRows int
	Like      string

	fs *flag.FlagSet
}

// Register adds the flags every estimator takes: the views, kernel,
// bandwidths, alpha, permutations, seed and standardization.
func (e *Estimator) Register(fs *flag.FlagSet) {
	e.fs = fs
	fs.StringVar(&e.X, "x", "", "columns of view X, comma-separated: names, globs ('emb_*', 'x[0-9]') or slices of a fixed-size list ('emb[0:128]'); a list column counts for its list size")
	fs.StringVar(&e.Y, "y", "", "columns of view Y, as --x")
	fs.TextVar(&e.Kernel, "kernel", vocab.Gaussian, "kernel: gaussian, laplacian or elliptical")
	fs.TextVar(&e.Sigma, "sigma", vocab.Fixed(), "bandwidth of both views: fixed (sqrt(d/2)), median, auto or a number > 0")
	fs.TextVar(&e.SigmaX, "sigma-x", OptionalBandwidth{}, "bandwidth of X (overrides --sigma)")
	fs.TextVar(&e.SigmaY, "sigma-y", OptionalBandwidth{}, "bandwidth of Y (overrides --sigma)")
	fs.Float64Var(&e.Alpha, "alpha", 1.01, "order alpha > 0 of the Renyi entropies")
	fs.IntVar(&e.Permutations, "permutations", 5, "number P of permutations")
	fs.Uint64Var(&e.Seed, "seed", 1, "random seed (frequencies, permutations, samples)")
	fs.BoolVar(&e.Standardize, "standardize", true, "standardize every column, (x - median)/(1.4826 MAD), with both chosen on the pilot rows (--pilot-rows), so that units do not matter; false uses the values as they are (for pre-scaled data)")
}

// RegisterRFF adds the flags of the RFF estimator and makes the analytic
// estimator (no permutations) the default.
func (e *Estimator) RegisterRFF(fs *flag.FlagSet) {
	e.Features = 256
	fs.Var((*oneD)(&e.Features), "features", "number `D` of random frequencies (2D features; memory grows as D²)")
	fs.TextVar(&e.Variant, "variant", vocab.Plain, "frequencies: plain or orthogonal (gaussian kernel only)")
	fs.IntVar(&e.ShuffleRows, "shuffle-buffer", 0, "rows to mix before they are paired for the permutations and cut into groups (0: each batch; raise it for sorted input)")
	fs.IntVar(&e.Groups, "groups", stream.DefaultGroups, "groups K of rows of the jackknife (bias and standard error of DiME; K-1 degrees of freedom)")
	fs.TextVar(&e.Precision, "precision", vocab.Float32, "products of the accumulators' rank-k updates: float32 (summed into float64 every 256 rows: updates about twice as fast; DiME moved by at most about 1e-6 nats, 1e-9 at 10 columns per view; the digits depend on where the rows are cut into blocks) or float64 (the same digits however the rows are cut)")
	e.Permutations = 0
	if fl := fs.Lookup("permutations"); fl != nil {
		fl.DefValue = "0"
		fl.Usage = "number P of permutations: 0 is the analytic estimator, its bias removed by the jackknife over --groups; P >= 1 the paper's permutation estimator"
	}
}

// RegisterRows adds --rows, the row model.
func (e *Estimator) RegisterRows(fs *flag.FlagSet) {
	fs.TextVar(&e.Rows, "rows", vocab.IIDRows, "what the rows are: iid (independent draws) or serial (a time series: the p-value and dime_stderr allow for dependence between neighbouring rows; analytic estimator only)")
}

// RegisterNormalized adds --normalized.
func (e *Estimator) RegisterNormalized(fs *flag.FlagSet) {
	fs.BoolVar(&e.Normalized, "normalized", true, "report dime_normalized (its self terms: about 8% more work on long inputs, most of a short monitor window's)")
}

// RegisterPilot adds --pilot-rows (RegisterPilotRows) and --like.
func (e *Estimator) RegisterPilot(fs *flag.FlagSet) {
	e.RegisterPilotRows(fs)
	fs.StringVar(&e.Like, "like", "", "take every estimator setting (kernel, alpha, D, variant, P, groups, seed, precision, bandwidths, scales) from this saved state (a local file), so that the result merges or compares with it")
}

// RegisterPilotRows adds --pilot-rows alone, for the commands without
// --like; StreamConfig and ExactConfig check it.
func (e *Estimator) RegisterPilotRows(fs *flag.FlagSet) {
	fs.IntVar(&e.PilotRows, "pilot-rows", stream.DefaultPilotRows, "rows that choose the columns' scales and median or auto bandwidths: a seeded sample of a Parquet dataset's rows (--seed), the first rows of other files (files in path order) and of streams")
}

// checkPilotRows checks --pilot-rows when registered.
func (e *Estimator) checkPilotRows() error {
	if e.registered("pilot-rows") && (e.PilotRows < 2 || e.PilotRows > stream.MaxPilotRows) {
		return vocab.Errorf("--pilot-rows %d: want 2 to %d", e.PilotRows, stream.MaxPilotRows)
	}
	return nil
}

// OptionalBandwidth is a bandwidth flag that may be left unset (the empty
// text): --sigma-x and --sigma-y, which override --sigma when set.
type OptionalBandwidth struct {
	vocab.Bandwidth
	Set bool
}

// MarshalText implements encoding.TextMarshaler: "" when unset.
func (b OptionalBandwidth) MarshalText() ([]byte, error) {
	if !b.Set {
		return nil, nil
	}
	return b.Bandwidth.MarshalText()
}

// UnmarshalText implements encoding.TextUnmarshaler: "" unsets it.
func (b *OptionalBandwidth) UnmarshalText(text []byte) error {
	if len(text) == 0 {
		*b = OptionalBandwidth{}
		return nil
	}
	if err := b.Bandwidth.UnmarshalText(text); err != nil {
		return err
	}
	b.Set = true
	return nil
}

// Or returns the bandwidth if set, else def.
func (b OptionalBandwidth) Or(def vocab.Bandwidth) vocab.Bandwidth {
	if b.Set {
		return b.Bandwidth
	}
	return def
}

// oneD is --features: one number, where dime compare takes a list.
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

// Columns splits the comma-separated list of column names of flag.
func Columns(flag, list string) ([]string, error) {
	if strings.TrimSpace(list) == "" {
		return nil, vocab.Errorf("--%s is required: name the columns of the view, e.g. --%s a,b,c", flag, flag)
	}
	var names []string
	for _, n := range strings.Split(list, ",") {
		if n = strings.TrimSpace(n); n == "" {
			return nil, vocab.Errorf("--%s %q has an empty column name", flag, list)
		}
		names = append(names, n)
	}
	return names, nil
}

// Views returns the column names of both views.
func (e *Estimator) Views() (x, y []string, err error) {
	if x, err = Columns("x", e.X); err != nil {
		return nil, nil, err
	}
	if y, err = Columns("y", e.Y); err != nil {
		return nil, nil, err
	}
	return x, y, nil
}

// Bandwidths returns the rules of X and Y: --sigma-x and --sigma-y where
// given, else --sigma.
func (e *Estimator) Bandwidths() (x, y vocab.Bandwidth) {
	return e.SigmaX.Or(e.Sigma), e.SigmaY.Or(e.Sigma)
}

// common checks the flags every estimator takes.
func (e *Estimator) common() error {
	if !e.Kernel.Valid() {
		return vocab.Errorf("--kernel %v: want gaussian, laplacian or elliptical", e.Kernel)
	}
	if err := exact.CheckAlpha(e.Alpha); err != nil {
		return vocab.Errorf("--alpha %v: want a finite number > 0", e.Alpha)
	}
	if e.Permutations < 0 || e.Permutations > stream.MaxPermutations {
		return vocab.Errorf("--permutations %d: want 0 (analytic) to %d", e.Permutations, stream.MaxPermutations)
	}
	return nil
}

// ExactConfig checks the flags and returns the configuration of the exact
// estimator. It checks --pilot-rows when registered.
func (e *Estimator) ExactConfig() (exact.Config, error) {
	if err := e.common(); err != nil {
		return exact.Config{}, err
	}
	if e.Permutations < 1 {
		return exact.Config{}, vocab.Errorf("--permutations %d: the exact estimator needs 1 to %d", e.Permutations, stream.MaxPermutations)
	}
	if err := e.checkPilotRows(); err != nil {
		return exact.Config{}, err
	}
	bx, by := e.Bandwidths()
	return exact.Config{Kernel: e.Kernel, Alpha: e.Alpha, SigmaX: bx, SigmaY: by, Permutations: e.Permutations, Seed: e.Seed}, nil
}

// StreamConfig checks the flags and returns the configuration of the RFF
// estimator for views with the given column names (RegisterRFF's flags;
// without RegisterRows the rows are iid, without RegisterNormalized the
// self terms are computed). It checks --pilot-rows when registered; --like
// is applied by Like.
func (e *Estimator) StreamConfig(xcols, ycols []string) (stream.Config, error) {
	if err := e.common(); err != nil {
		return stream.Config{}, err
	}
	switch {
	case e.Features < 1 || e.Features > rff.MaxFeatures:
		return stream.Config{}, vocab.Errorf("--features %d: want 1 to %d", e.Features, rff.MaxFeatures)
	case e.Variant == vocab.Orthogonal && e.Kernel != vocab.Gaussian:
		return stream.Config{}, vocab.Errorf("--variant orthogonal needs --kernel gaussian")
	case e.ShuffleRows < 0:
		return stream.Config{}, vocab.Errorf("--shuffle-buffer %d: want 0 or more rows", e.ShuffleRows)
	case e.Groups < 1 || e.Groups > stream.MaxGroups:
		return stream.Config{}, vocab.Errorf("--groups %d: want 1 (no jackknife) to %d", e.Groups, stream.MaxGroups)
	case e.Rows == vocab.SerialRows && e.Permutations > 0:
		return stream.Config{}, vocab.Errorf("--rows serial needs the analytic estimator (--permutations 0)")
	case e.Rows == vocab.SerialRows && e.Groups < 2:
		return stream.Config{}, vocab.Errorf("--rows serial needs --groups 2 or more")
	}
	if err := e.checkPilotRows(); err != nil {
		return stream.Config{}, err
	}
	bx, by := e.Bandwidths()
	c := stream.Config{
		Kernel: e.Kernel, Alpha: e.Alpha, BandwidthX: bx, BandwidthY: by, Standardize: e.Standardize,
		Features: e.Features, Variant: e.Variant, Permutations: e.Permutations, Groups: e.Groups, Seed: e.Seed,
		ShuffleRows: e.ShuffleRows, XColumns: xcols, YColumns: ycols, Precision: e.Precision,
		RowModel: e.Rows, Jackknife: stream.DefaultJackknife,
	}
	if e.registered("normalized") {
		c.SkipNormalized = !e.Normalized
	}
	if e.registered("pilot-rows") {
		c.PilotRows = e.PilotRows
	}
	return c, nil
}

// likeFlags are the flags that --like sets from the state: a run that
// gives one of them with --like is a usage error.
var likeFlags = [...]string{"kernel", "sigma", "sigma-x", "sigma-y", "alpha", "features", "variant", "permutations", "groups",
	"seed", "precision", "normalized", "standardize", "shuffle-buffer", "pilot-rows"}

// CheckLike refuses an estimator flag given with --like.
func (e *Estimator) CheckLike() error {
	for _, name := range likeFlags {
		if e.Given(name) {
			return vocab.Errorf("--%s with --like: the run takes every estimator setting of %s; drop --%s", name, e.Like, name)
		}
	}
	return nil
}

// LikeConfig returns the estimator settings of the state st (read from --like),
// its resolved bandwidths and scales made explicit, so that a run with
// them merges with the state's, for views with the given column names
// (nil: the state's). An estimator flag also given is a usage error.
func (e *Estimator) LikeConfig(st *stream.Estimator, xcols, ycols []string) (stream.Config, error) {
	if err := e.CheckLike(); err != nil {
		return stream.Config{}, err
	}
	c := st.Config()
	sx, sy := st.Bandwidths()
	c.BandwidthX, c.BandwidthY = vocab.Sigma(sx), vocab.Sigma(sy)
	c.Workers, c.HalfLife = 0, 0 // not estimator settings: the run's own
	if xcols != nil {
		c.XColumns, c.YColumns = xcols, ycols
	}
	return c, nil
}

// ApplyLike returns c, or with --like the estimator settings (LikeConfig)
// of the state that read reads from the --like path, for views with the
// given column names (nil: the state's). An estimator flag also given is
// a usage error, reported before the state is read.
func (e *Estimator) ApplyLike(c stream.Config, read func(path string) (*stream.Estimator, error), xcols, ycols []string) (stream.Config, error) {
	if e.Like == "" {
		return c, nil
	}
	if err := e.CheckLike(); err != nil {
		return c, err
	}
	st, err := read(e.Like)
	if err != nil {
		return stream.Config{}, err
	}
	return e.LikeConfig(st, xcols, ycols)
}

// Given reports whether the flag name was registered and given on the
// command line.
func (e *Estimator) Given(name string) bool {
	set := false
	if e.fs != nil {
		e.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	}
	return set
}

func (e *Estimator) registered(name string) bool { return e.fs != nil && e.fs.Lookup(name) != nil }
