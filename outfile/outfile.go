// Package outfile writes the files the dime command produces (saved states,
// plots, generated data) without ever clobbering anything.
//
// A path names a new file or a regular file to replace. The content goes to a
// temporary file in the target's directory, which is synced and then renamed
// over the target: a reader of the target sees the old file or the new one,
// never half of one, and a failure leaves the target as it was and no
// temporary behind. New files get the permissions 0666 minus the umask (as
// the shell's > would give them); a replaced file keeps its permissions.
//
// Anything else is refused, with an error that matches ErrRefused and names
// the path: a symbolic link (renaming would replace the link, not what it
// points to), a FIFO (its reader would wait forever for a file that never
// comes), a device (renaming would turn /dev/full into a regular file), a
// socket, a directory, and any path that is one of the command's inputs
// (same device and inode), which would be destroyed. "-" writes to standard
// output; Options.Force writes through the path as the shell's > does
// (following links, into a FIFO or a device, e.g. /dev/stdout or a process
// substitution >(wc -c)), with no temporary file: the target is then
// written directly, and a failure can leave it half-written. Directories and
// inputs are refused even then.
//
// Commands call Check when they parse their flags, so that a bad output path
// fails before any work, and Write once the result is known: nothing is
// written before the inputs have been read and validated.
package outfile

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// ErrRefused is matched by the error of a target that outfile will not write:
// a symbolic link, FIFO, device, socket or directory (without Force for all
// but a directory), or one of the inputs.
var ErrRefused = errors.New("outfile: refused output")

// Options say how to write a target.
type Options struct {
	// Force writes through a symbolic link, a FIFO or a device instead of
	// refusing it, as the shell's > would.
	Force bool
	// Inputs are the files the command reads: the target must not be one of
	// them (the same file, or the same path once cleaned and made absolute).
	// A command that reads a dataset lists its resolved files (every file
	// of a directory, glob or URL it reads), not only its arguments. "-"
	// stands for Stdin.
	Inputs []string
	// Stdin is the command's standard input, compared with the target when
	// an input is "-" (if it is an *os.File).
	Stdin io.Reader
	// Stdout receives the content when the path is "-".
	Stdout io.Writer
	// Refusal ends the message of a refused symbolic link, FIFO, device or
	// socket, after "is a FIFO (named pipe), ": what the command does not
	// do and what to do instead. The default names dime's --force and "-".
	Refusal string
}

const defaultRefusal = "which dime does not replace; use --force to write through it, or - for standard output"

// Error is the error of a refused or failed output: it names the path.
type Error struct {
	Path    string
	Reason  string
	refused bool
	Err     error // the cause, if any
	// Signal is the signal (SIGINT, SIGTERM) that interrupted the write,
	// if one did: a command exits with 128 + its number, as a shell
	// reports a command killed by it.
	Signal os.Signal
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Reason, e.Err)
	}
	return e.Path + ": " + e.Reason
}

// Is reports whether target is ErrRefused and e a refusal.
func (e *Error) Is(target error) bool { return target == ErrRefused && e.refused }

func (e *Error) Unwrap() error { return e.Err }

func refuse(path, format string, args ...any) error {
	return &Error{Path: path, Reason: fmt.Sprintf(format, args...), refused: true}
}

// fail returns an error naming path for a system error, without the name of
// any temporary file.
func fail(path, what string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		err = le.Err
	}
	return &Error{Path: path, Reason: what, Err: err}
}

// mode says how a target is written.
type mode int

const (
	toStdout  mode = iota
	atomic         // a temporary file renamed over the target (or into place)
	writeOver      // the path opened for writing, as the shell's > does (Force)
)

// plan checks path and returns how to write it, and for atomic the mode of
// the file it replaces (0 for a new file).
func plan(path string, opts Options) (mode, fs.FileMode, error) {
	if path == "-" {
		if opts.Stdout == nil {
			return 0, 0, refuse(path, "no standard output to write to")
		}
		return toStdout, 0, nil
	}
	if path == "" {
		return 0, 0, refuse(path, "empty path")
	}
	info, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		if err := checkDir(path); err != nil {
			return 0, 0, err
		}
		return atomic, 0, nil
	}
	if err != nil {
		return 0, 0, fail(path, "cannot inspect the output", err)
	}
	if err := notAnInput(path, opts); err != nil {
		return 0, 0, err
	}
	kind := describe(info.Mode())
	switch {
	case info.Mode().IsRegular():
		if err := checkDir(path); err != nil {
			return 0, 0, err
		}
		return atomic, info.Mode().Perm(), nil
	case info.IsDir():
		return 0, 0, refuse(path, "is a directory; give a file name")
	case !opts.Force:
		why := opts.Refusal
		if why == "" {
			why = defaultRefusal
		}
		return 0, 0, refuse(path, "is %s, %s", kind, why)
	}
	// Force: what the path leads to.
	target, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist): // a dangling link: > creates its target
		return writeOver, 0, nil
	case err != nil:
		return 0, 0, fail(path, "cannot inspect the output", err)
	case target.IsDir():
		return 0, 0, refuse(path, "leads to a directory; give a file name")
	}
	return writeOver, 0, nil
}

// describe names a kind of file that is not regular.
func describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO (named pipe)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

