package dimebeam

import (
	"fmt"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// ErrConfig is matched by the errors of Config.Validate. It is about the
// settings: vocab.IsUsage reports true for an error that wraps it.
var ErrConfig = vocab.NewSentinel("dimebeam: invalid configuration")

// Config says what a pipeline computes and how it reads its inputs. Its
// fields are plain values: Beam serializes it into the pipeline with the
// functions that use it.
type Config struct {
	// Stream holds the estimator's settings. Its XColumns and YColumns are
	// the columns of the views (required). Bandwidth rules median and auto
	// are resolved once, on a seeded uniform sample of the whole dataset
	// (SampleRows rows), and the σ they give is used by every split;
	// PilotRows, HalfLife and Workers are not used by a pipeline (Workers:
	// each split's estimator uses GOMAXPROCS goroutines of its worker).
	Stream stream.Config
	// Format overrides the format that file extensions give.
	Format dataset.Format
	// Where keeps the files whose hive partitions meet every condition
	// (dataset.ParseWhere); the others are never opened.
	Where []dataset.Condition
	// BatchSize is the number of rows per block read (decode.DefaultBatchSize
	// when 0).
	BatchSize int
	// SkipInvalid drops rows with a null, NaN or infinity in a selected
	// column, counted in the result, instead of failing.
	SkipInvalid bool
	// SplitRows bounds the rows of a split, the unit of work that one
	// worker reads into an estimator of its own: the row groups of the
	// Parquet files are packed, in the dataset's order, into splits of at
	// most SplitRows rows (more only for a single row group of more rows),
	// as Spark packs files into partitions of maxPartitionBytes. A larger
	// value pays the fixed cost of a split (its estimator's state) fewer
	// times; a smaller one spreads a small dataset over more workers. Files
	// whose rows are not known before reading them (CSV, Arrow IPC) are a
	// split each. 0 means DefaultSplitRows.
	SplitRows int64
	// SampleRows is the size of the uniform sample on which median and
	// auto bandwidths are chosen; 0 means stream.DefaultPilotRows, as
	// dime score's pilot.
	SampleRows int
	// TempDir, when set, is a directory that every worker can write and
	// read (a local path when the workers share this machine, or a gs://
	// or s3:// URL) where each split and each shard writes its exact sum,
	// a file of about 30 MB at D = 256 with float32 products, so that only
	// the file's name, size and checksum travel through the runner. Give
	// each pipeline a directory of its own and remove it after the job
	// (RemoveTemp): the splits' files are removed when the result is
	// computed, the shards' are left. Empty: the sums travel through the
	// runner as elements, and a runner such as Prism holds each of them,
	// several times, in its memory.
	TempDir string
}

// DefaultSplitRows is the default Config.SplitRows: about a minute of work
// for one core at D = 256, large enough that the fixed cost of a split
// (its exact sum, about 32 MB at D = 256 with the default 7 groups,
// written, read and added once per split) is small.
const DefaultSplitRows = 1 << 20

// MaxSampleRows bounds Config.SampleRows: the sample travels through the
// pipeline as one element and the auto rule costs O(n³).
const MaxSampleRows = 1 << 16

// Validate returns an error matching ErrConfig if a setting is out of
// range.
func (c Config) Validate() error {
	if err := c.Stream.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrConfig, err)
	}
	switch {
	case len(c.Stream.XColumns) == 0 || len(c.Stream.YColumns) == 0:
		return fmt.Errorf("%w: name the columns of both views (Stream.XColumns, Stream.YColumns)", ErrConfig)
	case c.Stream.HalfLife != 0:
		return fmt.Errorf("%w: a half-life weighs rows by their order, which a pipeline does not have", ErrConfig)
	case c.Stream.Standardize && c.Stream.Scaling.Empty():
		return fmt.Errorf("%w: standardized columns need one scaling for every split: choose it with ChoosePilot (or set Stream.Scaling, or Stream.Standardize = false)", ErrConfig)
	case c.BatchSize < 0:
		return fmt.Errorf("%w: batch size %d", ErrConfig, c.BatchSize)
	case c.SplitRows < 0:
		return fmt.Errorf("%w: split rows %d", ErrConfig, c.SplitRows)
	case c.SampleRows < 0 || c.SampleRows > MaxSampleRows:
		return fmt.Errorf("%w: sample rows %d, want 2 to %d (0: %d)", ErrConfig, c.SampleRows, MaxSampleRows, stream.DefaultPilotRows)
	case c.SampleRows == 1:
		return fmt.Errorf("%w: sample rows 1, want at least 2", ErrConfig)
	}
	return nil
}

// needsSample reports whether a bandwidth rule looks at the data.
func (c Config) needsSample() bool {
	return c.Stream.BandwidthX.NeedsData() || c.Stream.BandwidthY.NeedsData()
}

func (c Config) sampleRows() int {
	if c.SampleRows > 0 {
		return c.SampleRows
	}
	return stream.DefaultPilotRows
}

func (c Config) splitRows() int64 {
	if c.SplitRows > 0 {
		return c.SplitRows
	}
	return DefaultSplitRows
}

// readOptions returns the reader options for the views: a value beyond
// ±vocab.MaxAbsValue is invalid, as a NaN is, as for dime score.
func (c Config) readOptions() decode.Options {
	return decode.Options{
		Files:     dataset.Options{Format: c.Format, Where: c.Where},
		Columns:   columns.Spec{X: c.Stream.XColumns, Y: c.Stream.YColumns},
		Values:    decode.Values{SkipInvalid: c.SkipInvalid, MaxAbs: vocab.MaxAbsValue},
		BatchSize: c.BatchSize,
		Prefetch:  true,
	}
}
