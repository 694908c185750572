package decode

import (
	"bufio"
	"bytes"
	"context"
	"hash/crc32"
	"io"

	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/thrift/lib/go/thrift"
	"github.com/dime-project/dime/internal/ioerr"
)

// Parquet page checksums. A page header may carry a CRC-32 (IEEE, the
// polynomial of hash/crc32.ChecksumIEEE) of the page's bytes as stored, that
// is after compression (the Parquet format's PageHeader.crc). Arrow Go v15
// neither writes nor verifies it, so the reader verifies it here, one row
// group at a time before its rows are read: for each selected column, the
// column chunk is read once more through the same io.ReaderAt, its page
// headers decoded with Thrift's compact protocol (fields 3,
// compressed_page_size, and 4, crc; the others skipped), and the CRC of each
// page that has one compared. A page without a CRC is not checked, and a
// chunk whose first page has none is taken as written without CRCs (writers
// set them on all pages or none), which keeps the cost for such files to one
// read of a page header per chunk. A mismatch is an ErrFormat error naming the file, row group, column and
// page. A chunk whose headers cannot be followed is left to Arrow's decoder,
// which reads the same bytes and reports what is wrong with them.

// skipPageCRC turns the verification off, for benchmarks of its cost.
var skipPageCRC bool

// pageCRCBufferSize is the read buffer of the verification pass.
const pageCRCBufferSize = 64 << 10

// pageChecker verifies the page CRCs of the selected column chunks of the
// row groups a parquetSource reads, as it reaches them.
type pageChecker struct {
	source string
	f      io.ReaderAt
	pf     *file.Reader
	groups []int   // the row groups read, in order
	starts []int64 // the first row of each, counted from the first read
	leaves []int   // the Parquet columns read
	next   int     // the first row group not verified yet
	buf    *bufio.Reader
	bufLen int    // the size of buf: pageCRCBufferSize, or less for small chunks
	probe  []byte // the first bytes of a chunk
}

// pageCRCProbe is the most read of a column chunk to find whether its first
// page header has a CRC. Page headers of numeric columns take 20 to 60
// bytes; a longer one (statistics of long strings) is read in full by the
// verification pass.
const pageCRCProbe = 1 << 10

// pageCRCWhole is the size up to which a chunk is read whole without a
// probe: one buffer. (A variable for the tests.)
var pageCRCWhole int64 = pageCRCBufferSize

// chunkRange returns the bytes of a column chunk in its file: from its
// dictionary page if it has one (as Arrow's row group reader finds it),
// else its first data page, for its total compressed size. ok is false if
// the metadata gives no such range; Arrow's reader reports what is wrong.
func chunkRange(pf *file.Reader, group, leaf int) (start, size int64, ok bool) {
	col, err := pf.MetaData().RowGroup(group).ColumnChunk(leaf)
	if err != nil {
		return 0, 0, false
	}
	start, size = col.DataPageOffset(), col.TotalCompressedSize()
	if col.HasDictionaryPage() && col.DictionaryPageOffset() > 0 && start > col.DictionaryPageOffset() {
		start = col.DictionaryPageOffset()
	}
	return start, size, start >= 0 && size > 0
}

func newPageChecker(source string, f io.ReaderAt, pf *file.Reader, groups, leaves []int, bufLen int) *pageChecker {
	c := &pageChecker{source: source, f: f, pf: pf, groups: groups, leaves: leaves, bufLen: bufLen}
	var row int64
	for _, g := range groups {
		c.starts = append(c.starts, row)
		row += pf.MetaData().RowGroup(g).NumRows()
	}
	return c
}

// upTo verifies every row group that holds some of the rows before end
// (counted from the first row read) and was not verified yet.
func (c *pageChecker) upTo(end int64) error {
	for c.next < len(c.groups) && c.starts[c.next] < end {
		g := c.groups[c.next]
		c.next++
		for _, leaf := range c.leaves {
			if err := c.chunk(g, leaf); err != nil {
				return err
			}
		}
	}
	return nil
}

