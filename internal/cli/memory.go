package cli

import (
	"fmt"
	"github.com/dime-project/dime/decode"
	"runtime"
	"runtime/debug"

	"github.com/dime-project/dime/internal/memlimit"
	"github.com/dime-project/dime/stream"
)

// checkMemory refuses a run whose largest allocations (need bytes) exceed the
// memory this process may use (memlimit: the machine's, the cgroup's, ulimit
// -v and -d): such a run would not fail with an error but be killed, or die
// in the Go runtime.
func checkMemory(what string, need uint64, fix string) error {
	if err := memlimit.Detect().Check(what, need, fix); err != nil {
		return asUsage(err)
	}
	return nil
}

// baseMemory is what a run needs besides its estimator: the Go runtime, the
// reader's pages and blocks (about 50 MB at the defaults, see score.go).
const baseMemory = 64 << 20

// rffMemory estimates the bytes of a run of the RFF estimator before the
// views' widths are known: the estimator's (stream.Config.MemoryBytes) and
// the base.
func rffMemory(cfg stream.Config) uint64 {
	return cfg.MemoryBytes(runtime.GOMAXPROCS(0), 0, 0) + baseMemory
}

// checkBaselineMemory is checkMemory for monitor --baseline: the window's
// estimator (and the Results computed on it) and one more estimator's
// accumulators per block of the change test.
func checkBaselineMemory(cfg stream.Config, blocks int) error {
	need := rffMemory(cfg) + uint64(blocks)*cfg.AccumulatorBytes()
	return checkMemory(fmt.Sprintf("--baseline with --baseline-blocks %d (%d estimators of D = %d, %d permutations, %d groups)", blocks, blocks+1, cfg.Features, cfg.Permutations, cfg.Groups),
		need, "lower --baseline-blocks, or save the baseline with a lower --features")
}

// exactMemory estimates the bytes of an exact estimate on n rows: two Gram
// matrices and one scratch matrix per worker, n² float64 each.
func exactMemory(n int) uint64 {
	return uint64(2+runtime.GOMAXPROCS(0))*uint64(n)*uint64(n)*8 + baseMemory
}

// checkRFFMemory is checkMemory for the RFF estimator's settings.
func checkRFFMemory(features, permutations, groups int) error {
	return checkMemory(fmt.Sprintf("--features %d with %d permutations and %d groups", features, permutations, groups),
		rffMemory(stream.Config{Features: features, Permutations: permutations, Groups: groups}), "lower --features (memory grows as D²), --permutations or --groups")
}

// checkStreamMemory checks, once the widths of the views are known, the
// memory of the whole RFF estimator (stream.Config.MemoryBytes) with the
// reader's blocks, the Arrow IPC record batches it holds (heldBatches, see
// decode.DatasetReader.HeldBatchBytes) and the base.
func checkStreamMemory(cfg stream.Config, dimX, dimY int, heldBatches int64) error {
	what := fmt.Sprintf("--features %d with %d permutations on %d+%d columns", cfg.Features, cfg.Permutations, dimX, dimY)
	if cfg.ShuffleRows > 0 {
		what += fmt.Sprintf(" and --shuffle-buffer %d", cfg.ShuffleRows)
	}
	fix := "lower --features, --permutations, --shuffle-buffer or --pilot-rows"
	if heldBatches > 0 {
		what += fmt.Sprintf(" and up to %s of Arrow IPC record batches, read whole", memlimit.Size(uint64(heldBatches)))
		fix += ", or write the IPC files in smaller record batches"
	}
	return checkMemory(what, streamMemory(cfg, dimX, dimY, heldBatches), fix)
}

// streamMemory is the bytes checkStreamMemory checks.
func streamMemory(cfg stream.Config, dimX, dimY int, heldBatches int64) uint64 {
	d := uint64(dimX + dimY)
	// The reader's blocks and record batches: about five of them in
	// flight (three blocks of the dataset reader and two decoded batches),
	// each at most decode.MaxBlockBytes of values (at the default batch
	// size, less for narrow rows), and the IPC batches held whole.
	block := min(8*d*decode.DefaultBatchSize, decode.MaxBlockBytes)
	return cfg.MemoryBytes(runtime.GOMAXPROCS(0), dimX, dimY) + baseMemory + 5*block + uint64(max(heldBatches, 0))
}

// releaseMemory returns the free memory of the heap to the system: a
// garbage collection, then the scavenger over every free page. score calls
// it between the stream and the Result, once the reader is closed, so that
// while the Result runs the process holds only what it uses rather than
// the reader's pages and the garbage of its last record batches. It does
// nothing unless the program called TuneRuntime.
func releaseMemory() {
	if tuneRuntime.Load() {
		debug.FreeOSMemory()
	}
}

// memoryHook, if not nil, is called by score after each block it adds
// ("stream") and right before the Result ("result"): tests read the heap's
// statistics there.
var memoryHook func(phase string)
