package decode

import (
	"runtime"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
)

// Options say what to read and how, one concern a field: which files
// (Files), which columns (Columns), which values are invalid (Values), how
// to decode them (the fields below). The zero value of every field but
// Columns.X and Columns.Y is usable.
type Options struct {
	// Files say which files make the dataset and how to reach them: the
	// format, the --where conditions on hive partitions, object storage.
	Files dataset.Options
	// Columns select the two views and the time column (see columns.Select).
	Columns columns.Spec
	// Values say which values are invalid, and whether an invalid row is
	// dropped or stops the reading.
	Values Values

	// BatchSize is the number of rows read per record batch (Parquet, CSV):
	// the size of the blocks Next returns before invalid rows are dropped.
	// The default (0) is DefaultBatchSize. IPC files and streams come in the
	// batches they were written with, which a reader must hold whole (each
	// at most MaxRecordBatchBytes), and are handed over in blocks of at most
	// BatchSize rows.
	BatchSize int
	// Strict makes an IPC stream that ends without its end-of-stream marker
	// an error (ErrFormat) rather than a warning (Reader.Warnings).
	Strict bool
	// Comma is the field delimiter of CSV (default ',').
	Comma rune
	// Allocator allocates the Arrow buffers of the reader (default
	// memory.DefaultAllocator, with the Parquet decoder's buffers reused
	// from a pool). Tests pass a memory.CheckedAllocator.
	Allocator memory.Allocator
	// Prefetch makes a Reader read and extract the next block on a
	// goroutine of its own while the caller works on the current one, so
	// that decoding overlaps computation. It holds one more block (and
	// starts reading at Open); blocks, counts and errors are the same as
	// without it. Close stops the goroutine: close every Reader.
	Prefetch bool

	// Limit, if positive, ends a DatasetReader after this many rows (kept
	// rows, after Values.SkipInvalid).
	Limit int64
	// Workers is the number of goroutines a DatasetReader decodes on, ahead
	// of the caller, across files and Parquet row groups; the default (0)
	// is GOMAXPROCS, at most 4. Results do not depend on it: the blocks
	// are the same whatever the number of workers.
	Workers int
	// Selected, if not nil, is Columns as selected on the dataset's first
	// input already (Pilot.Columns, of a pilot read with the same
	// Columns): a DatasetReader, and ReadPilot, bind that input to it rather than select
	// its columns again. Each other input is selected once, on its own,
	// and must agree with it.
	Selected *columns.Selection

	// headRows, if positive, is the number of rows of the first Parquet
	// batch: a DatasetReader aligns the batches of a file that starts in
	// the middle of a block of the dataset on the dataset's blocks, so
	// that most blocks are handed over without a copy.
	headRows int
}

// Values say which values of the selected columns are invalid. A null, a
// NaN and an infinity always are.
type Values struct {
	// SkipInvalid drops a row from both views if any selected value of it
	// (or its time) is invalid, and counts it (Skipped). Without it such a
	// value stops the reading with a *ValueError.
	SkipInvalid bool
	// MaxAbs, if positive, makes a value beyond ±MaxAbs invalid, as a NaN
	// is. The dime command gives exact.MaxAbsValue, beyond which the
	// kernels' squared distances overflow.
	MaxAbs float64
}

// workers returns the number of decoding goroutines.
func (o *Options) workers() int {
	if o.Workers > 0 {
		return o.Workers
	}
	return min(runtime.GOMAXPROCS(0), 4)
}

// DefaultBatchSize is the number of rows per record batch when
// Options.BatchSize is 0, and of the IPC batches a TableWriter writes.
// Measured on a Parquet file of 10 million rows of 20 float64 columns:
// 16384-row batches read 12 million rows/s with a peak RSS of 122 MB, where
// 65536-row batches read 10.5 million rows/s with 215 MB.
const DefaultBatchSize = 16384

// MaxBlockBytes bounds the float64 values of a batch of rows (X and Y): a
// batch of wide rows (a FixedSizeList column of 100,000 values, or
// --batch-size 2000000000) has fewer rows than BatchSize, at least one.
// The readers hold a few such batches and blocks at once (the memory check
// of the dime command counts them).
const MaxBlockBytes = 32 << 20

// blockRows returns the rows of a batch of rows of width values: batch, or
// fewer if the batch's values would pass MaxBlockBytes.
func blockRows(batch, width int) int {
	return max(1, min(batch, MaxBlockBytes/(8*max(width, 1))))
}

func (o *Options) batchSize() int {
	if o.BatchSize > 0 {
		return o.BatchSize
	}
	return DefaultBatchSize
}

func (o *Options) allocator() memory.Allocator {
	if o.Allocator != nil {
		return o.Allocator
	}
	return memory.DefaultAllocator
}

// Block is a block of rows in row-major order: row i of X is
// X[i*DimX:(i+1)*DimX], and likewise for Y. Extract resizes its slices,
// reusing their memory, so one Block serves a whole stream without
// allocating in steady state.
type Block struct {
	// X and Y hold Rows×DimX and Rows×DimY values.
	X, Y []float64
	// Times holds the time of each row in nanoseconds since the Unix epoch
	// (UTC), or is nil without a time column.
	Times []int64
	// Rows is the number of rows.
	Rows int
}

// resize makes b hold rows rows, reusing its memory.
func (b *Block) resize(rows, dimX, dimY int, times bool) {
	b.Rows = rows
	b.X = grow(b.X, rows*dimX)
	b.Y = grow(b.Y, rows*dimY)
	if times {
		b.Times = grow(b.Times, rows)
	} else {
		b.Times = nil
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}
