package dataset

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dime-project/dime/internal/ioerr"
)

// Dataset is an ordered list of data files read as one table: the files that
// a list of paths, directories, globs and object-storage URLs name (see
// Resolve). Its rows are those of its inputs in order.
type Dataset struct {
	// Inputs are the data files, sorted by Path.
	Inputs []Input
	// Keys are the hive partition keys of the inputs' paths, outermost
	// first (every input has the same keys).
	Keys []PartitionKey
	// Where are the conditions the inputs were selected by (from
	// Options.Where).
	Where []Condition
}

// Input is one data file of a dataset: everything needed to open it, in
// this process or in another one (its fields are plain values, so that a
// distributed runner can serialize it).
type Input struct {
	// Path is the file's path, "-" for stdin, or its URL (with the query
	// parameters of the bucket, e.g. s3://bucket/dir/part-0.parquet?region=eu-west-1).
	Path string `json:"path"`
	// Size is the file's size in bytes, or -1 (stdin).
	Size int64 `json:"size"`
	// Format is the file's format (never Auto).
	Format Format `json:"format"`
	// Partitions are the hive partition values of the file's path, one per
	// key of the dataset, in the order of Dataset.Keys.
	Partitions []Partition `json:"partitions,omitempty"`
	// Rows is the number of rows from the Parquet footer, or -1 when not
	// known (other formats, or footers not read: see Dataset.ReadFooters).
	Rows int64 `json:"rows"`
	// RowGroups are the rows of each Parquet row group from the footer, or
	// nil when not known. OpenRowGroups reads a range of them.
	RowGroups []int64 `json:"row_groups,omitempty"`
}

// IsURL reports whether the input is read through object storage.
func (in Input) IsURL() bool { return isURL(in.Path) }

// Partition is the value of a hive partition key (a directory level
// key=value) for one file.
type Partition struct {
	// Key is the partition key, e.g. "date".
	Key string `json:"key"`
	// Value is the value, unescaped (%XX), e.g. "2026-11-01"; empty for null.
	Value string `json:"value"`
	// Null is true for Hive's null partition, __HIVE_DEFAULT_PARTITION__.
	Null bool `json:"null,omitempty"`
	// Int is true when every non-null value of the key in the dataset is a
	// 64-bit integer: the key is then a numeric column (int64) that X and Y
	// may select, and compared as a number by Where.
	Int bool `json:"int,omitempty"`
}

// PartitionKey is a partition key of a dataset and its type.
type PartitionKey struct {
	// Name is the key.
	Name string `json:"name"`
	// Int is true when every non-null value is a 64-bit integer (the column
	// is int64); otherwise the column is a string.
	Int bool `json:"int"`
}

// Resolve returns the dataset that args name, in a deterministic order. Each
// argument is
//   - a file path (any extension with opts.Format, else a known one);
//   - a directory, read recursively: its data files are those with a known
//     extension, or every file with opts.Format; files and directories whose
//     names start with "." or "_" (_SUCCESS, _metadata, .staging, …) and
//     .crc files are skipped, as Spark and Arrow datasets do;
//   - a glob (with *, ?, [...] or {a,b}), where ** crosses directories,
//     expanded here (quote it from the shell), with the same filter;
//   - a URL s3://bucket/key, gs://…, azblob://… or file:///…, read through
//     gocloud.dev/blob: a key ending in "/" (or the bucket alone) is a
//     prefix read like a directory, a key with glob characters a glob, and
//     another key an object, or a prefix if no object has that key. The
//     query parameters open the bucket (see the package documentation);
//   - "-": stdin, alone.
//
// The inputs of all arguments are sorted by path (a file named twice is read
// once), so that the same files give the same rows in the same order
// whatever the order of the arguments. Directory levels named key=value are
// hive partitions (see Partition); opts.Where keeps the files whose
// partitions match, without opening the others. Only opts.Format,
// opts.Where and opts.OpenBucket matter here. Errors match ErrDataset, or
// are the operating system's (a missing file, a permission).
func Resolve(ctx context.Context, args []string, opts Options) (*Dataset, error) {
	if len(args) == 0 {
		return nil, ioerr.New(ErrDataset, "dataset", nil, "no input given")
	}
	if slices.Contains(args, "-") {
		if len(args) > 1 {
			return nil, ioerr.New(ErrDataset, "stdin", nil, "- (stdin) cannot be combined with other inputs")
		}
		f := opts.Format
		if f == Auto {
			f = IPCStream
		}
		d := &Dataset{Inputs: []Input{{Path: "-", Size: -1, Format: f, Rows: -1}}}
		if len(opts.Where) > 0 {
			return nil, ioerr.New(ErrDataset, "stdin", nil, "--where selects files by their partitions; stdin has none")
		}
		return d, nil
	}
	var all []Input
	for _, arg := range args {
		var ins []Input
		var err error
		if isURL(arg) {
			ins, err = resolveURL(ctx, arg, opts)
		} else {
			ins, err = resolveLocal(arg, opts.Format)
		}
		if err != nil {
			return nil, err
		}
		all = append(all, ins...)
	}
	slices.SortFunc(all, func(a, b Input) int { return strings.Compare(a.Path, b.Path) })
	all = slices.CompactFunc(all, func(a, b Input) bool { return a.Path == b.Path })
	for i := range all {
		if all[i].Format != all[0].Format {
			return nil, ioerr.New(ErrDataset, all[i].Path, nil, "is %s but %s is %s: a dataset has one format (name it with --format to read only one kind)",
				all[i].Format, all[0].Path, all[0].Format)
		}
	}
	d := &Dataset{Inputs: all}
	if err := d.partition(); err != nil {
		return nil, err
	}
	if err := d.filter(opts.Where); err != nil {
		return nil, err
	}
	return d, nil
}

