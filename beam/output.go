package dimebeam

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"path/filepath"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/local" // local paths

	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dime-project/dime/outfile"
)

func init() {
	register.DoFn2x1[context.Context, []byte, error](&writeFn{})
	register.DoFn2x1[context.Context, Merged, error](&writeStateFn{})
}

// WriteFile writes the one []byte element of col to a file through Beam's
// filesystem registry (a local path, gs://… or s3://…, for the filesystems
// the program imports); object stores commit an object when it is closed.
//
// A local path is written as the dime command writes its outputs (package
// internal/outfile): it must name a new file or a regular file, which a
// temporary file in the same directory, synced, then replaces by a rename,
// so that a reader never sees half of it and a failure leaves it as it was.
// A symbolic link, FIFO, device, socket or directory is refused, and so is a
// missing directory and any of inputs (the same file, or the same cleaned
// absolute path): pass the files the pipeline reads (the LocalFiles of
// the dataset that Resolve returns).
func WriteFile(s beam.Scope, col beam.PCollection, path string, inputs ...string) {
	s = s.Scope("dimebeam.WriteFile")
	beam.ParDo0(s, &writeFn{Path: path, Inputs: inputs}, col)
}

// WriteState writes the state of the merged sum of sums (the output of
// Sums or RankSums) to a file, as WriteFile writes (same paths, same
// refusals): the state that stream.ReadState (rank.ReadState for a
// ranking's) and dime merge read. The estimator is built
// one accumulator at a time from the shards' sums and written as it is, so
// that the state never travels through the runner as an element.
func WriteState(s beam.Scope, sums beam.PCollection, path string, inputs ...string) {
	s = s.Scope("dimebeam.WriteState")
	beam.ParDo0(s, &writeStateFn{Path: path, Inputs: inputs}, sums)
}

// writeStateFn writes the state of each merged sum to Path (there is one).
type writeStateFn struct {
	Path   string
	Inputs []string
}

func (f *writeStateFn) ProcessElement(ctx context.Context, m Merged) error {
	e, err := stateOf(ctx, m)
	if err != nil {
		return TagJobError(err)
	}
	if !isURL(f.Path) {
		return TagJobError(writeLocal(f.Path, f.Inputs, e.WriteState))
	}
	return TagJobError(writeFile(ctx, f.Path, e.WriteState))
}

// CheckOutput returns the error WriteFile would give for path before it
// writes anything (nil for a URL, which the filesystem checks when it
// writes), so that a command can refuse a bad output before its pipeline
// runs.
func CheckOutput(path string, inputs ...string) error {
	if isURL(path) {
		return nil
	}
	if err := outfile.Check(path, localOptions(inputs)); err != nil {
		return fmt.Errorf("dimebeam: %w", err)
	}
	return nil
}

// writeFn writes each element to Path (there is one).
type writeFn struct {
	Path   string
	Inputs []string
}

func (f *writeFn) ProcessElement(ctx context.Context, data []byte) error {
	write := func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
	if !isURL(f.Path) {
		return TagJobError(writeLocal(f.Path, f.Inputs, write))
	}
	return TagJobError(writeFile(ctx, f.Path, write))
}

// isURL reports whether name has a scheme (gs://, s3://, file://).
func isURL(name string) bool { return strings.Contains(name, "://") }

func localOptions(inputs []string) outfile.Options {
	return outfile.Options{Inputs: inputs, Refusal: "which dimebeam does not replace; give a regular file or a new path"}
}

// writeLocal writes what write writes to a local path with package
// outfile: its error wraps outfile's (a refusal is the input's, see
// TagJobError; a failure to write the machine's).
func writeLocal(name string, inputs []string, write func(io.Writer) error) error {
	if err := outfile.Write(name, localOptions(inputs), write); err != nil {
		return fmt.Errorf("dimebeam: %w", err)
	}
	return nil
}

// writeFile writes what write writes to a URL, atomically where the
// filesystem can rename.
func writeFile(ctx context.Context, name string, write func(io.Writer) error) error {
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return fmt.Errorf("dimebeam: %s: %v", name, err)
	}
	defer fs.Close()
	dst := name
	rn, canRename := fs.(filesystem.Renamer)
	if canRename {
		dst = tempName(name)
	}
	w, err := fs.OpenWrite(ctx, dst)
	if err == nil {
		err = writeThrough(w, w, write)
	}
	if err != nil {
		removeQuietly(ctx, fs, dst)
		return fmt.Errorf("dimebeam: writing %s: %v", name, err)
	}
	if canRename {
		if err := rn.Rename(ctx, dst, name); err != nil {
			removeQuietly(ctx, fs, dst)
			return fmt.Errorf("dimebeam: writing %s: %v", name, err)
		}
	}
	return nil
}

// tempName returns a hidden name next to name, unique to this process and
// moment.
func tempName(name string) string {
	dir, base := filepath.Split(name)
	if strings.Contains(name, "://") {
		dir, base = path.Split(name)
	}
	return dir + "." + base + fmt.Sprintf(".tmp-%016x", rand.Uint64())
}

// writeThrough calls write with a buffered writer to to, flushes it and
// closes c (the file or object to commit), returning the first error.
func writeThrough(to io.Writer, c io.Closer, write func(io.Writer) error) error {
	bw := bufio.NewWriterSize(to, 1<<20)
	err := write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := c.Close(); err == nil {
		err = cerr
	}
	return err
}

func removeQuietly(ctx context.Context, fs filesystem.Interface, name string) {
	if rm, ok := fs.(filesystem.Remover); ok {
		rm.Remove(ctx, name)
	}
}
