package decode

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/internal/arrowfix"
	"github.com/dime-project/dime/internal/ioerr"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Arrow IPC files and streams are both read as a sequence of messages by
// ipc.Reader, from a messageReader of ours rather than ipc's own: ipc's
// takes a stream cut off right after the 8-byte prefix of a message for its
// clean end, and sizes its buffers from lengths in the input without
// checking them, so that garbage can ask for gigabytes. Ours reports any
// cut inside a message, accepts only the framing of Arrow ≥ 0.15 (a
// continuation marker before each message), bounds the metadata, checks
// lengths against the bytes left when they are known, and otherwise grows
// a body buffer only as its bytes arrive.
//
// An IPC file is "ARROW1", two bytes of padding, the messages of a stream,
// a footer, its length (int32) and "ARROW1" again: its messages are read in
// order up to the footer, which only the random access of ipc.FileReader
// would need.

// MaxRecordBatchBytes bounds the body of one message of an Arrow IPC file
// or stream (a record batch, or a dictionary batch): a reader holds a batch
// whole while it extracts its rows, so a larger one is an error (ErrFormat)
// that names its size and asks for smaller batches, rather than an
// allocation that the memory check did not count. Arrow writers cut tables
// into batches of at most 64Ki rows or so; 512 MiB is 64Ki rows of 1,024
// float64 values.
const MaxRecordBatchBytes = 512 << 20

const (
	// maxMetadata bounds the metadata (flatbuffer) of one message.
	maxMetadata = 64 << 20
	// bodyChunk is the first allocation of a body of unknown size.
	bodyChunk = 4 << 20
	// continuation marks the start of a message (Arrow ≥ 0.15).
	continuation = 0xFFFFFFFF
)

var arrowMagic = []byte("ARROW1")

// errCutOff is the cause of an error about a stream that ends inside a
// message.
var errCutOff = fmt.Errorf("input ends inside a message (truncated?): %w", io.ErrUnexpectedEOF)

// messageReader implements ipc.MessageReader.
type messageReader struct {
	r      io.Reader
	mem    memory.Allocator
	remain int64 // bytes left, or -1 if unknown
	alloc  *arrowfix.BatchAllocator
	msg    *ipc.Message
	refs   int64
	eos    bool // the input ended with an end-of-stream marker
}

func newMessageReader(r io.Reader, size int64, mem memory.Allocator) *messageReader {
	return &messageReader{r: bufio.NewReaderSize(r, 64<<10), mem: mem, remain: size, refs: 1}
}

// read reads len(b) bytes; io.EOF only if there were none.
func (m *messageReader) read(b []byte) error {
	n, err := io.ReadFull(m.r, b)
	if m.remain >= 0 {
		m.remain -= int64(n)
	}
	return err
}

