package decode

import (
	"context"
	"io"
	"sync"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/internal/ioerr"
	"github.com/dime-project/dime/internal/redact"
)

// DatasetReader reads the two views of a dataset block by block, like a
// Reader, decoding ahead on Options.Workers goroutines across files and
// Parquet row groups. It hands the rows over in dataset order, in blocks of
// exactly Options.BatchSize kept rows (fewer for wide rows, so that a block
// holds at most MaxBlockBytes of values; the last one shorter), whatever the
// files, row groups, record batches and workers: the same rows in the same
// order give the same blocks, and so the same estimates bit for bit, from
// one file or from a hundred. (A stream, stdin or a pipe, is live: its
// blocks are handed over as they come, at most BatchSize rows each.) Memory is bounded by a fixed number of blocks
// in flight (Workers + 2), whatever the number of files, and one open file
// per worker.
type DatasetReader struct {
	d      *dataset.Dataset
	opts   Options
	stdin  io.Reader
	ctx    context.Context
	cancel context.CancelFunc
	st     *dataset.Storage
	units  []unit
	batch  int
	live   bool  // a stream (stdin, a pipe): blocks as they come
	held   int64 // HeldBatchBytes

	dimX, dimY int
	refSource  string
	ref        []colSig
	sel        columns.Selection // the first file's
	// sels are the columns selected on each input, by the first of its
	// units opened (Options.Selected for the first input), under mu.
	sels  []*columns.Selection
	total int64

	// shared with the workers, under mu
	mu      sync.Mutex
	cond    *sync.Cond
	free    []*Block
	queues  []unitQueue
	head    int // the unit the caller reads
	next    int // the next unit to start
	stopped bool
	failed  bool
	wg      sync.WaitGroup

	// the caller's
	out        Block
	empty      Block
	cur        *Block
	lent       *Block // a pool block handed out as cur
	pend       piece
	hasPend    bool
	doneRows   int64 // rows read and skipped by the finished units
	doneSkip   int64
	curRows    int64 // … and by the head unit so far
	curSkip    int64
	filesDone  int
	kept       int64
	spans      []span // where the rows handed out come from (see Locate), under mu
	err        error
	pendingErr error
	done       bool
}

// unit is a unit of decoding work: an input, or a range of row groups of a
// Parquet input.
type unit struct {
	input  int
	groups *groupRange // nil: the whole input
	last   bool        // the last unit of its input
	start  int64       // its first row in the dataset, or -1 if not known
}

// unitQueue holds the decoded blocks of a unit, in order.
type unitQueue struct {
	pieces   []piece
	reader   *Reader // opened by OpenDataset (the first unit)
	base     int64   // RowsRead of the unit's reader when opened
	done     bool
	err      error
	rowsRead int64    // the reader's counts at the end
	warnings []string // the reader's warnings at the end
	skipped  int64
}

// piece is a decoded block and the reader's counts after it.
type piece struct {
	b                 *Block
	off               int // rows already taken
	rowsRead, skipped int64
}

// colSig is the signature of a selected column, to check that the files of
// a dataset agree.
type colSig struct {
	name  string
	typ   string
	width int
}

// OpenDataset resolves args (see Resolve), reads the Parquet footers (for
// the total number of rows and the row groups) and opens the dataset for
// reading the columns that opts selects. The first file is opened here, so
// that a bad column selection is reported at once; the others are opened by
// the decoding goroutines, ahead of the caller. A file whose selected
// columns differ in type from the first file's is an error naming both
// (ErrDataset), when the reading reaches it. ctx bounds the reading; Close
// the reader in every case.
func OpenDataset(ctx context.Context, args []string, stdin io.Reader, opts Options) (*DatasetReader, error) {
	d, err := dataset.Resolve(ctx, args, opts.Files)
	if err != nil {
		return nil, err
	}
	return NewDatasetReader(ctx, d, stdin, opts)
}

