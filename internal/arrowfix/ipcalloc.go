package arrowfix

import (
	"errors"
	"sync"
	"unsafe"

	"github.com/apache/arrow/go/v15/arrow/memory"
)

// BatchAllocator is the allocator of an ipc.Reader. Arrow Go v15 recovers
// the panics of its record batch loader on corrupt input (a field node
// longer than its buffers, say) into an error, but the buffers it allocated
// for the batch before the panic are then never released: with an allocator
// that is not Go's garbage-collected one, that memory would be lost.
// BatchAllocator remembers the allocations made while one message is
// decoded; a failed read frees those that are still live, a successful one
// (or the next message) leaves them to their arrays.
//
// It also bounds each allocation by the message's body (see LimitFor):
// Arrow's generated flatbuffer accessors do not check vector indices, so a
// batch whose buffers vector is shorter than its schema needs makes the
// loader read buffer lengths from the bytes after the vector, 64 GiB from a
// 610-byte stream in one case the fuzzer found (or a negative length). An
// allocation over the bound, or of a negative size, panics with
// ErrAllocation, which ipc.Reader recovers into its error.
type BatchAllocator struct {
	memory.Allocator
	mu      sync.Mutex
	pending map[*byte][]byte
	limit   int // the largest allocation allowed for the current message
}

// ErrAllocation is the panic of an allocation over the bound.
var ErrAllocation = errors.New("corrupt record batch: a buffer length that its body cannot hold")

// LimitFor returns the bound on one allocation for a message body of
// bodyLen bytes: what a compressed buffer of the whole body could inflate
// to (the bound checkRecordBatch applies to the sizes compressed buffers
// claim), which also covers uncompressed buffers and dictionaries.
func LimitFor(bodyLen int64) int {
	return int(min(bodyLen, 1<<40)*maxInflation + 1<<20)
}

// SetLimit sets the bound for the allocations of the next message.
func (a *BatchAllocator) SetLimit(n int) {
	a.mu.Lock()
	a.limit = n
	a.mu.Unlock()
}

func (a *BatchAllocator) check(size int) {
	a.mu.Lock()
	limit := a.limit
	a.mu.Unlock()
	if size < 0 || limit > 0 && size > limit {
		panic(ErrAllocation)
	}
}

func NewBatchAllocator(mem memory.Allocator) *BatchAllocator {
	return &BatchAllocator{Allocator: mem, pending: make(map[*byte][]byte)}
}

func allocKey(b []byte) *byte {
	if cap(b) == 0 {
		return nil
	}
	return unsafe.SliceData(b[:1])
}

func (a *BatchAllocator) Allocate(size int) []byte {
	a.check(size)
	b := a.Allocator.Allocate(size)
	if k := allocKey(b); k != nil {
		a.mu.Lock()
		a.pending[k] = b
		a.mu.Unlock()
	}
	return b
}

func (a *BatchAllocator) Reallocate(size int, b []byte) []byte {
	a.check(size)
	a.mu.Lock()
	_, tracked := a.pending[allocKey(b)]
	delete(a.pending, allocKey(b))
	a.mu.Unlock()
	nb := a.Allocator.Reallocate(size, b)
	if k := allocKey(nb); k != nil && (tracked || cap(b) == 0) {
		a.mu.Lock()
		a.pending[k] = nb
		a.mu.Unlock()
	}
	return nb
}

func (a *BatchAllocator) Free(b []byte) {
	a.mu.Lock()
	delete(a.pending, allocKey(b))
	a.mu.Unlock()
	a.Allocator.Free(b)
}

// Commit leaves the allocations made so far to their owners.
func (a *BatchAllocator) Commit() {
	a.mu.Lock()
	clear(a.pending)
	a.mu.Unlock()
}

// Fail frees the allocations made since the last commit that are still
// live: those of a message whose decoding failed.
func (a *BatchAllocator) Fail() {
	a.mu.Lock()
	defer a.mu.Unlock()
	for k, b := range a.pending {
		a.Allocator.Free(b)
		delete(a.pending, k)
	}
}
