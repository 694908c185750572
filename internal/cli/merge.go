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
	save := fs.String("save-state", "", "write the merged state to this file (- for stdout; the report then goes to stderr)")
	force := fs.Bool("force", false, "let --save-state write through a symbolic link, FIFO or device (as the shell's > would)")
	asJSON := fs.Bool("json", false, "print one JSON object instead of a table")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("merge needs at least one state file (written by score --save-state)")
	}
	out, err := newOutput(e, "--save-state", *save, *force, pos...)
	if err != nil {
		return err
	}
	if isRankState(pos[0]) {
		return mergeRankStates(e, pos, out, *asJSON)
	}
	start := time.Now()
	total, err := mergeFiles(pos, readStateFile)
	if err != nil {
		return err
	}
	// Every state is read and merged, and the result computed, before
	// anything is written.
	r, err := total.Result()
	if err != nil {
		return err
	}
	if err := out.write(total.WriteState); err != nil {
		return err
	}
	rep := rffReport(r, time.Since(start))
	rep.Input = fmt.Sprintf("%d states", len(pos))
	rep.SetScaling(total.Scaling(), total.Config().PilotRows, "")
	return printReport(e.stdout, rep, *asJSON)
}

// readStateFile reads an estimator state; a file that is not one is a usage
// error naming the file.
func readStateFile(path string) (*stream.Estimator, error) {
	return readStateWith(path, stream.ReadState, stream.ErrState)
}

// readStateWith opens path and reads a state from it with read; a missing
// file, a directory or a damaged state (an error matching bad) is a usage
// error naming the file.
func readStateWith[T any](path string, read func(io.Reader) (T, error), bad error) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, asUsage(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return zero, usagef("%s: is a directory, not a state file", path)
	}
	st, err := read(f)
	if err != nil {
		if errors.Is(err, bad) {
			return zero, usagef("%s: %v", path, err)
		}
		return zero, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// mergeFiles reads the states at paths with read and merges them in order
// into the first; a state that does not merge is a usage error naming its
// file.
func mergeFiles[T interface{ Merge(T) error }](paths []string, read func(string) (T, error)) (T, error) {
	var total T
	for i, path := range paths {
		st, err := read(path)
		if err != nil {
			return total, err
		}
		if i == 0 {
			total = st
			continue
		}
		if err := total.Merge(st); err != nil {
			return total, usagef("%s: %v", path, err)
		}
	}
	return total, nil
}