// NewDatasetReader opens a resolved dataset for reading, as OpenDataset
// does, reading the Parquet footers that have not been read.
func NewDatasetReader(ctx context.Context, d *dataset.Dataset, stdin io.Reader, opts Options) (*DatasetReader, error) {
	if len(d.Inputs) == 0 {
		return nil, ioerr.New(ErrDataset, "dataset", nil, "no input")
	}
	if err := d.ReadFooters(ctx, opts.Files); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &DatasetReader{d: d, opts: opts, stdin: stdin, ctx: ctx, cancel: cancel, st: dataset.NewStorage(opts.Files), batch: opts.batchSize()}
	r.cond = sync.NewCond(&r.mu)
	r.sels = make([]*columns.Selection, len(d.Inputs))
	r.sels[0] = opts.Selected
	// Wake a Next that waits for a block when ctx is done: it returns at
	// once, whatever the decoding goroutines are blocked on.
	context.AfterFunc(ctx, func() {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	})
	r.units = planUnits(d, 4*r.batch)
	for _, in := range d.Inputs {
		r.live = r.live || in.Size < 0
	}
	r.total = d.Rows()
	if r.total >= 0 && opts.Limit > 0 {
		r.total = min(r.total, opts.Limit)
	}
	ropts := opts
	ropts.Prefetch = false // the workers read ahead
	r.opts = ropts
	first, err := r.openUnit(0)
	if err != nil {
		r.st.Close()
		cancel()
		return nil, err
	}
	r.dimX, r.dimY = first.DimX(), first.DimY()
	r.batch = blockRows(r.batch, r.dimX+r.dimY)
	r.refSource, r.ref, r.sel = first.source, first.ext.signature(), first.ext.Columns()
	r.queues = make([]unitQueue, len(r.units))
	r.queues[0].reader = first
	workers := opts.workers()
	if d.Inputs[0].Path == "-" {
		workers = 1
	}
	workers = max(1, min(workers, len(r.units)))
	r.held = heldBatchBytes(d, opts.Files, workers)
	r.free = make([]*Block, workers+2)
	for i := range r.free {
		r.free[i] = new(Block)
	}
	r.cur = &r.out
	for w := 0; w < workers; w++ {
		r.wg.Add(1)
		go r.work()
	}
	return r, nil
}

// HeldBatchBytes returns the most bytes the decoding goroutines hold in the
// record batches of Arrow IPC inputs, which are read whole (the rows of the
// other formats are read a block at a time, bounded by MaxBlockBytes): two
// batches per goroutine, the one being read and the one before it, each at
// most MaxRecordBatchBytes and at most the size of the largest IPC input.
// It is 0 without IPC inputs of a known size: the batches of a stream read
// from stdin or a pipe are bounded by MaxRecordBatchBytes alone, and not
// counted ahead (counting that bound would refuse every pipe in a
// container of less than about 1.2 GiB). The dime command adds it to its
// memory check.
func (r *DatasetReader) HeldBatchBytes() int64 { return r.held }

func heldBatchBytes(d *dataset.Dataset, opts dataset.Options, workers int) int64 {
	var largest int64
	for _, in := range d.Inputs {
		if f, err := dataset.FormatOf(in, opts); err == nil && (f == dataset.IPCFile || f == dataset.IPCStream) {
			largest = max(largest, min(in.Size, MaxRecordBatchBytes))
		}
	}
	return 2 * int64(workers) * largest
}

// planUnits cuts the inputs into units: a Parquet input whose row groups
// are known into ranges of at least minRows rows, another input whole.
func planUnits(d *dataset.Dataset, minRows int) []unit {
	var units []unit
	for i, in := range d.Inputs {
		g := in.RowGroups
		var rows int64
		for _, n := range g {
			rows += n
		}
		if in.Format != dataset.Parquet || len(g) < 2 || rows < 2*int64(minRows) {
			units = append(units, unit{input: i, last: true})
			continue
		}
		start := 0
		var acc int64
		for k, n := range g {
			acc += n
			if acc >= int64(minRows) || k == len(g)-1 {
				units = append(units, unit{input: i, groups: &groupRange{first: start, count: k + 1 - start}})
				start, acc = k+1, 0
			}
		}
		// Fold a short tail into the range before it.
		if n := len(units); acc == 0 && n >= 2 && units[n-2].input == i {
			var tail int64
			for _, x := range g[units[n-1].groups.first:] {
				tail += x
			}
			if tail < int64(minRows) {
				units[n-2].groups.count += units[n-1].groups.count
				units = units[:n-1]
			}
		}
		units[len(units)-1].last = true
	}
	// The first row of each unit in the dataset, while the rows of the
	// inputs before it are known.
	var at int64
	for i := range units {
		units[i].start = -1
		if at < 0 {
			continue
		}
		units[i].start = at
		in := d.Inputs[units[i].input]
		switch {
		case in.RowGroups == nil:
			at = -1
		case units[i].groups == nil:
			at += in.Rows
		default:
			for _, n := range in.RowGroups[units[i].groups.first : units[i].groups.first+units[i].groups.count] {
				at += n
			}
		}
	}
	return units
}

