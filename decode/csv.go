package decode

import (
	"bufio"
	"bytes"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/csv"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/internal/ioerr"
)

// csvNulls are the texts read as a missing value in a CSV number column:
// those of pandas.read_csv. They are checked only when the text is not a
// number (so "NaN" and "nan" read as NaN), and only for the whole trimmed
// text.
var csvNulls = map[string]bool{
	"": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true,
	"-NaN": true, "-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true,
	"NA": true, "NULL": true, "NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// MaxCSVRecordBytes bounds a CSV record (a line, with the line breaks inside
// its quoted fields): a longer one is an error naming the file and row, not
// a buffer that grows with the input, as a quote that is never closed or a
// file that is not text (--format csv /dev/zero) would make it.
const MaxCSVRecordBytes = 16 << 20

// maxCSVRecord is MaxCSVRecordBytes, but for tests.
var maxCSVRecord int64 = MaxCSVRecordBytes

// recordLimiter passes CSV text through and fails once a record is longer
// than max bytes. It follows the quotes as RFC 4180 does ("" in a quoted
// field toggles twice), which is all it takes to tell a line break that
// ends a record from one inside a field.
type recordLimiter struct {
	r       io.Reader
	max     int64
	source  string
	n       int64 // bytes of the current record so far
	quoted  bool
	records int64 // records ended (the header is the first)
	err     error
}

func (l *recordLimiter) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	b := p[:n]
	for i := 0; i < len(b); {
		if l.quoted {
			j := bytes.IndexByte(b[i:], '"')
			if j < 0 {
				l.n += int64(len(b) - i)
				i = len(b)
			} else {
				l.n += int64(j + 1)
				i += j + 1
				l.quoted = false
			}
		} else {
			j := bytes.IndexAny(b[i:], "\"\n")
			if j < 0 {
				l.n += int64(len(b) - i)
				i = len(b)
			} else if b[i+j] == '"' {
				l.n += int64(j + 1)
				i += j + 1
				l.quoted = true
			} else {
				l.n += int64(j)
				i += j + 1
				if l.n <= l.max {
					l.records++
					l.n = 0
				}
			}
		}
		if l.n > l.max {
			what := fmt.Sprintf("CSV row %d", l.records-1)
			if l.records == 0 {
				what = "the CSV header"
			}
			size := fmt.Sprintf("%d MiB", l.max>>20)
			if l.max < 1<<20 {
				size = fmt.Sprintf("%d bytes", l.max)
			}
			l.err = ioerr.New(ErrFormat, l.source, nil, "%s is longer than %s: a quote that is never closed, or not CSV text", what, size)
			return 0, l.err
		}
	}
	return n, err
}

// openCSV reads a CSV file with a header row. The selected columns are read
// by arrow/csv as text, in chunks of BatchSize rows, and parsed here: a value
// that is not a number is then reported with its column and row, which
// arrow/csv does not do, and type inference (which looks at the first row
// only) cannot pick a wrong type. Columns not selected are not converted.
// openCSV reads the header; start reads the selected columns.
func openCSV(source string, in io.Reader, opts Options) (*csvDecoder, error) {
	comma := opts.Comma
	if comma == 0 {
		comma = ','
	}
	br := bufio.NewReader(&recordLimiter{r: in, max: maxCSVRecord, source: source})
	if b, err := br.Peek(len(utf8BOM)); err == nil && bytes.Equal(b, utf8BOM) {
		br.Discard(len(utf8BOM))
	}
	// Read the header and the first data row with encoding/csv, keeping a
	// copy of the bytes it consumed, which arrow/csv then reads again.
	var seen bytes.Buffer
	hr := stdcsv.NewReader(io.TeeReader(br, &seen))
	hr.Comma = comma
	header, err := hr.Read()
	var ie *ioerr.Error
	if err == io.EOF {
		return nil, ioerr.New(ErrFormat, source, nil, "empty CSV: no header row")
	}
	if errors.As(err, &ie) {
		return nil, err
	}
	if err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "reading the CSV header")
	}
	_, err = hr.Read()
	noRows := err == io.EOF
	if errors.As(err, &ie) {
		return nil, err
	}
	if err != nil && !noRows {
		return nil, ioerr.New(ErrFormat, source, err, "reading CSV row 0")
	}
	return &csvDecoder{source: source, header: header, noRows: noRows, seen: &seen, br: br, comma: comma}, nil
}

