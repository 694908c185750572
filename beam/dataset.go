package dimebeam

import (
	"context"
	"fmt"

	dimeio "github.com/dime-project/dime/io"
)

// Split is a unit of work of a pipeline: a data file of the dataset, or a
// range of row groups of a Parquet file. Each split is read by one worker
// into an estimator of its own, whose state is what the pipeline combines.
type Split struct {
	// Input is the data file (package io's dataset layer: a local path or
	// an object-storage URL, its format, hive partitions, row groups).
	Input dimeio.Input
	// FirstGroup and Groups are the row groups read (Groups = 0: the whole
	// file).
	FirstGroup, Groups int
	// FirstRow is the index in the file of the split's first row.
	FirstRow int64
}

// String names the split in errors and logs.
func (s Split) String() string {
	if s.Groups == 0 {
		return s.Input.Path
	}
	return fmt.Sprintf("%s (row groups %d to %d)", s.Input.Path, s.FirstGroup, s.FirstGroup+s.Groups-1)
}

// resolve returns the data files that names (files, directories, globs,
// object-storage URLs) name together, sorted by path, each once, as dime
// score reads them.
func resolve(ctx context.Context, names []string, cfg Config) ([]dimeio.Input, error) {
	d, err := dimeio.Resolve(ctx, names, cfg.readOptions())
	if err != nil {
		return nil, err
	}
	return d.Inputs, nil
}

// planSplits returns the splits of a data file: the whole file, or for a
// Parquet file of more than Config.SplitRows rows, runs of consecutive row
// groups of at least SplitRows rows each (the last one may be smaller).
func planSplits(ctx context.Context, in dimeio.Input, cfg Config) ([]Split, error) {
	if in.Format == dimeio.Parquet && in.RowGroups == nil {
		d := &dimeio.Dataset{Inputs: []dimeio.Input{in}}
		if err := d.ReadFooters(ctx, cfg.readOptions()); err != nil {
			return nil, err
		}
		in = d.Inputs[0]
	}
	limit := cfg.splitRows()
	if in.Format != dimeio.Parquet || in.Rows <= limit || len(in.RowGroups) < 2 {
		return []Split{{Input: in}}, nil
	}
	var splits []Split
	cur := Split{Input: in}
	var rows, first int64
	for g, n := range in.RowGroups {
		if cur.Groups == 0 {
			cur.FirstGroup, cur.FirstRow = g, first
		}
		cur.Groups++
		rows += n
		first += n
		if rows >= limit {
			splits = append(splits, cur)
			cur, rows = Split{Input: in}, 0
		}
	}
	if cur.Groups > 0 {
		splits = append(splits, cur)
	}
	return splits, nil
}

// openSplit opens a split for reading.
func openSplit(ctx context.Context, s Split, opts dimeio.Options) (*dimeio.Reader, error) {
	if s.Groups == 0 {
		return dimeio.OpenInput(ctx, s.Input, nil, opts)
	}
	return dimeio.OpenRowGroups(ctx, s.Input, s.FirstGroup, s.Groups, opts)
}
