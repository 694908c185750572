// Package columns is column selection: Select resolves the selectors of the
// two views and the time column (a Spec, as a user writes them) against the
// fields of one input and its hive partition keys, once, into a Selection:
// for each view, the Columns in the order their values appear in a row, each
// with its field, the elements read of a fixed-size list (Lo, Hi), and its
// partition value if it is a partition key. Every decoder binds its record
// batches to a Selection; the dime command and the Beam pipeline report and
// check the columns from it. Errors match ErrColumn and name the input.
//
// A selector is a name, a glob or a slice of a fixed-size list column (see
// Expand).
//
// # Columns
//
// A selected column is a number — float32, float64, or a signed or unsigned
// integer of 8 to 64 bits, converted to float64 (integers beyond 2⁵³ are
// rounded) — of width 1, or a fixed_size_list of such numbers (an embedding
// vector), whose width is the list size: its values follow each other in the
// row of the view. Columns are found by name anywhere among the top-level
// fields of the schema, in any order, and a column may be in both views. The
// width of a view (DimX, DimY) is the sum of the widths of its columns. A
// column that is missing (the error lists the available ones), named twice
// in the schema, of another type (text, boolean, decimal, dictionary, …) or
// a variable-size list is an error matching ErrColumn.
package columns
