package decode

import (
	"fmt"

	"github.com/dime-project/dime/internal/ioerr"
)

// Errors about the input are matched with errors.Is by one of these
// sentinels; the message itself is one line naming the input, and the
// column and row where there is one. I/O errors from the operating system
// (a missing file, a permission) are returned wrapped, matching none of
// them. They are the same values as dataset.ErrDataset,
// dataset.ErrFormat and columns.ErrColumn.
var (
	// ErrColumn is matched by errors about the column selection: a column
	// that is missing, ambiguous (two columns with the name) or of a type
	// that is not numeric, and an empty selection.
	ErrColumn = ioerr.ErrColumn
	// ErrFormat is matched by errors about the bytes of the input: an empty
	// file, a file that is not in the format its name or Format says, a
	// truncated or corrupt file, a stream cut off.
	ErrFormat = ioerr.ErrFormat
	// ErrInvalidValue is matched by the *ValueError of a null, NaN or
	// infinite value, or CSV text that is not a number.
	ErrInvalidValue = ioerr.ErrInvalidValue
	// ErrDataset is matched by errors about a dataset as a whole (see
	// dataset.Resolve), and by files of a dataset whose selected columns
	// differ in type.
	ErrDataset = ioerr.ErrDataset
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
	return ioerr.OneLine(fmt.Sprintf("dimeio: %s: column %q, row %d: %s", e.Source, e.Column, e.Row, e.Problem))
}

// Is reports whether target is ErrInvalidValue.
func (e *ValueError) Is(target error) bool { return target == ErrInvalidValue }