// csvDecoder is a CSV input whose header has been read.
type csvDecoder struct {
	source string
	header []string
	noRows bool
	seen   *bytes.Buffer // the bytes read so far, which arrow/csv reads again
	br     *bufio.Reader
	comma  rune
}

// fields returns the header's columns, without a type: CSV numbers.
func (d *csvDecoder) fields() []arrow.Field {
	f := make([]arrow.Field, len(d.header))
	for i, h := range d.header {
		f[i] = arrow.Field{Name: h}
	}
	return f
}

func (d *csvDecoder) release() {}

// start reads the columns of sel: each once, time last; partition keys are
// the Extractor's.
func (d *csvDecoder) start(sel columns.Selection, opts Options) (started, error) {
	var names []string
	for _, c := range append(append(columns.View{}, sel.X...), sel.Y...) {
		if c.Partition == nil && !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	fields := make([]arrow.Field, 0, len(names)+1)
	for _, name := range names {
		fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: true})
	}
	if t := sel.Time; t != nil {
		if slices.Contains(names, t.Name) {
			return started{}, ioerr.New(ErrColumn, d.source, nil, "CSV time column %q cannot also be in X or Y", t.Name)
		}
		names = append(names, t.Name)
		fields = append(fields, arrow.Field{Name: t.Name, Type: &arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "UTC"}, Nullable: true})
	}
	if len(names) == 0 {
		return started{}, ioerr.New(ErrColumn, d.source, nil, "no columns selected for X or Y")
	}
	schema := arrow.NewSchema(fields, nil)
	if d.noRows {
		return started{src: emptySource{}, schema: schema, total: -1}, nil
	}
	types := make(map[string]arrow.DataType, len(names))
	for _, n := range names {
		types[n] = arrow.BinaryTypes.String
	}
	mem := opts.allocator()
	ar := csv.NewInferringReader(io.MultiReader(d.seen, d.br),
		csv.WithHeader(true), csv.WithComma(d.comma), csv.WithChunk(max(blockRows(opts.batchSize(), len(names)), 2)),
		csv.WithAllocator(mem), csv.WithIncludeColumns(names), csv.WithColumnTypes(types))
	s := &csvSource{source: d.source, r: ar, schema: schema, timeScale: nanosPer(opts.Columns.TimeUnit), timeUnit: opts.Columns.TimeUnit}
	s.numbers = make([]*array.Float64Builder, len(fields))
	for i, f := range fields {
		if f.Type.ID() == arrow.FLOAT64 {
			s.numbers[i] = array.NewFloat64Builder(mem)
		} else {
			s.times = array.NewTimestampBuilder(mem, f.Type.(*arrow.TimestampType))
		}
	}
	return started{src: s, schema: schema, total: -1}, nil
}

// emptySource has no record batches.
type emptySource struct{}

func (emptySource) Next() bool           { return false }
func (emptySource) Record() arrow.Record { return nil }
func (emptySource) Err() error           { return nil }
func (emptySource) Release()             {}

// csvSource turns the text columns arrow/csv reads into float64 and
// timestamp columns.
type csvSource struct {
	source    string
	r         *csv.Reader
	schema    *arrow.Schema
	numbers   []*array.Float64Builder // per field; nil for the time column
	times     *array.TimestampBuilder
	timeScale int64 // nanoseconds per unit of integer times
	timeUnit  arrow.TimeUnit
	rec       arrow.Record
	rows      int64 // rows converted so far
	err       error
}

