package decode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/internal/ioerr"
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

// BlockReader is what the readers of this package share: a Reader reads
// one input, a DatasetReader a dataset of many, both block by block in
// constant memory. Use it like bufio.Scanner: call Next until it returns
// false, use the block of the current call (X, Y, Times, Rows), then check
// Err. Close it in every case. A BlockReader is opened with a
// context.Context and honours it: once the context is done, Next returns
// false and Err returns the context's error (a read blocked on a pipe or on
// stdin returns when data comes; a DatasetReader's Next does not wait for
// it).
type BlockReader interface {
	// Next advances to the next block of kept rows and reports whether
	// there is one.
	Next() bool
	// X and Y return the current block of each view, row-major: Rows()×DimX()
	// and Rows()×DimY() values, valid until the next call to Next or Close.
	X() []float64
	Y() []float64
	// Times returns the times of the current block's rows in nanoseconds
	// since the Unix epoch, or nil without a time column.
	Times() []int64
	// Rows returns the number of rows of the current block.
	Rows() int
	// DimX and DimY return the number of values in a row of each view.
	DimX() int
	DimY() int
	// Columns returns the columns selected, patterns expanded.
	Columns() columns.Selection
	// RowsRead returns the rows read so far, Skipped the rows of them
	// dropped for an invalid value, TotalRows the rows of the input if they
	// are known without reading it, or -1.
	RowsRead() int64
	Skipped() int64
	TotalRows() int64
	// Warnings returns what the reader noticed that is not an error, once
	// Next has returned false.
	Warnings() []string
	// Err returns the error that ended Next, or nil at the clean end.
	Err() error
	// Close releases the reader; it may be called more than once.
	Close() error
}

var (
	_ BlockReader = (*Reader)(nil)
	_ BlockReader = (*DatasetReader)(nil)
)

// Reader reads the two views of a file block by block, in constant memory.
// It works like bufio.Scanner: call Next until it returns false, use the
// block of the current call (X, Y, Times), then check Err. Close it in every
// case.
type Reader struct {
	ctx    context.Context // ends the reading when done
	source string
	input  *dataset.Source // the bytes read: its ReadErr wins over the decoder's errors
	src    recordSource
	ext    *Extractor
	blocks [2]Block // the current block, and the next one with Prefetch
	block  *Block   // the current block: one of blocks, or empty
	empty  Block
	total  int64
	parts  []dataset.Partition // the input's partition values
	// closers close what Open opened (a file, ranged reads, a bucket), in
	// order.
	closers  []io.Closer
	warnings []string // written by fill (on the prefetching goroutine, before its last block)
	err      error
	done     bool

	// The Extractor's counts as of the current block (with Prefetch, the
	// Extractor is ahead, on the prefetching goroutine).
	rowsRead, skipped int64
	pre               *prefetcher // nil without Options.Prefetch
}

// Open opens the file at path for reading the columns that opts selects. The
// path "-" means stdin: it is read from stdin, as an IPC stream unless
// opts.Files.Format says CSV. Parquet and IPC files need random access: a
// regular file, not stdin or a named pipe. A URL (s3://bucket/key, …) is
// read through object storage, as OpenInput reads it. The error names the
// file: it matches ErrColumn for a bad column selection and ErrFormat for a
// file that is empty or not in its format. To read several files, a
// directory or a glob as one table, see OpenDataset. ctx bounds the reading
// for the life of the Reader (see BlockReader).
func Open(ctx context.Context, path string, stdin io.Reader, opts Options) (*Reader, error) {
	return openInput(ctx, nil, dataset.Input{Path: path, Size: -1, Format: opts.Files.Format, Rows: -1}, stdin, opts, nil, nil)
}

// OpenInput opens one input of a dataset (see dataset.Resolve) for reading
// the columns that opts selects, which may include the input's integer
// partition keys. stdin is read for the path "-". Object storage is read
// through opts.Files.OpenBucket (gocloud.dev's by default): Parquet and IPC
// files with ranged reads, streams and CSV in one sequential read. ctx
// bounds the reading for the life of the Reader: once it is done, Next
// returns false and Err returns ctx's error.
func OpenInput(ctx context.Context, in dataset.Input, stdin io.Reader, opts Options) (*Reader, error) {
	return openInput(ctx, nil, in, stdin, opts, nil, nil)
}

// OpenRowGroups opens count row groups of a Parquet input, from the row
// group first on, for reading as OpenInput does: a unit of work of a
// distributed run. Row numbers in errors and RowsRead count from the start
// of the file; TotalRows is the rows of these row groups. The row groups of
// an input are in Input.RowGroups once Dataset.ReadFooters has read them.
func OpenRowGroups(ctx context.Context, in dataset.Input, first, count int, opts Options) (*Reader, error) {
	format, err := dataset.FormatOf(in, opts.Files)
	if err == nil && format != dataset.Parquet {
		return nil, ioerr.New(ErrFormat, dataset.SourceName(in.Path), nil, "row groups are a Parquet notion; this input is %s", format)
	}
	if first < 0 || count < 1 {
		return nil, fmt.Errorf("dimeio: %s: row groups %d to %d: want first >= 0 and count >= 1", dataset.SourceName(in.Path), first, first+count-1)
	}
	return openInput(ctx, nil, in, nil, opts, &groupRange{first: first, count: count}, nil)
}