// openUnit opens the reader of a unit, on the columns selected on its
// input when another of its units was opened.
func (r *DatasetReader) openUnit(u int) (*Reader, error) {
	un := r.units[u]
	opts := r.opts
	if un.start >= 0 && !opts.Values.SkipInvalid {
		// Cut the unit's batches where the dataset's blocks end.
		opts.headRows = int((int64(r.batch) - un.start%int64(r.batch)) % int64(r.batch))
	}
	r.mu.Lock()
	sel := r.sels[un.input]
	r.mu.Unlock()
	rd, err := openInput(r.ctx, r.st, r.d.Inputs[un.input], r.stdin, opts, un.groups, sel)
	if err == nil && sel == nil {
		s := rd.Columns()
		r.mu.Lock()
		r.sels[un.input] = &s
		r.mu.Unlock()
	}
	return rd, err
}

// work is a decoding goroutine: it takes the next unit, decodes its blocks
// into free blocks of the pool, and queues them for the caller.
func (r *DatasetReader) work() {
	defer r.wg.Done()
	for {
		r.mu.Lock()
		if r.stopped || r.failed || r.next == len(r.units) {
			r.mu.Unlock()
			return
		}
		u := r.next
		r.next++
		q := &r.queues[u]
		rd := q.reader
		q.reader = nil
		r.mu.Unlock()
		var err error
		if rd == nil {
			if rd, err = r.openUnit(u); err == nil {
				err = r.check(rd)
			}
		}
		if err != nil {
			if rd != nil {
				rd.Close()
			}
			r.finish(u, err, 0, 0)
			continue
		}
		r.mu.Lock()
		q.base = rd.ext.RowsRead()
		r.mu.Unlock()
		for {
			b := r.take(u)
			if b == nil { // stopped
				rd.Close()
				return
			}
			ok, err := rd.fill(b)
			if !ok {
				r.mu.Lock()
				r.free = append(r.free, b)
				q.warnings = rd.warnings
				r.mu.Unlock()
				r.finish(u, err, rd.ext.RowsRead(), rd.ext.Skipped())
				break
			}
			r.mu.Lock()
			q.pieces = append(q.pieces, piece{b: b, rowsRead: rd.ext.RowsRead(), skipped: rd.ext.Skipped()})
			r.cond.Broadcast()
			r.mu.Unlock()
		}
		rd.Close()
	}
}

// check compares the selected columns of a unit's reader with the first
// file's.
func (r *DatasetReader) check(rd *Reader) error {
	sig := rd.ext.signature()
	for i, c := range r.ref {
		if i >= len(sig) || sig[i] != c {
			got := "missing"
			if i < len(sig) {
				got = sig[i].typ
			}
			return ioerr.New(ErrDataset, rd.source, nil, "column %q is %s here but %s in %s: the files of a dataset must agree on the selected columns",
				c.name, got, c.typ, r.refSource)
		}
	}
	return nil
}

// finish marks a unit decoded.
func (r *DatasetReader) finish(u int, err error, rowsRead, skipped int64) {
	r.mu.Lock()
	q := &r.queues[u]
	q.done, q.err, q.rowsRead, q.skipped = true, err, rowsRead, skipped
	if err != nil {
		r.failed = true
	}
	r.cond.Broadcast()
	r.mu.Unlock()
}

