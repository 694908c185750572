package cli

import (
	"time"

	"github.com/dime-project/dime/exact"
)

func runExact(e *env, args []string) error {
	fs := newFlagSet(e, "exact", "INPUT... --x COLS --y COLS [flags]")
	var sf sampleFlags
	sf.register(fs, 1024, "rows of the exact estimate: a seeded uniform sample when the input has more")
	testPerms := fs.Int("test-permutations", 0, "null replicates B of the independence test (p >= 1/(B+1)); 0 uses the P permutations of DiME, more costs B-P eigenproblems")
	inputs, xcols, ycols, cfg, err := sf.parse(fs, "exact", args)
	if err != nil {
		return err
	}
	if *testPerms < 0 || *testPerms > 100000 {
		return usagef("--test-permutations %d: want 0 to 100000", *testPerms)
	}
	cfg.TestPermutations = *testPerms
	start := time.Now()
	s, err := sf.read(e, inputs, xcols, ycols)
	if err != nil {
		return err
	}
	res, err := exact.Estimate(s.x, s.y, cfg)
	if err != nil {
		return err
	}
	rep := exactReport(res, cfg, xcols, ycols, time.Since(start))
	rep.Input, rep.SampledFrom, rep.SkippedRows = describeSample(s), s.seen, s.skipped
	return printReport(e.stdout, rep, sf.est.asJSON)
}
