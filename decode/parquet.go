package decode

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/internal/arrowfix"
	"github.com/dime-project/dime/internal/ioerr"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// Parquet pages are read through a buffer of this size per column (grown to
// a page if needed), rather than a whole column chunk at once, so that memory
// does not grow with the size of the row groups. Measured on 20 columns: 64
// KiB reads 25% faster than 256 KiB or 1 MiB, and as fast as 16 KiB. A file
// whose selected column chunks are all smaller gets buffers of its largest
// chunk (see readBufferSize): a dataset of many small files would otherwise
// allocate 64 KiB per column and file for a few hundred bytes.
const parquetBufferSize = 64 << 10

// readBufferSize returns the size of a read buffer for column chunks of at
// most largest bytes: max, or less for smaller chunks (at least 512 bytes).
func readBufferSize(largest, max int64) int64 {
	return min(max, largest+largest/8+512)
}

// parquetDecoder is a Parquet file whose schema has been read: start reads
// the selected columns, BatchSize rows at a time, with a column reader of
// pqarrow per selected column. (pqarrow's own record reader, in v15, returns
// no rows without an error for a zero batch size, ends with io.EOF rather
// than nil, and panics when a corrupt file makes its columns disagree on the
// number of rows; here that is an error.)
type parquetDecoder struct {
	source string
	props  *parquet.ReaderProperties
	src    *dataset.Source
	groups *groupRange
	mem    *arrowfix.ParquetAllocator
	pf     *file.Reader
	fr     *pqarrow.FileReader
	schema *arrow.Schema
	batch  int
}

// openParquet reads the footer and the schema of a Parquet file.
func openParquet(source string, src *dataset.Source, opts Options, rg *groupRange) (d *parquetDecoder, err error) {
	mem := arrowfix.NewParquetAllocator(opts.Allocator)
	defer func() {
		if err != nil {
			mem.Close()
		}
	}()
	defer recoverDecoder(source, &err)
	props := parquet.NewReaderProperties(mem)
	props.BufferedStreamEnabled = true
	props.BufferSize = parquetBufferSize
	pf, err := file.NewParquetReader(src.File, file.WithReadProps(props))
	if err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "not a Parquet file, or a truncated or corrupt one")
	}
	if err := arrowfix.CheckEmbeddedArrowSchema(pf.MetaData().KeyValueMetadata()); err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "corrupt Parquet file")
	}
	// A file smaller than a batch is read in one batch of its size: the
	// column readers reserve buffers for a whole batch, which for a small
	// file of a dataset would cost more than its rows.
	batch := int(min(int64(opts.batchSize()), max(1, pf.NumRows())))
	fr, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(batch)}, mem)
	if err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "reading the Parquet schema")
	}
	schema, err := fr.Schema()
	if err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "reading the Parquet schema")
	}
	return &parquetDecoder{source: source, props: props, src: src, groups: rg, mem: mem, pf: pf, fr: fr, schema: schema, batch: batch}, nil
}

func (d *parquetDecoder) fields() []arrow.Field { return d.schema.Fields() }

func (d *parquetDecoder) release() { d.mem.Close() }

