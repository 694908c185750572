package monitor

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// DefaultBaselineBlocks is the default Config.BaselineBlocks.
const DefaultBaselineBlocks = 5

// MaxBaselineBlocks bounds Config.BaselineBlocks: each block holds an
// estimator.
const MaxBaselineBlocks = 64

// Change compares a window with the baseline: has the dependence changed?
// The package documentation (# Baselines) derives the test.
type Change struct {
	// BaselineDiME is the DiME of the baseline, BaselineRows its rows
	// (effective rows, if it was estimated with a half-life).
	BaselineDiME float64
	BaselineRows float64
	// Correction is the difference of the finite-sample biases of the
	// window's and the baseline's DiME, b/n − b/n_b, with b estimated by the
	// jackknife over the window's blocks.
	Correction float64
	// Difference is the window's DiME minus the baseline's minus
	// Correction, and StdErr its standard error, √(v_J·(1 + n/n_b)) with v_J
	// the jackknife variance of the window's DiME.
	Difference, StdErr float64
	// T is Difference/StdErr, compared with Student's t with DF = K − 1
	// degrees of freedom, K the window's non-empty blocks.
	T  float64
	DF int
	// PValue is the two-sided p-value of "the dependence is the
	// baseline's": small when the window's DiME differs from the baseline's
	// by more than sampling explains, in either direction. NaN (and
	// StdErr, T) when the window has fewer than 2 non-empty blocks.
	PValue float64
}

// baseline is a monitor's reference: its DiME and rows, and the blocks of
// the current window.
type baseline struct {
	dime, rows float64
	blocks     []*stream.Estimator // the window's blocks, rows added to blocks[cur]
	cur        int
	loo        []float64 // scratch: leave-one-block-out DiMEs
}

// newBaseline checks a baseline estimator and returns the reference and the
// estimator configuration of the windows: the baseline's, with its resolved
// bandwidths made explicit, so that windows and baseline share their feature
// maps.
func newBaseline(b *stream.Estimator, cfg Config, dimX, dimY int) (*baseline, stream.Config, error) {
	if dx, dy := b.Dims(); dx != dimX || dy != dimY {
		return nil, stream.Config{}, fmt.Errorf("%w: the baseline has views of %d and %d columns, the monitor %d and %d", ErrConfig, dx, dy, dimX, dimY)
	}
	if !b.Started() || b.Rows() < 2 {
		return nil, stream.Config{}, fmt.Errorf("%w: the baseline has %d rows, want at least 2", ErrConfig, b.Rows())
	}
	r, err := b.Result()
	if err != nil {
		return nil, stream.Config{}, fmt.Errorf("%w: the baseline: %v", ErrConfig, err)
	}
	if math.IsNaN(r.DiME) || !(r.EffectiveRows > 0) {
		return nil, stream.Config{}, fmt.Errorf("%w: the baseline has no DiME", ErrConfig)
	}
	sc := b.Config()
	sx, sy := b.Bandwidths()
	sc.BandwidthX, sc.BandwidthY = vocab.Sigma(sx), vocab.Sigma(sy)
	sc.HalfLife, sc.PilotRows = 0, 0
	sc.Workers, sc.SkipAnalytic = cfg.Stream.Workers, cfg.Stream.SkipAnalytic
	if cfg.Stream.XColumns != nil || cfg.Stream.YColumns != nil {
		sc.XColumns, sc.YColumns = cfg.Stream.XColumns, cfg.Stream.YColumns
	}
	base := &baseline{dime: r.DiME, rows: r.EffectiveRows}
	for range cfg.BaselineBlocks {
		e, err := stream.New(dimX, dimY, sc)
		if err != nil {
			return nil, stream.Config{}, err
		}
		base.blocks = append(base.blocks, e)
	}
	return base, sc, nil
}

// target is the estimator of the block being read.
func (b *baseline) target() *stream.Estimator { return b.blocks[b.cur] }

// next moves to block i (clamped to the last), or to the next block if
// i < 0.
func (b *baseline) next(i int) {
	if i < 0 {
		i = b.cur + 1
	}
	b.cur = min(max(i, b.cur), len(b.blocks)-1)
}

// window merges the blocks into est (reset first): est then holds the
// window. It returns the number of non-empty blocks.
func (b *baseline) window(est *stream.Estimator) (int, error) {
	est.Reset()
	k := 0
	for _, bl := range b.blocks {
		if bl.Rows() == 0 {
			continue
		}
		k++
		if err := est.Merge(bl); err != nil {
			return 0, err
		}
	}
	return k, nil
}

// change compares the window (its DiME, of rows rows) with the baseline,
// by the jackknife over its blocks, using est as scratch; it then resets
// the blocks for the next window.
func (b *baseline) change(est *stream.Estimator, dime float64, rows int64) (*Change, error) {
	defer func() {
		for _, bl := range b.blocks {
			bl.Reset()
		}
		b.cur = 0
	}()
	c := &Change{BaselineDiME: b.dime, BaselineRows: b.rows, Difference: dime - b.dime,
		StdErr: math.NaN(), T: math.NaN(), PValue: math.NaN()}
	b.loo = b.loo[:0]
	for k, out := range b.blocks {
		if out.Rows() == 0 {
			continue
		}
		est.Reset()
		for j, bl := range b.blocks {
			if j != k && bl.Rows() > 0 {
				if err := est.Merge(bl); err != nil {
					return nil, err
				}
			}
		}
		if est.Rows() < 2 {
			continue
		}
		d, err := est.DiMEOnly() // Result().DiME, without the rest of a Result
		if err != nil {
			return nil, err
		}
		b.loo = append(b.loo, d)
	}
	k := len(b.loo)
	if k < 2 || math.IsNaN(dime) {
		return c, nil
	}
	var mean float64
	for _, v := range b.loo {
		mean += v
	}
	mean /= float64(k)
	var ss float64
	for _, v := range b.loo {
		ss += (v - mean) * (v - mean)
	}
	v := float64(k-1) / float64(k) * ss  // jackknife variance of the window's DiME
	bias := float64(k-1) * (mean - dime) // jackknife estimate of b/n
	ratio := float64(rows) / b.rows      // n/n_b
	c.Correction = bias * (1 - ratio)    // b/n − b/n_b
	c.Difference = dime - b.dime - c.Correction
	c.StdErr = math.Sqrt(v * (1 + ratio)) // Var(DiME_b) ≈ v·n/n_b under no change
	c.DF = k - 1
	if c.StdErr > 0 {
		c.T = c.Difference / c.StdErr
		c.PValue = studentP(c.T, c.DF)
	}
	return c, nil
}

// studentP returns the two-sided p-value of t under Student's t with df
// degrees of freedom.
func studentP(t float64, df int) float64 {
	return math.Min(1, 2*distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Survival(math.Abs(t)))
}
