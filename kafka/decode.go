package kafka

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
)

// decoder turns the value of a message into rows.
type decoder interface {
	// init sets the columns from the first message; it does not consume it.
	init(rec *kgo.Record) error
	// dimX is -1 before init.
	dimX() int
	dimY() int
	columns() columns.Selection
	// decode replaces dst's rows with the message's; bad counts rows
	// dropped (SkipInvalid) from a message that decoded.
	decode(dst *decode.Block, rec *kgo.Record) (bad int64, err error)
}

// jsonDecoder reads one JSON object per message, one row.
type jsonDecoder struct {
	cfg    *Config
	ready  bool
	x, y   []string
	obj    map[string]json.RawMessage
	timeNS float64 // nanoseconds per unit of the time column
}

func (d *jsonDecoder) dimX() int {
	if !d.ready {
		return -1
	}
	return len(d.x)
}
func (d *jsonDecoder) dimY() int { return len(d.y) }
func (d *jsonDecoder) columns() columns.Selection {
	view := func(names []string) columns.View {
		v := make(columns.View, len(names))
		for i, n := range names {
			v[i] = columns.Column{Name: n, Field: -1, Lo: 0, Hi: 1}
		}
		return v
	}
	return columns.Selection{X: view(d.x), Y: view(d.y)}
}

// keys returns the keys of a JSON object in their order.
func keys(b []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	t, err := dec.Token()
	if err != nil {
		return nil, notObject(err)
	}
	if t != json.Delim('{') {
		return nil, notObject(nil)
	}
	var out []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, notObject(err)
		}
		k, _ := t.(string)
		out = append(out, k)
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, notObject(err)
		}
	}
	return out, nil
}

func notObject(err error) error {
	if err == nil {
		return fmt.Errorf("%w: the value is not a JSON object", decode.ErrFormat)
	}
	return fmt.Errorf("%w: the value is not a JSON object: %v", decode.ErrFormat, err)
}

func (d *jsonDecoder) init(rec *kgo.Record) error {
	names, err := keys(rec.Value)
	if err != nil {
		return err
	}
	// JSON objects are unordered: patterns expand in the natural order of
	// the names (x2 before x10), not in the order of the first message.
	slices.SortStableFunc(names, naturalCompare)
	src := d.cfg.Source.Name()
	// A plain name need not be in the first message: later ones are
	// checked one by one.
	expand := func(sel []string) ([]string, error) {
		var out []string
		for _, s := range sel {
			if slices.Contains(names, s) || !isPattern(s) {
				out = append(out, s)
				continue
			}
			got, err := columns.Expand(src, names, []string{s})
			if err != nil {
				return nil, err
			}
			out = append(out, got...)
		}
		return out, nil
	}
	if d.x, err = expand(d.cfg.X); err != nil {
		return err
	}
	if d.y, err = expand(d.cfg.Y); err != nil {
		return err
	}
	d.timeNS = unitNS(d.cfg.TimeUnit)
	d.ready = true
	return nil
}

// isPattern reports whether a selector is a glob or a slice.
func isPattern(s string) bool {
	return bytes.ContainsAny([]byte(s), "*?[")
}

func unitNS(u arrow.TimeUnit) float64 {
	switch u {
	case arrow.Millisecond:
		return 1e6
	case arrow.Microsecond:
		return 1e3
	case arrow.Nanosecond:
		return 1
	}
	return 1e9
}

func (d *jsonDecoder) decode(dst *decode.Block, rec *kgo.Record) (int64, error) {
	clear(d.obj)
	if d.obj == nil {
		d.obj = map[string]json.RawMessage{}
	}
	if err := json.Unmarshal(rec.Value, &d.obj); err != nil {
		return 0, notObject(err)
	}
	dst.Rows = 1
	dst.X, dst.Y = dst.X[:0], dst.Y[:0]
	var err error
	if dst.X, err = d.values(dst.X, d.x); err != nil {
		return 0, err
	}
	if dst.Y, err = d.values(dst.Y, d.y); err != nil {
		return 0, err
	}
	dst.Times = nil
	if c := d.cfg.TimeColumn; c != "" {
		v, err := d.number(c)
		if err != nil {
			return 0, err
		}
		ns := v * d.timeNS
		if !(math.Abs(ns) < math.MaxInt64) {
			return 0, fmt.Errorf("%w: time column %q: %g does not fit in int64 nanoseconds", decode.ErrInvalidValue, c, v)
		}
		t := int64(ns)
		// An integer is exact (a float64 holds 53 bits: nanoseconds of
		// today need 61).
		if i, err := strconv.ParseInt(string(bytes.TrimSpace(d.obj[c])), 10, 64); err == nil {
			t = i * int64(d.timeNS)
		}
		dst.Times = append(dst.Times[:0], t)
	}
	return 0, nil
}

// values appends the numbers of the columns to dst.
func (d *jsonDecoder) values(dst []float64, cols []string) ([]float64, error) {
	for _, c := range cols {
		v, err := d.number(c)
		if err != nil {
			return dst, err
		}
		if m := d.cfg.MaxAbs; m > 0 && math.Abs(v) > m {
			return dst, fmt.Errorf("%w: column %q: %g is beyond ±%g", decode.ErrInvalidValue, c, v, m)
		}
		dst = append(dst, v)
	}
	return dst, nil
}

