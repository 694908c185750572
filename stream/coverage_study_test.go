package stream

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestCoverageStudy prints, when DIME_COVERAGE_STUDY is the number of
// datasets per kind, how often the default 95% interval (DiMELow,
// DiMEHigh) of 5000 dependent rows covers the estimator's own target: the
// default DiME at the same frequencies (seed 1) on DIME_COVERAGE_TRUTH rows
// (default 400 000) of the same kind, whose standard error is reported
// beside it. Data seeds from DIME_COVERAGE_SEED (default 4600000000);
// DIME_COVERAGE_GROUPS the groups K, DIME_COVERAGE_ONLY one kind.
func TestCoverageStudy(t *testing.T) {
	v := os.Getenv("DIME_COVERAGE_STUDY")
	if v == "" {
		t.Skip("set DIME_COVERAGE_STUDY to the number of datasets per kind")
	}
	datasets, _ := strconv.Atoi(v)
	truthRows := 400000
	if s := os.Getenv("DIME_COVERAGE_TRUTH"); s != "" {
		truthRows, _ = strconv.Atoi(s)
	}
	seed := uint64(4600000000)
	if s := os.Getenv("DIME_COVERAGE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	run := func(spec synth.Spec, n int) Result {
		cfg := DefaultConfig()
		cfg.SkipNormalized = true
		if g := os.Getenv("DIME_COVERAGE_GROUPS"); g != "" {
			cfg.Groups, _ = strconv.Atoi(g)
		}
		src, err := synth.NewStream(spec)
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(spec.Dim, spec.Dim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		const block = 5000
		x, y := make([]float64, block*spec.Dim), make([]float64, block*spec.Dim)
		for done := 0; done < n; done += block {
			b := min(block, n-done)
			src.Fill(x[:b*spec.Dim], y[:b*spec.Dim])
			if err := e.Add(x[:b*spec.Dim], y[:b*spec.Dim], b); err != nil {
				t.Fatal(err)
			}
		}
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for ki, spec := range []synth.Spec{
		{Kind: synth.Gaussian, Dim: 2, MI: 0.5},
		{Kind: synth.Sine, Dim: 2, Noise: 0.5},
		{Kind: synth.Gaussian, Dim: 10, MI: 2},
	} {
		if only := os.Getenv("DIME_COVERAGE_ONLY"); only != "" && only != spec.Kind.String() {
			continue
		}
		spec.Seed = seed + uint64(ki)*100000 + 99999
		truth := run(spec, truthRows)
		var cover, cover2 int
		var sum float64
		for i := range datasets {
			spec.Seed = seed + uint64(ki)*100000 + uint64(i)
			r := run(spec, 5000)
			if r.DiMELow <= truth.DiME && truth.DiME <= r.DiMEHigh {
				cover++
			}
			if r.DiME-2*r.DiMEStdErr <= truth.DiME && truth.DiME <= r.DiME+2*r.DiMEStdErr {
				cover2++
			}
			sum += r.DiME
		}
		fmt.Printf("| %v d=%d | %.5f ± %.5f | %.5f | %d | %d (%.0f%%) | %d (%.0f%%) |\n", spec.Kind, spec.Dim, truth.DiME, truth.DiMEStdErr,
			sum/float64(datasets), datasets, cover, 100*float64(cover)/float64(datasets), cover2, 100*float64(cover2)/float64(datasets))
	}
}
