package io_test

import (
	"bytes"
	"os"
	"runtime/debug"
	"strconv"
	"testing"
)

// peakRSSLimit bounds the peak resident memory of a process that runs the
// I/O fuzzers. A fuzz worker holds 245–325 MB at its peak (ten-minute runs
// of FuzzReadCSV, 30,000-execution runs of the others, BENCHMARKS.md) and
// its inputs are a few kilobytes, so a peak past 1 GiB means that an input
// made a reader allocate and touch some 700 MB that its size does not
// bound: a memory bomb. (A ten-minute FuzzReadParquet run peaked at 3.6 GB
// before this check; the input was not kept.)
const peakRSSLimit = 1 << 30

// rssWatch checks the process's peak resident set size (VmHWM) after each
// input; it is off where /proc cannot give or reset it, and under the race
// detector.
type rssWatch struct{ on bool }

// watchPeakRSS resets the peak so that what earlier tests of the process
// used does not count, and returns a watch.
func watchPeakRSS() rssWatch {
	if raceEnabled {
		return rssWatch{}
	}
	debug.FreeOSMemory()
	f, err := os.OpenFile("/proc/self/clear_refs", os.O_WRONLY, 0)
	if err != nil {
		return rssWatch{}
	}
	_, err = f.Write([]byte("5")) // 5 resets VmHWM to the current RSS
	f.Close()
	return rssWatch{on: err == nil && peakRSS() > 0}
}

// check fails the input if the process's peak RSS passed peakRSSLimit.
func (w rssWatch) check(t *testing.T) {
	if !w.on {
		return
	}
	if p := peakRSS(); p > peakRSSLimit {
		t.Fatalf("peak RSS %d MiB after this input, over %d MiB: an allocation the input's size does not bound", p>>20, peakRSSLimit>>20)
	}
}

// peakRSS returns VmHWM from /proc/self/status in bytes, or -1.
func peakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	_, after, ok := bytes.Cut(b, []byte("VmHWM:"))
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
