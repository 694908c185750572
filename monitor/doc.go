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
package monitor
