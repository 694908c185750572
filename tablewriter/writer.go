// Package tablewriter writes tables of float64 columns (the synthetic data
// of dime gen, and test fixtures) as Parquet, Arrow IPC files and streams,
// or CSV, from row-major blocks in constant memory: New writes to an
// io.Writer, Create to a file whose extension names the format. Close a
// Writer to complete its output. The values read back bit for bit through
// package decode.
package tablewriter

import (
	"bufio"
	stdcsv "encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
	"github.com/dime-project/dime/dataset"
)

// ColumnNames returns the n names prefix0, prefix1, …, prefix{n-1}, e.g.
// x0..x9 for ColumnNames("x", 10).
func ColumnNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = prefix + strconv.Itoa(i)
	}
	return names
}

// DefaultBatchRows is the number of rows of the IPC record batches a Writer
// writes by default: decode.DefaultBatchSize, the rows a reader reads at
// once.
const DefaultBatchRows = 16384

// Options configure a Writer. The zero value is usable.
type Options struct {
	// BatchRows is the number of rows per record batch of IPC output
	// (default DefaultBatchRows). A reader holds a whole IPC batch in memory.
	BatchRows int
	// RowGroupRows is the number of rows per Parquet row group. The default
	// is as many rows as fit in 32 MiB of values, between 1024 and 1<<20
	// (209715 rows of 20 columns). The writer holds a row group in memory,
	// but a Parquet reader does not (it reads pages of at most 1 MiB), and a
	// reader holds metadata for every column and row group of the file:
	// larger groups keep that small for billions of rows.
	RowGroupRows int
	// Allocator allocates the Arrow buffers of the Parquet and IPC writers
	// (default memory.DefaultAllocator).
	Allocator memory.Allocator
}

// rowGroupBytes is the size of the values of a default Parquet row group.
const rowGroupBytes = 32 << 20

// parquetPageBytes bounds the Parquet data pages written. A reader holds
// about two pages per column (compressed and not): 256 KiB pages rather than
// the default 1 MiB take a reader of 20 columns from about 80 MB of live heap
// to 30 MB, at the same speed.
const parquetPageBytes = 256 << 10

// Writer writes float64 columns to Parquet, an Arrow IPC file or
// stream, or CSV, from row-major blocks, in constant memory: it holds at most
// one record batch of Options.BatchRows rows or, for Parquet, one row
// group of Options.RowGroupRows rows. Rows are gathered across calls to
// Write, so the output does not depend on the size of the blocks written.
// Parquet is written with
// Snappy compression, without dictionary encoding or statistics, and with the
// Arrow schema stored; CSV has a header row and each value formatted as the
// shortest text that reads back as the same float64 (strconv 'g', -1).
type Writer struct {
	format  dataset.Format
	schema  *arrow.Schema
	buf     *bufio.Writer
	file    *os.File // opened by Create
	cols    [][]float64
	staged  int // rows in cols
	batch   int
	written int64
	err     error
	closed  bool

	pq   *pqarrow.FileWriter
	ipcs *ipc.Writer
	ipcf *ipc.FileWriter
	line []byte // CSV
}

// writeBufferSize is the buffer between the format writers and the output.
const writeBufferSize = 1 << 20

// New returns a writer of the given columns, all float64, in the
// given format (not Auto) to w. The Writer must be closed to complete
// the output; it does not close w.
func New(w io.Writer, format dataset.Format, columns []string, opts Options) (*Writer, error) {
	if format == dataset.Auto || format > dataset.CSV {
		return nil, fmt.Errorf("dimeio: cannot write format %v (want parquet, ipc-file, ipc-stream or csv)", format)
	}
	if len(columns) == 0 {
		return nil, fmt.Errorf("dimeio: no columns to write")
	}
	fields := make([]arrow.Field, len(columns))
	seen := make(map[string]bool, len(columns))
	for i, name := range columns {
		if seen[name] {
			return nil, fmt.Errorf("dimeio: column %q given twice", name)
		}
		seen[name] = true
		fields[i] = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
	}
	t := &Writer{format: format, schema: arrow.NewSchema(fields, nil), buf: bufio.NewWriterSize(w, writeBufferSize)}
	t.batch = opts.BatchRows
	if t.batch <= 0 {
		t.batch = DefaultBatchRows
	}
	if format == dataset.Parquet {
		t.batch = opts.RowGroupRows
		if t.batch <= 0 {
			t.batch = min(max(rowGroupBytes/(8*len(columns)), 1024), 1<<20)
		}
	}
	mem := opts.Allocator
	if mem == nil {
		mem = memory.DefaultAllocator
	}
	var err error
	switch format {
	case dataset.Parquet:
		// No dictionaries (useless for random doubles, and costly to
		// attempt) and no statistics: min/max per column chunk cost a
		// reader of Arrow Go v15 about 4 kB of heap per column and row
		// group (365 B without), held for the whole read.
		props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithCompression(compress.Codecs.Snappy),
			parquet.WithDictionaryDefault(false), parquet.WithStats(false), parquet.WithDataPageSize(parquetPageBytes))
		t.pq, err = pqarrow.NewFileWriter(t.schema, t.buf, props,
			pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(mem)))
	case dataset.IPCFile:
		t.ipcf, err = ipc.NewFileWriter(&positionWriter{w: t.buf}, ipc.WithSchema(t.schema), ipc.WithAllocator(mem))
	case dataset.IPCStream:
		t.ipcs = ipc.NewWriter(t.buf, ipc.WithSchema(t.schema), ipc.WithAllocator(mem))
	case dataset.CSV:
		cw := stdcsv.NewWriter(t.buf) // quotes the names that need it
		cw.Write(columns)
		cw.Flush()
		err = cw.Error()
	}
	if err != nil {
		return nil, fmt.Errorf("dimeio: starting %v output: %w", format, err)
	}
	if format != dataset.CSV {
		t.cols = make([][]float64, len(columns))
		for i := range t.cols {
			t.cols[i] = make([]float64, t.batch)
		}
	}
	return t, nil
}