// checkDir checks that the directory of path exists and can be written.
func checkDir(path string) error {
	dir := filepath.Dir(path)
	info, err := os.Stat(dir)
	switch {
	case err != nil:
		return fail(path, "no directory "+dir+" to write in", err)
	case !info.IsDir():
		return refuse(path, "%s is not a directory", dir)
	}
	if err := writable(dir); err != nil {
		return fail(path, "cannot write in "+dir, err)
	}
	return nil
}

// notAnInput refuses a path that is the same file as an input.
func notAnInput(path string, opts Options) error {
	out, err := os.Stat(path) // what the path leads to
	if err != nil {
		return nil // nothing there: no input either
	}
	abs := cleanAbs(path)
	for _, in := range opts.Inputs {
		var info fs.FileInfo
		if in == "-" {
			f, ok := opts.Stdin.(*os.File)
			if !ok {
				continue
			}
			if info, err = f.Stat(); err != nil {
				continue
			}
		} else if info, err = os.Stat(in); err != nil {
			// An input that cannot be inspected is the output if the
			// paths are the same once cleaned.
			info = nil
		}
		if info != nil && os.SameFile(out, info) || info == nil && in != "-" && cleanAbs(in) == abs {
			name := in
			if in == "-" {
				name = "standard input"
			}
			if name == path {
				return refuse(path, "is an input of this command; write the output to another file")
			}
			return refuse(path, "is the same file as the input %s; write the output to another file", name)
		}
	}
	return nil
}

// cleanAbs returns path cleaned and absolute (as it is if the working
// directory is unknown).
func cleanAbs(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return filepath.Clean(path)
}

// Check checks that path can be written under these options, without
// writing anything: the error Write would give before writing.
func Check(path string, opts Options) error {
	_, _, err := plan(path, opts)
	return err
}

// Write writes what write writes to path, as the package documentation says.
// An error of write is returned as it is, after the temporary file is
// removed, unless it is a failure to write the file (a full disk), which is
// an *Error naming path, like every other error.
func Write(path string, opts Options, write func(w io.Writer) error) error {
	m, perm, err := plan(path, opts)
	if err != nil {
		return err
	}
	switch m {
	case toStdout:
		return write(opts.Stdout)
	case writeOver:
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o666)
		if err != nil {
			return fail(path, "cannot open the output", err)
		}
		if err := write(f); err != nil {
			f.Close()
			return writeError(path, path, err)
		}
		if err := f.Close(); err != nil {
			return fail(path, "writing the output", err)
		}
		return nil
	}
	return writeAtomic(path, perm, write)
}

// writeError returns the error of the write function: as it is, unless it is
// the failure of a write to file (the temporary, or path itself), which is
// reported as a failure to write path.
func writeError(path, file string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == file {
		return &Error{Path: path, Reason: "writing the output", Err: pe.Err}
	}
	return err
}

// writeAtomic writes to a temporary file next to path and renames it over
// path; perm, if not 0, is the mode of the file replaced.
func writeAtomic(path string, perm fs.FileMode, write func(w io.Writer) error) (err error) {
	f, tmp, err := createTemp(path)
	if err != nil {
		return fail(path, "cannot create the output in "+filepath.Dir(path), err)
	}
	interrupted := abortOnSignal(f)
	watching := true
	defer func() {
		if watching {
			if sig := interrupted(); sig != nil {
				err = &Error{Path: path, Reason: "interrupted by a signal while writing; nothing was written", Signal: sig}
			}
		}
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if perm != 0 {
		if err := f.Chmod(perm); err != nil {
			return fail(path, "setting the permissions of the output", err)
		}
	}
	if err := write(f); err != nil {
		return writeError(path, tmp, err)
	}
	if err := f.Sync(); err != nil {
		return fail(path, "writing the output", err)
	}
	if err := f.Close(); err != nil {
		return fail(path, "writing the output", err)
	}
	// From here on the temporary is complete: a signal no longer undoes it.
	watching = false
	if sig := interrupted(); sig != nil {
		return &Error{Path: path, Reason: "interrupted by a signal while writing; nothing was written", Signal: sig}
	}
	// The target may have changed since plan looked: rename only over a
	// regular file or nothing.
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return refuse(path, "became %s while dime was writing; nothing was replaced", describe(info.Mode()))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fail(path, "cannot put the output in place", err)
	}
	syncDir(filepath.Dir(path))
	return nil
}

// abortOnSignal closes f if SIGINT or SIGTERM comes before the returned
// function is called, which then returns it (nil if none came): the write then
// fails, and writeAtomic removes the temporary file, so that a command
// interrupted while it writes (by a second Ctrl-C, which the command does not
// catch) leaves neither the target half-written nor a temporary behind.
func abortOnSignal(f *os.File) (done func() os.Signal) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	finished := make(chan struct{})
	var got os.Signal
	go func() {
		defer close(finished)
		select {
		case got = <-ch:
			f.Close()
		case <-stop:
		}
	}()
	return func() os.Signal {
		signal.Stop(ch)
		close(stop)
		<-finished
		return got
	}
}

// createTemp creates a new file next to path with the permissions 0666 minus
// the umask (os.CreateTemp would make it 0600).
func createTemp(path string) (*os.File, string, error) {
	dir, base := filepath.Split(path)
	for range 100 {
		var r [6]byte
		rand.Read(r[:])
		name := filepath.Join(dir, "."+base+".tmp-"+hex.EncodeToString(r[:]))
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, name, err
	}
	return nil, "", fs.ErrExist
}

// syncDir makes a rename in dir durable, where the system allows it.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
