package cli

import (
	"os"
	"runtime/debug"
	"sync/atomic"
)

// tuneRuntime says whether commands may change the Go runtime's settings of
// the process (TuneRuntime).
var tuneRuntime atomic.Bool

// TuneRuntime lets the commands that follow change the garbage collector's
// settings of the whole process, as the dime program wants and a caller of
// Main from a library or a test may not: score lowers GOGC to 5 while it
// streams (unless GOGC is set; see lowerGC) and returns the heap's free
// memory to the system before its Result (see releaseMemory). cmd/dime's
// main calls it; without it, Main leaves the runtime as it found it, and
// the results are the same.
func TuneRuntime() { tuneRuntime.Store(true) }

// lowerGC sets GOGC to percent, unless GOGC is set in the environment or
// TuneRuntime was not called, and returns the function that restores it.
func lowerGC(percent int) (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set || !tuneRuntime.Load() {
		return func() {}
	}
	old := debug.SetGCPercent(percent)
	return func() { debug.SetGCPercent(old) }
}
