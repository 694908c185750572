package decode

import (
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/internal/ioerr"
)

// Extractor copies the selected columns of Arrow record batches into
// row-major blocks, checking every value. It counts the rows it has seen, so
// that an error names the row's index in the whole input. An Extractor is
// built for one schema and used for the record batches of one input, in
// order; it is not safe for concurrent use.
type Extractor struct {
	source     string
	sel        columns.Selection
	skip       bool
	maxAbs     float64 // Options.MaxAbs, or +Inf
	dimX, dimY int
	cols       []*column // X columns, then Y columns, then the time column
	hasTime    bool

	rowsRead, skipped int64

	// state of the current batch
	bad    []bool // rows to drop (SkipInvalid); valid only when anyBad
	anyBad bool
	n      int
	first  badValue // the first invalid value (without SkipInvalid)
}

// view says where a column's values go.
type view uint8

const (
	viewX view = iota
	viewY
	viewTime
)

// column is one selected column.
type column struct {
	name  string
	field int            // index in the schema
	typ   arrow.DataType // its type
	view  view
	off   int // position of its first value in a row of the view
	width int // 1, or the number of elements read of a fixed-size list
	list  bool
	// A fixed-size list has stride elements a row, of which elements
	// first to first+width are read: all of them, or a slice name[lo:hi].
	stride, first int
	sel           columns.Column // as selected
	unit          arrow.TimeUnit // of a time column
	vals          values         // typed access to the current batch
}

// badValue is the first invalid value of a batch.
type badValue struct {
	row  int // in the batch; -1 if none
	col  *column
	kind badKind
	elem int     // list element, for lists
	val  float64 // the NaN or infinity
	ival int64   // the integer time out of range
	uval bool    // ival is an uint64 above MaxInt64
}

type badKind uint8

const (
	badNull badKind = iota
	badNullList
	badValueKind
	badTimeRange
)

// NewExtractor returns an Extractor of the columns that opts.Columns
// selects from schema (see columns.Select), checked as opts.Values says;
// source names the input in error messages. The other fields of opts do not
// matter here. The error matches ErrColumn for a missing, ambiguous or
// non-numeric column.
func NewExtractor(source string, schema *arrow.Schema, opts Options) (*Extractor, error) {
	sel, err := columns.Select(source, schema.Fields(), nil, opts.Columns)
	if err != nil {
		return nil, err
	}
	return newExtractor(source, schema, sel, opts.Values)
}

// newExtractor returns an Extractor of the columns of sel, which
// columns.Select resolved for this input, bound to the fields of schema by
// name (the names of a selection are unique in its input, and schema may be
// a projection of the input's); a partition key's value is the same on every
// row. Each column is checked to be of a type the Extractor reads.
func newExtractor(source string, schema *arrow.Schema, sel columns.Selection, vals Values) (*Extractor, error) {
	e := &Extractor{source: source, sel: sel, skip: vals.SkipInvalid, maxAbs: math.Inf(1), first: badValue{row: -1}}
	if vals.MaxAbs > 0 {
		e.maxAbs = vals.MaxAbs
	}
	for v, cols := range []columns.View{sel.X, sel.Y} {
		off := 0
		for _, sc := range cols {
			c, err := e.bind(schema, sc)
			if err != nil {
				return nil, err
			}
			if c.vals == nil {
				if err := c.numeric(source); err != nil {
					return nil, err
				}
			}
			c.view, c.off = view(v), off
			off += c.width
			e.cols = append(e.cols, c)
		}
		if v == 0 {
			e.dimX = off
		} else {
			e.dimY = off
		}
	}
	if sel.Time != nil {
		c, err := e.bind(schema, *sel.Time)
		if err != nil {
			return nil, err
		}
		if err := c.temporal(source, sel.TimeUnit); err != nil {
			return nil, err
		}
		c.view = viewTime
		e.cols = append(e.cols, c)
		e.hasTime = true
	}
	return e, nil
}

// bind finds the field of a selected column in schema, or makes the
// constant column of a partition key.
func (e *Extractor) bind(schema *arrow.Schema, sc columns.Column) (*column, error) {
	if p := sc.Partition; p != nil {
		c := &column{sel: sc, name: sc.Name, field: -1, typ: arrow.PrimitiveTypes.Int64, width: 1}
		v, _ := strconv.ParseInt(p.Value, 10, 64)
		c.vals = &constant{v: float64(v), null: p.Null}
		return c, nil
	}
	idx := schema.FieldIndices(sc.Name)
	if len(idx) != 1 {
		return nil, ioerr.New(ErrFormat, e.source, nil, "%d columns named %q in the record batches, want 1", len(idx), sc.Name)
	}
	return &column{sel: sc, name: sc.Name, field: idx[0], typ: schema.Field(idx[0]).Type, width: 1}, nil
}

// label returns the column's name as selected: name, or name[lo:hi].
func (c *column) label() string { return c.sel.Label() }