// groupRange is a range of Parquet row groups.
type groupRange struct{ first, count int }

// openInput opens an input; st, if not nil, opens it and outlives the
// Reader, else the Reader opens a Storage of its own; groups, if not nil,
// selects Parquet row groups; selected, if not nil, is opts.Columns as
// columns.Select resolved it on this input already, which is not selected
// again.
func openInput(ctx context.Context, st *dataset.Storage, in dataset.Input, stdin io.Reader, opts Options, groups *groupRange, selected *columns.Selection) (*Reader, error) {
	r := &Reader{ctx: ctx, source: dataset.SourceName(in.Path), total: -1, parts: in.Partitions}
	r.block = &r.empty
	if st == nil {
		st = dataset.NewStorage(opts.Files)
		r.closers = append(r.closers, closerFunc(func() error { st.Close(); return nil }))
	}
	var src *dataset.Source
	fail := func(err error) (*Reader, error) {
		if src != nil {
			err = storageWins(src, err)
		}
		r.closeFiles()
		return nil, err
	}
	src, err := st.Open(ctx, in, stdin)
	if err != nil {
		return fail(err)
	}
	r.input = src
	r.closers = append(r.closers, src)
	// Three steps, each once: the decoder reads the input's schema, the
	// columns are selected from it (unless they were on an earlier
	// opening of the input), the decoder reads the selected columns.
	var dec decoder
	switch src.Format {
	case dataset.Parquet:
		dec, err = openParquet(r.source, src, opts, groups)
	case dataset.IPCFile:
		dec, err = openIPCFile(r.source, src.File, src.Size, opts)
	case dataset.IPCStream:
		dec, err = openIPCStream(r.source, src.Stream, src.Size, opts)
	case dataset.CSV:
		dec, err = openCSV(r.source, src.Stream, opts)
	}
	if err != nil {
		return fail(err)
	}
	var sel columns.Selection
	if selected != nil {
		sel = *selected
	} else if sel, err = columns.Select(r.source, dec.fields(), r.parts, opts.Columns); err != nil {
		dec.release()
		return fail(err)
	}
	st2, err := dec.start(sel, opts)
	if err != nil {
		dec.release()
		return fail(err)
	}
	if r.ext, err = newExtractor(r.source, st2.schema, sel, opts.Values); err != nil {
		st2.src.Release()
		return fail(err)
	}
	r.ext.rowsRead = st2.firstRow
	r.src, r.total = st2.src, st2.total
	if opts.Prefetch {
		r.startPrefetch()
	}
	return r, nil
}

// Columns returns the columns of each view, patterns expanded (see
// columns.Select), in the order their values appear in a row, and the time
// column.
func (r *Reader) Columns() columns.Selection { return r.ext.Columns() }

// decoder is an input of one format whose schema has been read.
type decoder interface {
	// fields returns the input's top-level fields (a CSV header's have no
	// type): what columns.Select selects from.
	fields() []arrow.Field
	// start returns the record batches of the selected columns.
	start(sel columns.Selection, opts Options) (started, error)
	// release frees what the decoder holds, if start is not called or
	// fails.
	release()
}

