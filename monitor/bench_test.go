package monitor

import (
	"fmt"
	"testing"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// BenchmarkWindows streams windows of 10,000 rows (d = 10 per view, the
// defaults: D = 256, P = 5) through a monitor, without and with a baseline
// (K = 5 blocks): the cost of the change test per window.
func BenchmarkWindows(b *testing.B) {
	const d, rows = 10, 10000
	cfg := stream.DefaultConfig()
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 2, Seed: 1}, rows)
	if err != nil {
		b.Fatal(err)
	}
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	ref, _ := stream.New(d, d, cfg)
	if err := ref.Add(xd, yd, rows); err != nil {
		b.Fatal(err)
	}
	for _, base := range []*stream.Estimator{nil, ref} {
		b.Run(fmt.Sprintf("baseline=%v", base != nil), func(b *testing.B) {
			m, err := New(d, d, Config{Stream: cfg, WindowRows: rows, Baseline: base}, func(Window) error { return nil })
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				for i := 0; i < rows; i += 2000 {
					if err := m.Add(xd[i*d:(i+2000)*d], yd[i*d:(i+2000)*d], nil, 2000); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
