package exact

import (
	"errors"
	"fmt"
)

// ErrInvalidInput is matched (with errors.Is) by every error that reports a
// problem with the caller's data or parameters rather than a numerical failure:
// too few rows, mismatched shapes, NaN or Inf values, alpha, sigma or the
// number of permutations out of range.
var ErrInvalidInput = errors.New("exact: invalid input")

// inputError is an error about the caller's input; it matches ErrInvalidInput.
type inputError struct{ msg string }

func (e *inputError) Error() string        { return "exact: " + e.msg }
func (e *inputError) Is(target error) bool { return target == ErrInvalidInput }

// Usage reports that the error is the caller's (vocab.IsUsage).
func (e *inputError) Usage() bool { return true }

func invalidf(format string, args ...any) error {
	return &inputError{msg: fmt.Sprintf(format, args...)}
}