// number reads a number field of the current object.
func (d *jsonDecoder) number(c string) (float64, error) {
	raw, ok := d.obj[c]
	if !ok {
		return 0, fmt.Errorf("%w: column %q is missing", decode.ErrInvalidValue, c)
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		kind := "not a number"
		switch {
		case bytes.Equal(raw, []byte("null")):
			kind = "null"
		case len(raw) > 0 && raw[0] == '"':
			kind = "a string, not a number"
		}
		return 0, fmt.Errorf("%w: column %q is %s", decode.ErrInvalidValue, c, kind)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%w: column %q: %s overflows float64", decode.ErrInvalidValue, c, raw)
	}
	return v, nil
}

// arrowDecoder reads one Arrow IPC stream per message.
type arrowDecoder struct {
	cfg    *Config
	ready  bool
	dx, dy int
	x, y   []string
	sel    columns.Selection
	schema *arrow.Schema
	ext    *decode.Extractor
	part   decode.Block
}

func (d *arrowDecoder) dimX() int {
	if !d.ready {
		return -1
	}
	return d.dx
}
func (d *arrowDecoder) dimY() int                  { return d.dy }
func (d *arrowDecoder) columns() columns.Selection { return d.sel }

func (d *arrowDecoder) options() decode.Options {
	return decode.Options{
		Columns: columns.Spec{X: d.cfg.X, Y: d.cfg.Y, TimeColumn: d.cfg.TimeColumn, TimeUnit: d.cfg.TimeUnit},
		Values:  decode.Values{SkipInvalid: d.cfg.SkipInvalid, MaxAbs: d.cfg.MaxAbs},
	}
}

// extractor returns the extractor of a schema, checking that it selects the
// columns of the first message.
func (d *arrowDecoder) extractor(s *arrow.Schema) (*decode.Extractor, error) {
	if d.ext != nil && d.schema.Equal(s) {
		return d.ext, nil
	}
	ext, err := decode.NewExtractor("message", s, d.options())
	if err != nil {
		return nil, err
	}
	sel := ext.Columns()
	x, y := sel.X.Labels(), sel.Y.Labels()
	if d.ready && (!slices.Equal(x, d.x) || !slices.Equal(y, d.y) || ext.DimX() != d.dx || ext.DimY() != d.dy) {
		return nil, fmt.Errorf("%w: its schema selects columns %v / %v, the first message's %v / %v", decode.ErrFormat, x, y, d.x, d.y)
	}
	d.ext, d.schema = ext, s
	return ext, nil
}

func (d *arrowDecoder) init(rec *kgo.Record) error {
	r, err := ipc.NewReader(bytes.NewReader(rec.Value), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return fmt.Errorf("%w: not an Arrow IPC stream: %v", decode.ErrFormat, err)
	}
	defer r.Release()
	ext, err := d.extractor(r.Schema())
	if err != nil {
		return err
	}
	d.sel = ext.Columns()
	d.x, d.y = d.sel.X.Labels(), d.sel.Y.Labels()
	d.dx, d.dy = ext.DimX(), ext.DimY()
	d.ready = true
	return nil
}

func (d *arrowDecoder) decode(dst *decode.Block, rec *kgo.Record) (bad int64, err error) {
	dst.Rows, dst.X, dst.Y = 0, dst.X[:0], dst.Y[:0]
	dst.Times = nil
	r, err := ipc.NewReader(bytes.NewReader(rec.Value), ipc.WithAllocator(memory.DefaultAllocator))
	if err != nil {
		return 0, fmt.Errorf("%w: not an Arrow IPC stream: %v", decode.ErrFormat, err)
	}
	defer r.Release()
	ext, err := d.extractor(r.Schema())
	if err != nil {
		return 0, err
	}
	skipped, row := ext.Skipped(), ext.RowsRead()
	for r.Next() {
		if err := ext.Extract(&d.part, r.Record()); err != nil {
			var ve *decode.ValueError
			if errors.As(err, &ve) {
				return 0, fmt.Errorf("%w: column %q, row %d of the message: %s", decode.ErrInvalidValue, ve.Column, ve.Row-row, ve.Problem)
			}
			return 0, err
		}
		dst.X = append(dst.X, d.part.X...)
		dst.Y = append(dst.Y, d.part.Y...)
		if d.part.Times != nil {
			dst.Times = append(dst.Times, d.part.Times...)
		}
		dst.Rows += d.part.Rows
	}
	if err := r.Err(); err != nil {
		return 0, fmt.Errorf("%w: a damaged Arrow IPC stream: %v", decode.ErrFormat, err)
	}
	return ext.Skipped() - skipped, nil
}

// naturalCompare orders names as text, but runs of digits by their value:
// emb_2 before emb_10.
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digits(a), digits(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmp.Compare(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			if c := cmp.Compare(da, db); c != 0 { // 01 after 1
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

// digits returns the length of the run of ASCII digits s starts with.
func digits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
