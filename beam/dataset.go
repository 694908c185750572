package dimebeam

import (
	"context"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
)

// Split is a unit of work of a pipeline: consecutive pieces of the dataset
// (whole data files, or ranges of row groups of Parquet files), in the
// dataset's order, of about Config.SplitRows rows in all. Each split is read
// by one worker into an estimator of its own, whose state is what the
// pipeline combines.
type Split struct {
	Parts []Part
	// Bandwidths are the bandwidths that the median and auto rules chose
	// on the dataset's sample (zero for the rules that need no data).
	Bandwidths Bandwidths
	// Shard is the key under which the split's state is combined with
	// those of the other splits of its shard (assignShards) before the
	// shards' sums are combined.
	Shard int
}

// Part is a piece of a split: a data file, or a range of row groups of a
// Parquet file.
type Part struct {
	// Input is the data file (package dataset: a local path or
	// an object-storage URL, its format, hive partitions, row groups).
	Input dataset.Input
	// FirstGroup and Groups are the row groups read (Groups = 0: the whole
	// file).
	FirstGroup, Groups int
	// FirstRow is the index in the file of the part's first row.
	FirstRow int64
}

// String names the part in errors and logs.
func (p Part) String() string {
	if p.Groups == 0 {
		return p.Input.Path
	}
	return fmt.Sprintf("%s (row groups %d to %d)", p.Input.Path, p.FirstGroup, p.FirstGroup+p.Groups-1)
}

// String names the split in logs: its first part, and how many more.
func (s Split) String() string {
	switch len(s.Parts) {
	case 0:
		return "an empty split"
	case 1:
		return s.Parts[0].String()
	}
	return fmt.Sprintf("%s and %d more", s.Parts[0], len(s.Parts)-1)
}

// resolve returns the data files of the dataset that names name together
// (Resolve), on a worker.
func resolve(ctx context.Context, names []string, cfg Config) ([]dataset.Input, error) {
	d, err := Resolve(ctx, names, cfg)
	if err != nil {
		return nil, err
	}
	return d.Inputs, nil
}

// readFooter returns in with its row groups and rows, for a Parquet file
// whose footer was not read yet; other inputs as they are (Rows -1 for
// formats without a footer).
func readFooter(ctx context.Context, in dataset.Input, cfg Config) (dataset.Input, error) {
	if in.Format != dataset.Parquet || in.Rows >= 0 && in.RowGroups != nil {
		return in, nil
	}
	d := &dataset.Dataset{Inputs: []dataset.Input{in}}
	if err := d.ReadFooters(ctx, cfg.Read.opts.Files); err != nil {
		return in, err
	}
	return d.Inputs[0], nil
}

// planSplits cuts the dataset, its inputs in their order (sorted by path,
// footers read), into splits, as Spark plans its file partitions
// (spark.sql.files.maxPartitionBytes), counting rows rather than bytes: the
// row groups of the Parquet files are taken in order and packed into
// splits of at most Config.SplitRows rows (more only for a single row group
// of more rows), so that a dataset of many small files does not pay the
// fixed cost of a split (its estimator's state) per file, and a large file
// spreads over several splits. A file whose rows are not known before
// reading it (CSV, Arrow IPC) is a split of its own. The plan depends only
// on the inputs and SplitRows: it is the same on every run.
func planSplits(inputs []dataset.Input, cfg Config) []Split {
	limit := cfg.splitRows()
	var (
		splits []Split
		cur    Split
		rows   int64
	)
	flush := func() {
		if len(cur.Parts) > 0 {
			splits = append(splits, cur)
		}
		cur, rows = Split{}, 0
	}
	for _, in := range inputs {
		if in.Format != dataset.Parquet || in.Rows < 0 { // rows not known
			flush()
			cur.Parts = []Part{{Input: in}}
			flush()
			continue
		}
		if len(in.RowGroups) == 0 { // no rows: read with the split at hand, for its schema
			cur.Parts = append(cur.Parts, Part{Input: in})
			continue
		}
		var first int64
		for g, n := range in.RowGroups {
			if rows > 0 && rows+n > limit {
				flush()
			}
			if k := len(cur.Parts) - 1; k >= 0 && cur.Parts[k].Input.Path == in.Path {
				cur.Parts[k].Groups++
			} else {
				cur.Parts = append(cur.Parts, Part{Input: in, FirstGroup: g, Groups: 1, FirstRow: first})
			}
			rows += n
			first += n
		}
	}
	flush()
	for i := range splits {
		for j, p := range splits[i].Parts {
			if p.Groups == len(p.Input.RowGroups) { // the whole file
				splits[i].Parts[j].Groups = 0
			}
		}
	}
	return splits
}

// openPart opens a part of a split for reading, with Prefetch: the worker
// adds a block while the next is read.
func openPart(ctx context.Context, p Part, opts decode.Options) (*decode.Reader, error) {
	opts.Prefetch = true
	if p.Groups == 0 {
		return decode.OpenInput(ctx, p.Input, nil, opts)
	}
	return decode.OpenRowGroups(ctx, p.Input, p.FirstGroup, p.Groups, opts)
}
