// Package arrowfix holds dime's workarounds for bugs of Arrow Go v15.0.2,
// in one place, each tied to the Arrow code it works around:
//
//   - NewParquetAllocator: the allocator of a Parquet file's decoder. It
//     stops the page reader's runaway loop on a corrupt column chunk (a
//     panic with ErrRunaway, which the caller recovers into an error) and,
//     over the default allocator, recycles the decoder's buffers through a
//     pool, leaving to the collector the buffers that the page reader frees
//     while its page still points into them. It recognises those by the
//     page reader's function name on the call stack: the one use of
//     runtime.Callers in dime.
//   - NewBatchAllocator: the allocator of an ipc.Reader. It frees what a
//     failed record batch left allocated, and bounds each allocation by the
//     message's body (ErrAllocation).
//   - CheckMetadata and CheckEmbeddedArrowSchema: bounds checks of the
//     flatbuffers that Arrow's IPC decoder trusts, run before it sees them.
//
// The workarounds are only valid for the Arrow version they were written
// against, ArrowVersion: the package's tests fail if go.mod names another
// version, or if the page reader's function is no longer found on the
// stack where the pool looks for it. An upgrade of Arrow must revisit each
// workaround (and drop those Arrow has fixed) before changing ArrowVersion.
package arrowfix

// ArrowModule and ArrowVersion are the Arrow Go module and version whose
// bugs this package works around.
const (
	ArrowModule  = "github.com/apache/arrow/go/v15"
	ArrowVersion = "v15.0.2"
)

// pageReaderNext is the suffix of the function name of Arrow's Parquet page
// reader's Next, which frees a page's buffer while the page is still read
// (see bufferPool.allocate).
const pageReaderNext = "parquet/file.(*serializedPageReader).Next"
