package dimebeam

import (
	"encoding/json"
	"fmt"

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
	// Stream holds the estimator's settings. Its XColumns and YColumns
	// label the views (reported and recorded in states, as dime score
	// records the columns it read). Bandwidth rules median and auto
	// are resolved once, on a seeded uniform sample of the whole dataset
	// (SampleRows rows), and the σ they give is used by every split;
	// PilotRows, HalfLife and Workers are not used by a pipeline (Workers:
	// each split's estimator uses GOMAXPROCS goroutines of its worker).
	Stream stream.Config
	// Read holds the reader options, as cliflag.Input.Options builds them
	// from dime's flags (NewReadOptions): Columns select the columns of
	// the views (X and Y required), Files the data files (Format
	// overrides the format that file extensions give; Where keeps the
	// files whose hive partitions meet every condition, dataset.ParseWhere,
	// and the others are never opened), Values the invalid values
	// (SkipInvalid drops a row with a null, NaN or infinity in a selected
	// column, counted in the result, instead of failing; dime's flags give
	// MaxAbs vocab.MaxAbsValue, beyond which a value is invalid, as a NaN
	// is) and BatchSize the rows per block read (decode.DefaultBatchSize
	// when 0). The workers read with Prefetch.
	Read ReadOptions
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
	case len(c.Read.opts.Columns.X) == 0 || len(c.Read.opts.Columns.Y) == 0:
		return fmt.Errorf("%w: name the columns of both views (Read.Columns)", ErrConfig)
	case c.Stream.HalfLife != 0:
		return fmt.Errorf("%w: a half-life weighs rows by their order, which a pipeline does not have", ErrConfig)
	case c.Stream.Standardize && c.Stream.Scaling.Empty():
		return fmt.Errorf("%w: standardized columns need one scaling for every split: choose it with ChoosePilot (or set Stream.Scaling, or Stream.Standardize = false)", ErrConfig)
	case c.Read.opts.BatchSize < 0:
		return fmt.Errorf("%w: batch size %d", ErrConfig, c.Read.opts.BatchSize)
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

// ReadOptions are a pipeline's reader options (decode.Options), which
// travel to the workers with the pipeline's functions, as JSON: all of
// them but the functions (Files.OpenBucket, Files.Listing) and the
// allocator, which cannot travel: a worker uses their defaults. They are
// unexported so that Beam, which makes a schema of a function's fields,
// does not look into them.
type ReadOptions struct{ opts decode.Options }

// NewReadOptions returns opts as a Config's reader options, without
// opts.Selected: a selection belongs to one input (the first of a dataset
// as dime's pilot read it), and a worker opens the input of its split, so
// every worker selects its own split's columns.
func NewReadOptions(opts decode.Options) ReadOptions {
	opts.Selected = nil
	return ReadOptions{opts}
}

// Options returns the reader options.
func (o ReadOptions) Options() decode.Options { return o.opts }

// readWire is ReadOptions as JSON: decode.Options, its fields that cannot
// travel hidden behind empty fields of the same names.
type readWire struct {
	decode.Options
	Files     filesWire
	Allocator *struct{} `json:",omitempty"`
}

type filesWire struct {
	dataset.Options
	OpenBucket, Listing *struct{} `json:",omitempty"`
}

// MarshalJSON encodes the options that travel.
func (o ReadOptions) MarshalJSON() ([]byte, error) {
	return json.Marshal(readWire{Options: o.opts, Files: filesWire{Options: o.opts.Files}})
}

// UnmarshalJSON decodes what MarshalJSON encodes.
func (o *ReadOptions) UnmarshalJSON(b []byte) error {
	var w readWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	o.opts, o.opts.Files = w.Options, w.Files.Options
	return nil
}