// start reads only the selected columns (their leaves, in schema order),
// once the selection has been checked against the whole schema.
func (d *parquetDecoder) start(sel columns.Selection, opts Options) (st started, err error) {
	defer recoverDecoder(d.source, &err)
	pf, fr, mem, rg, batch := d.pf, d.fr, d.mem, d.groups, d.batch
	full, err := newExtractor(d.source, d.schema, sel, opts.Values)
	if err != nil {
		return st, err
	}
	// Wide rows (an embedding of a FixedSizeList column) are read in
	// batches of fewer rows, so that a batch's values stay within
	// MaxBlockBytes.
	if rows := blockRows(batch, full.DimX()+full.DimY()); rows < batch {
		batch = rows
		if fr, err = pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: int64(rows)}, mem); err != nil {
			return st, ioerr.New(ErrFormat, d.source, err, "reading the Parquet schema")
		}
	}
	var leaves []int
	for _, c := range full.cols {
		if c.field < 0 { // a partition key
			continue
		}
		leaves = appendLeaves(leaves, &fr.Manifest.Fields[c.field])
	}
	slices.Sort(leaves)
	leaves = slices.Compact(leaves)
	groups := make([]int, pf.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	var firstRow, total int64 = 0, pf.NumRows()
	if rg != nil {
		if rg.first+rg.count > len(groups) {
			return st, ioerr.New(ErrFormat, d.source, nil, "row groups %d to %d asked of a file of %d", rg.first, rg.first+rg.count-1, len(groups))
		}
		total = 0
		for i := 0; i < rg.first+rg.count; i++ {
			n := pf.MetaData().RowGroup(i).NumRows()
			if i < rg.first {
				firstRow += n
			} else {
				total += n
			}
		}
		groups = groups[rg.first : rg.first+rg.count]
	}
	// The field readers are made here, one after the other, rather than by
	// fr.GetFieldReaders, which makes them on goroutines of its own: a panic
	// of Arrow's decoder on one of those could not be recovered.
	fields, err := fr.Manifest.GetFieldIndices(leaves)
	if err != nil {
		return st, ioerr.New(ErrFormat, d.source, err, "reading the Parquet schema")
	}
	included := make(map[int]bool, len(leaves))
	for _, l := range leaves {
		included[l] = true
	}
	extents := chunkExtents(pf, groups, leaves)
	d.src.Expect(extents)
	var largest int64
	for _, e := range extents {
		largest = max(largest, e.End-e.Off)
	}
	// The column readers' page buffers, made as they reach each row group.
	d.props.BufferSize = readBufferSize(largest, parquetBufferSize)
	ps := &parquetSource{source: d.source, batch: int64(batch), head: int64(opts.headRows), total: total, mem: mem}
	if !skipPageCRC {
		ps.crc = newPageChecker(d.source, d.src.File, pf, groups, leaves, int(readBufferSize(largest, pageCRCBufferSize)))
	}
	outFields := make([]arrow.Field, 0, len(fields))
	for _, fidx := range fields {
		c, err := fr.GetFieldReader(context.Background(), fidx, included, groups)
		if err != nil {
			ps.Release()
			return st, ioerr.New(ErrFormat, d.source, err, "reading the Parquet file")
		}
		ps.cols = append(ps.cols, c)
		outFields = append(outFields, *c.Field())
	}
	projected := arrow.NewSchema(outFields, fr.Manifest.SchemaMeta)
	ps.schema = projected
	return started{src: ps, schema: projected, total: total, firstRow: firstRow}, nil
}

// chunkExtents returns the byte ranges of the column chunks of the leaves in
// the row groups, sorted, for a blobFile's ranged reads.
func chunkExtents(pf *file.Reader, groups, leaves []int) []dataset.Extent {
	ext := make([]dataset.Extent, 0, len(groups)*len(leaves))
	for _, g := range groups {
		for _, l := range leaves {
			if start, size, ok := chunkRange(pf, g, l); ok {
				ext = append(ext, dataset.Extent{Off: start, End: start + size})
			}
		}
	}
	slices.SortFunc(ext, func(a, b dataset.Extent) int { return cmp.Compare(a.Off, b.Off) })
	// A corrupt file's chunks may overlap: keep the first of each overlap
	// (a read past an extent's end opens a window as without extents).
	out := ext[:0]
	for _, e := range ext {
		if len(out) == 0 || e.Off >= out[len(out)-1].End {
			out = append(out, e)
		}
	}
	return out
}

// appendLeaves appends the Parquet leaf columns of field. (A field with
// children is not a leaf, whatever its ColIndex: v15 leaves it 0, not -1, for
// lists.)
func appendLeaves(dst []int, field *pqarrow.SchemaField) []int {
	if len(field.Children) == 0 {
		return append(dst, field.ColIndex)
	}
	for i := range field.Children {
		dst = appendLeaves(dst, &field.Children[i])
	}
	return dst
}

