package stream

import (
	"fmt"
	"math"
	"runtime"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// ErrInvalidInput is matched by every error about the caller's parameters or
// data: invalid settings, mismatched shapes, NaN or Inf values.
var ErrInvalidInput = vocab.NewSentinel("stream: invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// DefaultMinScopeRows is the fewest rows a shuffle scope gathers by default
// before its rows are paired: smaller blocks (a stream of tiny batches) are
// pooled, so that permuted pairs come from many rows.
const DefaultMinScopeRows = 1024

// chunkRows is the number of rows mapped to features at a time: the feature
// buffers hold chunkRows × 2D values each (512 KiB at D = 128).
const chunkRows = 256

// Config holds the parameters of a streaming RFF estimate. DefaultConfig
// returns the defaults of the dime command.
type Config struct {
	Kernel vocab.Kernel
	// Alpha is the order of the Rényi entropies, > 0 (the paper uses 1.01).
	Alpha float64
	// BandwidthX and BandwidthY choose each view's bandwidth: an explicit
	// value, fixed √(d/2) (the zero value), or a rule that looks at the data,
	// median or auto, resolved on the pilot sample (the first PilotRows
	// rows, or what NewResolved is given) and then held fixed for the whole
	// stream.
	BandwidthX, BandwidthY vocab.Bandwidth
	// Standardize makes the estimate scale-free: every column is
	// standardized, x ↦ (x − center)/scale, before the feature map, with the
	// median as center and MADScale × the median absolute deviation as scale
	// (ColumnScales), both estimated on the pilot sample (the first
	// PilotRows rows, or what NewResolved is given) unless Scaling gives
	// them. Multiplying a column by a
	// positive constant or shifting it then changes no estimate beyond
	// round-off, and the fixed bandwidth √(d/2) is in units of the columns'
	// scales. DefaultConfig turns it on; false (the zero value) feeds the
	// values as they are.
	Standardize bool
	// Scaling gives the standardization explicitly (a saved state's, or one
	// chosen on a sample of a whole dataset); it needs Standardize. Empty
	// (the zero value) with Standardize resolves it on the pilot sample.
	Scaling Scaling
	// PilotRows is the number of rows held back to resolve data-dependent
	// settings: the columns' scales and median or auto bandwidths (default
	// DefaultPilotRows). The auto rule uses the first exact.AutoSampleRows
	// of them.
	PilotRows int
	// Features is the number D of random frequencies; the feature dimension
	// is 2D and every accumulator holds 2D×2D float64.
	Features int
	// Variant chooses plain or orthogonal frequencies.
	Variant vocab.Variant
	// Permutations chooses the DiME estimator. 0 (the default) is the
	// analytic one: S(C⊥) − S(C_XY), C⊥ the product of marginals computed
	// from the parts, with its finite-sample bias removed by the jackknife
	// over Groups groups of rows. P ≥ 1 is the paper's: the mean over P
	// permuted-joint accumulators of S(C_π) − S(C_XY).
	Permutations int
	// Groups is the number K of groups of rows of the jackknife: chunks of
	// consecutive positions of each shuffle scope go to the groups in
	// turn, and every group keeps its own X, Y and joint accumulators (K
	// times the memory of one set, the same work). 0 means DefaultGroups;
	// 1 turns the jackknife off (DiME is then the plug-in analytic one,
	// without standard error).
	Groups int
	// Jackknife chooses how the analytic DiME's finite-sample bias is
	// removed from the groups: ThirdOrderJackknife (DefaultJackknife:
	// removes the 1/N, (log N)/N and 1/N² terms), GeneralizedJackknife (the
	// zero value: 1/N and (log N)/N), SecondOrderJackknife (1/N and 1/N²)
	// or GroupJackknife (the plain delete-a-group jackknife: 1/N only). The
	// package documentation derives them and measures their residuals. It changes only Result.DiME, not
	// the standard error or anything else.
	Jackknife Jackknife
	// RowModel says what the rows are: IIDRows (the zero value, the
	// default of dime score), independent draws, which the shuffle within
	// each scope and the iid RFF-HSIC test assume; or SerialRows, a
	// stationary series whose neighbouring rows may depend on each other
	// (time-ordered data; the default of dime monitor): rows then keep
	// their order, chunks of consecutive rows go to the groups in turn, and
	// the p-value and the standard error come from the spread between the
	// groups (package documentation). SerialRows needs the analytic
	// estimator (Permutations = 0) and at least 2 groups.
	RowModel RowModel
	// SkipNormalized skips the self terms of the normalized score (its
	// fields are NaN): four accumulators per group fewer, about 8% less work
	// per row, and 4(K+1) eigenproblems fewer per Result.
	SkipNormalized bool
	// Precision is that of the products of the accumulators' rank-k
	// updates (covariance.Accumulator.SetPrecision): vocab.Float32
	// (DefaultConfig) rounds each chunk's features to float32 and sums
	// their products in float32 over the chunk's 256 rows before adding
	// them into the float64 sums, which runs the update, most of the work
	// per row, about twice as fast; vocab.Float64 (the zero value)
	// forms them in float64. Sums of chunks, merges, the means and the
	// entropies are float64 either way. The measured effect of Float32 on
	// DiME is of order 1e-10 (package documentation, README). It is
	// recorded in a saved state, and states of different precisions merge.
	Precision vocab.Precision
	// Seed drives the frequencies and the pairings.
	Seed uint64
	// ShuffleRows is the size of the shuffle scope in rows: rows are paired
	// for the permuted accumulators only with rows of the same scope. 0 (the
	// default) makes each block given to Add its own scope, pooling blocks
	// smaller than DefaultMinScopeRows. A larger value mixes rows across
	// blocks, which matters when the input is sorted or grouped: rows of one
	// batch then resemble each other, and pairing them would mimic the
	// dependence that the permutations are meant to destroy.
	ShuffleRows int
	// HalfLife, in rows, makes the estimator forget old rows: a row's weight
	// halves every HalfLife rows that arrive after it, so the estimate is a
	// sliding view of the stream. 0 (the default) weighs every row equally.
	HalfLife float64
	// SkipAnalytic skips the plug-in analytic estimate of the permutation
	// estimator (P ≥ 1; its fields are NaN in the Result), which saves one
	// 2D×2D eigenproblem: the dominant cost of an in-memory estimate with few
	// rows and large D. The analytic estimator (P = 0) cannot skip it.
	SkipAnalytic bool
	// XColumns and YColumns optionally name the columns of each view. They
	// are reported in Results, recorded in states, and must match to merge.
	XColumns, YColumns []string
	// Workers is the number of goroutines that add the rows of a shuffle
	// scope, each with about 4·256·2D float64 of buffers (2 MiB at D = 256)
	// and no accumulator of its own. With the analytic estimator they share
	// out the K groups (so at most K are used), each mapping only the rows of
	// its groups; with permutations they share out the accumulators (at most
	// P+5) and each maps every row. 0 (the default) means GOMAXPROCS.
	// Results are bit-identical for any number of workers; it is not part of
	// a saved state.
	Workers int
}

// MaxWorkers bounds Config.Workers.
const MaxWorkers = 1024

// workers returns the number of workers to use.
func (c Config) workers() int {
	if c.Workers > 0 {
		return c.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// DefaultPilotRows is the default Config.PilotRows: the median heuristic
// looks at up to 1000 rows.
const DefaultPilotRows = 1000

// MaxPilotRows and MaxShuffleRows bound Config.PilotRows and
// Config.ShuffleRows. Both buffers hold their rows in memory, 8·(dimX + dimY)
// bytes each: the bounds refuse settings (and saved states) that no machine
// could hold; the dime command checks the actual need against the memory it
// may use.
const (
	MaxPilotRows   = 1 << 24
	MaxShuffleRows = 1 << 30
)

// DefaultConfig returns the defaults of the dime command: Gaussian kernel,
// alpha 1.01, standardized columns, fixed bandwidths √(d/2) in units of
// the columns' scales, D = 256 frequencies (512 features), the analytic
// estimator with the third-order jackknife (DefaultJackknife) over
// DefaultGroups groups (no permutations), float32 products in the rank-k
// updates, seed 1.
func DefaultConfig() Config {
	return Config{Kernel: vocab.Gaussian, Alpha: 1.01, Standardize: true, Features: 256, Groups: DefaultGroups, Jackknife: DefaultJackknife, Precision: vocab.Float32, Seed: 1}
}

// DefaultGroups is the default number K of groups of rows of the
// jackknife: the standard error has K − 1 degrees of freedom, and every
// group costs three (seven with the normalized score) accumulators of
// memory and 2 (6) eigenproblems per Result, the generalized jackknife 2
// per pair of groups (42 at K = 7) and the third-order one 2 per line of
// the Fano plane (14): 72 eigenproblems for DiME at K = 7, against 30 at
// K = 4. Seven groups keep every level of the third-order jackknife at 4/7
// of the rows or more, where four left a quarter of them: at D = 256 and
// 2000 rows that quarter held fewer rows than the 512 features, and the
// extrapolation failed (package documentation).
const DefaultGroups = 7

// DefaultJackknife is the bias correction of DefaultConfig and of the dime
// commands: ThirdOrderJackknife. (The zero value of Config.Jackknife is
// GeneralizedJackknife, the default of earlier versions, so that saved
// states keep their meaning.)
const DefaultJackknife = ThirdOrderJackknife

// Jackknife is the bias correction of the analytic DiME (Config.Jackknife).
type Jackknife uint8

const (
	// GeneralizedJackknife extrapolates the plug-in DiME on every row, on
	// every row but one group, and on every row but two groups to
	// infinitely many rows through θ + a·(log n)/n + b/n: K(K−1) more
	// eigenproblems per Result than GroupJackknife (12 at K = 4; 8K beyond
	// 8 groups). With fewer than 3
	// non-empty groups it is GroupJackknife.
	GeneralizedJackknife Jackknife = iota
	// GroupJackknife is the delete-a-group jackknife K·D_all −
	// (K−1)·mean D_(−k) (the default before the generalized one): it
	// leaves a residual bias of order (log N)/N.
	GroupJackknife
	// SecondOrderJackknife extrapolates the same three levels as
	// GeneralizedJackknife through θ + b/n + c/n² (the classical
	// second-order jackknife: K = 4 equal groups give w = 8, −9, 2).
	SecondOrderJackknife
	// ThirdOrderJackknife adds a fourth level, every row but three groups,
	// and extrapolates through θ + a·(log n)/n + b/n + c/n²: C(K,3) more
	// plug-ins (4 at K = 4) for 4 to 6 groups, the 7 lines of the Fano
	// plane at 7 (beyond, or with fewer than 4 non-empty groups, it is
	// GeneralizedJackknife).
	ThirdOrderJackknife
)

// String returns "generalized" or "group".
func (j Jackknife) String() string {
	switch j {
	case GeneralizedJackknife:
		return "generalized"
	case GroupJackknife:
		return "group"
	case SecondOrderJackknife:
		return "second-order"
	case ThirdOrderJackknife:
		return "third-order"
	}
	return fmt.Sprintf("Jackknife(%d)", uint8(j))
}

// RowModel is what the rows are assumed to be (Config.RowModel;
// vocab.RowModel).
type RowModel = vocab.RowModel

// The row models of package vocab.
const (
	IIDRows    = vocab.IIDRows
	SerialRows = vocab.SerialRows
)

// ParseRowModel parses "iid" or "serial", or returns an error matching
// ErrInvalidInput.
func ParseRowModel(s string) (RowModel, error) {
	m, err := vocab.ParseRowModel(s)
	if err != nil {
		return m, invalidf("%v", err)
	}
	return m, nil
}

// MaxGroups bounds Config.Groups.
const MaxGroups = 64

// groups returns K.
func (c Config) groups() int {
	if c.Groups > 0 {
		return c.Groups
	}
	return DefaultGroups
}

// MaxPermutations bounds Config.Permutations: each permutation costs one
// accumulator of 2D×2D float64.
const MaxPermutations = 1000

// Validate returns an error matching ErrInvalidInput if a parameter is out of
// range.
func (c Config) Validate() error {
	switch {
	case !c.Kernel.Valid():
		return invalidf("unknown kernel %d", uint8(c.Kernel))
	case !(c.Alpha > 0) || math.IsInf(c.Alpha, 0):
		return invalidf("alpha must be finite and > 0, got %v", c.Alpha)
	case c.BandwidthX.Rule > vocab.AutoRule || c.BandwidthY.Rule > vocab.AutoRule:
		return invalidf("unknown bandwidth rule")
	case c.BandwidthX.Rule == vocab.ExplicitRule && (!(c.BandwidthX.Sigma > 0) || math.IsInf(c.BandwidthX.Sigma, 0)):
		return invalidf("sigma of X must be finite and > 0, got %v", c.BandwidthX.Sigma)
	case c.BandwidthY.Rule == vocab.ExplicitRule && (!(c.BandwidthY.Sigma > 0) || math.IsInf(c.BandwidthY.Sigma, 0)):
		return invalidf("sigma of Y must be finite and > 0, got %v", c.BandwidthY.Sigma)
	case !(c.HalfLife >= 0) || math.IsInf(c.HalfLife, 0):
		return invalidf("half-life must be a finite number of rows >= 0, got %v", c.HalfLife)
	case c.PilotRows < 0 || c.PilotRows > MaxPilotRows:
		return invalidf("pilot rows must be 0 (default) to %d, got %d", MaxPilotRows, c.PilotRows)
	case c.Features < 1 || c.Features > rff.MaxFeatures:
		return invalidf("features must be 1 to %d, got %d", rff.MaxFeatures, c.Features)
	case c.Permutations < 0 || c.Permutations > MaxPermutations:
		return invalidf("permutations must be 0 (analytic) to %d, got %d", MaxPermutations, c.Permutations)
	case c.Groups < 0 || c.Groups > MaxGroups:
		return invalidf("groups must be 0 (default %d) to %d, got %d", DefaultGroups, MaxGroups, c.Groups)
	case c.Jackknife > ThirdOrderJackknife:
		return invalidf("unknown jackknife %d", c.Jackknife)
	case c.RowModel > SerialRows:
		return invalidf("unknown row model %d", c.RowModel)
	case c.RowModel == SerialRows && c.Permutations > 0:
		return invalidf("serial rows need the analytic estimator (0 permutations): permuted pairs of a series would pair neighbours")
	case c.RowModel == SerialRows && c.groups() < 2:
		return invalidf("serial rows need at least 2 groups: their test and standard error come from the spread between groups")
	case c.Precision != vocab.Float64 && c.Precision != vocab.Float32:
		return invalidf("unknown precision %d", uint8(c.Precision))
	case c.SkipAnalytic && c.Permutations == 0:
		return invalidf("the analytic estimator (0 permutations) cannot skip the analytic estimate")
	case c.ShuffleRows < 0 || c.ShuffleRows > MaxShuffleRows:
		return invalidf("shuffle rows must be 0 (each block) to %d, got %d", MaxShuffleRows, c.ShuffleRows)
	case c.Workers < 0 || c.Workers > MaxWorkers:
		return invalidf("workers must be 0 (automatic) to %d, got %d", MaxWorkers, c.Workers)
	case c.Variant == vocab.Orthogonal && c.Kernel != vocab.Gaussian:
		return invalidf("orthogonal features need the gaussian kernel, not %v", c.Kernel)
	case !c.Scaling.Empty() && !c.Standardize:
		return invalidf("a scaling is given but standardization is off")
	}
	if !c.Scaling.Empty() {
		if err := c.Scaling.check(len(c.Scaling.CenterX), len(c.Scaling.CenterY)); err != nil {
			return err
		}
	}
	return nil
}

// pairSpec returns the feature maps' description for views of the given
// widths and bandwidths.
func (c Config) pairSpec(dimX, dimY int, sigmaX, sigmaY float64) rff.PairSpec {
	return rff.PairSpec{
		Kernel: c.Kernel, Variant: c.Variant, Features: c.Features, Seed: c.Seed,
		SigmaX: sigmaX, SigmaY: sigmaY, DimX: dimX, DimY: dimY,
	}
}

// exactConfig returns the configuration of the exact estimator that the
// auto bandwidth rule maximizes: the same kernel, alpha and rules, and P
// permutations (exact's default when the stream's estimator is analytic).
func (c Config) exactConfig() exact.Config {
	ecfg := exact.DefaultConfig()
	ecfg.Kernel, ecfg.Alpha, ecfg.SigmaX, ecfg.SigmaY, ecfg.Seed = c.Kernel, c.Alpha, c.BandwidthX, c.BandwidthY, c.Seed
	if c.Permutations > 0 {
		ecfg.Permutations = c.Permutations
	}
	return ecfg
}

// needsPilot reports whether a setting looks at the data: a bandwidth rule,
// or standardization without a given scaling.
func (c Config) needsPilot() bool {
	return c.needsBandwidthData() || c.Standardize && c.Scaling.Empty()
}

// needsBandwidthData reports whether a bandwidth rule looks at the data.
func (c Config) needsBandwidthData() bool {
	return c.BandwidthX.NeedsData() || c.BandwidthY.NeedsData()
}

// pilotRows returns the number of rows to hold back for the bandwidths.
func (c Config) pilotRows() int {
	if c.PilotRows > 0 {
		return c.PilotRows
	}
	return DefaultPilotRows
}
