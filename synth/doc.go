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
//	Square       Xₖ ~ N(0, 1), Yₖ = Xₖ² + Noise·Eₖ: dependent, Pearson
//	             correlation 0 (E X³ = 0).
//
// Three more independent kinds test that a p-value is calibrated beyond the
// Gaussian case (Kind.Null reports the independent kinds):
//
//	StudentT     every column of X and Y Student's t with 3 degrees of freedom
//	             (heavy tails: no fourth moment).
//	Discrete     X Student-t(3), Y integers uniform on 0..4 (many ties): the
//	             null on which issue 12 found the permutation p-value of the
//	             streaming estimator conservative.
//	MixedWidths  Gaussian columns with standard deviations 0.01, 0.1, 1, 10,
//	             100 (column k has 10^((k mod 5) − 2)), in both views: a fixed
//	             bandwidth then sees mostly the widest columns.
//
// Two kinds are tables in real units, for the defaults' independence of
// units: column k of X is an age (49 + 12a years), an amount of money
// (50,000·e^(1.2a)), a count (Poisson(e^(1 + 0.6a))) or a measurement
// (0.002·e^(0.3a)), by k mod 4, with a standard normal; column k of Y is
// b in the units of column k + 1:
//
//	Units        b = (a² − 1)/√2 + Noise·E: dependent, Pearson correlation of
//	             the latent values 0.
//	UnitsNull    b independent standard normal: the same marginals,
//	             independent views.
//
// A Stream fills row-major blocks, so data of any length can be written in
// constant memory; Generate returns whole matrices. Both are reproducible from
// the seed (math/rand/v2 PCG).
package synth