// take returns a free block for unit u, waiting for one: the unit the
// caller reads may take the last free block, the others leave it, so that
// the caller never waits on a unit that cannot get a block. It returns nil
// once the reader is closed.
func (r *DatasetReader) take(u int) *Block {
	r.mu.Lock()
	defer r.mu.Unlock()
	for !r.stopped {
		if n := len(r.free); n > 1 || n == 1 && u == r.head {
			b := r.free[n-1]
			r.free = r.free[:n-1]
			return b
		}
		r.cond.Wait()
	}
	return nil
}

// give returns a block to the pool.
func (r *DatasetReader) give(b *Block) {
	r.mu.Lock()
	r.free = append(r.free, b)
	r.cond.Broadcast()
	r.mu.Unlock()
}

// nextPiece makes r.pend the next piece with rows to take, waiting for it:
// false at the end of the dataset or with an error.
func (r *DatasetReader) nextPiece() (bool, error) {
	if r.hasPend && r.pend.off < r.pend.b.Rows {
		return true, nil
	}
	if r.hasPend {
		r.give(r.pend.b)
		r.hasPend = false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		if r.stopped {
			return false, nil
		}
		if err := r.ctx.Err(); err != nil { // the caller's context, done
			return false, err
		}
		if r.head == len(r.units) {
			return false, nil
		}
		q := &r.queues[r.head]
		if len(q.pieces) > 0 {
			r.pend, r.hasPend = q.pieces[0], true
			q.pieces = q.pieces[1:]
			r.curRows, r.curSkip = r.pend.rowsRead-q.base, r.pend.skipped
			return true, nil
		}
		if q.done {
			if q.err != nil {
				return false, q.err
			}
			r.doneRows += q.rowsRead - q.base
			r.doneSkip += q.skipped
			r.curRows, r.curSkip = 0, 0
			if r.units[r.head].last {
				r.filesDone++
			}
			r.head++
			r.cond.Broadcast() // the next unit may take the last block
			continue
		}
		r.cond.Wait()
	}
}

// Next advances to the next block of rows and reports whether there is one:
// false at the end of the dataset, after Options.Limit rows, or on an error
// (see Err). Every block but the last has Options.BatchSize rows (fewer for
// wide rows: MaxBlockBytes).
func (r *DatasetReader) Next() bool {
	if r.lent != nil {
		r.give(r.lent)
		r.lent = nil
	}
	r.cur = &r.out
	r.out.Rows = 0
	if r.done {
		r.cur = &r.empty
		return false
	}
	if r.pendingErr != nil {
		r.err, r.done, r.cur = r.pendingErr, true, &r.empty
		return false
	}
	need := r.batch
	if r.opts.Limit > 0 {
		need = int(min(int64(need), r.opts.Limit-r.kept))
	}
	rows := 0
	for rows < need {
		ok, err := r.nextPiece()
		if err != nil {
			if rows > 0 { // hand over the rows before the error first
				r.pendingErr = err
				break
			}
			r.err, r.done, r.cur = err, true, &r.empty
			return false
		}
		if !ok {
			break
		}
		r.noteSpan(r.kept + int64(rows))
		p := &r.pend
		avail := p.b.Rows - p.off
		if r.live && rows == 0 {
			need = min(need, avail) // what has come, without waiting for more
		}
		if rows == 0 && p.off == 0 && avail == need {
			// A whole block: hand it over as it is.
			r.cur, r.lent = p.b, p.b
			r.hasPend = false
			rows = need
			break
		}
		take := min(need-rows, avail)
		r.appendRows(p.b, p.off, take, rows, need)
		p.off += take
		rows += take
	}
	if rows == 0 {
		r.done, r.cur = true, &r.empty
		return false
	}
	if r.cur == &r.out {
		r.out.Rows = rows
		r.out.X, r.out.Y = r.out.X[:rows*r.dimX], r.out.Y[:rows*r.dimY]
		if r.out.Times != nil {
			r.out.Times = r.out.Times[:rows]
		}
	}
	r.kept += int64(rows)
	if r.opts.Limit > 0 && r.kept >= r.opts.Limit {
		r.done = true // the next call returns false
		r.stop()
	}
	return true
}