// Message returns the next message, valid until the next call, or io.EOF at
// a clean end: the end of the input between messages, or an end-of-stream
// marker.
func (m *messageReader) Message() (*ipc.Message, error) {
	// The allocations made for the previous message are its arrays'.
	m.alloc.Commit()
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	var prefix [8]byte
	if err := m.read(prefix[:4]); err != nil {
		if err == io.EOF {
			return nil, io.EOF
		}
		return nil, cutOff(err)
	}
	switch binary.LittleEndian.Uint32(prefix[:4]) {
	case 0: // end-of-stream marker, before Arrow 0.15
		m.eos = true
		return nil, io.EOF
	case continuation:
	default:
		return nil, errors.New("no Arrow IPC message here (no continuation marker; streams written before Arrow 0.15 are not supported)")
	}
	if err := m.read(prefix[4:]); err != nil {
		return nil, cutOff(err)
	}
	metaLen := int64(int32(binary.LittleEndian.Uint32(prefix[4:])))
	switch {
	case metaLen == 0: // end-of-stream marker
		m.eos = true
		return nil, io.EOF
	case metaLen < 0 || metaLen > maxMetadata:
		return nil, fmt.Errorf("message metadata of %d bytes", metaLen)
	case m.remain >= 0 && metaLen > m.remain:
		return nil, fmt.Errorf("message metadata of %d bytes with %d bytes left: %w", metaLen, m.remain, errCutOff)
	}
	metaBytes := make([]byte, metaLen)
	if err := m.read(metaBytes); err != nil {
		return nil, cutOff(err)
	}
	meta := memory.NewBufferBytes(metaBytes)
	defer meta.Release()
	// A message without a body tells the body's length. (Garbage metadata
	// may make the flatbuffer code panic: ipc.Reader recovers.)
	empty := memory.NewBufferBytes(nil)
	probe := ipc.NewMessage(meta, empty)
	bodyLen := probe.BodyLen()
	probe.Release()
	empty.Release()
	switch {
	case bodyLen < 0:
		return nil, fmt.Errorf("message body of %d bytes", bodyLen)
	case bodyLen > MaxRecordBatchBytes:
		return nil, fmt.Errorf("a record batch of %d bytes (%.1f GiB), more than the %d MiB a reader holds at once: write the data in smaller record batches (pyarrow: write_table(..., max_chunksize=N) or Table.to_batches(max_chunksize=N); dime gen and tablewriter write batches of %d rows)",
			bodyLen, float64(bodyLen)/(1<<30), MaxRecordBatchBytes>>20, DefaultBatchSize)
	case m.remain >= 0 && bodyLen > m.remain:
		return nil, fmt.Errorf("message body of %d bytes with %d bytes left: %w", bodyLen, m.remain, errCutOff)
	}
	if err := arrowfix.CheckMetadata(metaBytes, bodyLen, nil); err != nil {
		return nil, err
	}
	body := memory.NewResizableBuffer(m.mem)
	defer body.Release()
	var have int64
	for have < bodyLen {
		next := bodyLen
		if m.remain < 0 { // grow only as bytes arrive
			next = min(bodyLen, max(2*have, bodyChunk))
		}
		body.Resize(int(next))
		if err := m.read(body.Bytes()[have:next]); err != nil {
			return nil, cutOff(err)
		}
		have = next
	}
	if err := arrowfix.CheckMetadata(metaBytes, bodyLen, body.Bytes()); err != nil {
		return nil, err
	}
	m.alloc.SetLimit(arrowfix.LimitFor(bodyLen))
	m.msg = ipc.NewMessage(meta, body)
	return m.msg, nil
}

// cutOff turns an end of input inside a message into errCutOff.
func cutOff(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errCutOff
	}
	return err
}

func (m *messageReader) Retain() { atomic.AddInt64(&m.refs, 1) }

