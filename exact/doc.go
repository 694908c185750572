// Package exact computes matrix-based Rényi entropies, mutual information and
// DiME (Difference of Matrix-based Entropies) from Gram matrices. It is the
// reference implementation of dime: slow, O(n³) in the number of rows, but
// exact, and every approximate estimator of the project is tested against it.
//
// # Overview
//
// For n paired rows (xᵢ, yᵢ) and a normalized kernel κ (κ(x, x) = 1) with
// bandwidth σ, the Gram matrix K_X has entries κ(xᵢ, xⱼ). The matrix-based
// entropy of order α > 0 is Rényi's entropy of the eigenvalues λ of K/tr(K):
//
//	S_α(K) = log(Σ λᵢ^α) / (1 − α),   S_1(K) = −Σ λᵢ log λᵢ (von Neumann).
//
// Eigenvalues ≤ 0 (round-off) are dropped and the rest renormalized to sum 1,
// as the paper authors' library does; α = 2 uses the Frobenius norm and needs
// no eigenvalues. The joint entropy of two or more views is the entropy of the
// Hadamard product of their Gram matrices, and
//
//	I_α(X; Y)  = S_α(K_X) + S_α(K_Y) − S_α(K_X ∘ K_Y)
//	S_α(X | Y) = S_α(K_X ∘ K_Y) − S_α(K_Y)
//	DiME       = E_Π S_α(K_X ∘ Π K_Y Πᵀ) − S_α(K_X ∘ K_Y)
//
// where Π is a random permutation (row i of X paired with row π(i) of Y). DiME
// is estimated with P seeded permutations; its standard error is the spread of
// the permuted joint entropies over √P. All entropies are in nats.
//
// # Kernels and bandwidth
//
//	Gaussian    exp(−‖x − x′‖₂² / (2σ²))
//	Laplacian   exp(−‖x − x′‖₁ / (√2 σ))   (factorized over coordinates)
//	Elliptical  exp(−‖x − x′‖₂ / (√2 σ))
//
// The bandwidth of each view is explicit or follows a rule: Fixed is the
// paper's √(d/2) for d columns, Median is the median pairwise distance (in the
// kernel's own norm) over √2.
//
// This package takes the values as given: a bandwidth is in the units of the
// columns. The dime commands (exact, compare, sweep, like score) first
// standardize every column, (x − median)/(1.4826 · median absolute
// deviation), on the first rows of the dataset, and choose median and auto
// bandwidths on those standardized rows (stream.ResolvePilot, whose package
// documentation gives the formula and the choice of rows); then the same rows
// give the same σ in every command, and the estimates do not depend on the
// columns' units.
//
// # Normalized score
//
// DiME is in nats and its scale depends on n, the kernel and the
// bandwidths. Result.Normalized is the normalized score defined for every
// estimator of the project (package stream, "Normalized score"):
//
//	dime_normalized = DiME(X;Y) / √(DiME(X;X′) · DiME(Y;Y′)),
//	DiME(X;X′)      = mean_k S_α(K_X ∘ Π_k K_X Π_kᵀ) − S_α(K_X ∘ K_X),
//
// DiME(X;X′) being the DiME of X with an identical copy of itself under the
// estimate's P permutations (K_X ∘ K_X is the Gram matrix of the kernel κ²),
// and DiME(Y;Y′) likewise. It is 0 in expectation under independence (the
// numerator is) and exactly 1.0 when Y is X with the same bandwidth: the
// three DiMEs are then the same computation. It is not clipped to [0, 1].
//
// # Independence test
//
// Result.PValue is by default the HSIC test of the same Gram matrices
// (HSICTest): the statistic n·HSIC = tr(K̃_X K̃_Y)/n of the centered Grams
// K̃ = HKH against its values under random pairings of the rows, drawn
// until 20 reach it or 999 have been drawn (Besag and Clifford's sequential
// Monte Carlo p-value, exact at every level down to 0.001; none drawn when
// Cantelli's bound from the exact permutation moments is already below
// 0.001), and below 0.001
// the spectral tail of its asymptotic null Σ λᵢμⱼ Zᵢⱼ² (Gretton et al. 2008
// and 2009) scaled by the exact permutation moments. Its calibration on
// held-out null data is reported in CALIBRATION.md. Config.TestPermutations
// = B > 0 selects the permutation test of the joint entropy instead, exact
// but never below 1/(B + 1) and at one eigenproblem per replicate beyond P.
//
// # Cost
//
// Estimate builds two n×n Gram matrices and solves values-only symmetric
// eigenproblems, concurrently on up to GOMAXPROCS goroutines, each with one
// n×n scratch matrix: P + 3 for the entropies and DiME (X, Y, joint, P
// permuted joints) and 2(P + 1) for the normalized score, 3P + 5 = 20 at the
// defaults where the paper's quantities alone need 8. The HSIC test adds
// O(n²) per random pairing (about 100 pairings on independent data, up to
// 999 on dependent data, none on strongly dependent data, then 2
// eigenproblems for the spectral tail); the
// permutation test of the joint entropy adds max(B − P, 0) eigenproblems
// instead. The eigenproblems dominate (the Grams cost O(n²d)), so
// Config.SkipNormalized cuts the default time by more than half. Memory is
// about (2 + workers)·8n² bytes: 40 MB at n = 1024, 2.5 GB at n = 8192.
//
// The spectrum-to-entropy code (SpectrumEntropy, MatrixEntropy) is shared with
// package covariance, so exact and approximate entropies agree by construction
// on how eigenvalues become entropies.
package exact