// Create creates (or truncates) the file at path and returns a Writer
// of the given columns to it, in the given format or, for Auto, the format
// of the extension. Close closes the file.
func Create(path string, format dataset.Format, columns []string, opts Options) (*Writer, error) {
	if format == dataset.Auto {
		var err error
		if format, err = dataset.FormatFromPath(path); err != nil || path == "-" {
			return nil, fmt.Errorf("dimeio: %s: cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv)", path)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("dimeio: %w", err)
	}
	t, err := New(f, format, columns, opts)
	if err != nil {
		f.Close()
		os.Remove(path)
		return nil, err
	}
	t.file = f
	return t, nil
}

// Write appends rows rows from rowMajor, which holds rows×len(columns)
// values, row after row. It returns an error if rowMajor has another length
// or if writing fails; after an error the writer only reports it.
func (t *Writer) Write(rowMajor []float64, rows int) error {
	if t.err != nil {
		return t.err
	}
	if t.closed {
		return errors.New("dimeio: write to a closed Writer")
	}
	d := t.schema.NumFields()
	if rows < 0 || len(rowMajor) != rows*d {
		return fmt.Errorf("dimeio: %d values for %d rows of %d columns", len(rowMajor), rows, d)
	}
	if t.format == dataset.CSV {
		t.err = t.writeCSV(rowMajor, rows, d)
		return t.err
	}
	for rows > 0 {
		k := min(rows, t.batch-t.staged)
		for i := 0; i < k; i++ {
			row := rowMajor[i*d : (i+1)*d]
			for j, v := range row {
				t.cols[j][t.staged+i] = v
			}
		}
		t.staged += k
		rowMajor, rows = rowMajor[k*d:], rows-k
		if t.staged == t.batch {
			if t.err = t.flush(); t.err != nil {
				return t.err
			}
		}
	}
	return nil
}

func (t *Writer) writeCSV(rowMajor []float64, rows, d int) error {
	for i := 0; i < rows; i++ {
		line := t.line[:0]
		for j, v := range rowMajor[i*d : (i+1)*d] {
			if j > 0 {
				line = append(line, ',')
			}
			line = strconv.AppendFloat(line, v, 'g', -1, 64)
		}
		line = append(line, '\n')
		t.line = line
		if _, err := t.buf.Write(line); err != nil {
			return fmt.Errorf("dimeio: writing CSV: %w", err)
		}
	}
	t.written += int64(rows)
	return nil
}

// flush writes the staged rows as one record batch.
func (t *Writer) flush() error {
	n := t.staged
	if n == 0 {
		return nil
	}
	arrs := make([]arrow.Array, len(t.cols))
	for j, col := range t.cols {
		// The record points at the staging memory; the writers are done
		// with it when Write returns.
		data := array.NewData(arrow.PrimitiveTypes.Float64, n,
			[]*memory.Buffer{nil, memory.NewBufferBytes(arrow.Float64Traits.CastToBytes(col[:n]))}, nil, 0, 0)
		arrs[j] = array.NewFloat64Data(data)
		data.Release()
	}
	rec := array.NewRecord(t.schema, arrs, int64(n))
	for _, a := range arrs {
		a.Release()
	}
	defer rec.Release()
	var err error
	switch t.format {
	case dataset.Parquet:
		err = t.pq.Write(rec)
	case dataset.IPCFile:
		err = t.ipcf.Write(rec)
	case dataset.IPCStream:
		err = t.ipcs.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("dimeio: writing %v: %w", t.format, err)
	}
	if t.format == dataset.IPCStream {
		// A stream may feed a reader through a pipe (dime gen --out - |
		// dime monitor -): each batch goes out whole as soon as it is
		// complete, not when the buffer fills or the writer closes.
		if err := t.buf.Flush(); err != nil {
			return fmt.Errorf("dimeio: writing %v: %w", t.format, err)
		}
	}
	t.staged = 0
	t.written += int64(n)
	return nil
}

// Rows returns the number of rows written so far (including rows gathered
// for the next record batch).
func (t *Writer) Rows() int64 { return t.written + int64(t.staged) }

// Close writes the rows gathered, completes the output (Parquet and IPC file
// footers, IPC end-of-stream marker), flushes it, and closes the file if
// Create opened it. It may be called more than once.
func (t *Writer) Close() error {
	if t.closed {
		return t.err
	}
	t.closed = true
	err := t.err
	if err == nil {
		err = t.flush()
	}
	var cerr error
	switch t.format {
	case dataset.Parquet:
		cerr = t.pq.Close()
	case dataset.IPCFile:
		cerr = t.ipcf.Close()
	case dataset.IPCStream:
		cerr = t.ipcs.Close()
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("dimeio: completing %v output: %w", t.format, cerr)
	}
	if ferr := t.buf.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("dimeio: %w", ferr)
	}
	if t.file != nil {
		if ferr := t.file.Close(); err == nil && ferr != nil {
			err = fmt.Errorf("dimeio: %w", ferr)
		}
	}
	t.cols = nil
	t.err = err
	return err
}

// positionWriter gives the IPC file writer, which asks for its position in
// the output, a position without seeking.
type positionWriter struct {
	w   io.Writer
	pos int64
}

func (p *positionWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

func (p *positionWriter) Seek(offset int64, whence int) (int64, error) {
	if offset == 0 && whence == io.SeekCurrent {
		return p.pos, nil
	}
	return p.pos, errors.New("dimeio: the output cannot seek")
}