// numeric sets up c as a number or a fixed-size list of numbers.
func (c *column) numeric(source string) error {
	elem := c.typ
	switch t := c.typ.(type) {
	case *arrow.FixedSizeListType:
		if t.Len() < 1 {
			return ioerr.New(ErrColumn, source, nil, "column %q is a fixed-size list of size %d, want at least 1", c.name, t.Len())
		}
		c.list, c.stride, c.width, elem = true, int(t.Len()), int(t.Len()), t.Elem()
		if c.sel.Slice { // bounds checked by columns.Select
			c.first, c.width = c.sel.Lo, c.sel.Width()
		}
	case *arrow.ListType, *arrow.LargeListType, *arrow.ListViewType, *arrow.LargeListViewType:
		return columns.VarListError(source, c.name, c.typ)
	}
	if c.sel.Slice && !c.list {
		return ioerr.New(ErrColumn, source, nil, "column %q has type %s: a slice [%s:%s] needs a fixed-size list", c.name, c.typ, strconv.Itoa(c.sel.Lo), strconv.Itoa(c.sel.Hi))
	}
	c.vals = newNumbers(elem)
	switch {
	case c.vals == nil && c.list:
		return ioerr.New(ErrColumn, source, nil, "column %q is a fixed-size list of %s, want a list of numbers", c.name, elem)
	case c.vals == nil:
		return ioerr.New(ErrColumn, source, nil, "column %q has type %s, want a number or a fixed-size list of numbers", c.name, c.typ)
	}
	return nil
}

// newNumbers returns the typed values of an Arrow numeric type, or nil.
func newNumbers(t arrow.DataType) values {
	switch t.ID() {
	case arrow.FLOAT64:
		return &numbers[float64]{float: true}
	case arrow.FLOAT32:
		return &numbers[float32]{float: true}
	case arrow.INT8:
		return &numbers[int8]{}
	case arrow.INT16:
		return &numbers[int16]{}
	case arrow.INT32:
		return &numbers[int32]{}
	case arrow.INT64:
		return &numbers[int64]{}
	case arrow.UINT8:
		return &numbers[uint8]{}
	case arrow.UINT16:
		return &numbers[uint16]{}
	case arrow.UINT32:
		return &numbers[uint32]{}
	case arrow.UINT64:
		return &numbers[uint64]{}
	}
	return nil
}

// temporal sets up c as a time column.
func (c *column) temporal(source string, unit arrow.TimeUnit) error {
	if t, ok := c.typ.(*arrow.TimestampType); ok {
		c.unit = t.Unit
		c.vals = &times[int64]{scale: nanosPer(t.Unit)}
		return nil
	}
	c.unit = unit
	scale := nanosPer(unit)
	switch c.typ.ID() {
	case arrow.INT8:
		c.vals = &times[int8]{scale: scale}
	case arrow.INT16:
		c.vals = &times[int16]{scale: scale}
	case arrow.INT32:
		c.vals = &times[int32]{scale: scale}
	case arrow.INT64:
		c.vals = &times[int64]{scale: scale}
	case arrow.UINT8:
		c.vals = &times[uint8]{scale: scale}
	case arrow.UINT16:
		c.vals = &times[uint16]{scale: scale}
	case arrow.UINT32:
		c.vals = &times[uint32]{scale: scale}
	case arrow.UINT64:
		c.vals = &times[uint64]{scale: scale}
	default:
		return ioerr.New(ErrColumn, source, nil, "time column %q has type %s, want a timestamp or an integer count of %s since the Unix epoch", c.name, c.typ, unitName(unit))
	}
	return nil
}

func nanosPer(u arrow.TimeUnit) int64 {
	switch u {
	case arrow.Second:
		return 1e9
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	}
	return 1
}

func unitName(u arrow.TimeUnit) string {
	switch u {
	case arrow.Second:
		return "seconds"
	case arrow.Millisecond:
		return "milliseconds"
	case arrow.Microsecond:
		return "microseconds"
	}
	return "nanoseconds"
}

// DimX returns the number of values in a row of X: the number of selected
// number columns plus the sizes of the selected fixed-size lists.
func (e *Extractor) DimX() int { return e.dimX }

// DimY returns the number of values in a row of Y.
func (e *Extractor) DimY() int { return e.dimY }

// Columns returns the columns of each view, patterns expanded, in the order
// their values appear in a row, and the time column.
func (e *Extractor) Columns() columns.Selection { return e.sel }

// RowsRead returns the number of rows of the input extracted so far,
// including those skipped.
func (e *Extractor) RowsRead() int64 { return e.rowsRead }

// Skipped returns the number of rows dropped so far for an invalid value.
func (e *Extractor) Skipped() int64 { return e.skipped }