// chunk verifies the pages of one column chunk.
func (c *pageChecker) chunk(group, leaf int) error {
	start, size, ok := chunkRange(c.pf, group, leaf)
	if !ok {
		return nil // Arrow's reader reports it
	}
	// A first look at the first page header of a chunk larger than the
	// buffer, with a read of its own of pageCRCProbe bytes: a chunk
	// without CRCs costs no more than that (on object storage, one small
	// GET rather than a ranged read of the chunk that is then abandoned).
	// A chunk of at most pageCRCWhole bytes is read whole at once.
	if size > pageCRCWhole {
		if c.probe == nil {
			c.probe = make([]byte, pageCRCProbe)
		}
		probe := c.probe[:min(size, pageCRCProbe)]
		var n int
		if ex, isBlob := c.f.(interface {
			ReadExact([]byte, int64) (int, error)
		}); isBlob {
			n, _ = ex.ReadExact(probe, start)
		} else {
			n, _ = c.f.ReadAt(probe, start)
		}
		if n < len(probe) {
			return nil // Arrow's reader reads the same bytes and reports it
		}
		proto := thrift.NewTCompactProtocolConf(&thrift.StreamTransport{Reader: bytes.NewReader(probe)}, &thrift.TConfiguration{MaxMessageSize: pageCRCProbe})
		if _, crc, ok := readPageHeader(proto); ok && crc == nil {
			return nil
		}
	}
	if c.buf == nil {
		c.buf = bufio.NewReaderSize(nil, c.bufLen)
	}
	c.buf.Reset(io.NewSectionReader(c.f, start, size))
	in := &countingReader{r: c.buf}
	conf := &thrift.TConfiguration{MaxMessageSize: int32(min(size, 1<<30))}
	proto := thrift.NewTCompactProtocolConf(&thrift.StreamTransport{Reader: in}, conf)
	hash := crc32.NewIEEE()
	for page := 0; in.n < size; page++ {
		compressed, crc, ok := readPageHeader(proto)
		if !ok || compressed < 0 || int64(compressed) > size-in.n {
			return nil // not a page header Arrow could read either
		}
		if crc == nil {
			// Writers set a CRC on every page of a chunk or on none:
			// a first page without one ends the check of this chunk,
			// which for files without CRCs costs one read of a header.
			if page == 0 {
				return nil
			}
			if _, err := in.r.Discard(int(compressed)); err != nil {
				return nil
			}
			in.n += int64(compressed)
			continue
		}
		hash.Reset()
		if _, err := io.CopyN(hash, in, int64(compressed)); err != nil {
			return nil
		}
		if got := hash.Sum32(); got != uint32(*crc) {
			name := c.pf.MetaData().Schema.Column(leaf).Path()
			return ioerr.New(ErrFormat, c.source, nil, "corrupt Parquet file: row group %d, column %q, page %d: checksum %08x, the page header says %08x",
				group, name, page, got, uint32(*crc))
		}
	}
	return nil
}

// readPageHeader decodes a Parquet PageHeader, keeping its fields 3
// (compressed_page_size) and 4 (crc, nil if absent). ok is false if the
// bytes are not a page header with a size.
func readPageHeader(p thrift.TProtocol) (compressed int32, crc *int32, ok bool) {
	ctx := context.Background()
	if _, err := p.ReadStructBegin(ctx); err != nil {
		return 0, nil, false
	}
	sized := false
	for {
		_, typ, id, err := p.ReadFieldBegin(ctx)
		if err != nil {
			return 0, nil, false
		}
		if typ == thrift.STOP {
			break
		}
		switch {
		case id == 3 && typ == thrift.I32:
			if compressed, err = p.ReadI32(ctx); err != nil {
				return 0, nil, false
			}
			sized = true
		case id == 4 && typ == thrift.I32:
			v, err := p.ReadI32(ctx)
			if err != nil {
				return 0, nil, false
			}
			crc = &v
		default:
			if err := thrift.Skip(ctx, p, typ, thrift.DEFAULT_RECURSION_DEPTH); err != nil {
				return 0, nil, false
			}
		}
		if err := p.ReadFieldEnd(ctx); err != nil {
			return 0, nil, false
		}
	}
	if err := p.ReadStructEnd(ctx); err != nil {
		return 0, nil, false
	}
	return compressed, crc, sized
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

func (c *countingReader) ReadByte() (byte, error) {
	b, err := c.r.ReadByte()
	if err == nil {
		c.n++
	}
	return b, err
}
