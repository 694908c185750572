package stream_test

import (
	"fmt"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// Stream blocks of rows through the estimator and read DiME at the end: the
// analytic estimate with its bias removed by the jackknife (the default),
// its standard error, the plug-in analytic estimate it corrects, the
// normalized score and the p-value of the independence test.
func ExampleEstimator() {
	cfg := stream.DefaultConfig()
	cfg.Features = 64
	est, err := stream.New(2, 2, cfg)
	if err != nil {
		panic(err)
	}
	data, _ := synth.NewStream(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1})
	x, y := make([]float64, 2000*2), make([]float64, 2000*2)
	for range 10 { // 10 blocks of 2000 rows
		data.Fill(x, y)
		if err := est.Add(x, y, 2000); err != nil {
			panic(err)
		}
	}
	r, err := est.Result()
	if err != nil {
		panic(err)
	}
	fmt.Printf("rows %d: DiME %.3f ± %.3f (plug-in %.3f), normalized %.2f, p = %.2g\n",
		r.Rows, r.DiME, r.DiMEStdErr, r.DiMEAnalytic, r.DiMENormalized, r.PValue)
	// Output: rows 20000: DiME 0.055 ± 0.000 (plug-in 0.056), normalized 0.06, p = 2.1e-53
}

// Score three shards separately and merge them exactly: the result is the
// same, bit for bit, in any order of the merges. Shards merge only if they
// share their scales and bandwidths: here the columns are used as they are;
// standardized shards take one Scaling (Config.Scaling, e.g. from the first
// shard's state or from ResolvePilot on the dataset's first rows).
func ExampleSum() {
	cfg := stream.DefaultConfig()
	cfg.Features = 64
	cfg.Standardize = false
	data, _ := synth.NewStream(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1})
	shard := func() *stream.Estimator { // in practice: stream.ReadState of a worker's state
		est, _ := stream.New(2, 2, cfg)
		x, y := make([]float64, 3000*2), make([]float64, 3000*2)
		data.Fill(x, y)
		est.Add(x, y, 3000)
		return est
	}
	var a, b stream.Sum
	a.Add(shard())
	b.Add(shard())
	b.Add(shard())
	if err := a.Merge(&b); err != nil { // a = s1 + (s2 + s3), exactly
		panic(err)
	}
	est, err := a.Estimator()
	if err != nil {
		panic(err)
	}
	r, _ := est.Result()
	fmt.Printf("rows %d, MI %.3f, DiME analytic %.3f\n", r.Rows, r.MutualInformation, r.DiMEAnalytic)
	// Output: rows 9000, MI 0.686, DiME analytic 0.295
}
