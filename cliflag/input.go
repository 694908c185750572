package cliflag

import (
	"flag"
	"strings"

	dimeio "github.com/dime-project/dime/io"
	"github.com/dime-project/dime/vocab"
)

// Input holds the flags of the commands that read a dataset.
type Input struct {
	Format      string
	Where       string
	BatchSize   int
	SkipInvalid bool
}

// Register adds --format, --where, --batch-size and --skip-invalid.
func (in *Input) Register(fs *flag.FlagSet) {
	fs.StringVar(&in.Format, "format", "", "input format: parquet, ipc-file, ipc-stream or csv (default: from the extension; - is an IPC stream on stdin); in a directory, read every file as this format")
	fs.StringVar(&in.Where, "where", "", "read only the files whose hive partitions (key=value directories) meet these conditions, e.g. 'region=eu,date>=2026-11-01' (comma = and; = != < <= > >=)")
	fs.IntVar(&in.BatchSize, "batch-size", dimeio.DefaultBatchSize, "rows per block read")
	fs.BoolVar(&in.SkipInvalid, "skip-invalid", false, "drop rows with a null, NaN, Inf or a value beyond ±1e150 in a selected column (counted) instead of stopping")
}

// Options checks the flags and returns the reader options for views with
// the given columns: values beyond ±vocab.MaxAbsValue are invalid, as a
// NaN is (dropped with --skip-invalid, an error without).
func (in *Input) Options(xcols, ycols []string) (dimeio.Options, error) {
	opts := dimeio.Options{X: xcols, Y: ycols, BatchSize: in.BatchSize, SkipInvalid: in.SkipInvalid, MaxAbs: vocab.MaxAbsValue}
	if in.Format != "" {
		format, err := dimeio.ParseFormat(in.Format)
		if err != nil {
			return opts, vocab.Errorf("--format %q: want parquet, ipc-file, ipc-stream or csv", in.Format)
		}
		opts.Format = format
	}
	if in.BatchSize < 1 {
		return opts, vocab.Errorf("--batch-size %d: want at least 1", in.BatchSize)
	}
	where, err := dimeio.ParseWhere(in.Where)
	if err != nil {
		return opts, vocab.Errorf("--where %q: %v", in.Where, strings.TrimPrefix(err.Error(), "dimeio: where: "))
	}
	opts.Where = where
	return opts, nil
}
