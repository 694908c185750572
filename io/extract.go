package io

import (
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Options select the columns of the two views and say how to read them. The
// zero value of every field but X and Y is usable.
type Options struct {
	// Format is the file format; Auto (the zero value) tells it from the
	// file extension, and the path "-" (stdin) is read as an IPC stream.
	Format Format
	// X and Y name the columns of the two views, in the order their values
	// appear in a row of the view. A column is a number (float32, float64,
	// or a signed or unsigned integer of any width) of width 1, or a
	// fixed-size list of numbers (an embedding vector) whose width is the
	// list size. Columns may come from anywhere in the schema, in any order;
	// a column may appear in both views. At least one column is needed.
	X, Y []string
	// TimeColumn, if not empty, names a column of times: an Arrow timestamp
	// of any unit, or an integer count of TimeUnit since the Unix epoch.
	TimeColumn string
	// TimeUnit is the unit of an integer TimeColumn (the zero value is
	// arrow.Second). It is ignored for timestamp columns, which carry their
	// own unit.
	TimeUnit arrow.TimeUnit
	// BatchSize is the number of rows read per record batch (Parquet, CSV):
	// the size of the blocks Next returns before invalid rows are dropped.
	// The default (0) is DefaultBatchSize. IPC files and streams come in the
	// batches they were written with, which a reader must hold whole.
	BatchSize int
	// SkipInvalid drops a row from both views if any selected value of it
	// (or its time) is null, NaN or infinite, and counts it (Skipped).
	// Without it such a value stops the reading with a *ValueError.
	SkipInvalid bool
	// Comma is the field delimiter of CSV (default ',').
	Comma rune
	// Allocator allocates the Arrow buffers of the reader (default
	// memory.DefaultAllocator). Tests pass a memory.CheckedAllocator.
	Allocator memory.Allocator
	// Prefetch makes a Reader read and extract the next block on a
	// goroutine of its own while the caller works on the current one, so
	// that decoding overlaps computation. It holds one more block (and
	// starts reading at Open); blocks, counts and errors are the same as
	// without it. Close stops the goroutine: close every Reader.
	Prefetch bool
}

// DefaultBatchSize is the number of rows per record batch when
// Options.BatchSize is 0, and of the IPC batches a TableWriter writes.
// Measured on a Parquet file of 10 million rows of 20 float64 columns:
// 16384-row batches read 12 million rows/s with a peak RSS of 122 MB, where
// 65536-row batches read 10.5 million rows/s with 215 MB.
const DefaultBatchSize = 16384

func (o *Options) batchSize() int {
	if o.BatchSize > 0 {
		return o.BatchSize
	}
	return DefaultBatchSize
}

func (o *Options) allocator() memory.Allocator {
	if o.Allocator != nil {
		return o.Allocator
	}
	return memory.DefaultAllocator
}

// Block is a block of rows in row-major order: row i of X is
// X[i*DimX:(i+1)*DimX], and likewise for Y. Extract resizes its slices,
// reusing their memory, so one Block serves a whole stream without
// allocating in steady state.
type Block struct {
	// X and Y hold Rows×DimX and Rows×DimY values.
	X, Y []float64
	// Times holds the time of each row in nanoseconds since the Unix epoch
	// (UTC), or is nil without a time column.
	Times []int64
	// Rows is the number of rows.
	Rows int
}

// resize makes b hold rows rows, reusing its memory.
func (b *Block) resize(rows, dimX, dimY int, times bool) {
	b.Rows = rows
	b.X = grow(b.X, rows*dimX)
	b.Y = grow(b.Y, rows*dimY)
	if times {
		b.Times = grow(b.Times, rows)
	} else {
		b.Times = nil
	}
}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// Extractor copies the selected columns of Arrow record batches into
// row-major blocks, checking every value. It counts the rows it has seen, so
// that an error names the row's index in the whole input. An Extractor is
// built for one schema and used for the record batches of one input, in
// order; it is not safe for concurrent use.
type Extractor struct {
	source     string
	skip       bool
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
	width int // 1, or the size of a fixed-size list
	list  bool
	unit  arrow.TimeUnit // of a time column
	vals  values         // typed access to the current batch
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

// NewExtractor returns an Extractor of the columns that opts selects from
// schema; source names the input in error messages. Only the X, Y,
// TimeColumn, TimeUnit and SkipInvalid fields of opts matter here. The error
// matches ErrColumn for a missing, ambiguous or non-numeric column.
func NewExtractor(source string, schema *arrow.Schema, opts Options) (*Extractor, error) {
	if len(opts.X)+len(opts.Y) == 0 {
		return nil, newError(ErrColumn, source, nil, "no columns selected for X or Y")
	}
	if opts.TimeUnit > arrow.Nanosecond {
		return nil, newError(ErrColumn, source, nil, "unknown time unit %d", opts.TimeUnit)
	}
	e := &Extractor{source: source, skip: opts.SkipInvalid, first: badValue{row: -1}}
	if err := expandViews(source, fieldNames(schema), &opts); err != nil { // globs: colpattern.go
		return nil, err
	}
	for v, names := range [][]string{opts.X, opts.Y} {
		off := 0
		for _, name := range names {
			c, err := e.resolve(schema, name)
			if err != nil {
				return nil, err
			}
			if err := c.numeric(source); err != nil {
				return nil, err
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
	if opts.TimeColumn != "" {
		c, err := e.resolve(schema, opts.TimeColumn)
		if err != nil {
			return nil, err
		}
		if err := c.temporal(source, opts.TimeUnit); err != nil {
			return nil, err
		}
		c.view = viewTime
		e.cols = append(e.cols, c)
		e.hasTime = true
	}
	return e, nil
}

// resolve finds the column with the given name.
func (e *Extractor) resolve(schema *arrow.Schema, name string) (*column, error) {
	names := make([]string, schema.NumFields())
	for i, f := range schema.Fields() {
		names[i] = f.Name
	}
	i, err := findColumn(e.source, names, name)
	if err != nil {
		return nil, err
	}
	return &column{name: name, field: i, typ: schema.Field(i).Type, width: 1}, nil
}

// findColumn returns the index of the only column with the given name.
func findColumn(source string, names []string, name string) (int, error) {
	found, count := -1, 0
	for i, n := range names {
		if n == name {
			if found < 0 {
				found = i
			}
			count++
		}
	}
	switch count {
	case 0:
		return -1, newError(ErrColumn, source, nil, "no column %q (available: %s)", name, quoteList(names, 50))
	case 1:
		return found, nil
	}
	return -1, newError(ErrColumn, source, nil, "%d columns are named %q", count, name)
}

// numeric sets up c as a number or a fixed-size list of numbers.
func (c *column) numeric(source string) error {
	elem := c.typ
	switch t := c.typ.(type) {
	case *arrow.FixedSizeListType:
		if t.Len() < 1 {
			return newError(ErrColumn, source, nil, "column %q is a fixed-size list of size %d, want at least 1", c.name, t.Len())
		}
		c.list, c.width, elem = true, int(t.Len()), t.Elem()
	case *arrow.ListType, *arrow.LargeListType, *arrow.ListViewType, *arrow.LargeListViewType:
		return newError(ErrColumn, source, nil, "column %q is a variable-size list (%s); only numbers and fixed-size lists of numbers can be read (write embeddings as fixed_size_list)", c.name, c.typ)
	}
	c.vals = newNumbers(elem)
	switch {
	case c.vals == nil && c.list:
		return newError(ErrColumn, source, nil, "column %q is a fixed-size list of %s, want a list of numbers", c.name, elem)
	case c.vals == nil:
		return newError(ErrColumn, source, nil, "column %q has type %s, want a number or a fixed-size list of numbers", c.name, c.typ)
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
		return newError(ErrColumn, source, nil, "time column %q has type %s, want a timestamp or an integer count of %s since the Unix epoch", c.name, c.typ, unitName(unit))
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
		return newError(ErrFormat, e.source, nil, "record batch has %d columns, want column %q at position %d", rec.NumCols(), c.name, c.field)
	}
	col := rec.Column(c.field)
	if !sameLayout(col.DataType(), c.typ) || rec.Schema().Field(c.field).Name != c.name {
		return newError(ErrFormat, e.source, nil, "record batch column %d is %q of type %s, want %q of type %s",
			c.field, rec.Schema().Field(c.field).Name, col.DataType(), c.name, c.typ)
	}
	data := col.Data()
	if data.Len() < n {
		return newError(ErrFormat, e.source, nil, "column %q has %d values in a batch of %d rows", c.name, data.Len(), n)
	}
	var b batch
	bm, err := validity(data, n)
	if err != nil {
		return newError(ErrFormat, e.source, err, "column %q", c.name)
	}
	if !c.list {
		b.valid, b.validOff = bm, data.Offset()
		if err := c.vals.load(data, 0, n); err != nil {
			return newError(ErrFormat, e.source, err, "column %q", c.name)
		}
		c.vals.setBatch(b)
		return nil
	}
	b.lists, b.listOff = bm, data.Offset()
	children := data.Children()
	if len(children) != 1 {
		return newError(ErrFormat, e.source, nil, "fixed-size list column %q has %d children, want 1", c.name, len(children))
	}
	child := children[0]
	first, count := data.Offset()*c.width, n*c.width
	if child.Len() < first+count {
		return newError(ErrFormat, e.source, nil, "fixed-size list column %q has %d elements, want %d", c.name, child.Len(), first+count)
	}
	if bm, err = validity(child, first+count); err != nil {
		return newError(ErrFormat, e.source, err, "column %q", c.name)
	}
	b.valid, b.validOff = bm, child.Offset()+first
	if err := c.vals.load(child, first, count); err != nil {
		return newError(ErrFormat, e.source, err, "column %q", c.name)
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

// typedValues returns values first to first+count of data's value buffer.
func typedValues[T arrow.FixedWidthType](data arrow.ArrayData, first, count int) ([]T, error) {
	bufs := data.Buffers()
	if len(bufs) < 2 || bufs[1] == nil {
		if count == 0 {
			return nil, nil
		}
		return nil, fmt.Errorf("no value buffer")
	}
	all := arrow.GetData[T](bufs[1].Bytes())
	lo := data.Offset() + first
	if len(all) < lo+count {
		return nil, fmt.Errorf("value buffer holds %d values, want %d", len(all), lo+count)
	}
	return all[lo : lo+count], nil
}

// batch is the validity of a column in the current record batch.
type batch struct {
	valid    []byte // validity of the values (list elements); nil: no nulls
	validOff int    // bit of the first value of row 0
	lists    []byte // validity of the lists; nil: no null list
	listOff  int    // bit of row 0's list
}

// values is the typed access to a column's values in the current batch.
type values interface {
	load(data arrow.ArrayData, first, count int) error
	setBatch(b batch)
	copy(e *Extractor, c *column, dst *Block, lo, hi int)
}

// numbers are the values of a numeric column or of the elements of a
// fixed-size list column.
type numbers[T arrow.NumericType] struct {
	batch
	vals  []T
	float bool // check for NaN and infinities
}

func (v *numbers[T]) load(data arrow.ArrayData, first, count int) (err error) {
	v.vals, err = typedValues[T](data, first, count)
	return err
}

func (v *numbers[T]) setBatch(b batch) { v.batch = b }

// copy writes rows lo to hi of the column into the row-major dst and reports
// invalid values to e.
func (v *numbers[T]) copy(e *Extractor, c *column, dst *Block, lo, hi int) {
	out, stride := dst.X, e.dimX
	if c.view == viewY {
		out, stride = dst.Y, e.dimY
	}
	out = out[c.off:]
	w := c.width
	if v.lists != nil {
		for i := lo; i < hi; i++ {
			if bitutil.BitIsNotSet(v.lists, v.listOff+i) {
				e.invalid(badValue{row: i, col: c, kind: badNullList})
			}
		}
	}
	if v.valid != nil {
		for i := lo * w; i < hi*w; i++ {
			if bitutil.BitIsNotSet(v.valid, v.validOff+i) {
				e.invalid(badValue{row: i / w, col: c, kind: badNull, elem: i % w})
			}
		}
	}
	if w == 1 {
		vals := v.vals[lo:hi]
		if v.float {
			for k, x := range vals {
				f := float64(x)
				out[(lo+k)*stride] = f
				if f-f != 0 { // NaN or ±Inf
					e.invalid(badValue{row: lo + k, col: c, kind: badValueKind, val: f})
				}
			}
		} else {
			for k, x := range vals {
				out[(lo+k)*stride] = float64(x)
			}
		}
		return
	}
	for i := lo; i < hi; i++ {
		row := out[i*stride : i*stride+w]
		src := v.vals[i*w : (i+1)*w]
		for j, x := range src {
			row[j] = float64(x)
		}
		if v.float {
			for j, f := range row {
				if f-f != 0 {
					e.invalid(badValue{row: i, col: c, kind: badValueKind, elem: j, val: f})
				}
			}
		}
	}
}

// times are the values of a time column.
type times[T arrow.IntType | arrow.UintType] struct {
	batch
	vals  []T
	scale int64 // nanoseconds per unit
}

func (v *times[T]) load(data arrow.ArrayData, first, count int) (err error) {
	v.vals, err = typedValues[T](data, first, count)
	return err
}

func (v *times[T]) setBatch(b batch) { v.batch = b }

func (v *times[T]) copy(e *Extractor, c *column, dst *Block, lo, hi int) {
	out := dst.Times
	if v.valid != nil {
		for i := lo; i < hi; i++ {
			if bitutil.BitIsNotSet(v.valid, v.validOff+i) {
				e.invalid(badValue{row: i, col: c, kind: badNull})
			}
		}
	}
	lim := math.MaxInt64 / v.scale
	for i := lo; i < hi; i++ {
		x := v.vals[i]
		if x > T(0) && uint64(x) > uint64(lim) || x < T(0) && int64(x) < -lim {
			e.invalid(badValue{row: i, col: c, kind: badTimeRange, ival: int64(x), uval: x > 0 && int64(x) < 0})
			continue
		}
		out[i] = int64(x) * v.scale
	}
}

// invalid records the invalid value bad.
func (e *Extractor) invalid(bad badValue) {
	if e.skip {
		if !e.anyBad {
			e.anyBad = true
			clear(e.bad[:e.n])
		}
		e.bad[bad.row] = true
		return
	}
	if e.first.row < 0 || bad.row < e.first.row {
		e.first = bad
	}
}

// valueError returns the error of the invalid value bad.
func (e *Extractor) valueError(bad badValue) error {
	c := bad.col
	var what string
	switch bad.kind {
	case badNull:
		what = "null"
	case badNullList:
		what = "null list"
	case badValueKind:
		what = strconv.FormatFloat(bad.val, 'g', -1, 64) // NaN, +Inf, -Inf
	case badTimeRange:
		v := strconv.FormatInt(bad.ival, 10)
		if bad.uval {
			v = strconv.FormatUint(uint64(bad.ival), 10)
		}
		what = fmt.Sprintf("time %s %s is out of range (years 1678 to 2262)", v, unitName(c.unit))
	}
	if c.list && bad.kind != badNullList {
		what += fmt.Sprintf(" in element %d", bad.elem)
	}
	return &ValueError{Source: e.source, Column: c.name, Row: e.rowsRead + int64(bad.row), Problem: what}
}

// compact moves the kept rows of dst to its front.
func (e *Extractor) compact(dst *Block) {
	dx, dy := e.dimX, e.dimY
	k := 0
	for i := 0; i < e.n; i++ {
		if e.bad[i] {
			continue
		}
		if k != i {
			copy(dst.X[k*dx:(k+1)*dx], dst.X[i*dx:(i+1)*dx])
			copy(dst.Y[k*dy:(k+1)*dy], dst.Y[i*dy:(i+1)*dy])
			if dst.Times != nil {
				dst.Times[k] = dst.Times[i]
			}
		}
		k++
	}
	e.skipped += int64(e.n - k)
	dst.resize(k, dx, dy, e.hasTime)
}
