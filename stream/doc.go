// Package stream is the streaming RFF estimator of dime: row-major blocks of
// two views in, matrix-based entropies, mutual information and DiME out, in
// O(D²) memory whatever the number of rows.
//
// # Overview
//
// An Estimator maps each row of X and Y to random Fourier features (package
// rff) and adds them to covariance accumulators (package covariance): the X
// part, the Y part, the joint, and P permuted joints. At any moment Result
// gives S_X, S_Y, S_XY, MI_α = S_X + S_Y − S_XY, DiME by permutations (the
// mean over the P permuted accumulators of S(C_π) − S(C_XY), with its
// standard error) and DiME analytic (S(C⊥) − S(C_XY), C⊥ the all-pairs
// product of marginals computed from the parts), with every parameter used.
//
// With N rows and D frequencies, the estimates converge, as N grows, to
// population quantities whose ceiling is log(2D), not log N: they are not the
// exact DiME of a batch of N rows (package exact), and should be compared
// with like. At independence the permutation estimate is unbiased while the
// analytic one carries a small positive bias of order D/N; once N ≫ D the two
// agree.
//
// # Normalized score
//
// DiME is in nats, and its scale depends on the estimator (exact DiME is
// bounded by log n, RFF DiME by log 2D), on the kernel and on the
// bandwidths. Beside it every estimator reports
//
//	dime_normalized = DiME(X;Y) / √(DiME(X;X′) · DiME(Y;Y′)),
//
// where DiME(X;X′) is the DiME of X with an identical copy of itself, seen
// through the same kernel and bandwidth as X on both sides, computed by the
// same estimator as DiME(X;Y) (same α, same kind of product of marginals);
// likewise for Y. It is 0 in expectation when X and Y are independent (the
// numerator is), and 1 when Y is X (same columns, same kernel and
// bandwidth): then the numerator is the denominator's two equal factors.
// Values are not clipped: noise makes it slightly negative under
// independence, and nothing forbids values a little above 1 (DiME has no
// Cauchy–Schwarz inequality). It is NaN when a self term is not positive
// (a constant view).
//
//   - Exact (Gram matrices of n rows, permutations π_1 … π_P):
//     DiME(X;X′) = mean_k S(K_X ∘ Π_k K_X Π_kᵀ) − S(K_X ∘ K_X), with the
//     permutations of the estimate. K_X ∘ K_X is the Gram matrix of the
//     kernel k_X², so with Y = X and σ_Y = σ_X the ratio is exactly 1.
//   - RFF: the copy X′ is X seen through a second, independent draw of D
//     frequencies a′_j of X's kernel and bandwidth: the joint features of
//     the pair (x, x) are e^{i(a_j + a′_j)·x}, and the product of marginals
//     pairs M(X; a) (from X's part accumulator) with M(X; a′) (from an
//     accumulator of the copy's part features), exactly as for (X, Y). The
//     copy needs its own frequencies: pairing a_j with a_{π(j)}, another of
//     X's own frequencies, uses every frequency twice, which correlates the
//     joint features and was measured to inflate the self term by 8% to 15%
//     (a shift π(j) = j + 1: ratio 0.87 to 0.93 on Y = X, d = 10, D = 256,
//     20 000 rows); with π(j) = j + D/2 the pairs j and j + D/2 even carry
//     the same frequency a_j + a_{j+D/2}, and the ratio fell to 0.47.
//
// # Shuffle scopes: why they matter
//
// The permuted accumulators stand for the product of marginals: x_i paired
// with the y of another row. That is only right if the two rows are
// independent draws. Rows are paired within a shuffle scope: by default each
// block given to Add (blocks smaller than DefaultMinScopeRows are pooled),
// or, with Config.ShuffleRows = R, R consecutive rows whatever the blocks.
// When the input is sorted or grouped (by time, by user, by label), the rows
// of one block resemble each other, a permuted pair is then not an
// independent pair, and DiME is biased toward 0: choose R large enough to
// span many groups.
//
// Inside a scope of n rows, the rows are put in a random order (seeded by the
// seed and the scope's own content, so that the same scope is paired the same
// way wherever it is processed) and X at position i is paired with Y at
// position i + k, cyclically, for k = 1 … P: P random derangements, no row
// paired with itself. Each row's features are computed once per view; joint
// and permuted features come from them without further sin or cos.
//
// # Parallelism
//
// Config.Workers goroutines (GOMAXPROCS by default, at most P+3) add each
// scope: worker i owns accumulators i, i+W, … of X, Y, joint, permuted, and
// goes through the scope chunk by chunk (256 positions), mapping every row
// itself and adding its accumulators' rank-k updates; the workers wait for
// each other only at the end of the scope. No accumulator is duplicated,
// and each receives the same updates in the same order whoever computes
// them: results are bit-identical for any number of workers
// (TestWorkersAgree), and memory grows only by each worker's buffers. Add
// does not allocate in steady state. The P + 4 entropies of a Result are
// computed concurrently too.
//
// # Bandwidths
//
// Each view's bandwidth is explicit, fixed (√(d/2), the paper's), median (the
// median heuristic) or auto (the σ that maximizes exact DiME on a sample,
// exact.ResolveBandwidths). Median and auto are resolved on the first
// Config.PilotRows rows, which are held back meanwhile, and then held fixed
// for the whole stream.
//
// # States
//
// WriteState saves an estimator (settings, bandwidths, row counts, shard
// ids, column names and accumulators; versioned, with a documented layout in
// state.go, and checksummed) and ReadState restores it: continuing a restored
// estimator gives exactly what the original would have given. ReadState
// checks every size a state declares against the bytes it holds before
// allocating, so that a forged state cannot make it allocate more than about
// twice its size, and it does not build the feature maps, which only adding
// rows needs. Merge adds a shard's estimator to another: the result is the
// estimator of the union of the rows. Shards must share their feature maps,
// so data-dependent bandwidths (median, auto), which differ from shard to
// shard, must be replaced by explicit values for sharded runs.
//
// Every estimator has a random 128-bit ShardID, and a merge carries the ids
// of both sides (up to MaxShards): Merge refuses estimators that share an id
// (ErrOverlap), since their rows would count twice, and row counts that
// would overflow. The ids change nothing in the estimates.
//
// # In memory
//
// EstimateMatrices estimates from two matrices, all rows forming one scope.
// EstimateWithPermutations takes the permutations of exact.Permutations, so
// that RFF and exact estimates of the same rows pair the same rows and differ
// only by the feature approximation; it uses the n×n Gram matrix of the
// features when n < 2D, which has the same nonzero spectrum and costs less.
package stream
