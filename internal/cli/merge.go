package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dime-project/dime/stream"
)

func runMerge(e *env, args []string) error {
	fs := newFlagSet(e, "merge", "STATE... [flags]")
	save := fs.String("save-state", "", "write the merged state to this file")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("merge needs at least one state file (written by score --save-state)")
	}
	start := time.Now()
	var total *stream.Estimator
	for _, path := range pos {
		est, err := readStateFile(path)
		if err != nil {
			return err
		}
		if total == nil {
			total = est
			continue
		}
		if err := total.Merge(est); err != nil {
			return usagef("%s: %v", path, err)
		}
	}
	if *save != "" {
		if err := writeStateFile(*save, total); err != nil {
			return err
		}
	}
	r, err := total.Result()
	if err != nil {
		return err
	}
	rep := rffReport(r, time.Since(start))
	rep.Input = fmt.Sprintf("%d states", len(pos))
	return printReport(e.stdout, rep, *asJSON)
}

// readStateFile reads an estimator state; a file that is not one is a usage
// error naming the file.
func readStateFile(path string) (*stream.Estimator, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, usageError{err}
	}
	defer f.Close()
	est, err := stream.ReadState(f)
	if err != nil {
		if errors.Is(err, stream.ErrState) {
			return nil, usagef("%s: %v", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return est, nil
}

// writeStateFile writes an estimator's state to path atomically: to a
// temporary file in the same directory, renamed into place when complete.
func writeStateFile(path string, est *stream.Estimator) error {
	tmp, err := os.CreateTemp(dirOf(path), ".dime-state-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := est.WriteState(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func dirOf(path string) string {
	for i := len(path) - 1; i >= 0; i-- {
		if os.IsPathSeparator(path[i]) {
			return path[:i+1]
		}
	}
	return "."
}

// writeFile writes what w writes to path atomically, as writeStateFile does.
func writeFile(path string, w interface {
	WriteTo(io.Writer) (int64, error)
}) error {
	tmp, err := os.CreateTemp(dirOf(path), ".dime-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := w.WriteTo(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