func (s *csvSource) Next() bool {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	if s.err != nil || !s.r.Next() {
		return false
	}
	in := s.r.Record()
	n := int(in.NumRows())
	cols := make([]arrow.Array, len(s.numbers))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for j := range cols {
		text, ok := in.Column(j).(*array.String)
		if !ok || in.Schema().Field(j).Name != s.schema.Field(j).Name {
			s.err = fmt.Errorf("unexpected CSV column %d: %s %s", j, in.Schema().Field(j).Name, in.Column(j).DataType())
			return false
		}
		if b := s.numbers[j]; b != nil {
			s.err = s.parseNumbers(b, s.schema.Field(j).Name, text, n)
			cols[j] = b.NewArray()
		} else {
			s.err = s.parseTimes(text, n)
			cols[j] = s.times.NewArray()
		}
		if s.err != nil {
			return false
		}
	}
	s.rec = array.NewRecord(s.schema, cols, int64(n))
	s.rows += int64(n)
	return true
}

func (s *csvSource) parseNumbers(b *array.Float64Builder, column string, text *array.String, n int) error {
	b.Reserve(n)
	for i := 0; i < n; i++ {
		t := text.Value(i)
		v, err := strconv.ParseFloat(t, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) { // out of range: ±Inf or 0
			t = strings.TrimSpace(t)
			if v, err = strconv.ParseFloat(t, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
				if csvNulls[t] {
					b.UnsafeAppendBoolToBitmap(false)
					continue
				}
				return s.notNumber(column, i, t, "a number")
			}
		}
		if strings.ContainsAny(t, "_xX") {
			// Go's ParseFloat takes Go's literals too: digits separated by
			// underscores (1_000) and hexadecimal floats (0x1p4), which no
			// CSV writer means as numbers.
			return s.notNumber(column, i, strings.TrimSpace(t), "a decimal number (underscores and hexadecimal are Go syntax, not CSV)")
		}
		b.UnsafeAppend(v)
	}
	return nil
}

func (s *csvSource) parseTimes(text *array.String, n int) error {
	b := s.times
	b.Reserve(n)
	for i := 0; i < n; i++ {
		t := strings.TrimSpace(text.Value(i))
		if v, err := strconv.ParseInt(t, 10, 64); err == nil {
			if lim := int64(1<<63-1) / s.timeScale; v > lim || v < -lim {
				return &ValueError{Source: s.source, Column: s.schema.Field(s.schema.NumFields() - 1).Name, Row: s.rows + int64(i),
					Problem: fmt.Sprintf("time %d %s is out of range (years 1678 to 2262)", v, unitName(s.timeUnit))}
			}
			b.UnsafeAppend(arrow.Timestamp(v * s.timeScale))
			continue
		}
		if v, err := arrow.TimestampFromString(t, arrow.Nanosecond); err == nil {
			b.UnsafeAppend(v)
			continue
		}
		if csvNulls[t] {
			b.UnsafeAppendBoolToBitmap(false)
			continue
		}
		return s.notNumber(s.schema.Field(s.schema.NumFields()-1).Name, i, t, "an integer time or a date and time like 2006-01-02T15:04:05Z")
	}
	return nil
}

// notNumber returns the error of text t at row i of the current batch.
func (s *csvSource) notNumber(column string, i int, t, want string) error {
	if len(t) > 40 {
		t = t[:40] + "..."
	}
	return &ValueError{Source: s.source, Column: column, Row: s.rows + int64(i), Problem: fmt.Sprintf("text %q is not %s", t, want)}
}

func (s *csvSource) Record() arrow.Record { return s.rec }
func (s *csvSource) Err() error {
	if s.err != nil {
		return s.err
	}
	return s.r.Err()
}

func (s *csvSource) Release() {
	if s.rec != nil {
		s.rec.Release()
		s.rec = nil
	}
	s.r.Release()
	for _, b := range s.numbers {
		if b != nil {
			b.Release()
		}
	}
	if s.times != nil {
		s.times.Release()
	}
}
