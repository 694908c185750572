package io

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
// parquetAllocator stops that loop: it counts the buffers the decoder holds
// at once and panics, with errRunaway, past maxParquetBuffers; recoverDecoder
// turns the panic into an error naming the file, and the deferred Releases
// give every buffer back. Reading a file holds a few buffers per selected
// column (values, levels, dictionary, decompression): at most 21 reading 20
// columns of a 10⁶-row file (batches of 8,192 and 65,536 rows), at most 20
// over the io package's tests and seed corpora, so the bound is thousands of
// times what a valid file needs, and the loop reaches it in a fraction of
// a second.
//
// A chunk that makes the loop allocate nothing (a page of a skipped type
// and size 0) would still spin; that needs a check of the page headers that
// follows the bytes the decoder reads.
type parquetAllocator struct {
	memory.Allocator
	held atomic.Int64 // buffers allocated and not freed
}

// maxParquetBuffers bounds the buffers a Parquet file's decoder holds at
// once.
const maxParquetBuffers = 1 << 16

// errRunaway is the panic of parquetAllocator.
var errRunaway = fmt.Errorf("the decoder holds more than %d buffers at once: a column chunk whose pages cannot be followed to its row count", maxParquetBuffers)

func newParquetAllocator(mem memory.Allocator) *parquetAllocator {
	return &parquetAllocator{Allocator: mem}
}

func (a *parquetAllocator) Allocate(size int) []byte {
	if a.held.Add(1) > maxParquetBuffers {
		a.held.Add(-1)
		panic(errRunaway)
	}
	return a.Allocator.Allocate(size)
}

func (a *parquetAllocator) Free(b []byte) {
	a.held.Add(-1)
	a.Allocator.Free(b)
}
