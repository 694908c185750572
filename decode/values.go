package decode

import (
	"fmt"
	"math"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/bitutil"
)

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
	if v.valid != nil && !c.list {
		for i := lo; i < hi; i++ {
			if bitutil.BitIsNotSet(v.valid, v.validOff+i) {
				e.invalid(badValue{row: i, col: c, kind: badNull})
			}
		}
	}
	if v.valid != nil && c.list { // only the elements read: those of a slice
		for i := lo; i < hi; i++ {
			base := v.validOff + i*c.stride + c.first
			for j := 0; j < w; j++ {
				if bitutil.BitIsNotSet(v.valid, base+j) {
					e.invalid(badValue{row: i, col: c, kind: badNull, elem: c.first + j})
				}
			}
		}
	}
	if !c.list {
		vals := v.vals[lo:hi]
		if v.float {
			for k, x := range vals {
				f := float64(x)
				out[(lo+k)*stride] = f
				if f-f != 0 || f > e.maxAbs || f < -e.maxAbs { // NaN, ±Inf or too large
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
		src := v.vals[i*c.stride+c.first : i*c.stride+c.first+w]
		for j, x := range src {
			row[j] = float64(x)
		}
		if v.float {
			for j, f := range row {
				if f-f != 0 || f > e.maxAbs || f < -e.maxAbs {
					e.invalid(badValue{row: i, col: c, kind: badValueKind, elem: c.first + j, val: f})
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
		if bad.val-bad.val == 0 {
			what += fmt.Sprintf(" is beyond ±%g (rescale the column)", e.maxAbs)
		}
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

// constant is the value of a partition key, the same on every row.
type constant struct {
	v    float64
	null bool
}

func (v *constant) load(arrow.ArrayData, int, int) error { return nil }
func (v *constant) setBatch(batch)                       {}

func (v *constant) copy(e *Extractor, c *column, dst *Block, lo, hi int) {
	out, stride := dst.X, e.dimX
	if c.view == viewY {
		out, stride = dst.Y, e.dimY
	}
	for i := lo; i < hi; i++ {
		out[i*stride+c.off] = v.v
		if v.null {
			e.invalid(badValue{row: i, col: c, kind: badNull})
		}
	}
}