// LocalFiles returns the files of the local filesystem that the dataset
// reads: the paths of its local inputs, and of its file:// URLs, cleaned
// and made absolute where the working directory allows. Stdin and other
// URLs have none. A command compares its output paths with these, so that
// it never writes over a file of its own dataset, however the argument
// named it (a directory, a glob, a file:// URL, a hive partition).
func (d *Dataset) LocalFiles() []string {
	var files []string
	for _, in := range d.Inputs {
		p := in.Path
		switch {
		case p == "-":
			continue
		case isURL(p):
			u, err := url.Parse(p)
			if err != nil || !strings.EqualFold(u.Scheme, "file") {
				continue
			}
			p = filepath.FromSlash(u.Path)
			if u.Host == "." {
				p = "." + p
			}
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		files = append(files, filepath.Clean(p))
	}
	return files
}

// Rows returns the number of rows of the dataset from the Parquet footers,
// or -1 if it is not known for every input.
func (d *Dataset) Rows() int64 {
	var n int64
	for _, in := range d.Inputs {
		if in.Rows < 0 {
			return -1
		}
		n += in.Rows
	}
	return n
}

// Size returns the total size of the inputs in bytes, or -1 for stdin.
func (d *Dataset) Size() int64 {
	var n int64
	for _, in := range d.Inputs {
		if in.Size < 0 {
			return -1
		}
		n += in.Size
	}
	return n
}

// String describes the dataset in a few words: its one path, or the number
// of files.
func (d *Dataset) String() string {
	if len(d.Inputs) == 1 {
		return d.Inputs[0].Path
	}
	return fmt.Sprintf("%d files", len(d.Inputs))
}

// ReadFooters reads the footer of every Parquet input that has not been
// read, on several goroutines, and sets its Rows and RowGroups. Other
// formats are left alone (Rows -1). opts.OpenBucket and opts.StallTimeout
// matter here.
func (d *Dataset) ReadFooters(ctx context.Context, opts Options) error {
	var todo []int
	remote := false
	for i, in := range d.Inputs {
		if in.Format == Parquet && in.RowGroups == nil && in.Path != "-" {
			todo = append(todo, i)
			remote = remote || in.IsURL()
		}
	}
	if len(todo) == 0 {
		return nil
	}
	// Local footers cost a few reads each; remote ones a round trip or two,
	// which overlap.
	workers := min(len(todo), footerWorkers())
	if remote {
		workers = min(len(todo), 16)
	}
	bk := newBuckets(opts)
	defer bk.close()
	return parallel(ctx, len(todo), workers, func(ctx context.Context, k int) error {
		in := &d.Inputs[todo[k]]
		groups, err := readFooter(ctx, bk, *in, opts)
		if err != nil {
			return err
		}
		in.RowGroups = groups
		in.Rows = 0
		for _, g := range groups {
			in.Rows += g
		}
		return nil
	})
}
