package dimebeam

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	dimeio "github.com/dime-project/dime/io"
)

// Split is a unit of work of a pipeline: a data file, or a range of row
// groups of a Parquet file. Each split is read by one worker into an
// estimator of its own, whose state is what the pipeline combines.
type Split struct {
	// Path is the file's path or URL.
	Path string
	// Format is the file's format (never dimeio.Auto).
	Format dimeio.Format
	// FirstGroup and Groups are the row groups read (Groups = 0: the whole
	// file).
	FirstGroup, Groups int
	// FirstRow is the index in the file of the split's first row.
	FirstRow int64
}

// String names the split in errors and logs.
func (s Split) String() string {
	if s.Groups == 0 {
		return s.Path
	}
	return fmt.Sprintf("%s (row groups %d to %d)", s.Path, s.FirstGroup, s.FirstGroup+s.Groups-1)
}

// listInputs returns the data files that pattern names, sorted: a file, a
// directory (recursively: files with a known extension, or every file with
// a format given, skipping names that start with "." or "_"), or a glob.
func listInputs(_ context.Context, pattern string, format dimeio.Format) ([]string, error) {
	if pattern == "" {
		return nil, fmt.Errorf("dimebeam: empty input")
	}
	keep := func(path string) bool {
		if format != dimeio.Auto {
			return true
		}
		_, err := dimeio.FormatFromPath(path)
		return err == nil
	}
	var files []string
	switch st, err := os.Stat(pattern); {
	case err == nil && st.IsDir():
		err := filepath.WalkDir(pattern, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if path != pattern && (strings.HasPrefix(d.Name(), ".") || strings.HasPrefix(d.Name(), "_")) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.IsDir() && keep(path) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("dimebeam: %s: no data files in the directory", pattern)
		}
	case err == nil:
		files = []string{pattern}
	case strings.ContainsAny(pattern, "*?["):
		matches, gerr := filepath.Glob(pattern)
		if gerr != nil {
			return nil, fmt.Errorf("dimebeam: %s: %v", pattern, gerr)
		}
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && !st.IsDir() && keep(m) {
				files = append(files, m)
			}
		}
		if len(files) == 0 {
			return nil, fmt.Errorf("dimebeam: %s: the pattern matches no data file", pattern)
		}
	default:
		return nil, err
	}
	slices.Sort(files)
	return files, nil
}

// planSplits returns the splits of a data file: the whole file, as long as
// the io package cannot read a range of row groups.
func planSplits(_ context.Context, path string, cfg Config) ([]Split, error) {
	format := cfg.Format
	if format == dimeio.Auto {
		f, err := dimeio.FormatFromPath(path)
		if err != nil {
			return nil, err
		}
		format = f
	}
	return []Split{{Path: path, Format: format}}, nil
}

// openSplit opens a split for reading.
func openSplit(_ context.Context, s Split, opts dimeio.Options) (*dimeio.Reader, error) {
	opts.Format = s.Format
	return dimeio.Open(s.Path, nil, opts)
}
