//go:build !linux

package linalg

import "testing"

// cpuTimer reports GFLOP/s per wall second only where the thread's CPU time
// is not available (see cputime_linux_test.go).
type cpuTimer struct{ b *testing.B }

func startCPU(b *testing.B) cpuTimer { b.ResetTimer(); return cpuTimer{b} }

func (t cpuTimer) stop(flops float64) {
	t.b.StopTimer()
	t.b.ReportMetric(flops/t.b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func (t cpuTimer) stopOp() { t.b.StopTimer() }
