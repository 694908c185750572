package cli

// baselineSettings are the estimator flags that a baseline's settings
// replace: with --baseline the rows are estimated as the baseline was
// (kernel, bandwidths, D, P, seed), so that both share their feature maps.
var baselineSettings = []string{"kernel", "sigma", "sigma-x", "sigma-y", "alpha", "features", "variant", "permutations", "groups", "seed", "shuffle-buffer", "pilot-rows", "standardize", "like", "rows"}

// refuseBaselineSettings refuses, with --baseline, the flags that would
// choose other settings than the baseline's, rather than ignoring them.
func refuseBaselineSettings(fs *flagSet, what string) error {
	for _, name := range baselineSettings {
		if fs.given(name) {
			return usagef("--%s with --baseline: the %s take the baseline's estimator settings (kernel, bandwidths, D, P, seed); drop --%s", name, what, name)
		}
	}
	return nil
}
