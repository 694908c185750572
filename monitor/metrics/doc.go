// Package metrics exports the windows of a monitor (package monitor) as
// Prometheus metrics and serves them over HTTP the way Prometheus exporters
// do.
//
// # Overview
//
// New returns a Metrics, a prometheus.Collector; the monitor's emit function
// calls Observe with each closed window. Handler serves it at /metrics (GET
// and HEAD; other methods get 405 with an Allow header) together with the Go
// runtime and process collectors (go_*, process_*, go_build_info), a
// liveness probe at /healthz and a one-line pointer at /. Serve runs the
// handler on a listener until Close: a batch job keeps serving after its
// input ends for as long as it likes, so that a scrape still finds the last
// window.
//
// # Metrics
//
// Names follow Prometheus' naming guide: the dime_ prefix, base units as
// suffixes (estimates in nats end in _nats, times in _seconds), counters
// in _total. Every dime metric but dime_build_info has the constant labels
// x and y (the views' columns, bounded to MaxLabelBytes: see Labels).
// Gauges of the last closed window: dime_dime_nats, dime_dime_stderr_nats,
// dime_dime_analytic_nats, dime_dime_normalized (DiME over the geometric
// mean of its self terms, 0 if independent, 1 if Y = X: package stream
// defines it), dime_mutual_information_nats, dime_p_value,
// dime_entropy_x_nats, dime_entropy_y_nats, dime_entropy_joint_nats (NaN
// for a window of fewer than 2 rows), dime_window (its index),
// dime_window_rows, dime_alert (0 or 1) and
// dime_last_window_end_timestamp_seconds, the wall-clock time at which it
// closed (alert on time() - dime_last_window_end_timestamp_seconds to find
// a monitor whose input stalled). Before the first window closes they are
// all NaN, never 0, so that an alert on dime_p_value < 0.01 does not fire
// on a restart. Counters: dime_rows_total, dime_skipped_rows_total,
// dime_windows_total, dime_alerts_total. With a baseline
// (monitor.Config.Baseline), once the first window is compared:
// dime_baseline_dime_nats, dime_dime_change_nats,
// dime_dime_change_stderr_nats and dime_change_p_value. dime_build_info is
// 1, labelled by version, revision and goversion.
//
// A monitor of many pairs (monitor.Config.Rank; NewRank) exports, instead
// of the estimate gauges of one pair (dime_window, dime_window_rows,
// dime_alert, the timestamp and the counters stay), per candidate and
// labelled candidate (the view's name): dime_rank_dime_nats,
// dime_rank_dime_stderr_nats, dime_rank_dime_normalized, dime_rank_p_value,
// dime_rank_q_value, dime_rank_position (1 the largest DiME),
// dime_rank_dime_change_nats, dime_rank_change_p_value,
// dime_rank_change_q_value and dime_rank_changed
// (0 or 1), only for the current top K and at most K more of the changed
// candidates: the series of a candidate that leaves that set are deleted,
// so each has at most 2K series whatever the number of candidates or
// windows (TestRankSeriesBounded); and dime_rank_candidates,
// dime_rank_changed_candidates (all of them) and
// dime_rank_labelled_candidates (the series of each labelled gauge).
//
// Deprecated names, exported for one more release as duplicates with the
// same values (their help says so): dime_dime, dime_dime_stderr,
// dime_dime_analytic, dime_mutual_information, dime_entropy_x,
// dime_entropy_y, dime_entropy_joint, dime_baseline_dime, dime_dime_change
// and dime_dime_change_stderr: the same names with _nats.
package metrics
