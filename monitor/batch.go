package monitor

import (
	"fmt"

	"github.com/dime-project/dime/stream"
)

// batchFirstBlockRows is the length of a Batch's blocks until its 2K blocks
// first fill.
const batchFirstBlockRows = 64

// Batch compares one batch of rows, of a length not known in advance, with
// a baseline by the change test of the monitor's windows (the package
// documentation, # Baselines): it is the test of a single window that ends
// with the input. Its rows are estimated with the baseline's settings and
// bandwidths, like a monitor's windows (Config.Baseline).
//
// The jackknife of the test needs the batch cut into contiguous blocks of
// equal length. When the length is known (ExpectRows), the batch is cut
// into K = Config.BaselineBlocks blocks of ⌈n/K⌉ rows, as a monitor's
// window: K + 2 estimators of memory, K + 1 estimates. An unknown length
// does not give them: Batch then fills blocks of s rows (64 at first) up to
// 2K, and when all are full merges them pairwise into K blocks of 2s rows
// and goes on filling the other K. At the end it holds between K and 2K
// blocks of s rows (fewer for a batch of fewer than 64·K rows), the last
// one partial: a last block of fewer than s/2 rows joins the one before
// it, so that every block holds s/2 to 3s/2 rows. Memory: 2K + 2
// estimators; cost: up to 2K + 1 estimates. Rows beyond an expected length
// go on in the same way.
type Batch struct {
	base      *baseline
	sc        stream.Config // of the blocks
	dimX      int
	dimY      int
	est       *stream.Estimator // the whole batch, merged from the blocks by Result
	scratch   *stream.Estimator // the change test's leave-one-block-out estimates
	k         int
	blockRows int64 // s: rows per block
	rows      int64 // rows in the current block
	added     int64 // rows added
	skipped   int64
	done      bool
}

// NewBatch returns the comparison of a batch of rows of views with dimX
// and dimY columns with cfg.Baseline. Of cfg only Baseline,
// BaselineBlocks (default DefaultBaselineBlocks) and, of Stream, Workers,
// SkipAnalytic and the column names count.
func NewBatch(dimX, dimY int, cfg Config) (*Batch, error) {
	if cfg.Baseline == nil {
		return nil, fmt.Errorf("%w: a batch comparison without a baseline", ErrConfig)
	}
	k := cfg.BaselineBlocks
	if k == 0 {
		k = DefaultBaselineBlocks
	}
	if k < 2 || k > MaxBaselineBlocks {
		return nil, fmt.Errorf("%w: %d baseline blocks (want 2 to %d)", ErrConfig, k, MaxBaselineBlocks)
	}
	cfg.BaselineBlocks = k // K more are made if the batch needs them
	base, sc, err := newBaseline(cfg.Baseline, cfg, dimX, dimY)
	if err != nil {
		return nil, err
	}
	est, err := stream.New(dimX, dimY, sc)
	if err != nil {
		return nil, err
	}
	scratch, err := stream.New(dimX, dimY, sc)
	if err != nil {
		return nil, err
	}
	return &Batch{base: base, sc: sc, dimX: dimX, dimY: dimY, est: est, scratch: scratch, k: k, blockRows: batchFirstBlockRows}, nil
}

// ExpectRows tells the batch its length, n rows, before the first Add:
// it is then cut into K blocks of ⌈n/K⌉ rows. A length of 0 or less (not
// known) is ignored, as is a call after the first Add.
func (b *Batch) ExpectRows(n int64) {
	if n > 0 && b.added == 0 {
		k := int64(b.k)
		b.blockRows = max(1, (n+k-1)/k)
	}
}

// Add adds rows consecutive rows (row-major blocks of X and Y). On an
// error (invalid values) nothing of the block is added past the rows
// before the error's block of rows, as stream.Estimator.Add.
func (b *Batch) Add(x, y []float64, rows int) error {
	if b.done {
		return fmt.Errorf("%w: rows added to a batch after its Result", ErrConfig)
	}
	dx, dy := b.est.Dims()
	if rows < 0 || len(x) != rows*dx || len(y) != rows*dy {
		return fmt.Errorf("%w: block of %d rows has %d X and %d Y values", stream.ErrInvalidInput, rows, len(x), len(y))
	}
	for rows > 0 {
		if b.rows == b.blockRows {
			switch {
			case b.base.cur < len(b.base.blocks)-1:
				b.base.next(-1)
			case len(b.base.blocks) == b.k:
				// The first K blocks are full: K more.
				for range b.k {
					e, err := stream.New(b.dimX, b.dimY, b.sc)
					if err != nil {
						return err
					}
					b.base.blocks = append(b.base.blocks, e)
				}
				b.base.next(-1)
			default:
				if err := b.halve(); err != nil {
					return err
				}
			}
			b.rows = 0
		}
		take := int(min(int64(rows), b.blockRows-b.rows))
		if err := b.base.target().Add(x[:take*dx], y[:take*dy], take); err != nil {
			return err
		}
		b.rows += int64(take)
		b.added += int64(take)
		x, y, rows = x[take*dx:], y[take*dy:], rows-take
	}
	return nil
}

// halve merges the 2K full blocks of s rows pairwise into K blocks of 2s
// rows (blocks 2i and 2i+1 into block i: they stay contiguous and in
// order) and makes block K current.
func (b *Batch) halve() error {
	bl := b.base.blocks
	for i := range b.k {
		if i > 0 {
			bl[i], bl[2*i] = bl[2*i], bl[i] // bl[i] was merged into bl[i/2] already
		}
		if err := bl[i].Merge(bl[2*i+1]); err != nil {
			return err
		}
	}
	for _, e := range bl[b.k:] {
		e.Reset()
	}
	b.base.cur = b.k
	b.blockRows *= 2
	return nil
}

// Skip counts n rows dropped upstream.
func (b *Batch) Skip(n int64) { b.skipped += n }

// Rows returns the rows added.
func (b *Batch) Rows() int64 { return b.added }

// Result returns the estimate over the whole batch and its comparison with
// the baseline. Call it once, after the last Add; the batch needs at least
// 2 rows.
func (b *Batch) Result() (stream.Result, *Change, error) {
	if b.done {
		return stream.Result{}, nil, fmt.Errorf("%w: Result called twice", ErrConfig)
	}
	b.done = true
	if cur := b.base.cur; cur > 0 && b.rows < b.blockRows/2 {
		last := b.base.blocks[cur]
		if err := b.base.blocks[cur-1].Merge(last); err != nil {
			return stream.Result{}, nil, err
		}
		last.Reset()
	}
	if _, err := b.base.window(b.est); err != nil {
		return stream.Result{}, nil, err
	}
	if b.est.Rows() < 2 {
		return stream.Result{}, nil, fmt.Errorf("%w: %d rows, need at least 2", stream.ErrInvalidInput, b.est.Rows())
	}
	b.est.Skip(b.skipped)
	r, err := b.est.Result()
	if err != nil {
		return stream.Result{}, nil, err
	}
	ch, err := b.base.change(b.scratch, r.DiME, b.est.Rows())
	if err != nil {
		return stream.Result{}, nil, err
	}
	return r, ch, nil
}

// Estimator returns the estimator of the whole batch once Result has
// returned (to save its state, e.g. as the next baseline); nil before.
func (b *Batch) Estimator() *stream.Estimator {
	if !b.done {
		return nil
	}
	return b.est
}
