package decode_test

import (
	"bytes"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"testing"
)

// peakRSSLimit bounds how far one input may raise the resident memory of a
// process that runs the I/O fuzzers. A fuzz worker holds 245–325 MB at its
// peak (ten-minute runs, BENCHMARKS.md) and its inputs are a few
// kilobytes, so an input that raises the peak by more than 1 GiB made a
// reader allocate and touch memory that its size does not bound: a memory
// bomb. (A ten-minute FuzzReadParquet run peaked at 3.6 GB before this
// check.)
const peakRSSLimit = 1 << 30

// rssWatch checks how far each input raises the process's peak resident
// set size (VmHWM, which /proc/self/clear_refs resets to the current RSS).
// It is off where /proc cannot give or reset it, and under the race
// detector.
type rssWatch struct {
	on      bool
	clear   *os.File
	atStart int64
	allocs  []metrics.Sample // the bytes the process has allocated
}

// watchPeakRSS returns a watch, on where /proc can do it.
func watchPeakRSS() *rssWatch {
	if raceEnabled {
		return &rssWatch{}
	}
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return &rssWatch{}
	}
	w := &rssWatch{on: true, clear: f, allocs: []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}}
	if !w.start() {
		f.Close()
		return &rssWatch{}
	}
	return w
}

// start resets the peak before an input.
func (w *rssWatch) start() bool {
	if !w.on {
		return false
	}
	if _, err := w.clear.Write([]byte("5")); err != nil { // 5: VmHWM = VmRSS
		w.on = false
		return false
	}
	_, rss := rssStatus()
	w.atStart = rss
	w.on = rss > 0
	metrics.Read(w.allocs)
	return w.on
}

// check fails the input if it raised the peak by more than peakRSSLimit.
// Go keeps freed memory resident for a while, so after a large input it
// returns it to the system: the next input starts low, and a failing
// input fails again when go test -fuzz reruns it to minimize it.
func (w *rssWatch) check(t *testing.T, data []byte) {
	if !w.on {
		return
	}
	hwm, rss := rssStatus()
	before := w.allocs[0].Value.Uint64()
	metrics.Read(w.allocs)
	if rss > peakRSSLimit/2 {
		debug.FreeOSMemory()
	}
	if hwm-w.atStart > peakRSSLimit {
		t.Fatalf("this input (%d bytes) raised the peak RSS by %d MiB (from %d MiB), over %d MiB: an allocation the input's size does not bound (the process allocated %d MiB of heap meanwhile)",
			len(data), (hwm-w.atStart)>>20, w.atStart>>20, peakRSSLimit>>20, (w.allocs[0].Value.Uint64()-before)>>20)
	}
}

// rssStatus returns VmHWM and VmRSS from /proc/self/status in bytes, or -1.
func rssStatus() (hwm, rss int64) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1, -1
	}
	return statusKB(b, "VmHWM:"), statusKB(b, "VmRSS:")
}

func statusKB(status []byte, key string) int64 {
	_, after, ok := bytes.Cut(status, []byte(key))
	if !ok {
		return -1
	}
	line, _, _ := bytes.Cut(after, []byte("\n"))
	kb, err := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(line), []byte(" kB"))), 10, 64)
	if err != nil {
		return -1
	}
	return kb << 10
}
