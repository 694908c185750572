//go:build !dimefuzz && unix

package stream

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/dime-project/dime/synth"
)

// processCPU returns the CPU time (user + system) of the process in seconds:
// every goroutine's, so that a Result computed on several cores is charged
// all of its work.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)*1e-6
}

// BenchmarkWindowResult measures one monitor window's Result at the
// settings of dime monitor (the analytic estimator, K = 4 groups, the
// third-order jackknife, the normalized score, serial rows) at D = 256 and
// 128, d = 2 columns per view, per window size: the rows are added outside
// the timer,
// and each operation is one Result over the window. cpu-s/op is the CPU time
// of the process (user + system, every core) per Result, the figure to
// compare on a shared machine; ns/op is wall time.
//
//	GOMAXPROCS=1 go test ./stream -run '^$' -bench WindowResult -benchtime 5x
func BenchmarkWindowResult(b *testing.B) {
	const d = 2
	for _, c := range []struct{ D, rows int }{{256, 2000}, {256, 10000}, {256, 100000}, {128, 2000}, {128, 10000}} {
		b.Run(fmt.Sprintf("D=%d/rows=%d", c.D, c.rows), func(b *testing.B) {
			rows := c.rows
			cfg := DefaultConfig()
			cfg.RowModel, cfg.Features = SerialRows, c.D
			e, err := New(d, d, cfg)
			if err != nil {
				b.Fatal(err)
			}
			feed(b, e, synth.Spec{Kind: synth.Sine, Dim: d, Noise: 0.4, Seed: 7}, rows, 2000)
			if _, err := e.Result(); err != nil { // sizes the workspaces
				b.Fatal(err)
			}
			b.ResetTimer()
			start := processCPU()
			for range b.N {
				if _, err := e.Result(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((processCPU()-start)/float64(b.N), "cpu-s/op")
		})
	}
}
