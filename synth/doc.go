// Package synth generates paired data (X, Y) with known dependence, for tests,
// demonstrations and benchmarks of the dime estimators.
//
// # Overview
//
// Every kind draws n rows of a d-column X and a d-column Y:
//
//	Gaussian     the paper's toy (its Section 4, after Poole et al. 2019):
//	             X ~ N(0, I_d), Y = ρX + √(1 − ρ²)E with E ~ N(0, I_d), where
//	             ρ = √(1 − exp(−2m/d)) gives a true Shannon I(X; Y) = m nats.
//	Sine         Xₖ ~ U(−π, π), Yₖ = cos(2Xₖ) + Noise·Eₖ: Y is a function of X
//	             up to noise, yet the Pearson correlation of every pair of
//	             columns is 0 in expectation (an even function of a symmetric X).
//	Circle       θₖ ~ U(0, 2π), Xₖ = cos θₖ + Noise·E, Yₖ = sin θₖ + Noise·E′:
//	             points near a circle, dependent, Pearson correlation 0.
//	Independent  X and Y independent N(0, I_d): any dependence measured is
//	             estimation error.
//
// A Stream fills row-major blocks, so data of any length can be written in
// constant memory; Generate returns whole matrices. Both are reproducible from
// the seed (math/rand/v2 PCG).
package synth
