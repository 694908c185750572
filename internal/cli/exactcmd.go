package cli

import (
	"time"

	"github.com/dime-project/dime/exact"
)

func runExact(e *env, args []string) error {
	fs := newFlagSet(e, "exact", "FILE --x COLS --y COLS [flags]")
	var ef estimatorFlags
	ef.register(fs)
	var in inputFlags
	in.register(fs)
	n := fs.Int("sample", 1024, "rows of the exact estimate: a seeded uniform sample when the input has more")
	force := fs.Bool("force", false, "allow --sample above 8192 (O(n³) time, 8n² bytes per matrix)")
	testPerms := fs.Int("test-permutations", 0, "null replicates B of the independence test (p >= 1/(B+1)); 0 uses the P permutations of DiME, more costs B-P eigenproblems")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	path, err := onePath("exact", pos)
	if err != nil {
		return err
	}
	xcols, ycols, err := ef.views()
	if err != nil {
		return err
	}
	cfg, err := ef.exactConfig()
	if err != nil {
		return err
	}
	if err := checkSampleSize(*n, *force); err != nil {
		return err
	}
	if *testPerms < 0 || *testPerms > 100000 {
		return usagef("--test-permutations %d: want 0 to 100000", *testPerms)
	}
	cfg.TestPermutations = *testPerms
	start := time.Now()
	s, err := readSample(e, &in, path, xcols, ycols, *n, ef.seed, ef.progress)
	if err != nil {
		return err
	}
	res, err := exact.Estimate(s.x, s.y, cfg)
	if err != nil {
		return err
	}
	rep := exactReport(res, cfg, xcols, ycols, time.Since(start))
	rep.Input, rep.SampledFrom, rep.SkippedRows = describeSample(path, s), s.seen, s.skipped
	return printReport(e.stdout, rep, ef.asJSON)
}
