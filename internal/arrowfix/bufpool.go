package arrowfix

import (
	"math/bits"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"
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
// class serves the value and level buffers from buffers just freed; page
// buffers are left to the collector (see allocate), about a third of that
// garbage.
//
// The pool is only used over the default Go allocator (Options.Allocator
// nil), whose Free does nothing: a pooled buffer is one the garbage
// collector would otherwise have taken, so no allocator's accounting
// changes. It holds at most maxPooledBytes; buffers past that are left to
// the collector. A reused buffer is cleared whole, as Go's allocator would
// return it.
type bufferPool struct {
	mu    sync.Mutex
	lists map[int][][]byte   // by size class; each buffer's cap is its class
	bytes int                // total cap of the buffers in lists
	out   map[uintptr]handed // the buffers handed out, by address of their first byte
	sites map[uintptr]bool   // return addresses: whether in the page reader's Next
	users int                // Parquet sources open (see open and close)
	idle  *time.Timer        // drains the pool once no source is open

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
	return &bufferPool{lists: make(map[int][][]byte), out: make(map[uintptr]handed), sites: make(map[uintptr]bool)}
}

// handed is a buffer the pool handed out: its class, and a weak pointer to
// its first byte, so that a buffer the decoder never frees (a panic of
// Arrow's decoder caught by recoverDecoder may skip a Release) is still
// left to the collector, and a later buffer at the same address is not
// taken for it.
type handed struct {
	class int
	first weak.Pointer[byte]
}

// open and close count the Parquet sources that use the pool. When the
// last is closed and none is opened for poolIdle, the pool lets go of its
// buffers, so that nothing is kept once the reading is over; the delay lets
// a dataset's next file, opened right after, find the buffers of the last.
// While no source is open, freed buffers are left to the collector.
func (p *bufferPool) open() {
	p.mu.Lock()
	p.users++
	if p.idle != nil {
		p.idle.Stop()
		p.idle = nil
	}
	p.mu.Unlock()
}

func (p *bufferPool) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.users--; p.users > 0 {
		return
	}
	if poolIdle <= 0 {
		p.drain()
		return
	}
	p.idle = time.AfterFunc(poolIdle, func() {
		p.mu.Lock()
		if p.users == 0 {
			p.drain()
		}
		p.mu.Unlock()
	})
}

// poolIdle is how long the pool keeps its buffers once no source is open
// (a variable for the tests).
var poolIdle = time.Second

// drain lets go of the free buffers, and forgets the handed-out buffers the
// collector took (never freed). p.mu is held.
func (p *bufferPool) drain() {
	clear(p.lists)
	p.bytes = 0
	for addr, h := range p.out {
		if h.first.Value() == nil {
			delete(p.out, addr)
		}
	}
}

// sizeClass returns the size a buffer of n bytes is allocated with: n
// rounded up to a sixteenth of its power of two (at most 6.25% more), so
// that buffers of slightly different sizes (a row group's last batch, a
// column with nulls) share a class.
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
	n := runtime.Callers(3, pcs[:]) // above ParquetAllocator.Allocate
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
	first := unsafe.SliceData(b)
	h := handed{class: c, first: weak.Make(first)}
	p.mu.Lock()
	p.out[uintptr(unsafe.Pointer(first))] = h
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
			if strings.HasSuffix(f.Function, pageReaderNext) {
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
// is full or no source is open.
func (p *bufferPool) free(b []byte) {
	first := unsafe.SliceData(b)
	addr := uintptr(unsafe.Pointer(first))
	p.mu.Lock()
	h, ok := p.out[addr]
	if ok {
		delete(p.out, addr)
		ok = h.first.Value() == first && p.users > 0
	}
	p.mu.Unlock()
	if !ok {
		return
	}
	b = unsafe.Slice(first, h.class)
	if p.poison.Load() {
		for i := range b {
			b[i] = 0xff
		}
	}
	p.mu.Lock()
	if p.users > 0 && p.bytes+h.class <= maxPooledBytes {
		p.lists[h.class] = append(p.lists[h.class], b)
		p.bytes += h.class
	}
	p.mu.Unlock()
}

// held returns the bytes the pool keeps, for the tests.
func (p *bufferPool) held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.bytes
}
