package io

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
)

// recordSource is a reader of record batches: the record is valid until the
// next call to Next; Err is nil at the end of a clean input; Release frees
// everything.
type recordSource interface {
	Next() bool
	Record() arrow.Record
	Err() error
	Release()
}

// Reader reads the two views of a file block by block, in constant memory.
// It works like bufio.Scanner: call Next until it returns false, use the
// block of the current call (X, Y, Times), then check Err. Close it in every
// case.
type Reader struct {
	source string
	src    recordSource
	ext    *Extractor
	block  Block
	total  int64
	closer io.Closer // the file, if Open opened one
	err    error
	done   bool
}

// Open opens the file at path for reading the columns that opts selects. The
// path "-" means stdin: it is read from stdin, as an IPC stream unless
// opts.Format says CSV. Parquet and IPC files need random access: a regular
// file, not stdin or a named pipe. The error names the file: it matches
// ErrColumn for a bad column selection and ErrFormat for a file that is empty
// or not in its format.
func Open(path string, stdin io.Reader, opts Options) (*Reader, error) {
	source := path
	if path == "-" {
		source = "stdin"
	}
	format := opts.Format
	if format == Auto {
		var err error
		if format, err = FormatFromPath(path); err != nil {
			return nil, newError(ErrFormat, source, nil, "cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv); name the format explicitly")
		}
	}
	if format > CSV {
		return nil, fmt.Errorf("dimeio: %s: unknown format %v", source, format)
	}
	r := &Reader{source: source, total: -1}
	var in io.Reader
	size := int64(-1)
	if path == "-" {
		if stdin == nil {
			return nil, fmt.Errorf("dimeio: stdin: no standard input given")
		}
		if format == Parquet || format == IPCFile {
			return nil, newError(ErrFormat, source, nil, "%s needs a file that can be read at random; stdin can only be read as an IPC stream or CSV", format)
		}
		in = stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("dimeio: %w", err)
		}
		r.closer = f
		info, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("dimeio: %w", err)
		}
		switch {
		case info.IsDir():
			f.Close()
			return nil, newError(ErrFormat, source, nil, "is a directory")
		case !info.Mode().IsRegular(): // a pipe, a device: a stream
			if format == Parquet || format == IPCFile {
				f.Close()
				return nil, newError(ErrFormat, source, nil, "%s needs a regular file, which can be read at random; a pipe can only be read as an IPC stream or CSV", format)
			}
		case info.Size() == 0:
			f.Close()
			return nil, newError(ErrFormat, source, nil, "empty file (0 bytes)")
		default:
			size = info.Size()
		}
		in = f
	}
	var err error
	switch format {
	case Parquet:
		err = r.openParquet(in.(*os.File), opts)
	case IPCFile:
		err = r.openIPCFile(in.(*os.File), size, opts)
	case IPCStream:
		err = r.openIPCStream(in, size, opts)
	case CSV:
		err = r.openCSV(in, opts)
	}
	if err != nil {
		if r.closer != nil {
			r.closer.Close()
		}
		return nil, err
	}
	return r, nil
}

// Next advances to the next block of kept rows and reports whether there is
// one. It returns false at the end of the input or on an error (see Err).
// Blocks come one per record batch, so they have at most Options.BatchSize
// rows (Parquet, CSV) or the rows of a batch of the IPC input, minus the rows
// dropped with SkipInvalid; batches whose rows are all dropped are passed
// over.
func (r *Reader) Next() bool {
	if r.err != nil || r.done || r.src == nil {
		return false
	}
	for r.src.Next() {
		if err := r.ext.Extract(&r.block, r.src.Record()); err != nil {
			r.err = err
			return false
		}
		if r.block.Rows > 0 {
			return true
		}
	}
	r.done = true
	r.block.resize(0, r.ext.dimX, r.ext.dimY, r.ext.hasTime)
	if err := r.src.Err(); err != nil {
		var ve *ValueError
		if errors.As(err, &ve) {
			r.err = err
		} else {
			r.err = newError(ErrFormat, r.source, err, "reading the record batch at row %d", r.ext.RowsRead())
		}
	}
	return false
}

// X returns the current block of X, row-major: Rows()×DimX() values. It is
// valid until the next call to Next or Close, which reuse its memory.
func (r *Reader) X() []float64 { return r.block.X }

// Y returns the current block of Y, row-major: Rows()×DimY() values, valid
// until the next call to Next or Close.
func (r *Reader) Y() []float64 { return r.block.Y }

// Times returns the times of the current block's rows in nanoseconds since
// the Unix epoch (UTC), or nil without Options.TimeColumn. It is valid until
// the next call to Next or Close.
func (r *Reader) Times() []int64 { return r.block.Times }

// Rows returns the number of rows of the current block.
func (r *Reader) Rows() int { return r.block.Rows }

// DimX returns the number of values in a row of X.
func (r *Reader) DimX() int { return r.ext.DimX() }

// DimY returns the number of values in a row of Y.
func (r *Reader) DimY() int { return r.ext.DimY() }

// RowsRead returns the number of rows of the input read so far, including
// the rows skipped: after a successful Next, the rows up to the end of the
// current block.
func (r *Reader) RowsRead() int64 { return r.ext.RowsRead() }

// Skipped returns the number of rows dropped so far for an invalid value
// (with Options.SkipInvalid).
func (r *Reader) Skipped() int64 { return r.ext.Skipped() }

// TotalRows returns the number of rows of the input if it is known without
// reading it (Parquet, from the file's metadata), or -1.
func (r *Reader) TotalRows() int64 { return r.total }

// Err returns the error that ended Next, or nil at the clean end of the
// input. An invalid value is a *ValueError; see also ErrFormat.
func (r *Reader) Err() error { return r.err }

// Close releases the reader's memory and closes the file it opened (not
// stdin). It may be called at any time, more than once.
func (r *Reader) Close() error {
	if r.src != nil {
		r.src.Release()
		r.src = nil
	}
	r.block = Block{}
	r.done = true
	if r.closer != nil {
		err := r.closer.Close()
		r.closer = nil
		if err != nil && !errors.Is(err, os.ErrClosed) {
			return fmt.Errorf("dimeio: %w", err)
		}
	}
	return nil
}
