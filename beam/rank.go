package dimebeam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

func init() {
	register.DoFn2x3[context.Context, Split, int, Partial, error](&rankFn{})
}

// RankConfig says what a ranking pipeline computes (dimebeam rank: many
// candidates against a target, package rank) and how it reads the dataset.
type RankConfig struct {
	// Read says how the dataset is read and where the splits' sums go:
	// Read, SplitRows and TempDir as for Sums. Its Stream and
	// the columns of Read are not used: the columns read are Layout's.
	Read Config
	// Layout holds the views and pairs and the columns that hold them
	// (rank.RankLayout).
	Layout rank.Layout
	// Rank holds the estimator settings, with every view's bandwidth (and
	// with standardization its scales) explicit, as ChooseRankPilot or a
	// saved state (rank.Accumulator.Config) gives them, so that every
	// split's accumulator uses them.
	Rank rank.Config
}

// Validate returns an error matching ErrConfig if the configuration cannot
// run.
func (c RankConfig) Validate() error {
	if err := c.Reading().Validate(); err != nil {
		return err
	}
	p := c.Layout.Plan
	switch {
	case len(p.Pairs) == 0 || len(p.Views) == 0 || p.Width != c.Layout.DimX+c.Layout.DimY:
		return fmt.Errorf("%w: a ranking needs views, pairs and a layout of its rows", ErrConfig)
	case len(c.Rank.Sigmas) != len(p.Views):
		return fmt.Errorf("%w: %d bandwidths for %d views: choose them with ChooseRankPilot", ErrConfig, len(c.Rank.Sigmas), len(p.Views))
	}
	return nil
}

// Reading returns the configuration that reads the dataset as the
// ranking does (Resolve takes it): Read with the layout's
// columns as its views. It scores nothing (its Stream.Standardize is
// false: the ranking's scales are in Rank).
func (c RankConfig) Reading() Config {
	r := c.Read
	r.Stream = c.Rank.Stream
	r.Stream.XColumns, r.Stream.YColumns = c.Layout.XColumns, c.Layout.YColumns
	r.Read.opts.Columns.X, r.Read.opts.Columns.Y = c.Layout.XColumns, c.Layout.YColumns
	r.Stream.Scaling, r.Stream.Standardize = stream.Scaling{}, false
	return r
}

// ChooseRankPilot returns cfg with every view's bandwidth and scales chosen
// as dime rank chooses them (rank.ResolvePilot) on the pilot of
// Rank.Stream.PilotRows rows that dime reads (a seeded sample of a Parquet
// dataset's rows, the first rows of other files), read here, in the
// launcher (as ChoosePilot reads a score's), of the dataset d (Resolve).
// A configuration with explicit bandwidths (a saved state's) is returned
// as it is, once the first data file is opened with its columns.
func ChooseRankPilot(ctx context.Context, d *dataset.Dataset, cfg RankConfig) (RankConfig, Pilot, error) {
	if len(cfg.Rank.Sigmas) > 0 {
		return cfg, Pilot{}, checkColumns(ctx, d, cfg.Reading())
	}
	lay := cfg.Layout
	p, what, err := readPilot(ctx, d, cfg.Reading(), cfg.Rank.Stream.PilotRows)
	if err != nil {
		return cfg, Pilot{}, err
	}
	if p.DimX != lay.DimX || p.DimY != lay.DimY {
		return cfg, Pilot{}, fmt.Errorf("%w: the columns have %d+%d values, the layout %d+%d", ErrConfig, p.DimX, p.DimY, lay.DimX, lay.DimY)
	}
	rc, err := rank.ResolvePilot(lay.Plan, cfg.Rank, lay.Row(nil, p.X, p.Y, p.Rows), p.Rows, what)
	if err != nil {
		return cfg, Pilot{}, fmt.Errorf("%w: %s", ErrConfig, strings.TrimPrefix(err.Error(), rank.ErrInvalidInput.Error()+": "))
	}
	cfg.Rank = rc
	return cfg, p.description(), nil
}

