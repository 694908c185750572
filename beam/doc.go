// Package dimebeam scores datasets that outgrow one machine with dime's
// streaming RFF estimator on Apache Beam: the same pipeline runs on Google
// Cloud Dataflow, Apache Flink and Apache Spark, and locally on Prism,
// Beam's portable reference runner, which needs no cluster. It lives in a
// module of its own (github.com/dime-project/dime/beam), so that the core
// library and the dime command keep their small set of dependencies.
//
// # Overview
//
// Sums(s, files, cfg) turns a PCollection of file names, directories and
// glob patterns into a PCollection of one Merged, the exact sum of the
// estimators of every split, which Results turns into the stream.Result of
// every row and WriteState into its state (stream.WriteState; dime merge
// and stream.ReadState read it), in these steps:
//
//  1. the names are resolved together on a worker by package dataset
//     (dataset.Resolve) into data files, sorted, each once, as dime
//     score resolves its arguments;
//  2. the Parquet footers are read on the workers, and the dataset is cut,
//     in its order, into Splits of at most Config.SplitRows rows, as Spark
//     plans file partitions: consecutive small files are packed into one
//     split, a large file is cut into runs of whole row groups (read with
//     decode.OpenRowGroups), a CSV or Arrow IPC file (rows unknown before
//     reading) is a split of its own; the splits, not rows, are
//     redistributed over the workers (beam.Reshuffle);
//  3. each split is read by package decode, block by block in constant memory,
//     file after file, into a stream.Estimator of its own, whose exact sum
//     (stream.WriteSum, written one accumulator at a time) is the split's
//     output; a worker process scores only as many splits at once as its
//     cores keep busy, since each estimator already adds its rows on
//     GOMAXPROCS goroutines;
//  4. the splits' sums are added exactly in a tree of two levels: keyed by
//     their split's shard, ⌈√n⌉ shards of at most ⌈√n⌉ of the n splits
//     each, they are grouped per key and added (stream.MergeSums), and the
//     shards' sums are collected by a global combine into the Merged that
//     the last stages add (stream.EstimatorOfSums). No worker thus receives
//     more than ⌈√n⌉ sums (31 for the 954 splits of 10⁹ rows), whether or
//     not the runner lifts combiners before the shuffle (Beam's portable
//     Flink and Spark runners do not), and a worker that adds sums holds
//     one accumulator of each at a time, not the sums.
//
// What travels between workers is never rows. With Config.TempDir (the
// dimebeam command's --temp_location, or a local temporary directory when
// the workers run in its process) each sum is a file there (stream.Sum's
// compact exact encoding: 27 MB for a split of 50,000 rows at D = 256 with
// the defaults, 32 MB for one of 2²⁰ rows, 38 MB for a shard of 31 such
// splits), and only its name, size and checksum (a Partial) go through the
// runner. Without a TempDir the sums themselves are the elements, which a
// runner such as Prism holds and copies in its memory.
//
// RankSums(s, files, cfg) does the same for a ranking of many candidates
// against a target (package rank, dimebeam rank): the same splits, read
// the same way, each into a rank.Accumulator whose exact sum
// (rank.WriteSum) is added in the same tree (rank.MergeSums) into a Merged,
// which RankAccumulator (rank.AccumulatorOfSums), RankStates and
// WriteState turn into the multi-pair accumulator of every row and its
// state.
//
// ScoreFiles is Sums and then Results, which computes the stream.Result of
// the merged sum: the entropies, mutual information, DiME (analytic with
// its jackknife over K groups of rows, by permutations when P > 0), the
// normalized score and the test of independence, as one estimator over the
// same rows computes them (see below for what depends on the groups).
//
// # Same result whatever the runner does
//
// Runners merge accumulators in whatever order and grouping their workers
// finish, and floating-point addition is not associative. stream.Sum adds
// estimators exactly (covariance.ExactSum and covariance.ExactMean: every
// entry of every group's accumulators, self terms, permuted joints and
// first moments in 128-bit fixed point, rounded once per split onto
// multiples of 2⁻⁷² and once at the end back to float64; counts as
// integers), so the merged state is the same bit for bit on every run, for
// any order of merges, bundling or number of workers
// (TestSameBytesEveryRun). Since each split has its own estimator, the state
// does not depend on how a runner groups splits into bundles either. Against
// one estimator reading the same files in order (dime score), entropies, MI
// and analytic DiME agree to round-off (measured 1e-14 relative; the tests
// require 1e-9), and so do the test statistic and p-value. What depends on
// how rows fall into groups does not match to round-off: each split's
// estimator deals its chunks to the K groups from its own start, and the
// normalized score's self terms see the first rounds of chunks of each
// split; so the jackknifed dime, dime_stderr, dime_normalized and
// dime_self_* are those of another, equally valid grouping (over 8 files of
// 50,000 rows at D = 256 in 8 splits: dime 6e-5 relative apart, within its
// standard error of 2e-3 relative; dime_normalized 1.3% apart). A split
// cuts its rows into blocks of the batch size across its parts, as dime
// score's dataset reader cuts a dataset across its files, so a dataset in
// one split gives every field of dime score to the bit, float32 products
// included. DiME by permutations pairs rows within
// shuffle scopes, which end at split boundaries, so it agrees to within its
// permutation noise only.
//
// # Splits: parallelism against a fixed cost
//
// A split's estimator holds 7K + P accumulators of (2D)² entries whatever
// its rows, and its sum is written, added exactly and read once per split:
// a fixed cost (about 27 MB and a few CPU seconds per split at D = 256 with
// the default 7 groups, BENCHMARKS.md) that a split of 50,000 rows does not
// amortize. Config.SplitRows (dimebeam
// --split-rows, default 2²⁰ rows) bounds the rows of a split: the default
// packs a dataset of many small files into few splits, so that the
// pipeline costs about what dime score costs on the same files
// (BENCHMARKS.md); a smaller value gives more splits, thus more workers
// busy on a small dataset, at that fixed cost each. A row group is never
// cut, so a split can exceed SplitRows by a row group.
//
// # Bandwidths
//
// Fixed (√(d/2)) and explicit bandwidths need no data: every split applies
// them. The median and auto rules look at data: a first stage,
// ChooseBandwidths, draws a seeded uniform sample of Config.SampleRows rows
// of the whole dataset (bottom-k sampling: every row gets a pseudo-random
// key from the seed, its file and its index in the file, and the sample is
// the rows of smallest keys; samples of splits merge exactly, in any order,
// into the sample of the dataset), chooses σ on it as a streaming
// estimator's pilot would (exact.ResolveBandwidths), and passes it to every
// split as a side input. All splits thus share one feature map, which their
// states must to merge; the result reports the rule and the σ it chose.
//
// # Datasets
//
// Inputs are what dime score takes, resolved by package dataset: local files, directories (read recursively; names starting with
// "." or "_" are skipped), globs, hive partitions (Config.Read's Files.Where keeps some
// of them) and object-storage URLs (s3://, gs://, azblob://, as package dataset
// opens them), in the formats of package decode (Parquet, Arrow IPC files and
// streams, CSV). Every worker must be able to read them. Outputs (WriteFile) go through Beam's filesystem registry:
// local paths, and gs:// or s3:// in programs that import those
// filesystems, as the dimebeam command does.
//
// # Limits
//
// A half-life (decaying windows) is refused: a pipeline has no row order.
// The sample of the median and auto rules travels as one element, so it is
// bounded (MaxSampleRows). Each split being scored holds an estimator,
// 7K + P packed triangles of about 4·(2D)² bytes (51 MiB at D = 256 with
// the default K = 7 groups and P = 0), and writes its sum one accumulator
// at a time; a shard's stage holds one accumulator of each of its sums; the
// last stages hold the merged estimator, as dime score does. With the sums
// in files, dimebeam's peak resident memory on Prism is 1.4 to 1.6 times
// dime score's on the same rows, with one split or four (BENCHMARKS.md).
// Without a TempDir a shard's stage holds its splits' sums whole (up to
// ⌈√n⌉ × 30 MB), and Prism copies each several times.
// The lag-1 autocorrelations of the rows (stream.Result.Lag1X, Lag1Y) are
// reported for a dataset of one split, as dime score reports them; the
// rows of several splits have no order, and they are left out.
// File names are expanded on a worker, not put into the job, so that a job
// stays small whatever the number of files: runners bound the size of a
// job's description (Dataflow's request limit; Prism v2.77.0 in loopback
// mode took jobs of 300 MB of beam.Create values in a test here, but holds
// them in memory).
package dimebeam
