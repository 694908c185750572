// Package ioerr holds the kinds of input errors that the packages reading
// data share (dataset, columns, decode), and the one constructor of their
// messages: "dimeio: source: message: cause", on one line, with no secret
// (see internal/redact). The public packages re-export the kinds they
// return, so that errors.Is works with any of them.
package ioerr

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/dime-project/dime/internal/redact"
)

// Errors about the input are matched with errors.Is by one of these sentinels;
// the message itself is one line naming the input, and the column and row
// where there is one. I/O errors from the operating system (a missing file, a
// permission) are returned wrapped, matching none of them.
var (
	// ErrColumn is matched by errors about the column selection: a column
	// that is missing, ambiguous (two columns with the name) or of a type that
	// is not numeric, and an empty selection.
	ErrColumn = errors.New("dimeio: unusable column selection")
	// ErrFormat is matched by errors about the bytes of the input: an empty
	// file, a file that is not in the format its name or Format says, a
	// truncated or corrupt file, a stream cut off.
	ErrFormat = errors.New("dimeio: malformed input")
	// ErrInvalidValue is matched by the *ValueError of a null, NaN or
	// infinite value, or CSV text that is not a number.
	ErrInvalidValue = errors.New("dimeio: invalid value")
	// ErrDataset is matched by errors about a dataset as a whole: an
	// argument that names no data file (an empty directory, a glob or
	// prefix that matches nothing, a missing file or object), a URL of an
	// unsupported scheme, a bucket that cannot be opened or listed, data
	// files of several formats, files whose partition keys differ, a bad
	// --where condition, and files whose selected columns differ in type.
	ErrDataset = errors.New("dimeio: unusable dataset")
)

// Error is an error about the input that matches one of the sentinels
// and wraps its cause, if any.
type Error struct {
	kind    error
	msg     string
	cause   error
	storage bool // an error of the storage (see Storage)
}

func (e *Error) Error() string        { return e.msg }
func (e *Error) Is(target error) bool { return target == e.kind }
func (e *Error) Unwrap() error        { return e.cause }

// New returns an error of the given kind: "dimeio: source: message",
// followed by ": cause" when cause is not nil, on one line.
//
// When the cause is an error of the storage the input lives on, New
// returns that error instead: a decoder that could not read its bytes says
// that they are corrupt, or not in its format, and the storage error is the
// one that tells the user what happened (an object deleted since it was
// listed, a permission, a stalled endpoint). Such an error is one made by
// Storage, whatever the kind, or for ErrFormat an I/O error of the
// operating system (an *fs.PathError), returned as "dimeio: " and its text.
func New(kind error, source string, cause error, format string, args ...any) error {
	if se := storageCause(cause); se != nil {
		return se
	}
	if kind == ErrFormat {
		if pe := SystemError(cause); pe != nil {
			return fmt.Errorf("dimeio: %w", pe)
		}
	}
	return newError(kind, source, cause, fmt.Sprintf(format, args...))
}

func newError(kind error, source string, cause error, text string) *Error {
	msg := "dimeio: " + source + ": " + text
	if cause != nil {
		msg += ": " + strings.TrimPrefix(cause.Error(), "dimeio: ")
	}
	return &Error{kind: kind, msg: redact.String(HideRuntimeError(OneLine(msg))), cause: cause}
}

// Storage returns an error of the storage that the input source lives on:
// an object that is not found or cannot be read, an endpoint that stalls or
// fails. It matches ErrDataset, reads as New's messages do, and wins over
// any error of New that has it for cause.
func Storage(source string, cause error, format string, args ...any) error {
	e := newError(ErrDataset, source, cause, fmt.Sprintf(format, args...))
	e.storage = true
	return e
}

// SystemError returns the I/O error of the operating system in err's chain
// (an *fs.PathError of an errno: EIO, EACCES, …), or nil. A PathError of
// another cause, such as os.File.ReadAt's "negative offset" asked by a
// corrupt file, is not one.
func SystemError(err error) *fs.PathError {
	var pe *fs.PathError
	var errno syscall.Errno
	if errors.As(err, &pe) && errors.As(pe.Err, &errno) {
		return pe
	}
	return nil
}

// IsStorage reports whether err is, or wraps, an error made by Storage.
func IsStorage(err error) bool { return storageCause(err) != nil }

// storageCause returns the first error made by Storage in err's tree, or nil.
func storageCause(err error) *Error {
	switch e := err.(type) {
	case nil:
		return nil
	case *Error:
		if e.storage {
			return e
		}
		return storageCause(e.cause)
	case interface{ Unwrap() error }:
		return storageCause(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, c := range e.Unwrap() {
			if se := storageCause(c); se != nil {
				return se
			}
		}
	}
	return nil
}

// HideRuntimeError cuts the text of a Go runtime error (Arrow recovers the
// panics of its decoders on corrupt data into errors that carry it, such as
// "runtime error: slice bounds out of range [4156:208]") from a message: it
// tells the user nothing but that the data is corrupt, which the message
// says already, and reads as a crash.
func HideRuntimeError(msg string) string {
	i := strings.Index(msg, "runtime error:")
	if i < 0 {
		return msg
	}
	head := strings.TrimRight(msg[:i], " :(")
	head = strings.TrimSuffix(head, "arrow/ipc: unknown error while reading")
	head = strings.TrimRight(head, " :(")
	return head + ": the data is corrupt (the decoder read out of bounds)"
}

// OneLine replaces the line breaks of s (some Arrow errors print schemas over
// several lines) with spaces.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// QuoteList returns up to max names, quoted and comma-separated, with a count
// of the rest.
func QuoteList(names []string, max int) string {
	var b strings.Builder
	for i, n := range names {
		if i == max {
			fmt.Fprintf(&b, " and %d more", len(names)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", n)
	}
	return b.String()
}
