package cli

import (
	"fmt"
	"io"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/tablewriter"
)

// defaultScreenCandidates is gen --kind screen's number of candidates
// without --dim.
const defaultScreenCandidates = 40

// genScreen writes rows of synth.Screen: a target y and candidates x00, …,
// six of them dependent on y (named on stderr, strongest first).
func genScreen(e *env, out, format string, rows int64, seed uint64, force bool, progressMode string, candidates int) error {
	switch {
	case out == "":
		return usagef("--out is required: a file, or - for stdout")
	case rows < 1:
		return usagef("--rows %d: want at least 1", rows)
	case candidates < 6 || candidates > 10000:
		return usagef("--dim %d: --kind screen wants 6 to 10000 candidates", candidates)
	}
	f := dataset.Auto
	var err error
	switch {
	case format != "":
		if f, err = dataset.ParseFormat(format); err != nil {
			return usagef("--format %q: want parquet, ipc-file, ipc-stream or csv", format)
		}
	case out == "-":
		f = dataset.IPCStream
	default:
		if f, err = dataset.FormatFromPath(out); err != nil {
			return usagef("--out %s: cannot tell the format from the extension (want .parquet, .arrow, .arrows or .csv); give --format", out)
		}
	}
	dst, err := newOutput(e, "--out", out, force)
	if err != nil {
		return err
	}
	src, err := synth.NewScreen(candidates, seed)
	if err != nil {
		return usageError{err}
	}
	p := newProgress(e, progressMode, "gen", rows)
	cols := src.Columns()
	w := len(cols)
	err = dst.write(func(sink io.Writer) error {
		tw, err := tablewriter.New(sink, f, cols, tablewriter.Options{})
		if err != nil {
			return usageError{err}
		}
		table := make([]float64, 4096*w)
		for done := int64(0); done < rows && err == nil; {
			b := int(min(4096, rows-done))
			src.Fill(table[:b*w])
			err = tw.Write(table[:b*w], b)
			done += int64(b)
			p.update(done)
		}
		if cerr := tw.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	p.done()
	if out != "-" {
		fmt.Fprintf(e.stderr, "wrote %d rows of a screening table (y and %d candidates) to %s; dependent on y, strongest first: %v\n", rows, candidates, out, src.Dependent())
	}
	return nil
}
