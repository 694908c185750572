package linalg

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// threadCPU returns the CPU time of the calling thread in seconds. The
// benchmarks lock their goroutine to its thread and report GFLOP/s per
// second of CPU besides per second of wall time: on a machine shared with
// other jobs, the CPU time excludes the time the thread waited for a core,
// which makes kernel-to-peak ratios comparable across loads.
func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return float64(ts.Sec) + float64(ts.Nsec)*1e-9
}

// cpuTimer measures a benchmark's thread CPU time; stop reports flops per
// CPU second as "GFLOP/cpu-s" and per wall second as "GFLOP/s".
type cpuTimer struct {
	b     *testing.B
	start float64
}

func startCPU(b *testing.B) cpuTimer {
	runtime.LockOSThread()
	b.ResetTimer()
	return cpuTimer{b, threadCPU()}
}

func (t cpuTimer) stop(flops float64) {
	cpu := threadCPU() - t.start
	t.b.StopTimer()
	runtime.UnlockOSThread()
	t.b.ReportMetric(flops/t.b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu > 0 {
		t.b.ReportMetric(flops/cpu/1e9, "GFLOP/cpu-s")
	}
}

// stopOp reports the thread's CPU time per operation as "cpu-ms/op", for
// benchmarks of single-threaded calls that count no flops.
func (t cpuTimer) stopOp() {
	cpu := threadCPU() - t.start
	t.b.StopTimer()
	runtime.UnlockOSThread()
	if cpu > 0 {
		t.b.ReportMetric(cpu*1e3/float64(t.b.N), "cpu-ms/op")
	}
}
