package cliflag

import (
	"flag"
	"strings"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
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
	fs.IntVar(&in.BatchSize, "batch-size", decode.DefaultBatchSize, "rows per block read")
	fs.BoolVar(&in.SkipInvalid, "skip-invalid", false, "drop rows with a null, NaN, Inf or a value beyond ±1e150 in a selected column (counted) instead of stopping")
}

// Options checks the flags and returns the reader options for views with
// the given columns: values beyond ±vocab.MaxAbsValue are invalid, as a
// NaN is (dropped with --skip-invalid, an error without).
func (in *Input) Options(xcols, ycols []string) (decode.Options, error) {
	opts := decode.Options{
		Columns:   columns.Spec{X: xcols, Y: ycols},
		Values:    decode.Values{SkipInvalid: in.SkipInvalid, MaxAbs: vocab.MaxAbsValue},
		BatchSize: in.BatchSize,
	}
	if in.Format != "" {
		format, err := dataset.ParseFormat(in.Format)
		if err != nil {
			return opts, vocab.Errorf("--format %q: want parquet, ipc-file, ipc-stream or csv", in.Format)
		}
		opts.Files.Format = format
	}
	if in.BatchSize < 1 {
		return opts, vocab.Errorf("--batch-size %d: want at least 1", in.BatchSize)
	}
	where, err := dataset.ParseWhere(in.Where)
	if err != nil {
		return opts, vocab.Errorf("--where %q: %v", in.Where, strings.TrimPrefix(err.Error(), "dimeio: where: "))
	}
	opts.Files.Where = where
	return opts, nil
}
