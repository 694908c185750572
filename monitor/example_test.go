package monitor_test

import (
	"fmt"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// Watch a stream whose views become dependent halfway, in tumbling windows
// of 5000 rows, alerting when DiME exceeds 0.05.
func ExampleMonitor() {
	cfg := monitor.Config{Stream: stream.DefaultConfig(), WindowRows: 5000, AlertAbove: monitor.Threshold(0.05)}
	cfg.Stream.Features = 64
	m, err := monitor.New(2, 2, cfg, func(w monitor.Window) error {
		fmt.Printf("window %d, rows [%d, %d): DiME %.3f, alert %v\n", w.Index, w.StartRow, w.EndRow, w.Result.DiME, w.Alert)
		return nil
	})
	if err != nil {
		panic(err)
	}
	for _, kind := range []synth.Kind{synth.Independent, synth.Sine} {
		x, y, _ := synth.Generate(synth.Spec{Kind: kind, Dim: 2, Noise: 0.2, Seed: 1}, 10000)
		if err := m.Add(x.RawMatrix().Data, y.RawMatrix().Data, nil, 10000); err != nil {
			panic(err)
		}
	}
	if err := m.Close(); err != nil { // reports a last partial window, if any
		panic(err)
	}
	// Output:
	// window 0, rows [0, 5000): DiME -0.001, alert false
	// window 1, rows [5000, 10000): DiME 0.000, alert false
	// window 2, rows [10000, 15000): DiME 0.295, alert true
	// window 3, rows [15000, 20000): DiME 0.290, alert true
}
