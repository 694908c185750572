package cli

import (
	"math"
	"time"

	"github.com/dime-project/dime/exact"
)

func runExact(e *env, args []string) error {
	fs := newFlagSet(e, "exact", "INPUT... --x COLS --y COLS [flags]")
	var sf sampleFlags
	sf.register(fs, "rows of the exact estimate: a seeded uniform sample when the input has more")
	testPerms := fs.Int("test-permutations", 0, "independence test: 0 is the HSIC test of the same Gram matrices (random pairings, exact down to p = 0.001, an asymptotic tail below); B > 0 is the permutation test of the joint entropy with max(B, P) null replicates (p >= 1/(B+1), B-P more eigenproblems)")
	normalized := fs.Bool("normalized", true, "report dime_normalized, DiME over the views' DiME with copies of themselves (2(P+1) more eigenproblems: more than half the time)")
	inputs, opts, cfg, err := sf.parse(fs, "exact", args)
	if err != nil {
		return err
	}
	if *testPerms < 0 || *testPerms > 100000 {
		return usagef("--test-permutations %d: want 0 to 100000", *testPerms)
	}
	cfg.TestPermutations = *testPerms
	cfg.SkipNormalized = !*normalized
	start := time.Now()
	s, err := sf.read(e, inputs, opts)
	if err != nil {
		return err
	}
	rcfg, pilot, err := sf.resolve(&s, cfg, false, false)
	if err != nil {
		return err
	}
	res, err := exact.Estimate(s.x, s.y, rcfg)
	if err != nil {
		return err
	}
	rep := exactReport(res, cfg, s.xcols, s.ycols, time.Since(start))
	rep.Input, rep.SampledFrom, rep.SkippedRows = describeSample(s), s.seen, s.skipped
	rep.SetScaling(pilot.Scaling, pilot.Rows, s.pilot.Method.String())
	_, dx := s.x.Dims()
	_, dy := s.y.Dims()
	warnReport(e, &rep, dx, dy, math.Log(float64(res.Rows)))
	return printReport(e.stdout, rep, sf.est.asJSON)
}
