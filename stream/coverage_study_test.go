package stream

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/dime-project/dime/synth"
)

// TestCoverageStudy prints, when DIME_COVERAGE_STUDY is the number of
// datasets per kind, how often the default 95% interval (DiMELow,
// DiMEHigh) of 5000 dependent rows covers the quantity it estimates: the
// default DiME at the same settings — the same frequencies (seed 1), and
// the columns' centers and scales that the dataset's own pilot chose — on
// DIME_COVERAGE_TRUTH further rows (default 200 000) of the same kind,
// drawn from another seed. Each dataset has its own target, since its
// pilot (the first 1000 rows) chose its own scales.
//
// Beside the coverage it prints the mean error of the 5000-row DiME
// against its target, the spread of the targets over the datasets' pilots
// (what a fixed target, the same for every dataset, would add to the
// error), and the targets' own standard error. Data seeds from
// DIME_COVERAGE_SEED (default 4600000000); DIME_COVERAGE_GROUPS the
// groups K, DIME_COVERAGE_ONLY one kind (e.g. "sine2").
func TestCoverageStudy(t *testing.T) {
	v := os.Getenv("DIME_COVERAGE_STUDY")
	if v == "" {
		t.Skip("set DIME_COVERAGE_STUDY to the number of datasets per kind")
	}
	datasets, _ := strconv.Atoi(v)
	truthRows := 200000
	if s := os.Getenv("DIME_COVERAGE_TRUTH"); s != "" {
		truthRows, _ = strconv.Atoi(s)
	}
	seed := uint64(4600000000)
	if s := os.Getenv("DIME_COVERAGE_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	run := func(spec synth.Spec, n int, sc Scaling) (Result, Scaling) {
		cfg := DefaultConfig()
		cfg.SkipNormalized = true
		cfg.Scaling = sc
		if g := os.Getenv("DIME_COVERAGE_GROUPS"); g != "" {
			cfg.Groups, _ = strconv.Atoi(g)
		}
		e, err := New(spec.Dim, spec.Dim, cfg)
		if err != nil {
			t.Fatal(err)
		}
		feedSynth(t, e, spec, n)
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		return r, e.Scaling()
	}
	fmt.Println("| kind | datasets | dime_ci95 covers | ± 2 dime_stderr covers | mean error ± s.e. | mean dime_stderr | sd of error | sd of targets over pilots | mean target s.e. |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for ki, spec := range []synth.Spec{
		{Kind: synth.Gaussian, Dim: 2, MI: 0.5},
		{Kind: synth.Sine, Dim: 2, Noise: 0.5},
		{Kind: synth.Gaussian, Dim: 10, MI: 2},
	} {
		name := spec.Kind.String() + strconv.Itoa(spec.Dim)
		if only := os.Getenv("DIME_COVERAGE_ONLY"); only != "" && only != name {
			continue
		}
		var cover, cover2 int
		var errs, targets []float64
		var seSum, tseSum float64
		for i := range datasets {
			spec.Seed = seed + uint64(ki)*100000 + uint64(i)
			var pilot Scaling
			if os.Getenv("DIME_COVERAGE_INDEP_PILOT") != "" {
				ps := spec
				ps.Seed += 70000
				_, pilot = run(ps, 1000, Scaling{})
			}
			r, sc := run(spec, 5000, pilot)
			spec.Seed += 50000
			truth, _ := run(spec, truthRows, sc)
			if r.DiMELow <= truth.DiME && truth.DiME <= r.DiMEHigh {
				cover++
			}
			if math.Abs(r.DiME-truth.DiME) <= 2*r.DiMEStdErr {
				cover2++
			}
			errs, targets = append(errs, r.DiME-truth.DiME), append(targets, truth.DiME)
			seSum, tseSum = seSum+r.DiMEStdErr, tseSum+truth.DiMEStdErr
			if os.Getenv("DIME_COVERAGE_VERBOSE") != "" {
				fmt.Printf("%s %d dime %.5f se %.5f target %.5f ± %.5f\n", name, i, r.DiME, r.DiMEStdErr, truth.DiME, truth.DiMEStdErr)
			}
		}
		n := float64(datasets)
		me, sde := meanSD(errs)
		_, sdt := meanSD(targets)
		fmt.Printf("| %v d=%d | %d | %d (%.0f%%) | %d (%.0f%%) | %+.5f ± %.5f | %.5f | %.5f | %.5f | %.5f |\n", spec.Kind, spec.Dim, datasets,
			cover, 100*float64(cover)/n, cover2, 100*float64(cover2)/n, me, sde/math.Sqrt(n), seSum/n, sde, sdt, tseSum/n)
	}
}

// feedSynth adds n rows of the synthetic kind spec to e, in blocks of
// 5000.
func feedSynth(t *testing.T, e *Estimator, spec synth.Spec, n int) {
	t.Helper()
	src, err := synth.NewStream(spec)
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
}

// meanSD returns the mean and the sample standard deviation of v.
func meanSD(v []float64) (mean, sd float64) {
	for _, x := range v {
		mean += x / float64(len(v))
	}
	for _, x := range v {
		sd += (x - mean) * (x - mean) / float64(len(v)-1)
	}
	return mean, math.Sqrt(sd)
}
