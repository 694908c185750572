// Package rank estimates the dependence of many pairs of views over the same
// rows in one pass: every candidate against a target (dime rank), or every
// pair of a set of columns (dime matrix), with the estimator of dime score
// for each pair.
//
// # Contract
//
// An Accumulator takes row-major blocks of a table (Plan.Width values per
// row) and a Plan: the views (a column, a fixed-size list, a slice of one, or
// a group of columns, each as positions in a row) and the pairs (X view, Y
// view) to score. Results returns, for every pair, the stream.Result that
// dime score reports for it (DiME by the analytic estimator with the
// third-order jackknife, its standard error, dime_normalized, the RFF-HSIC
// p-value, entropies), the Benjamini–Hochberg q-value over the pairs, and
// the pair's rank by DiME. Memory is O(D²) per pair and per view, whatever
// the number of rows. States (WriteState, ReadState) merge (Merge) into the
// state of the union of the rows.
//
// # Shared work
//
// A pair (X, Y) of dime score needs, per group of rows of its jackknife, the
// part accumulators of X and Y, their joint accumulator, the first moments of
// all three, and, for dime_normalized, the copies' parts and self joints of
// each view. Only the joint depends on both views. An Accumulator therefore
// maps each view's rows to features once per chunk of 256 rows, with each
// feature map the view needs (the X map of a pair has the pair's seed, the Y
// map a seed derived from it: stream's rff.PairSpec), and adds them to part
// accumulators shared by every pair that holds the view; each pair adds only
// its joint. For a ranking of C one-column candidates against a target that
// is 1 + 2C rank-k updates per row instead of the 3C of C dime score runs
// (and 1 + C feature maps instead of 2C, one read instead of C), plus the
// self terms on one chunk in 16.
//
// Each pair's Result is computed from its groups as stream.Estimator
// computes it (stream.EstimateGroups), with the shared accumulators read
// under the pair's descriptions (covariance.Accumulator.Relabel).
//
// # Rows, scopes and groups: what equals dime score
//
// Rows are standardized per view (each column by its median and MAD on the
// pilot: the first Config.Stream.PilotRows rows, or the pilot given to
// ResolvePilot, which dime rank and matrix read as dime score does, a
// seeded sample of a Parquet dataset's rows; stream's "Units"
// documentation), pooled into shuffle scopes exactly as a
// stream.Estimator pools the same blocks, put in a random order
// (stream.ScopeOrder) and cut into chunks that go to the groups in turn.
// The order is seeded by a hash of the scope's rows of the views in
// Plan.OrderX and Plan.OrderY: one order for all pairs, so that the part
// accumulators can be shared. dime rank hashes every candidate as X and the
// target as Y: a ranking of one candidate is therefore dime score of that
// pair, bit for bit (TestOneCandidateIsScore). With several candidates the
// groups hold other rows than dime score's run of that pair would put in
// them: the quantities of the summed accumulators (entropies, plug-in DiME
// dime_analytic, the p-value) equal dime score's to round-off (8.6e-12
// relative with float64 products, TestManyCandidatesMatchScore), and the
// jackknifed DiME, its standard error and dime_normalized are the same
// estimator on another random grouping of the rows: they agree within the
// jackknife's noise, not to the bit.
//
// # Bandwidths and scales
//
// Config.Stream.BandwidthX is the rule of every view: fixed √(d/2) in units
// of the standardized columns, median (on the pilot rows, per view), or an
// explicit value; auto, which chooses a pair's two bandwidths together, is
// refused. Config.Sigmas, Centers and Scales give them explicitly (a state's
// Config): runs over shards that will be merged must share them.
//
// # Merging
//
// Merge adds float64 sums: the result is the accumulator of the union of the
// rows up to the order of additions (1e-14 with float64 products; with
// float32 products, whose chunk sums depend on which rows share a chunk, up
// to 1.1e-7, TestMergeOfPartsIsOneRun), refusing other settings, views,
// pairs, bandwidths or scales, and states that share a run's rows.
package rank