// started is a decoder's record batches: their source and schema, the rows
// of the input if known without reading it (else -1), and the index of the
// first row read in the input (a range of Parquet row groups).
type started struct {
	src      recordSource
	schema   *arrow.Schema
	total    int64
	firstRow int64
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// Next advances to the next block of kept rows and reports whether there is
// one. It returns false at the end of the input or on an error (see Err).
// Blocks come one per record batch (Parquet, CSV) or per slice of at most
// Options.BatchSize rows of a batch of the IPC input, so they have at most
// Options.BatchSize rows (fewer for wide rows: MaxBlockBytes), minus the rows
// dropped with SkipInvalid; batches whose rows are all dropped are passed
// over. With Options.Prefetch the block was read while the caller worked on
// the previous one.
func (r *Reader) Next() bool {
	if r.err != nil || r.done || r.src == nil {
		return false
	}
	var ok bool
	if r.pre != nil {
		ok = r.nextPrefetched()
	} else {
		r.block = &r.blocks[0]
		ok, r.err = r.fill(r.block)
		r.rowsRead, r.skipped = r.ext.RowsRead(), r.ext.Skipped()
	}
	if !ok {
		r.done = true
		r.block = &r.empty
	}
	return ok
}

// storageWins returns the error of the storage that a read of src met, if
// any, in place of err, which it caused (see dataset.Source.ReadErr).
func storageWins(src *dataset.Source, err error) error {
	if err == nil {
		return nil
	}
	if e := src.ReadErr(); e != nil {
		return e
	}
	return err
}

// fill reads record batches into b until one keeps rows, and reports whether
// it found one: false at the end of the input or with an error.
func (r *Reader) fill(b *Block) (ok bool, err error) {
	defer func() { err = storageWins(r.input, err) }()
	for {
		if err := r.ctx.Err(); err != nil {
			return false, err
		}
		if !r.src.Next() {
			break
		}
		if err := r.ext.Extract(b, r.src.Record()); err != nil {
			return false, err
		}
		if b.Rows > 0 {
			return true, nil
		}
	}
	if err := r.src.Err(); err != nil {
		var ve *ValueError
		var ie *ioerr.Error
		if errors.As(err, &ve) || errors.As(err, &ie) {
			return false, err
		}
		return false, ioerr.New(ErrFormat, r.source, err, "reading the record batch at row %d", r.ext.RowsRead())
	}
	if w, ok := r.src.(interface{ warning() string }); ok {
		if msg := w.warning(); msg != "" {
			r.warnings = append(r.warnings, msg)
		}
	}
	return false, nil
}

// Warnings returns what the reader noticed that is not an error, one line
// each, once Next has returned false: an IPC stream that ends without its
// end-of-stream marker (with Options.Strict it is an error instead).
func (r *Reader) Warnings() []string { return r.warnings }

// prefetcher reads blocks ahead on a goroutine of its own: it takes a free
// block, fills it and hands it over, one block ahead of the caller, which
// gives back the block it is done with at its next call to Next. The
// goroutine alone touches the record source and the Extractor until it
// exits: at the end of the input, on an error, or when Close stops it.
type prefetcher struct {
	filled chan prefetched // to the caller; capacity 1
	free   chan *Block     // from the caller; capacity 2
	stop   chan struct{}   // closed by Close
	done   chan struct{}   // closed when the goroutine exits
}

// prefetched is a filled block with the Extractor's counts after it; ok is
// false at the end of the input or with err.
type prefetched struct {
	block             *Block
	rowsRead, skipped int64
	ok                bool
	err               error
}

func (r *Reader) startPrefetch() {
	p := &prefetcher{
		filled: make(chan prefetched, 1),
		free:   make(chan *Block, len(r.blocks)),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	for i := range r.blocks {
		p.free <- &r.blocks[i]
	}
	r.pre = p
	go r.prefetch(p)
}

// prefetch is the prefetching goroutine.
func (r *Reader) prefetch(p *prefetcher) {
	defer close(p.done)
	for {
		var b *Block
		select {
		case b = <-p.free:
		case <-p.stop:
			return
		}
		ok, err := r.fill(b)
		select {
		case p.filled <- prefetched{block: b, rowsRead: r.ext.RowsRead(), skipped: r.ext.Skipped(), ok: ok, err: err}:
		case <-p.stop:
			return
		}
		if !ok {
			return
		}
	}
}

// nextPrefetched gives the current block back to the prefetcher and takes
// the next one.
func (r *Reader) nextPrefetched() bool {
	if r.block != &r.empty {
		r.pre.free <- r.block // never blocks: free holds every block
	}
	m := <-r.pre.filled
	r.block, r.rowsRead, r.skipped, r.err = m.block, m.rowsRead, m.skipped, m.err
	return m.ok
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
func (r *Reader) RowsRead() int64 { return r.rowsRead }

// Skipped returns the number of rows dropped so far for an invalid value
// (with Options.SkipInvalid).
func (r *Reader) Skipped() int64 { return r.skipped }

// TotalRows returns the number of rows of the input if it is known without
// reading it (Parquet, from the file's metadata), or -1.
func (r *Reader) TotalRows() int64 { return r.total }

// Err returns the error that ended Next, or nil at the clean end of the
// input. An invalid value is a *ValueError; see also ErrFormat.
func (r *Reader) Err() error { return r.err }

// Close releases the reader's memory and closes the file it opened (not
// stdin). It may be called at any time, more than once.
func (r *Reader) Close() error {
	if r.pre != nil {
		// Stop the prefetching goroutine, which may be reading a batch, and
		// wait for it before releasing what it reads from.
		close(r.pre.stop)
		<-r.pre.done
		r.pre = nil
	}
	if r.src != nil {
		r.src.Release()
		r.src = nil
	}
	r.blocks, r.block = [2]Block{}, &r.empty
	r.done = true
	return r.closeFiles()
}

// closeFiles closes what Open opened.
func (r *Reader) closeFiles() error {
	var first error
	for i := len(r.closers) - 1; i >= 0; i-- {
		if err := r.closers[i].Close(); err != nil && !errors.Is(err, os.ErrClosed) && first == nil {
			first = fmt.Errorf("dimeio: %w", err)
		}
	}
	r.closers = nil
	return first
}
