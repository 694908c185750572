// Package stream is the streaming RFF estimator of dime: row-major blocks of
// two views in, matrix-based entropies, mutual information and DiME out, in
// O(D²) memory whatever the number of rows.
//
// # Overview
//
// An Estimator maps each row of X and Y to random Fourier features (package
// rff) and adds them to covariance accumulators (package covariance). At any
// moment Result gives S_X, S_Y, S_XY, MI_α = S_X + S_Y − S_XY, DiME with its
// standard error, a normalized score, and a p-value of independence, with
// every parameter used. Two DiME estimators are available:
//
//   - Analytic (Permutations = 0, the default): S(C⊥) − S(C_XY), C⊥ the
//     product of marginals over all N² pairs of rows, computed from the X
//     and Y part accumulators (covariance.ProductOfMarginals), with its
//     O(1/N), O((log N)/N) and O(1/N²) bias removed by a third-order
//     jackknife over K groups of rows (Groups, default 7; Jackknife chooses
//     lower orders). Per row: three rank-k updates (X
//     part, Y part, joint), split over the groups, and O(D) first moments.
//   - Permutations (P ≥ 1): the paper's, mean_k S(C_πk) − S(C_XY) over P
//     permuted-joint accumulators: P + 3 rank-k updates per row.
//
// With N rows and D frequencies, the estimates converge, as N grows, to
// population quantities whose ceiling is log(2D), not log N: they are not the
// exact DiME of a batch of N rows (package exact), and should be compared
// with like. Both DiME estimators are unbiased at independence (the
// permutation one exactly, the analytic one to the order its jackknife
// removes); once N ≫ D they agree.
//
// What the default DiME estimates. Exact DiME on n rows and the default
// streaming DiME on N rows are finite versions of one population quantity,
// the DiME of the kernel's covariance operators, from two sides. Exact DiME
// is the DiME of the n×n Gram matrices: it resolves more of the kernel's
// spectrum as n grows and, on dependent data, rises with n towards the
// population value (bounded by log n, it is biased low at small n). The
// streaming DiME is that of the covariance of 2D random features: a rank-2D
// approximation of the same operators, whose DiME lies below the kernel's
// by an amount that shrinks as D grows (roughly as D^(−1/2)); its own
// finite-N bias (the plug-in's, of order D/N) is what the jackknife removes,
// so at a fixed D it hardly moves with N. At a fixed D the default DiME is
// therefore below exact DiME on dependent data, by a gap that grows with n
// and shrinks with D; dime compare shows it on the user's own rows, and
// CALIBRATION.md gives the measured gaps by D and n.
//
// # The default estimator, derived
//
// Plug-in bias. With feature rows φ_i (unit norm, 2D entries), the joint
// covariance estimate Ĉ = (1/N) Σ φ_i φ_iᵀ is unbiased for C, but the
// entropy S is a concave, smooth function of the eigenvalues: by Jensen
// E S(Ĉ) ≤ S(C), and a second-order expansion around C gives
//
//	E S(Ĉ) = S(C) + b/N + O(1/N²),  b = ½ E D²S(C)[φφᵀ − C, φφᵀ − C] ≤ 0,
//
// (the first-order term vanishes since E Ĉ = C). b grows with the number of
// eigenvalues the noise spreads over, hence a bias of order D/N nats. The
// product of marginals Ĉ⊥ = M(X̂) ∘ M(Ŷ) (package covariance) is built from
// the two part estimates, and under independence E Ĉ⊥ = C⊥ = C too; its
// fluctuation is that of the parts, (M̂_X − M_X) ∘ M_Y + M_X ∘ (M̂_Y − M_Y)
// plus a term of order 1/N, smaller than the joint's (each part averages
// N rows in D dimensions, and the all-pairs average has no joint noise), so
// S(Ĉ⊥) shares only part of the downward bias: E[S(Ĉ⊥) − S(Ĉ_XY)] = θ +
// (b⊥ − b_XY)/N + O(1/N²) with b⊥ − b_XY > 0 at independence. That is the
// plug-in DiME's upward bias, measured +0.008 at 20 000 rows and +0.004 at
// 50 000 (D = 256), and +0.0051 ± 0.0001 at 5000 rows, D = 32
// (TestDefaultsCalibratedUnderIndependence). No closed form of b was found
// that the accumulators give without a fourth-moment tensor of 2D×2D×2D×2D,
// so the bias is removed by resampling instead.
//
// Jackknife. Chunks of 256 consecutive positions of each shuffle scope go
// to the K groups in turn, and every group keeps its own X, Y and joint
// accumulators and first moments: their sums are the full sums, so the work
// per row is that of one set of accumulators (K times the memory). With
// D_all the plug-in DiME on every row and D_(−k) the plug-in DiME without
// group k (on N(K−1)/K rows, so with bias bK/((K−1)N)), the delete-a-group
// jackknife
//
//	DiME = K·D_all − (K−1)·mean_k D_(−k)
//
// has expectation θ + (Kb − Kb)/N + O(1/N²) = θ + O(1/N²): it removes the
// 1/N term exactly, whatever b, and leaves terms of order 1/N² and the
// non-smooth part of S (eigenvalues near 0, where x^α is not smooth at
// α = 1.01), the subject of the next paragraph. Its standard error is the
// jackknife's, ((K−1)/K) Σ_k (D_(−k) − mean)², with K − 1 degrees of
// freedom. Groups of unequal sizes (the last chunks of a stream,
// or decay) use the weighted version of Busing, Meijer and van der Leeden
// (1999, Statistics and Computing 9), with each group's weight. The jackknife
// needs 2K more eigenproblems per Result (C⊥ and C_XY without each group),
// nothing per row. It assumes the groups are exchangeable: with sorted or
// grouped input, raise ShuffleRows so that each group sees the whole mix.
//
// The (log N)/N term, and the generalized jackknife (the default). The
// expansion above assumes S smooth at C. When C is rank-deficient or has
// many eigenvalues near 0 — one column per view, or a discrete view (2D =
// 512 features of a variable with 5 values) — the sample covariance spreads
// noise eigenvalues λ̂ of order c/N over those directions, and each adds
// −λ̂ log λ̂ = (c/N)(log N − log c) to the entropy: a bias a·(log N)/N +
// b/N. For it the group jackknife leaves K·a(log N)/N − (K−1)·a·log(N(K−1)/K)·
// K/((K−1)N) = K·log(K/(K−1))·a/N (1.15·a/N at K = 4), which decays
// only like 1/N. Measured on tuning nulls (seeds 5000000 to 5000024, d = 1,
// discrete Y, D = 256, plug-ins over 1, 2, 4 and 8 of 8 groups of 2500
// rows): N·(mean plug-in DiME) = 32.5, 37.8, 43.1, 48.7 at N = 2500, 5000,
// 10 000, 20 000, rising by 5.3 to 5.6 per doubling (a ≈ 7.8, where a pure
// b/N + c/N² would rise by less each time), and the group jackknife left
// +0.00048 ± 0.00004 at 20 000 rows, the 1.15·a/N = 0.00045 predicted. The
// generalized jackknife (Gray and Schucany 1972, The Generalized Jackknife
// Statistic) also evaluates the plug-in D_(−k,k′) without each pair of
// groups (every pair up to 8 groups; beyond, the pairs (k, k + s mod K),
// s = 1 … 4) and extrapolates the three levels N, N(K−1)/K, N(K−2)/K to
// infinitely many rows:
//
//	DiME = w₀·D_all + w₁·mean_k D_(−k) + w₂·mean_k D_(−k,k′),
//
// with w₀ + w₁ + w₂ = 1 and w₀f(N) + w₁ mean f(N − n_k) + w₂ mean f(N −
// n_k − n_k′) = 0 for f(n) = 1/n and (log n)/n, so that both terms cancel
// whatever a and b (K = 4, equal groups: w = 13.77, −17.65, 4.88; group
// sizes enter through f, which also covers unequal groups). On the same 25
// datasets it left +0.00006 ± 0.00005 (and its spread across datasets was
// 14% above the group jackknife's: the three levels are strongly
// correlated; leaving out only neighbouring pairs (k, k+1) doubled it).
// It needs K ≥ 3 non-empty groups (otherwise the group jackknife is used)
// and K(K−1) more eigenproblems per Result: 4 + 2K + K(K−1) in all for
// DiME (24 at K = 4, against 12 for the group jackknife; with the self
// terms and the test, 45 against 33). Standard error: to
// first order both jackknifes share the plug-in's fluctuation, which the
// group jackknife's spread se_J estimates, but the correction δ = DiME −
// DiME_group (a second difference of the three levels, with weights of
// order 10) has noise of its own that se_J does not see. DiMEStdErr is
// therefore √(se_J² + δ²), the correction's size added in quadrature: a
// conservative rule, not a derived variance. Measured on 166 tuning nulls
// (seeds 5600000 to 5600081 and 5700000 to 5700083, the 24 cases of the
// calibration study in turn: four kinds, d = 1, 3, 10 per view, 5000 or
// 20 000 rows, D = 256): |DiME|/DiMEStdErr beyond the t(3) 97.5% point in
// 6 (3.6%; 9 with se_J alone, 13 for the group jackknife with its own).
//
// Bias on the same 166 tuning nulls: mean DiME +0.00006 ± 0.00008 (group
// jackknife +0.00049 ± 0.00010); d = 1: +0.00012 ± 0.00011 (+0.00102 ±
// 0.00018); d = 3: +0.00015 ± 0.00021 (+0.00046 ± 0.00021); d = 10:
// −0.00009 ± 0.00007 (−0.00004 ± 0.00008); 5000 rows: +0.00009 ± 0.00014
// (+0.00075 ± 0.00017); 20 000 rows: +0.00002 ± 0.00006 (+0.00016 ±
// 0.00006). The spread across datasets fell (sd 0.00106 against 0.00131).
// What is left: discrete Y with d = 1, +0.0011 ± 0.0005 at 5000 rows and
// +0.00022 ± 0.00009 at 20 000 (8 and 6 datasets; group jackknife
// +0.0026 and +0.00066), a third of the group jackknife's, presumably the
// 1/N² terms that the three levels cannot separate.
//
// Why a 1/N² term too: the third-order jackknife (the default). At the
// dime command's D = 256 (2D = 512 features) and 5000 rows, the feature
// dimension is a tenth of the rows, and the plug-in's bias is a function
// of 2D/N whose expansion in 1/N converges slowly: on tuning nulls (seeds
// 6100000 on, 40 per family, 2 columns per view unless said, 5000 rows)
// N·(mean plug-in) rose from 122.7 to 133.2 between 1250 and 5000 rows on
// log-normal columns with falling increments, as b + c/N with c ≈ −17 500
// does, not as a·log N + b. The generalized jackknife, exact for a·(log
// N)/N + b/N, leaves 1.92·c/N² of such a term, and overshot: −0.0019 ±
// 0.0007 (log-normal), −0.0007 ± 0.0003 (5% outliers at ±50), −0.0012 ±
// 0.0005 (Student-t(3)), −0.0012 ± 0.0002 (discrete Y), against a plug-in
// bias of +0.025 to +0.030; the group jackknife stayed above 0 (+0.0006 to
// +0.0013). The classical second-order jackknife (the same three levels,
// exact for b/N + c/N²; Jackknife = SecondOrderJackknife) was within 2
// standard errors on those four but left the log term of a low-rank view
// (Gaussian d = 1: +0.00029 ± 0.00012). ThirdOrderJackknife adds a fourth
// level, the plug-in without each triple of groups (every row of one group
// at K = 4), and is exact for a·(log N)/N + b/N + c/N² (K = 4 equal groups:
// w = 22.82, −34.01, 13.11, −0.93); the four levels are so correlated that
// its spread across datasets was within 3% of the group jackknife's. On the
// same tuning nulls: −0.00029 ± 0.00070 (log-normal), +0.00025 ± 0.00035
// (outliers), +0.00017 ± 0.00048 (Student-t), −0.00041 ± 0.00017
// (discrete; generalized −0.00118), +0.00006 ± 0.00013 (Gaussian d = 1),
// −0.00008 ± 0.00021 (Gaussian d = 2). It costs C(K,3) more plug-ins (4 at
// K = 4: 8 eigenproblems, 32 in all for DiME), for at most 6 groups. On
// held-out nulls (100 per family, 5000 rows, D = 256; CALIBRATION.md,
// TestBiasStudy) it left −0.00073 ± 0.00037 (log-normal), −0.00031 ±
// 0.00022 (outliers), −0.00041 ± 0.00033 (Student-t), −0.00052 ± 0.00012
// (discrete) and −0.00016 ± 0.00006 (Gaussian d = 1), where the
// generalized jackknife left −0.0023, −0.0013, −0.0017, −0.0013 and
// −0.00017: 2–3% of the plug-in's bias remains, not yet 0 in every family.
//
// Why seven groups (the default). The plug-in's bias is not a short
// series in 1/N at these sizes: it is a function of the ratio of the
// feature dimension to the rows, 2D/n, which grows quickly as n nears the
// number of features the noise spreads over (the sample covariance of n
// rows in 2D = 512 dimensions is singular once n ≤ 512, and its small
// eigenvalues follow a Marchenko–Pastur law of ratio 2D/n before that).
// Over 4 groups the third-order jackknife's last level is the plug-in on
// N/4 rows, at four times the ratio of N: 2D/n = 0.41 at 5000 rows, where a
// cubic in 1/n misses the next terms by a few per cent of the bias (the
// residual measured above), and 512 rows for 512 features at 2000 rows,
// where the plug-ins saturate and the extrapolation fails outright
// (real-unit nulls, 2 columns per view: −0.0053 ± 0.0007 over 40, with a
// standard error three times the spread). The error of an extrapolation
// from levels N, N(K−1)/K, N(K−2)/K, N(K−3)/K to 1/N = 0 scales with the
// product of their distances, K³/((K−1)(K−2)(K−3)): 10.7 at K = 4, 2.9 at
// K = 7. At K = 7 the last level holds 4/7 of the rows (1143 of 2000), and
// the triples left out are the 7 lines of the Fano plane (leaveTriples), a
// balanced design, so that the third-order jackknife costs 36 plug-ins (72
// eigenproblems, against 30 at K = 4), where all 35 triples would cost 63.
// The equal-group weights are large (145.5, −302.7, 197.7, −39.5 for every
// row and the means without one, two and three groups), but the levels are
// so correlated that the estimate's spread rose by 0–30% over the group
// jackknife's at 5000 rows (more where the log term matters: discrete,
// Gaussian d = 1). Tuning nulls (seeds 22000000 on, 24 per family, D =
// 256; TestGroupPluginsStudy): at 5000 rows +0.00027 ± 0.00079
// (log-normal), −0.00031 ± 0.00059 (Student-t), −0.00040 ± 0.00024
// (discrete), +0.00013 ± 0.00019 (Gaussian d = 1), +0.00059 ± 0.00064
// (real units, synth.UnitsNull); at 2000 rows −0.0010 ± 0.0013
// (log-normal), −0.0004 ± 0.0008 (discrete), −0.0011 ± 0.0013 (real
// units). Eight groups with every triple (186 eigenproblems) did no better
// on the same families; eight with an unbalanced set of triples doubled the
// spread. The held-out study is in CALIBRATION.md (TestNullFamiliesStudy).
//
// What is reported. Result.DiME is the jackknifed estimate and DiMEStdErr
// its standard error, with DiMEDegreesOfFreedom (K − 1) and the 95%
// interval DiMELow, DiMEHigh from Student's t with them (± 2.45 standard
// errors at K = 7, ± 3.18 at K = 4); Result.DiMEAnalytic stays the plug-in S(C⊥) −
// S(C_XY): a deterministic function of the summed accumulators, exactly
// mergeable, and comparable with earlier versions (it is the JSON field
// dime_analytic). Groups = 1 turns the jackknife off: DiME is then the
// plug-in, without standard error.
//
// P-value. Result.PValue is the RFF-HSIC test of package covariance
// (covariance.Independence), computed from the summed part accumulators and
// the first moments of the X, Y and joint features: its statistic
// T = N Σ_j |mean(u_j v_j) − mean(u_j) mean(v_j)|², with u_j, v_j the
// complex part features, is asymptotically a weighted sum of χ²₁ under
// independence, with weights from the same accumulators, and its tail is
// evaluated by package internal/quadform. It replaces the Student-t
// p-value from P permuted entropies in both modes: that one needs P ≥ 2
// accumulators, and was conservative on heavy-tailed and discrete nulls
// (with P = 5 it remains as PValuePermutations). Measured on held-out
// nulls (TestDefaultsCalibratedUnderIndependence, 200 datasets of four
// kinds): 6 at p ≤ 0.05 (binomial 99% band 3 to 19), 0 at p ≤ 0.01 (0 to
// 6); power on y = x₀² + noise (Pearson correlation 0), 2000 rows: every one
// of 50 datasets at p < 0.05 (TestDefaultsPower).
//
// Measured effect of the defaults (TestDefaultsCalibratedUnderIndependence,
// TestDefaultsRiseWithMI; D = 32, 5000 rows): mean DiME over 200 nulls
// +0.00006 ± 0.00007 (the same with the group jackknife: at D = 32 the
// (log N)/N term is small; within 2 standard errors of 0, where the
// plug-in is 64 standard errors above); 7 of 200 nulls outside the t(3)
// 95% interval of the standard error (7 with the group jackknife;
// binomial 99% band 3 to 19); DiME rises
// strictly with the true MI on the paper's toy (d = 10, 50 000 rows).
//
// # Serial rows
//
// Everything above assumes independent rows. Rows of a time series
// (Config.RowModel = SerialRows; dime monitor's default) may depend on their
// neighbours, and then the variance of every statistic is a long-run one,
// larger than the iid formulas say: on two independent AR(1) series with
// φ = 0.9 the iid RFF-HSIC test rejects at 0.05 on 100 of 100 datasets
// (TestSerialRowsCalibrated), because the statistic's null mean is about 4.5
// times the iid one. The statistic itself ignores row order; what changes
// is its reference distribution and the standard error. With SerialRows:
//
//   - rows keep their order within each scope (no shuffle), so chunk c of
//     256 consecutive rows goes to group c mod K: each group is a union of
//     blocks of consecutive rows, and the groups are close to independent
//     when the series' dependence dies out well within a block;
//   - the p-value compares the statistic with the spread of the groups' own
//     cross-covariances: the F test of serialTest, whose denominator
//     estimates the long-run trace from the groups (K − 1 degrees of freedom
//     per effective dimension) and whose degrees of freedom are the iid
//     null's effective number, or fewer when the groups' spread is more
//     concentrated;
//   - DiMEStdErr is the jackknife's over those groups, so it sees the
//     long-run variance too.
//
// It needs the analytic estimator (permuted pairs of a series would pair
// neighbours) and at least 2 groups. Measured on held-out independent
// series (TestSerialRowsCalibrated, 100 datasets each, 5000 rows, D = 32):
// share of p ≤ 0.05 of 3 (iid rows), 6 (AR(1) φ = 0.5), 5 (φ = 0.9), 8 (a
// moving average of 6 innovations), binomial 99% band 0 to 11, where the
// iid test gives 5, 12, 100 and 89; at 2000 rows, with groups of two
// blocks of 250 rows, φ = 0.9 gave 17 of 120 (band 1 to 13): the blocks
// must be long against the series' memory. Power on iid rows is that of
// the iid test (TestSerialRowsPower: 30 of 30 against 30 of 30).
//
// Whatever the row model, Result.Lag1X and Lag1Y report the largest lag-1
// autocorrelation of a column of each view, in arrival order, and
// Result.LooksSerial says when iid rows look serially dependent: their
// product above SerialThreshold (0.1, a variance inflation of 1.22 for two
// AR(1) series). It sees linear dependence between neighbours in the
// columns themselves, not every kind of serial dependence.
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
// To bound its cost, the RFF self terms see only some chunks of rows: the
// first 4 rounds of K chunks (every group gets one per round), then one
// round in 16. A self chunk costs four more rank-k updates (the copies of X
// and Y and their self joints), about 8% of the work of the three updates
// of every chunk in the long run; Config.SkipNormalized skips them. The self
// terms are jackknifed over the groups like DiME. Measured
// (TestNormalizedIdentical, TestDefaultsRiseWithMI): 0.993 to 1.011 on
// Y = X over 25 seeds (d = 3, D = 64, 20 000 rows); −0.0005 on independent
// data and 0.20 to 0.77 for 2 to 10 nats on the paper's toy (d = 10,
// 50 000 rows, D = 64).
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
// Config.Workers goroutines (GOMAXPROCS by default) add each scope. With the
// analytic estimator, the workers (at most K) claim the scope's chunks one
// at a time: the next chunk of a group that no other worker is adding, from
// the group with the most chunks left, so that a group's chunks are added in
// order and one at a time whichever worker adds them; a worker maps and adds
// only the chunks it claims, so each row is mapped once, and a worker that
// another process (or the decoding of the next block) holds up does not
// leave the other waiting at the end of the scope. With permutations, worker i owns accumulators i, i+W, … of
// X, Y, joint, permuted (at most P+5) and goes through the scope chunk by
// chunk (256 positions), mapping every row itself and adding its
// accumulators' rank-k updates. Either way the workers wait for each other
// only at the end of the scope, no accumulator is duplicated, and each
// receives the same updates in the same order whoever computes them: results
// are bit-identical for any number of workers (TestWorkersAgree), and memory
// grows only by each worker's buffers. Add does not allocate in steady
// state. The eigenproblems of a Result (4, 2 per group and 2 per pair of
// groups for the generalized jackknife, 2 per group for the group
// jackknife, or P for permutations, those of the self terms, and the test's) are computed
// concurrently too, and without forming the matrices they need: the sums
// over every group and over every group but one, and the products of
// marginals, are computed from the groups' accumulators straight into the
// scratch matrix of the goroutine that computes their entropy
// (exact.MatrixEntropiesOf). A Result thus allocates GOMAXPROCS + 1
// matrices of (2D)² float64 whatever the number of groups
// (TestResultAllocations: 4.1 matrices' worth measured at D = 64, where
// forming them took 96.7), and gives the same numbers bit for bit (the
// additions happen in the same order).
//
// # Precision of the products
//
// The rank-k updates, three per chunk of 256 rows (four more on the self
// chunks), are most of the work per row. DefaultConfig forms their products
// in float32 (Config.Precision = vocab.Float32): each chunk's features
// are rounded to float32 and their 256 products per entry summed in float32
// with fused multiply-adds, and the chunk's sums are added into the float64
// accumulators. The vector units hold twice as many float32 values, so the
// update runs about twice as fast (82–85 against 44–46 GFLOP per
// CPU-second at D = 256, AVX-512). The error of a chunk's sum is of order
// √256 · 2⁻²⁴ of its entries' scale (at most 9.6e-7 measured by
// linalg.TestAddAtA32), with random signs from chunk to chunk; after the
// eigenproblems it moves DiME by at most 2.3e-9
// nats on 8 held-out datasets of 10 columns per view, and by up to 1.1e-6
// (the plug-in MI by up to 7.3e-6) at 1 and 2 columns, where the features'
// covariances are nearly low-rank (TestPrecisionEffect), against a standard
// error of order 1e-4 at 10⁴ rows. Float32 sums depend on which rows share
// a chunk: the same rows split otherwise (files, shards, Beam splits) give
// entropies that differ by up to about 2e-7 relative at d = 2, against
// 1e-15 with float64 products; the number of workers changes nothing. The means, sums of chunks, merges
// and entropies stay in float64. vocab.Float64 (the zero value; the
// dime commands' --precision float64) forms the products in float64.
//
// # Units: standardized columns
//
// With Config.Standardize (DefaultConfig, and the dime commands unless
// --standardize=false) every column j of each view is standardized before the
// feature map,
//
//	x̃_j = (x_j − c_j) / s_j,   c_j = median of x_j,
//	s_j = 1.4826 · median |x_j − c_j|   (MADScale; the standard deviation
//	                                      of a Gaussian column),
//
// with c_j and s_j taken on the pilot sample (below), and s_j the sample
// standard deviation instead when the median absolute deviation is 0 (more
// than half the values equal, as in sparse counts). A column whose s_j is
// still 0 is constant on the pilot: an error naming it, never a NaN. Both c
// and s are equivariant (a column a·x + b, a > 0, gets center a·c + b and
// scale a·s), so multiplying a column by a positive constant or shifting it
// changes x̃ only by round-off, and every estimate by round-off: measured
// below 1e-9 relative for ×1e4 and +1e6 (TestStandardizedScaleFree). The
// fixed bandwidth √(d/2) is then in units of the columns' scales, as in the
// paper's unit-variance experiments, and the median and auto rules look at
// the standardized rows. The shuffle scopes are ordered from a hash of their
// standardized rows rounded to float32, so that round-off does not reorder
// them. The scaling is part of a saved state (version 4) and of the
// settings that must match to merge: shards that chose their own scales do
// not merge; give them one Scaling (Config.Scaling, a state's Config, or
// dime --like). Robust scales keep one outlier from shrinking a column;
// a heavy-tailed column (money) then spans many units, and the kernel sees
// its bulk at the resolution of its typical spread.
//
// # The pilot sample
//
// Every setting that looks at the data (the scaling, then median and auto
// bandwidths, ResolvePilot) is chosen on one sample of rows, the pilot. An
// Estimator made with New holds back the first Config.PilotRows rows
// (default 1000) it is given, chooses on them, and then adds them block by
// block as they came, so that the shuffle scopes are those of an estimator
// without a pilot. A caller that holds a whole dataset chooses the pilot
// itself and passes what ResolvePilot chose on it to NewResolved, which
// holds nothing back.
//
// The dime commands (score, exact, compare, sweep, rank, matrix) and the
// Beam pipeline (module beam, ChoosePilot) read their pilot with one
// function, decode.ReadPilot:
//
//   - A Parquet dataset gets a seeded uniform sample of PilotRows of its N
//     rows (the row counts come from the footers), rows numbered in the
//     dataset's canonical order (files sorted by path, rows in file
//     order), drawn with their own random stream of the seed. The sample
//     depends on N, PilotRows and the seed only: the same rows give the
//     same scales and σ whatever the command, the order of the arguments,
//     the spelling of the paths or how the rows are cut into files. Only
//     the row groups that hold chosen rows are read again: at worst one
//     more decoding of the selected columns.
//   - CSV and Arrow IPC files get their first PilotRows rows, and so do
//     streams (stdin, dime monitor): their length is not known without
//     reading them whole, and a stream cannot be read twice. A prefix is
//     not representative of a sorted or grouped input (a column constant
//     in the first file is an error naming it; raise --pilot-rows, convert
//     to Parquet, or shuffle).
//
// The reports say which (scaling.pilot: "sample" or "prefix"). A sample
// keyed by a hash of each row's content was not chosen: it would change
// when a column is rescaled.
//
// # Bandwidths
//
// Each view's bandwidth is explicit, fixed (√(d/2), the paper's), median (the
// median heuristic) or auto (the σ that maximizes exact DiME on a sample,
// exact.ResolveBandwidths). Median and auto are resolved on the pilot sample
// and then held fixed for the whole stream.
// //
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
// Merge adds float64 sums, whose last bits depend on the order of the
// merges. A Sum merges exactly instead (covariance.ExactSum, 128-bit fixed
// point): any order and grouping of Sum.Add and Sum.Merge give the same
// estimator bit for bit (its shard ids, random, aside), within round-off of
// a float64 merge. It is what a distributed runner should use (package
// dimebeam does), since it combines shards in whatever order its workers
// finish.
//
// # In memory
//
// EstimateMatrices estimates from two matrices, all rows forming one scope.
// EstimateWithPermutations takes the permutations of exact.Permutations, so
// that RFF and exact estimates of the same rows pair the same rows and differ
// only by the feature approximation; it uses the n×n Gram matrix of the
// features when n < 2D, which has the same nonzero spectrum and costs less.
package stream
