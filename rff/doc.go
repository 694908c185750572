// Package rff implements random Fourier feature maps: explicit finite
// features whose inner products approximate the kernels of package exact.
//
// # Overview
//
// A normalized shift-invariant kernel is the characteristic function of a
// spectral density p(w): κ(x, x′) = E_w cos(w·(x − x′)). Drawing D frequencies
// w₁…w_D from p gives the map
//
//	φ(x) = D^(−1/2) [cos(w₁·x) … cos(w_D·x), sin(w₁·x) … sin(w_D·x)]
//
// of 2D features, with E φ(x)·φ(x′) = κ(x, x′) and ‖φ(x)‖ = 1 exactly, so that
// covariance operators built from φ have unit trace without renormalization.
// The spectral densities, for bandwidth σ:
//
//	Gaussian    w ~ N(0, I/σ²)
//	Laplacian   wₖ ~ Cauchy(0, 1/(√2 σ)) independently (factorized kernel)
//	Elliptical  w = z / (√2 σ |h|), z ~ N(0, I), h ~ N(0, 1) (multivariate Cauchy)
//
// Orthogonal random features (Yu et al., 2016) are a lower-variance variant
// for the Gaussian kernel: frequencies drawn as blocks of a uniformly random
// orthogonal matrix, rows rescaled by χ_d-distributed norms, divided by σ.
//
// # Descriptions and reproducibility
//
// A Map is fully described by a Spec (kernel, σ, input width, D, variant,
// seed). The frequencies are drawn from math/rand/v2's PCG seeded by the spec,
// whose output Go pins across releases, with arithmetic that the compiler
// cannot fuse differently, so the same Spec gives bit-identical frequencies on
// every run and every amd64 machine (TestFrequenciesPinned guards this).
// Other architectures may differ in the last bit of a few frequencies through
// their math library, which changes results by ~1e-16. FrequencyVersion
// changes whenever the drawing changes; saved states record it.
//
// # Speed
//
// Transform evaluates D sines and cosines per row with a branch-free table
// method (sincos.go), about 3.5 times as fast as math.Sincos on random
// phases and within 2 ulps. With the build tag openblas, which links C code
// anyway, and a CPU with AVX2 and FMA, Transform runs a vectorized C version
// of the same method (transform_native.go), 4.5 times faster again; its
// results differ from the Go version's by the rounding of the phases
// (TestNativeMatchesGo).
//
// # Pairs of views
//
// For two views the product kernel κ_X(x, x′)κ_Y(y, y′) has the frequencies
// (a_j, b_j) with a_j and b_j drawn independently for X and Y, θ_j = a_j·x +
// b_j·y. A Pair holds the two part maps; the joint features of (x, y) come from
// the part features by cos(α+β) = cos α cos β − sin α sin β and sin(α+β) =
// sin α cos β + cos α sin β, two products and a sum each, with no further
// sin or cos (Joint). The same function pairs x_i with y_π(i) for the features
// of a permuted joint.
package rff

//go:generate go run gen_native.go
