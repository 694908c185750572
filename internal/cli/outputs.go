package cli

import (
	"errors"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"io"
	"os"

	"github.com/dime-project/dime/outfile"
)

// output is a file a command writes (--save-state, --plot, --out), checked
// when the flags are parsed and written by package outfile once the result
// is known: never over a symbolic link, FIFO, device, directory or input
// unless --force says to write through it, and with "-" for stdout.
type output struct {
	flag, path string
	opts       outfile.Options
}

// newOutput checks the path of an output flag against the command's inputs
// before any work: a path that would be refused is a usage error naming it.
// It returns nil if path is empty. With "-" (or a path to the file of stdout,
// like /dev/stdout with --force) the output takes the command's stdout, and
// what the command prints goes to stderr instead.
func newOutput(e *env, flag, path string, force bool, inputs ...string) (*output, error) {
	if path == "" {
		return nil, nil
	}
	o := &output{flag: flag, path: path, opts: outfile.Options{Force: force, Inputs: inputs, Stdin: e.stdin, Stdout: e.stdout}}
	if err := outfile.Check(path, o.opts); err != nil {
		return nil, usagef("%s %v", flag, err)
	}
	if path == "-" || isStdout(e, path) {
		e.stdout = e.stderr
	}
	e.outputs = append(e.outputs, o)
	return o, nil
}

// excludeDataset adds the files of a resolved dataset to the inputs of the
// command's outputs and checks them again: an output path that is one of
// the dataset's files (named through a directory, a glob, a file:// URL or
// a hive partition rather than as an argument) is a usage error, found
// before any row is read.
func (e *env) excludeDataset(d *dataset.Dataset) error {
	if d == nil {
		return nil
	}
	files := d.LocalFiles()
	for _, o := range e.outputs {
		o.opts.Inputs = append(o.opts.Inputs, files...)
		if err := outfile.Check(o.path, o.opts); err != nil {
			return usagef("%s %v", o.flag, err)
		}
	}
	return nil
}

// isStdout reports whether path is the file of the command's stdout (as
// /dev/stdout is).
func isStdout(e *env, path string) bool {
	f, ok := e.stdout.(*os.File)
	if !ok {
		return false
	}
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Stat(path)
	return err == nil && os.SameFile(a, b)
}

// write writes the output: an error about the path (it changed since the
// check) is a usage error; a failure to write (a full disk) is not.
func (o *output) write(write func(io.Writer) error) error {
	if o == nil {
		return nil
	}
	if err := outfile.Check(o.path, o.opts); err != nil {
		return usagef("%s %v", o.flag, err)
	}
	err := outfile.Write(o.path, o.opts, write)
	var oe *outfile.Error
	switch {
	case errors.Is(err, outfile.ErrRefused):
		return usagef("%s %v", o.flag, err)
	case errors.As(err, &oe):
		return fmt.Errorf("%s %w", o.flag, err)
	}
	return err
}

// writerTo adapts a WriteTo method (a plot's canvas) to output.write.
func writerTo(w io.WriterTo) func(io.Writer) error {
	return func(out io.Writer) error {
		_, err := w.WriteTo(out)
		return err
	}
}