// Extract copies the selected columns of rec into dst, resized to the rows of
// rec, and advances the row count. rec must have the schema the Extractor was
// built for (at least the selected columns, at the same positions, with the
// same types). With SkipInvalid, rows with an invalid value are dropped from
// dst and counted; otherwise the first invalid value (lowest row, then first
// column in the order X, Y, time) is returned as a *ValueError, and dst holds
// no rows. Other errors match ErrFormat. rec is not retained.
func (e *Extractor) Extract(dst *Block, rec arrow.Record) error {
	n := int(rec.NumRows())
	dst.resize(n, e.dimX, e.dimY, e.hasTime)
	if n == 0 {
		return nil
	}
	for _, c := range e.cols {
		if c.field < 0 { // a partition value
			continue
		}
		if err := e.load(c, rec, n); err != nil {
			dst.resize(0, e.dimX, e.dimY, e.hasTime)
			return err
		}
	}
	e.bad = grow(e.bad, n)
	e.anyBad = false
	e.n = n
	e.first = badValue{row: -1}
	for lo := 0; lo < n; lo += tileRows {
		hi := min(lo+tileRows, n)
		for _, c := range e.cols {
			c.vals.copy(e, c, dst, lo, hi)
		}
		if e.first.row >= 0 {
			err := e.valueError(e.first)
			dst.resize(0, e.dimX, e.dimY, e.hasTime)
			return err
		}
	}
	e.rowsRead += int64(n)
	if e.anyBad {
		e.compact(dst)
	}
	return nil
}

// tileRows is the number of rows copied column after column before moving to
// the next rows, so that the row-major destination of a tile stays in cache.
const tileRows = 256

// load points c at its values in rec, checking the buffers.
func (e *Extractor) load(c *column, rec arrow.Record, n int) error {
	if c.field >= int(rec.NumCols()) {
		return ioerr.New(ErrFormat, e.source, nil, "record batch has %d columns, want column %q at position %d", rec.NumCols(), c.name, c.field)
	}
	col := rec.Column(c.field)
	if !sameLayout(col.DataType(), c.typ) || rec.Schema().Field(c.field).Name != c.name {
		return ioerr.New(ErrFormat, e.source, nil, "record batch column %d is %q of type %s, want %q of type %s",
			c.field, rec.Schema().Field(c.field).Name, col.DataType(), c.name, c.typ)
	}
	data := col.Data()
	if data.Len() < n {
		return ioerr.New(ErrFormat, e.source, nil, "column %q has %d values in a batch of %d rows", c.name, data.Len(), n)
	}
	var b batch
	bm, err := validity(data, n)
	if err != nil {
		return ioerr.New(ErrFormat, e.source, err, "column %q", c.name)
	}
	if !c.list {
		b.valid, b.validOff = bm, data.Offset()
		if err := c.vals.load(data, 0, n); err != nil {
			return ioerr.New(ErrFormat, e.source, err, "column %q", c.name)
		}
		c.vals.setBatch(b)
		return nil
	}
	b.lists, b.listOff = bm, data.Offset()
	children := data.Children()
	if len(children) != 1 {
		return ioerr.New(ErrFormat, e.source, nil, "fixed-size list column %q has %d children, want 1", c.name, len(children))
	}
	child := children[0]
	first, count := data.Offset()*c.stride, n*c.stride
	if child.Len() < first+count {
		return ioerr.New(ErrFormat, e.source, nil, "fixed-size list column %q has %d elements, want %d", c.name, child.Len(), first+count)
	}
	if bm, err = validity(child, first+count); err != nil {
		return ioerr.New(ErrFormat, e.source, err, "column %q", c.name)
	}
	b.valid, b.validOff = bm, child.Offset()+first
	if err := c.vals.load(child, first, count); err != nil {
		return ioerr.New(ErrFormat, e.source, err, "column %q", c.name)
	}
	c.vals.setBatch(b)
	return nil
}

// sameLayout reports whether arrays of types a and b have the same layout,
// as far as extraction is concerned. (arrow.TypeEqual allocates, and the
// types of a record and of the schema it was checked against need not be
// the same objects.)
func sameLayout(a, b arrow.DataType) bool {
	if a == b {
		return true
	}
	if a.ID() != b.ID() {
		return false
	}
	switch a := a.(type) {
	case *arrow.FixedSizeListType:
		b := b.(*arrow.FixedSizeListType)
		return a.Len() == b.Len() && a.Elem().ID() == b.Elem().ID()
	case *arrow.TimestampType:
		return a.Unit == b.(*arrow.TimestampType).Unit
	}
	return true
}

// validity returns the validity bitmap of data, checking that it covers the
// first n values, or nil if no value is null. (The null count of sliced
// array data is unknown, -1, until an Array computes it.)
func validity(data arrow.ArrayData, n int) ([]byte, error) {
	nulls := data.NullN()
	if nulls == 0 {
		return nil, nil
	}
	bufs := data.Buffers()
	if len(bufs) == 0 || bufs[0] == nil || bufs[0].Len() == 0 {
		if nulls < 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("%d nulls but no validity bitmap", nulls)
	}
	if need := (data.Offset() + n + 7) / 8; bufs[0].Len() < need {
		return nil, fmt.Errorf("validity bitmap of %d bytes, want %d", bufs[0].Len(), need)
	}
	return bufs[0].Bytes(), nil
}

// signature returns the names, types and widths of the selected columns.
func (e *Extractor) signature() []colSig {
	sig := make([]colSig, len(e.cols))
	for i, c := range e.cols {
		sig[i] = colSig{name: c.label(), typ: c.typ.String(), width: c.width}
	}
	return sig
}
