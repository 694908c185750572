package arrowfix

import (
	"fmt"
	"sync/atomic"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Arrow Go v15's Parquet page reader can spin on a corrupt column chunk.
// When a chunk's pages end before they hold its row group's rows, the
// reader's buffered stream, at the end of the chunk, returns stale bytes
// from its buffer on Peek rather than none, and serializedPageReader.Next
// decodes them as a page header again and again. When that header is of a
// page type Next skips, each turn allocates the page's declared size and
// holds it (a deferred Release) until Next returns, which it never does: a
// 491-byte file found by FuzzReadParquet grew by gigabytes
// (testdata/fuzz/FuzzReadParquet/runaway-page-loop).
//
// ParquetAllocator stops that loop: it counts the buffers the decoder holds
// at once and panics, with ErrRunaway, past maxParquetBuffers; recoverDecoder
// turns the panic into an error naming the file, and the deferred Releases
// give every buffer back. Reading a file holds a few buffers per selected
// column (values, levels, dictionary, decompression): at most 21 reading 20
// columns of a 10⁶-row file (batches of 8,192 and 65,536 rows), at most 20
// over the reading tests and seed corpora, so the bound is thousands of
// times what a valid file needs, and the loop reaches it in a fraction of
// a second.
//
// A chunk that makes the loop allocate nothing (a page of a skipped type
// and size 0) would still spin; that needs a check of the page headers that
// follows the bytes the decoder reads.
//
// Over the default allocator it also recycles the decoder's buffers through
// parquetPool (see bufferPool).
type ParquetAllocator struct {
	memory.Allocator
	pool *bufferPool  // nil: every buffer from and to Allocator
	held atomic.Int64 // buffers allocated and not freed
}

// NewParquetAllocator returns the allocator of one Parquet file's decoder
// over mem. With mem nil it allocates from memory.DefaultAllocator and
// recycles the decoder's buffers through the package's pool (see
// bufferPool); Close tells the pool that the decoder is done. Any other
// allocator gets every buffer from and back to mem.
func NewParquetAllocator(mem memory.Allocator) *ParquetAllocator {
	if mem != nil {
		return &ParquetAllocator{Allocator: mem}
	}
	parquetPool.open()
	return &ParquetAllocator{Allocator: memory.DefaultAllocator, pool: parquetPool}
}

// Close ends the allocator's use of the pool (once the decoder's arrays
// are released); the pool lets go of its buffers a second after its last
// user closes. It may be called more than once.
func (a *ParquetAllocator) Close() {
	if a.pool != nil {
		a.pool.close()
		a.pool = nil
	}
}

// maxParquetBuffers bounds the buffers a Parquet file's decoder holds at
// once.
const maxParquetBuffers = 1 << 16

// ErrRunaway is the panic of ParquetAllocator.
var ErrRunaway = fmt.Errorf("the decoder holds more than %d buffers at once: a column chunk whose pages cannot be followed to its row count", maxParquetBuffers)

func (a *ParquetAllocator) Allocate(size int) []byte {
	if a.held.Add(1) > maxParquetBuffers {
		a.held.Add(-1)
		panic(ErrRunaway)
	}
	if a.pool != nil {
		if b := a.pool.allocate(a.Allocator, size); b != nil {
			return b
		}
	}
	return a.Allocator.Allocate(size)
}

// Reallocate grows b as Go's allocator does: in place within its cap,
// else into a new buffer, the old one freed.
func (a *ParquetAllocator) Reallocate(size int, b []byte) []byte {
	if a.pool == nil {
		return a.Allocator.Reallocate(size, b)
	}
	if size <= cap(b) {
		return b[:size]
	}
	nb := a.Allocate(size)
	copy(nb, b)
	a.Free(b)
	return nb
}

func (a *ParquetAllocator) Free(b []byte) {
	a.held.Add(-1)
	if a.pool != nil {
		a.pool.free(b)
		return
	}
	a.Allocator.Free(b)
}