func (m *messageReader) Release() {
	if atomic.AddInt64(&m.refs, -1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// ipcDecoder is an Arrow IPC file or stream whose schema has been read.
type ipcDecoder struct {
	sr     *ipc.Reader
	mr     *messageReader
	source string
	what   string
}

func (d *ipcDecoder) fields() []arrow.Field { return d.sr.Schema().Fields() }

func (d *ipcDecoder) release() { d.sr.Release() }

// start reads the record batches whole (IPC has no projection) and hands
// them over in slices of at most BatchSize rows (fewer for wide rows, see
// blockRows), so that a block of an IPC input is bounded as those of the
// other formats are.
func (d *ipcDecoder) start(sel columns.Selection, opts Options) (started, error) {
	ext, err := newExtractor(d.source, d.sr.Schema(), sel, opts.Values)
	if err != nil {
		return started{}, err
	}
	rows := blockRows(opts.batchSize(), ext.DimX()+ext.DimY())
	src := &ipcStreamSource{Reader: d.sr, mr: d.mr, source: d.source, strict: opts.Strict, file: d.what != "Arrow IPC stream", sliceRows: int64(rows)}
	return started{src: src, schema: d.sr.Schema(), total: -1}, nil
}

// openIPC reads the messages of in (size bytes, or -1 if unknown) with an
// ipc.Reader, up to the schema; what names the format in errors.
func openIPC(source string, in io.Reader, size int64, what string, opts Options) (*ipcDecoder, error) {
	mem := opts.allocator()
	mr := newMessageReader(in, size, mem)
	mr.alloc = arrowfix.NewBatchAllocator(mem)
	sr, err := ipc.NewReaderFromMessageReader(mr, ipc.WithAllocator(mr.alloc))
	if err != nil {
		mr.Release()
		if errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, ioerr.New(ErrFormat, source, nil, "empty input: no Arrow IPC schema")
		}
		return nil, ioerr.New(ErrFormat, source, err, "not an %s, or a truncated or corrupt one", what)
	}
	return &ipcDecoder{sr: sr, mr: mr, source: source, what: what}, nil
}

func openIPCStream(source string, in io.Reader, size int64, opts Options) (*ipcDecoder, error) {
	return openIPC(source, in, size, "Arrow IPC stream", opts)
}

// ipcStreamSource is the record source of an IPC stream or file: it frees
// what a failed batch left allocated (see batchAllocator) and, for a stream,
// tells whether the stream ended with its end-of-stream marker. The format
// makes the marker optional, but a writer that completes a stream writes
// it: a stream cut exactly between two messages (a truncated upload, a
// producer that died) reads as a valid shorter stream, and only its absence
// tells.
type ipcStreamSource struct {
	*ipc.Reader
	mr     *messageReader
	source string
	strict bool
	file   bool // the messages of an IPC file: no end-of-stream marker to check
	rows   int64

	sliceRows int64        // the most rows handed over at once
	off       int64        // the rows of the reader's record handed over
	slice     arrow.Record // the current slice of the reader's record, or nil for all of it
}

func (s *ipcStreamSource) Next() bool {
	if s.slice != nil {
		s.slice.Release()
		s.slice = nil
	}
	if rec := s.Reader.Record(); rec != nil && s.off > 0 && s.off < rec.NumRows() {
		s.cut(rec)
		return true
	}
	if !s.Reader.Next() {
		if s.Reader.Err() != nil {
			s.mr.alloc.Fail()
		}
		return false
	}
	s.mr.alloc.Commit()
	rec := s.Reader.Record()
	s.rows += rec.NumRows()
	s.off = 0
	if rec.NumRows() > s.sliceRows {
		s.cut(rec)
	}
	return true
}

// cut makes the next sliceRows rows of rec the current record.
func (s *ipcStreamSource) cut(rec arrow.Record) {
	end := min(s.off+s.sliceRows, rec.NumRows())
	s.slice = rec.NewSlice(s.off, end)
	s.off = end
}

// Record returns the current record: the reader's, or a slice of it.
func (s *ipcStreamSource) Record() arrow.Record {
	if s.slice != nil {
		return s.slice
	}
	return s.Reader.Record()
}

// Release releases the current slice and the reader.
func (s *ipcStreamSource) Release() {
	if s.slice != nil {
		s.slice.Release()
		s.slice = nil
	}
	s.Reader.Release()
}

// missingEOS describes a stream that ended cleanly without its marker, or
// returns "".
func (s *ipcStreamSource) missingEOS() string {
	if s.file || s.Reader.Err() != nil || s.mr.eos {
		return ""
	}
	return fmt.Sprintf("the Arrow IPC stream ends after %d rows without its end-of-stream marker: it may be truncated", s.rows)
}

// Err returns the reader's error or, with Options.Strict, the error of a
// missing end-of-stream marker.
func (s *ipcStreamSource) Err() error {
	if err := s.Reader.Err(); err != nil {
		return err
	}
	if msg := s.missingEOS(); msg != "" && s.strict {
		return ioerr.New(ErrFormat, s.source, nil, "%s", msg)
	}
	return nil
}

// warning returns the warning of a missing end-of-stream marker (without
// Options.Strict), or "".
func (s *ipcStreamSource) warning() string {
	if s.strict {
		return ""
	}
	if msg := s.missingEOS(); msg != "" {
		return "dimeio: " + s.source + ": " + msg
	}
	return ""
}

// openIPCFile checks the magic at both ends of the file and reads the
// messages between the first magic and the footer.
func openIPCFile(source string, f io.ReaderAt, size int64, opts Options) (*ipcDecoder, error) {
	const head, tail = 8, 10 // "ARROW1" + padding; footer length + "ARROW1"
	bad := func(why string) error {
		return ioerr.New(ErrFormat, source, nil, "not an Arrow IPC file, or a truncated or corrupt one: %s", why)
	}
	if size < head+tail {
		return nil, bad(fmt.Sprintf("%d bytes", size))
	}
	var start, end [10]byte
	if _, err := f.ReadAt(start[:head], 0); err != nil {
		return nil, fmt.Errorf("dimeio: %w", err)
	}
	if _, err := f.ReadAt(end[:], size-tail); err != nil {
		return nil, fmt.Errorf("dimeio: %w", err)
	}
	if !bytes.HasPrefix(start[:], arrowMagic) {
		return nil, bad("no ARROW1 at the start")
	}
	if !bytes.Equal(end[4:], arrowMagic) {
		return nil, bad("no ARROW1 at the end")
	}
	footer := int64(int32(binary.LittleEndian.Uint32(end[:4])))
	if footer <= 0 || head+footer+tail > size {
		return nil, bad(fmt.Sprintf("footer of %d bytes in a file of %d", footer, size))
	}
	messages := size - head - footer - tail
	return openIPC(source, io.NewSectionReader(f, head, messages), messages, "Arrow IPC file", opts)
}
