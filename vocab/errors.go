package vocab

import (
	"errors"
	"fmt"
)

// Error is an error about the caller's input or parameters, as opposed to a
// failure of the machine or a numerical failure. Usage returns true: a
// command reports it with exit status 2. Packages that build on vocab give
// their own sentinels this method too (see NewSentinel), and a command
// classifies any error by asking for it: errors.As(err, new(UsageError)).
type Error struct {
	msg string
}

func (e *Error) Error() string { return e.msg }

// Usage reports that the error is the caller's: true.
func (e *Error) Usage() bool { return true }

// UsageError is the interface by which a command tells an error of its
// input (exit status 2) from a failure (exit status 1).
type UsageError interface {
	error
	Usage() bool
}

// IsUsage reports whether err, or an error it wraps, says it is about the
// caller's input (its Usage method returns true).
func IsUsage(err error) bool {
	for err != nil {
		var u UsageError
		if !errors.As(err, &u) {
			return false
		}
		if u.Usage() {
			return true
		}
		// Look below the one found: it said false.
		next := errors.Unwrap(u)
		if next == nil {
			return false
		}
		err = next
	}
	return false
}

// Errorf returns an *Error with the formatted message.
func Errorf(format string, args ...any) error {
	return &Error{msg: fmt.Sprintf(format, args...)}
}

// Usagef returns an error about the caller's input with the message of
// fmt.Errorf(format, args...), which it wraps (a %w verb's error stays
// visible to errors.Is and errors.As). A command's own usage errors are
// made by it, in both binaries.
func Usagef(format string, args ...any) error {
	return usage{fmt.Errorf(format, args...)}
}

// AsUsage marks err as about the caller's input, with err's message, and
// wraps it; nil for nil.
func AsUsage(err error) error {
	if err == nil {
		return nil
	}
	return usage{err}
}

// usage is an error marked as the caller's by Usagef or AsUsage.
type usage struct{ err error }

func (e usage) Error() string { return e.err.Error() }
func (e usage) Unwrap() error { return e.err }

// Usage reports that the error is the caller's: true.
func (e usage) Usage() bool { return true }

// NewSentinel returns a sentinel error for errors.Is whose Usage method
// returns true: an error that wraps it (fmt.Errorf("%w: …", sentinel)) is
// classified as the caller's by IsUsage.
func NewSentinel(msg string) error { return &Error{msg: msg} }

// IsInvalid reports whether err is an *Error of this package.
func IsInvalid(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