// RankSums ranks the dataset that files name (as Sums reads it: the same
// splits, read the same way) and returns a PCollection of one Merged: the
// exact sum of the multi-pair accumulators of every split, which
// RankStates, WriteState and RankAccumulator add into the accumulator of
// every row. Each split is read into a rank.Accumulator of its own, whose
// exact sum (rank.Sum's encoding, rank.WriteSum) is written to a file of
// Read.TempDir (or, without one, travels as an element) and added in the
// same tree of two levels as Sums' sums (see mergeSums), so that the
// merged accumulator is the same bit for bit whatever the runner's order
// and grouping; a dataset in one split gives dime rank's numbers to the
// bit. An invalid configuration panics (check it with
// RankConfig.Validate first).
func RankSums(s beam.Scope, files beam.PCollection, cfg RankConfig) beam.PCollection {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	s = s.Scope("dimebeam.RankSums")
	read := cfg.Reading()
	splits := planStage(s, files, read)
	return mergeSums(s, beam.ParDo(s, &rankFn{Cfg: cfg}, splits), read, rankSums)
}

// RankStates ranks the dataset that files name and returns a PCollection
// of one []byte: the multi-pair state of every row
// (rank.Accumulator.WriteState; nil when there are none), which
// rank.ReadState and dime merge read. The state is one element, which a
// runner copies: to write it to a file, give RankSums to WriteState
// instead.
func RankStates(s beam.Scope, files beam.PCollection, cfg RankConfig) beam.PCollection {
	s = s.Scope("dimebeam.RankStates")
	return beam.ParDo(s, &stateFn{}, RankSums(s, files, cfg))
}

// RankAccumulator returns the multi-pair accumulator of m, the merged sum
// of RankSums (a DoFn that reports the ranking calls it), added one
// accumulator at a time from the shards' sums, and removes the splits'
// files of Read.TempDir once it has read them. A sum without rows gives an
// error saying so.
func RankAccumulator(ctx context.Context, m Merged) (*rank.Accumulator, error) {
	if m.Kind != rankSums {
		return nil, fmt.Errorf("dimebeam: RankAccumulator of a pair's sums (Sums); give it RankSums'")
	}
	a, err := accumulatorOf(ctx, m)
	if errors.Is(err, rank.ErrInvalidInput) {
		return nil, errNoRows
	}
	if err != nil {
		return nil, err
	}
	removeSplits(ctx, m)
	return a, nil
}

// rankFn reads a split into a multi-pair accumulator of its own and emits
// its exact sum, keyed by the split's shard.
type rankFn struct{ Cfg RankConfig }

func (f *rankFn) ProcessElement(ctx context.Context, sp Split) (int, Partial, error) {
	sum, err := f.rank(ctx, sp)
	return sp.Shard, sum, TagJobError(err)
}

func (f *rankFn) rank(ctx context.Context, sp Split) (Partial, error) {
	cfg := f.Cfg.Rank
	cfg.Stream.Workers = 0
	w := splitWeight(cfg.Stream, runtime.GOMAXPROCS(0))
	if err := splitSlots().Acquire(ctx, w); err != nil {
		return Partial{}, err
	}
	defer splitSlots().Release(w)
	lay := f.Cfg.Layout
	acc, err := rank.New(lay.Plan, cfg)
	if err != nil {
		return Partial{}, fmt.Errorf("dimebeam: %s: %w", sp, err)
	}
	read := f.Cfg.Reading()
	var block []float64
	_, _, skipped, err := readBlocks(ctx, sp, read, func(x, y []float64, n int) error {
		if len(x) != n*lay.DimX || len(y) != n*lay.DimY {
			return vocab.Errorf("the columns have %d+%d values, the ranking's %d+%d", len(x)/max(n, 1), len(y)/max(n, 1), lay.DimX, lay.DimY)
		}
		block = lay.Row(block, x, y, n)
		return acc.Add(block, n)
	})
	if err != nil {
		return Partial{}, err
	}
	acc.Skip(skipped)
	// As a score's split: the sum is written one accumulator at a time.
	sum, err := writePartial(ctx, read.TempDir, fmt.Sprintf("rank-split-%d", sp.Shard), func(w io.Writer) error {
		return rank.WriteSum(w, acc)
	})
	if err != nil { // the machine's failure, whatever the cause says
		return Partial{}, fmt.Errorf("dimebeam: %s: writing its sum: %v", sp, err)
	}
	return sum, nil
}
