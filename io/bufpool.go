package io

import (
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// bufferPool keeps the buffers that the Parquet decoder frees, for its next
// allocations of the same size class.
//
// Arrow's Parquet column readers allocate new value, level and page buffers
// for every batch and free the old ones when the batch's arrays are
// released; with Go's allocator that is about 500 MB of garbage per 10⁶ rows
// of 20 columns (85% of all the bytes `dime score` allocates), and at the
// GOGC of score (5) the collector runs about 180 times and takes 6–10% of
// the run. The sizes repeat from batch to batch, so a free list per size
// class serves nearly every allocation from a buffer just freed.
//
// The pool is only used over the default Go allocator (Options.Allocator
// nil), whose Free does nothing: a pooled buffer is one the garbage
// collector would otherwise have taken, so no allocator's accounting
// changes. It holds at most maxPooledBytes; buffers past that are left to
// the collector. A reused buffer is cleared whole, as Go's allocator would
// return it.
type bufferPool struct {
	mu    sync.Mutex
	lists map[int][][]byte // by size class; each buffer's cap is its class
	bytes int              // total cap of the buffers in lists
	out   map[*byte]int    // the buffers handed out, by first byte: their class
	sites map[uintptr]bool // return addresses: whether in the page reader's Next

	// poison, in tests, fills a freed buffer with 0xff before it is kept,
	// so that a read of a buffer after its Free shows in the results.
	poison atomic.Bool

	served, fresh atomic.Int64 // bytes handed out from lists, and newly allocated
}

const (
	// minPooledSize: smaller allocations go straight to the allocator.
	minPooledSize = 4 << 10
	// maxPooledSize: larger ones too (none of a valid file's batches).
	maxPooledSize = 64 << 20
	// maxPooledBytes bounds the bytes the pool holds: a batch of 20
	// float64 columns of 65,536 rows needs about 20 MiB of buffers.
	maxPooledBytes = 48 << 20
)

// parquetPool is the pool of every Parquet file read with the default
// allocator: a dataset's files, read one after another or side by side,
// share it.
var parquetPool = newBufferPool()

func newBufferPool() *bufferPool {
	return &bufferPool{lists: make(map[int][][]byte), out: make(map[*byte]int), sites: make(map[uintptr]bool)}
}

// sizeClass returns the size a buffer of n bytes is allocated with: n
// rounded up to a sixteenth of its power of two (at most 6.25% more), so
// that pages of slightly different sizes share a class.
func sizeClass(n int) int {
	if n <= minPooledSize {
		return minPooledSize
	}
	step := 1 << max(0, bits.Len(uint(n-1))-5)
	return (n + step - 1) &^ (step - 1)
}

// allocate returns a cleared buffer of size bytes from the pool, or from
// mem with the capacity of its class, or nil if it is not one the pool may
// take back: out of the pooled sizes, or asked for by the page reader.
//
// Arrow Go v15's serializedPageReader.Next decodes each page into a buffer
// of the allocator, points the page at it and frees the buffer (a deferred
// Release) as it returns, while the page is still read: harmless with Go's
// allocator, whose Free does nothing, but a buffer reused from there would
// be overwritten under the page. Those buffers are left to the collector.
func (p *bufferPool) allocate(mem interface{ Allocate(int) []byte }, size int) []byte {
	if size < minPooledSize || size > maxPooledSize {
		return nil
	}
	var pcs [8]uintptr
	n := runtime.Callers(3, pcs[:]) // above parquetAllocator.Allocate
	c := sizeClass(size)
	p.mu.Lock()
	for _, pc := range pcs[:n] {
		if p.pageReader(pc) {
			p.mu.Unlock()
			return nil
		}
	}
	var b []byte
	if list := p.lists[c]; len(list) > 0 {
		b = list[len(list)-1]
		list[len(list)-1] = nil
		p.lists[c] = list[:len(list)-1]
		p.bytes -= c
	}
	p.mu.Unlock()
	if b != nil {
		clear(b)
		p.served.Add(int64(c))
	} else {
		b = mem.Allocate(c)
		p.fresh.Add(int64(c))
	}
	p.mu.Lock()
	p.out[unsafe.SliceData(b)] = c
	p.mu.Unlock()
	return b[:size]
}

// pageReader reports whether the return address pc is in the page
// reader's Next (directly or through inlined calls). p.mu is held.
func (p *bufferPool) pageReader(pc uintptr) bool {
	in, ok := p.sites[pc]
	if !ok {
		frames := runtime.CallersFrames([]uintptr{pc})
		for {
			f, more := frames.Next()
			if strings.HasSuffix(f.Function, "parquet/file.(*serializedPageReader).Next") {
				in = true
			}
			if !more {
				break
			}
		}
		p.sites[pc] = in
	}
	return in
}

// free takes back b if the pool handed it out, keeping it unless the pool
// is full.
func (p *bufferPool) free(b []byte) {
	ptr := unsafe.SliceData(b)
	p.mu.Lock()
	c, ok := p.out[ptr]
	if ok {
		delete(p.out, ptr)
	}
	p.mu.Unlock()
	if !ok {
		return
	}
	b = unsafe.Slice(ptr, c)
	if p.poison.Load() {
		for i := range b {
			b[i] = 0xff
		}
	}
	p.mu.Lock()
	if p.bytes+c <= maxPooledBytes {
		p.lists[c] = append(p.lists[c], b)
		p.bytes += c
	}
	p.mu.Unlock()
}