// parquetSource reads record batches of the selected columns.
type parquetSource struct {
	source string
	cols   []*pqarrow.ColumnReader
	schema *arrow.Schema
	batch  int64
	head   int64                      // rows of the first batch, if not 0 (see Options.headRows)
	total  int64                      // rows in the file's metadata
	rows   int64                      // rows read
	mem    *arrowfix.ParquetAllocator // closed by Release
	crc    *pageChecker               // verifies the page CRCs of each row group before its rows are read
	arrs   []arrow.Array
	rec    arrow.Record
	err    error
	done   bool
}

func (p *parquetSource) Next() bool {
	if p.rec != nil {
		p.rec.Release()
		p.rec = nil
	}
	if p.done || p.err != nil {
		return false
	}
	p.arrs = p.arrs[:0]
	defer func() {
		for _, a := range p.arrs {
			a.Release()
		}
		p.arrs = p.arrs[:0]
	}()
	want := p.batch
	if p.head > 0 {
		want, p.head = p.head, 0
	}
	if p.crc != nil {
		if err := p.crc.upTo(p.rows + want); err != nil {
			p.err = err
			return false
		}
	}
	n := 0
	for i, c := range p.cols {
		a, err := p.column(c, want)
		if err != nil {
			p.err = fmt.Errorf("column %q: %w", p.schema.Field(i).Name, err)
			return false
		}
		p.arrs = append(p.arrs, a)
		if i == 0 {
			n = a.Len()
		} else if a.Len() != n {
			p.err = fmt.Errorf("corrupt file: column %q gave %d rows where %q gave %d", p.schema.Field(i).Name, a.Len(), p.schema.Field(0).Name, n)
			return false
		}
	}
	if n == 0 {
		p.done = true
		if p.rows != p.total {
			p.err = fmt.Errorf("corrupt file: %d rows read where the metadata says %d", p.rows, p.total)
		}
		return false
	}
	p.rows += int64(n)
	if p.rows > p.total {
		p.err = fmt.Errorf("corrupt file: more rows than the %d of the metadata", p.total)
		return false
	}
	p.rec = array.NewRecord(p.schema, p.arrs, int64(n))
	return true
}

// column reads the next batch of a column as one array.
func (p *parquetSource) column(c *pqarrow.ColumnReader, n int64) (a arrow.Array, err error) {
	defer recoverDecoder(p.source, &err)
	chunked, err := c.NextBatch(n)
	if err != nil {
		return nil, err
	}
	defer chunked.Release()
	switch chunks := chunked.Chunks(); len(chunks) {
	case 0:
		return array.MakeArrayOfNull(p.mem, chunked.DataType(), 0), nil
	case 1:
		chunks[0].Retain()
		return chunks[0], nil
	default:
		return array.Concatenate(chunks, p.mem)
	}
}

// recoverDecoder turns a panic of Arrow's Parquet decoders into an error.
// Arrow Go v15 panics on some corrupt files (about 0.7% of single-byte
// corruptions of a small file, in its page and schema decoding) instead of
// returning an error; that code is not ours to fix, so its panics are caught
// here, at the one boundary where we call it, and reported as a corrupt file.
func recoverDecoder(source string, err *error) {
	if v := recover(); v != nil {
		if v == arrowfix.ErrRunaway {
			*err = ioerr.New(ErrFormat, source, nil, "corrupt Parquet file: %v", arrowfix.ErrRunaway)
			return
		}
		*err = ioerr.New(ErrFormat, source, nil, "corrupt Parquet file: the decoder failed (%v)", v)
	}
}

func (p *parquetSource) Record() arrow.Record { return p.rec }
func (p *parquetSource) Err() error           { return p.err }

func (p *parquetSource) Release() {
	if p.rec != nil {
		p.rec.Release()
		p.rec = nil
	}
	for _, c := range p.cols {
		c.Release()
	}
	p.cols = nil
	p.mem.Close()
}