// appendRows copies rows [from, from+n) of b to rows [at, at+n) of r.out,
// which holds need rows.
func (r *DatasetReader) appendRows(b *Block, from, n, at, need int) {
	if at == 0 {
		r.out.X = grow(r.out.X, need*r.dimX)
		r.out.Y = grow(r.out.Y, need*r.dimY)
		if b.Times != nil {
			r.out.Times = grow(r.out.Times, need)
		} else {
			r.out.Times = nil
		}
	}
	dx, dy := r.dimX, r.dimY
	copy(r.out.X[at*dx:(at+n)*dx], b.X[from*dx:(from+n)*dx])
	copy(r.out.Y[at*dy:(at+n)*dy], b.Y[from*dy:(from+n)*dy])
	if b.Times != nil && r.out.Times != nil {
		copy(r.out.Times[at:at+n], b.Times[from:from+n])
	}
}

// X returns the current block of X, row-major: Rows()×DimX() values, valid
// until the next call to Next or Close.
func (r *DatasetReader) X() []float64 { return r.cur.X }

// Y returns the current block of Y, row-major: Rows()×DimY() values.
func (r *DatasetReader) Y() []float64 { return r.cur.Y }

// Times returns the times of the current block's rows in nanoseconds since
// the Unix epoch, or nil without Options.TimeColumn.
func (r *DatasetReader) Times() []int64 { return r.cur.Times }

// Rows returns the number of rows of the current block.
func (r *DatasetReader) Rows() int { return r.cur.Rows }

// DimX returns the number of values in a row of X.
func (r *DatasetReader) DimX() int { return r.dimX }

// DimY returns the number of values in a row of Y.
func (r *DatasetReader) DimY() int { return r.dimY }

// RowsRead returns the number of rows of the dataset read so far, including
// the rows skipped, up to the end of the record batches the current block
// came from.
func (r *DatasetReader) RowsRead() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doneRows + r.curRows
}

// Skipped returns the number of rows dropped so far for an invalid value
// (with Options.SkipInvalid), up to the end of the record batches the
// current block came from.
func (r *DatasetReader) Skipped() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.doneSkip + r.curSkip
}

// TotalRows returns the number of rows of the dataset from the Parquet
// footers (at most Options.Limit), or -1 if it is not known.
func (r *DatasetReader) TotalRows() int64 { return r.total }

// Files returns the number of files of the dataset.
func (r *DatasetReader) Files() int { return len(r.d.Inputs) }

// FilesDone returns the number of files read to their end.
func (r *DatasetReader) FilesDone() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.filesDone
}

// Dataset returns the dataset being read.
func (r *DatasetReader) Dataset() *dataset.Dataset { return r.d }

// Columns returns the columns of each view, patterns expanded against the
// first file's schema (the other files must agree: see OpenDataset), in the
// order their values appear in a row, and the time column.
func (r *DatasetReader) Columns() columns.Selection { return r.sel }

// Err returns the error that ended Next, or nil at the clean end of the
// dataset (or of Options.Limit). An invalid value is a *ValueError naming
// the file and its row in the file.
func (r *DatasetReader) Err() error { return r.err }

// Warnings returns what the readers of the dataset's files noticed that is
// not an error, one line each, in dataset order, once Next has returned
// false: an IPC stream that ends without its end-of-stream marker (with
// Options.Strict it is an error instead).
func (r *DatasetReader) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var w []string
	for i := range r.queues {
		for _, m := range r.queues[i].warnings {
			w = append(w, redact.String(m))
		}
	}
	return w
}

// stop ends the decoding goroutines.
func (r *DatasetReader) stop() {
	r.mu.Lock()
	r.stopped = true
	r.cond.Broadcast()
	r.mu.Unlock()
	r.cancel()
}

// Close stops the decoding goroutines, waits for them (except one blocked
// reading stdin, which cannot be interrupted) and closes the files. It may
// be called at any time, more than once, also while Next waits on another
// goroutine, which then returns false.
func (r *DatasetReader) Close() error {
	r.stop()
	if r.d.Inputs[0].Path != "-" {
		r.wg.Wait()
		r.mu.Lock()
		for i := range r.queues {
			if rd := r.queues[i].reader; rd != nil {
				rd.Close()
				r.queues[i].reader = nil
			}
		}
		r.mu.Unlock()
		r.st.Close()
	}
	return nil
}
