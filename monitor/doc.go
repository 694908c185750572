// Package monitor watches the dependence between two views of a stream of
// rows over time: it cuts the stream into windows, estimates the entropies,
// mutual information and DiME of each with the streaming estimator (package
// stream), tests independence, and raises alerts when thresholds trip.
//
// # Windows
//
// Three kinds, chosen by Config:
//
//   - tumbling by rows (WindowRows = N): windows of exactly N rows, the last
//     one partial;
//   - tumbling by time (Window = W, with a time per row): buckets
//     [kW, (k+1)W) of the Unix epoch, UTC. A row whose time falls in a later
//     bucket closes the current window; buckets with no rows are not
//     reported. A row whose time lies before the current bucket (the time
//     column going backwards across a bucket boundary) is an error
//     (ErrLate), or, with Config.SkipLate, dropped and counted as skipped.
//     Rows out of order within a bucket are fine;
//   - exponential decay (HalfLife = h rows): one estimator sees every row,
//     each weighted 2^(−age/h), a sliding view; a report is made every
//     WindowRows rows (default h).
//
// The estimator and its accumulators are reused from window to window
// (Reset), never rebuilt; bandwidths chosen from the data (median, auto) are
// chosen on the first window's rows and kept.
//
// Row positions (Window.StartRow, EndRow, end exclusive) count the rows
// given to Add, that is the rows that enter estimates; rows dropped upstream
// (invalid values) are reported with Skip and counted in the window being
// read, not in the positions.
//
// # Independence test and alerts
//
// Each window carries stream.Result.PValue, the Student-t approximation from
// the P permuted accumulators (calibrated on null data; see package stream).
// Window.Alert is true when DiME exceeds Config.AlertAbove, falls below
// Config.AlertBelow, or the p-value falls below Config.AlertP; a nil
// threshold is unset.
//
// Windows with fewer than 2 rows (a last window of one row) are reported
// with NaN estimates.
//
// # Baselines: has the dependence changed?
//
// Drift monitoring compares the present with a reference period. With
// Config.Baseline, the estimator of a reference (n_b rows, DiME D_b; in the
// command, a state saved by dime score --save-state), each window (n rows,
// DiME D) carries a Change: D − D_b with a standard error and the p-value of
// "the dependence is the baseline's". Windows are estimated with the
// baseline's settings and bandwidths, so both use the same feature maps.
//
// The test. Under no change the rows of the window and of the reference
// come from one distribution, so D and D_b estimate the same population
// DiME μ. DiME is a smooth function of sample means (the covariance
// operators of the features), so E[D_n] = μ + b/n + O(n⁻²) and
// Var[D_n] = σ²/n + O(n⁻²): the two differ by sampling noise and by the
// difference of their biases, b/n − b/n_b, which matters when the window is
// much shorter than the reference. The monitor cuts each window into K
// blocks (Config.BaselineBlocks, default 5: ⌈WindowRows/K⌉ rows, or Window/K
// of time), adds each block's rows to an estimator of its own and merges
// them into the window's. Leaving block k out gives D₍ₖ₎ on about
// n(K − 1)/K rows, and the delete-a-group jackknife (Efron and Tibshirani,
// An Introduction to the Bootstrap, §11.5) estimates
//
//	v_J = (K − 1)/K · Σₖ (D₍ₖ₎ − D̄)²   the variance of D,
//	b̂/n = (K − 1) · (D̄ − D)           the bias of D,
//
// D̄ the mean of the D₍ₖ₎. Under no change Var[D_b] = σ²/n_b ≈ v_J·n/n_b and
// the bias of D_b is b/n_b ≈ (b̂/n)·n/n_b, whence
//
//	Δ  = D − D_b − (b̂/n)(1 − n/n_b)      (Change.Difference, .Correction)
//	se = √(v_J (1 + n/n_b))               (Change.StdErr)
//	t  = Δ/se,  p = 2·P(T_{K−1} > |t|)    (Change.T, .PValue)
//
// with Student's t of K − 1 degrees of freedom, those of v_J. The test
// looks only at accumulators (no second pass over the rows, no assumption on
// the distribution) and is two-sided: weaker and stronger dependence both
// count. Config.AlertChangeP raises an alert when p falls below it.
//
// Calibration and power, measured on held-out data (seeds not used while
// designing the test; TestBaselineCalibrated, TestBaselineChangeAlerts):
// with no change, 200 windows of 2000 rows (K = 5, a 20,000-row reference)
// over five kinds of dependence gave p-values at Kolmogorov–Smirnov distance
// 0.044 (D = 64) and 0.087 (D = 32) from the uniform (1% critical value
// 0.115), 6 and 8 below 0.05, 1 and 1 below 0.01 (binomial 99% bands
// [3, 19] and [0, 6]) with the default analytic-jackknife DiME, and 0.037
// and 0.056, 7 and 9, 4 and 1 with the permutation estimator (P = 5). The
// window's DiME is then already jackknifed over groups of rows, and the
// bias correction above is about 0 (10⁻⁵ to 10⁻⁴, against 10⁻³ with
// permutations);
// where the dependence changed half-way (a Gaussian's mutual information
// halving, a sine's noise doubling, a circle becoming independent), every
// window after the change alerted at p < 0.01 and 1 of the 60 before it. At
// independence the test is conservative (the jackknife overstates the
// variance of a degenerate statistic), so a change from independence to
// weak dependence is found later than a threshold on the p-value of
// independence (AlertP) would find it.
//
// The cost: K + 1 estimators in memory instead of one (about 65 MB each at
// the defaults, D = 256 and 4 groups: 7 matrices of (2D)² per group, the X
// and Y parts, the joint and the normalized score's four, measured as the
// live heap of one estimator) and, per window, K DiMEs beside the
// window's Result (each DiME 30 of a Result's 53 eigenproblems at the
// defaults: the leave-one-block-out windows need only their DiME). Blocks are
// shuffle scopes: a window's permutations pair rows within its blocks, so
// its numbers differ slightly (other pairings) from those of a monitor
// without a baseline. Not with exponential decay.
//
// # Many pairs
//
// With Config.Rank the windows (by rows or time) rank many candidates
// against one target instead: each window's rows go to one
// rank.Accumulator (package rank: one pass, feature maps shared), whose
// scales and bandwidths are chosen on the first window and kept, and
// Window.Ranking carries every pair's estimate, the top K, and the
// comparison with a baseline ranking (the first window, or
// Ranking.Baseline). A candidate has changed when
//
//	t = (D − D_b)/√(se² + se_b²),  p = 2·P(T_ν > |t|)
//
// (ν Welch–Satterthwaite's, from the two jackknifes' degrees of freedom)
// has a Benjamini–Hochberg q-value over the window's candidates below
// Ranking.ChangeP; the window then alerts. The jackknife blocks of a
// Baseline are not used: each pair's standard error is its own jackknife's.
package monitor
