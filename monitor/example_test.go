package monitor_test

import (
	"fmt"

	"github.com/dime-project/dime/monitor"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// Watch a stream whose views become dependent halfway, in tumbling windows
// of 5000 rows, alerting when DiME exceeds 0.05. The normalized score puts
// DiME on a scale of 0 (independent) to 1 (Y = X).
func ExampleMonitor() {
	cfg := monitor.Config{Stream: stream.DefaultConfig(), WindowRows: 5000, AlertAbove: monitor.Threshold(0.05)}
	cfg.Stream.Features = 64
	m, err := monitor.New(2, 2, cfg, func(w monitor.Window) error {
		fmt.Printf("window %d, rows [%d, %d): DiME %.3f, normalized %.3f, alert %v\n",
			w.Index, w.StartRow, w.EndRow, w.Result.DiME, w.Result.DiMENormalized, w.Alert)
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
	// window 0, rows [0, 5000): DiME -0.001, normalized -0.001, alert false
	// window 1, rows [5000, 10000): DiME 0.001, normalized 0.001, alert false
	// window 2, rows [10000, 15000): DiME 0.303, normalized 0.304, alert true
	// window 3, rows [15000, 20000): DiME 0.299, normalized 0.301, alert true
}

// Compare windows with a reference: the dependence of the first 4000 rows
// is the reference's, then it goes.
func ExampleConfig_baseline() {
	cfg := stream.DefaultConfig()
	cfg.Features = 32
	ref, err := stream.New(2, 2, cfg) // in the command: a state saved by score --save-state
	if err != nil {
		panic(err)
	}
	x, y, _ := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}, 20000)
	if err := ref.Add(x.RawMatrix().Data, y.RawMatrix().Data, 20000); err != nil {
		panic(err)
	}
	m, err := monitor.New(2, 2, monitor.Config{WindowRows: 2000, Baseline: ref, AlertChangeP: monitor.Threshold(0.01)},
		func(w monitor.Window) error {
			c := w.Change
			fmt.Printf("window %d: DiME %.3f, baseline %.3f, change %+.3f ± %.3f, p %.2g, alert %v\n",
				w.Index, w.Result.DiME, c.BaselineDiME, c.Difference, c.StdErr, c.PValue, w.Alert)
			return nil
		})
	if err != nil {
		panic(err)
	}
	for _, spec := range []synth.Spec{{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 2}, {Kind: synth.Independent, Dim: 2, Seed: 3}} {
		x, y, _ := synth.Generate(spec, 4000)
		if err := m.Add(x.RawMatrix().Data, y.RawMatrix().Data, nil, 4000); err != nil {
			panic(err)
		}
	}
	// Output:
	// window 0: DiME 0.022, baseline 0.022, change +0.000 ± 0.002, p 0.94, alert false
	// window 1: DiME 0.024, baseline 0.022, change +0.001 ± 0.001, p 0.51, alert false
	// window 2: DiME -0.002, baseline 0.022, change -0.024 ± 0.002, p 0.00035, alert true
	// window 3: DiME 0.001, baseline 0.022, change -0.020 ± 0.002, p 0.00038, alert true
}
