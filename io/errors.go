package io

import (
	"errors"
	"fmt"
	"strings"

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
)

// ValueError reports an invalid value in a selected column: a null (a missing
// value, a null list or a null list element), a NaN, an infinity, a time that
// does not fit in int64 nanoseconds, or CSV text that is not a number.
type ValueError struct {
	// Source names the input (the path, or "stdin").
	Source string
	// Column is the column's name.
	Column string
	// Row is the 0-based index of the row among all rows of the input (for
	// CSV, among the data rows after the header).
	Row int64
	// Problem says what is wrong, e.g. "null", "NaN", "+Inf", `text "abc" is
	// not a number`.
	Problem string
}

func (e *ValueError) Error() string {
	return oneLine(fmt.Sprintf("dimeio: %s: column %q, row %d: %s", e.Source, e.Column, e.Row, e.Problem))
}

// Is reports whether target is ErrInvalidValue.
func (e *ValueError) Is(target error) bool { return target == ErrInvalidValue }

// inputError is an error about the input that matches one of the sentinels
// and wraps its cause, if any.
type inputError struct {
	kind  error
	msg   string
	cause error
}

func (e *inputError) Error() string        { return e.msg }
func (e *inputError) Is(target error) bool { return target == e.kind }
func (e *inputError) Unwrap() error        { return e.cause }

// newError returns an error of the given kind: "dimeio: source: message",
// followed by ": cause" when cause is not nil, on one line.
func newError(kind error, source string, cause error, format string, args ...any) error {
	msg := "dimeio: " + source + ": " + fmt.Sprintf(format, args...)
	if cause != nil {
		msg += ": " + strings.TrimPrefix(cause.Error(), "dimeio: ")
	}
	return &inputError{kind: kind, msg: redact.String(hideRuntimeError(oneLine(msg))), cause: cause}
}

// hideRuntimeError cuts the text of a Go runtime error (Arrow recovers the
// panics of its decoders on corrupt data into errors that carry it, such as
// "runtime error: slice bounds out of range [4156:208]") from a message: it
// tells the user nothing but that the data is corrupt, which the message
// says already, and reads as a crash.
func hideRuntimeError(msg string) string {
	i := strings.Index(msg, "runtime error:")
	if i < 0 {
		return msg
	}
	head := strings.TrimRight(msg[:i], " :(")
	head = strings.TrimSuffix(head, "arrow/ipc: unknown error while reading")
	head = strings.TrimRight(head, " :(")
	return head + ": the data is corrupt (the decoder read out of bounds)"
}

// oneLine replaces the line breaks of s (some Arrow errors print schemas over
// several lines) with spaces.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// quoteList returns up to max names, quoted and comma-separated, with a count
// of the rest.
func quoteList(names []string, max int) string {
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
