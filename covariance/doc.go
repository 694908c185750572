// Package covariance accumulates uncentered covariance operators of random
// Fourier features, the streaming form of the matrix-based entropies of dime.
//
// # Overview
//
// For feature rows φ(z_i) of a map with unit-norm features (package rff), an
// Accumulator holds the sum Σ φ(z_i)φ(z_i)ᵀ (2D×2D, float64) and the total
// weight of the rows (their count, until decayed). It stores the sum's upper
// triangle only, packed by strips of 16 rows (linalg.Triangle: StoredSize,
// 1.03 MiB at D = 256 against 2 MiB for the dense matrix), which the
// rank-k update writes in place with the same sums, to the bit, as a dense
// matrix's upper triangle; Sum and SumTo give it back as a mat.SymDense. The covariance is
// C = Σ φφᵀ / N, with trace 1, and its eigenvalues are the nonzero eigenvalues
// of the RFF Gram matrix ΦΦᵀ/N. So S_α(C), computed by the very code that
// package exact uses for Gram matrices (exact.MatrixEntropy), is the RFF
// estimate of S_α(K/N), in O(D²) memory whatever the number of rows.
//
// # Merging, decay and state
//
// An accumulator is a sum, so it adds across batches (Add, a blocked
// symmetric rank-k update), merges across machines (Merge: exactly the
// accumulator of the union of the rows, up to floating-point summation
// order), decays for windows (Scale multiplies sum and weight) and resets. An
// accumulator is described by the feature map that produced its rows and by
// which features they are (the X part, the Y part, the joint, or the k-th
// permuted joint): Merge refuses accumulators of different descriptions with
// ErrIncompatible, since their sums live in different feature spaces. Note that
// bandwidths chosen from the data (median, auto) differ between shards: shards
// to be merged need the same explicit bandwidths.
//
// Merge adds float64 sums, and floating-point addition is not associative:
// shards merged in another order can differ in the last bits. ExactSum adds
// accumulators in 128-bit fixed point (multiples of 2⁻⁷²) instead, so that
// the total is the same bit for bit whatever the order or grouping of the
// merges, rounding each shard once onto that grid and the total once back to
// float64: what a distributed runner, which combines shards as its workers
// finish, needs for reproducible results (package dimebeam uses it through
// stream.Sum).
//
// MarshalBinary writes a versioned, self-describing encoding: magic, format
// and frequency versions, the description, the weight, the upper triangle and
// a CRC-32C checksum. UnmarshalBinary, and DecodeFrom which reads the
// encoding from a stream (package stream embeds accumulators in its states),
// refuse truncated, corrupted or foreign bytes with ErrFormat, without
// changing the receiver; they allocate the accumulator's matrix, less than
// twice the encoding's size, only once the header has shown that the input
// holds it.
//
// # Precision
//
// Add forms the products φφᵀ in float64 by default. SetPrecision(Float32)
// rounds the features to float32 and sums their products in float32 over
// blocks of at most 256 rows before adding each block into the float64 sum:
// the rank-k update then runs about 1.85 times as fast (twice the values per
// vector register), and on the paper's toys at D = 256 the entropies, MI and
// analytic DiME moved by at most 3.5e-8 nats (TestFloat32Entropies). Merges,
// scaling and the entropies stay in float64, and the precision is not part of
// the description or the encoding: accumulators of either precision merge.
//
// # Product of marginals
//
// ProductOfMarginals computes, from the X and Y part accumulators alone, the
// covariance of the joint features over all N² pairs (x_i, y_k): the analytic
// product-of-marginals operator C⊥ of ESTIMATORS.md section 3b. With
// CC = E cos a_j·x cos a_k·x, SS = E sin sin, CS = E cos a_j·x sin a_k·x,
//
//	M−(X) = CC + SS + i(CSᵀ − CS),   M+(X) = CC − SS + i(CSᵀ + CS),
//	P− = M−(X) ∘ M−(Y),               P+ = M+(X) ∘ M+(Y),
//	C⊥ = (1/D) [[(Re P− + Re P+)/2, (Im P+ − Im P−)/2], [·ᵀ, (Re P− − Re P+)/2]].
//
// S(C⊥) − S(C_XY) is DiME without permutation noise; by concavity
// S(C⊥) ≥ mean S(C_π), and the two agree once N ≫ D.//
// # Independence test
//
// Independence tests X ⫫ Y from the part accumulators and three Means (first
// moments of the X, Y and joint features, O(D) per row). With the part
// features as complex numbers, u_j = e^{i a_j·x} and v_j = e^{i b_j·y}, the
// joint features are u_j v_j (the product kernel with D paired
// frequencies), and
//
//	ĉ_j = mean(u_j v_j) − mean(u_j)·mean(v_j),   T = N Σ_j |ĉ_j|²
//
// is N times the HSIC of the product kernel estimated on those D frequency
// pairs (population value 0 under independence, positive for dependence
// seen by some pair). Under independence, √N ĉ = N^{−½} Σ_i ũ_i ∘ ṽ_i +
// O_p(N^{−½}), with ũ = u − E u and ṽ = v − E v independent, so by the
// central limit theorem it is asymptotically complex normal with
// covariance Γ = E[ũũ*] ∘ E[ṽṽ*] and pseudo-covariance
// Π = E[ũũᵀ] ∘ E[ṽṽᵀ] (Hadamard products: E[(ũ_j ṽ_j)(ũ_k ṽ_k)*] factors).
// The real vector √N [Re ĉ; Im ĉ] then has covariance
//
//	Σ = ½ [[Re(Γ+Π), Im(Π−Γ)], [Im(Π−Γ)ᵀ, Re(Γ−Π)]]
//
// and T = ‖√N [Re ĉ; Im ĉ]‖² is asymptotically Σ_k λ_k Z_k², λ the
// eigenvalues of Σ (2D×2D). E[uu*] and E[uuᵀ] are the M− and M+ matrices of
// the product of marginals above, read from the part accumulators; centering
// uses the Means, and the plug-in covariances are multiplied by N/(N−1).
// With decay, N is the effective number of rows (Σw)²/Σw². The p-value
// P(Σ λ_k Z_k² ≥ T) comes from package internal/quadform (Imhof's integral,
// with the Lugannani–Rice saddlepoint in the far tail), reported as at least
// 1e-300. Cost per Result: one 2D×2D eigenproblem.
//
// The null covariance is checked by Monte Carlo (TestNullCovarianceMonteCarlo:
// heavy-tailed X, discrete Y) and the test's calibration on held-out nulls
// (TestIndependenceCalibrated). The RFF-HSIC of Zhang, Filippi, Gretton and
// Sejdinovic (2018, Statistics and Computing 28) uses the full D×D
// cross-covariance of the X and Y features instead of its diagonal: more
// power per frequency, but a 2D×2D cross-product update per row (as costly
// as a fourth accumulator), where this test reuses the joint features that
// DiME needs anyway.
package covariance
