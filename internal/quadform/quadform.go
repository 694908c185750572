// Package quadform computes the upper tail of a quadratic form in normal
// variables, Q = Σ λ_j Z_j² with Z_j independent standard normal and
// weights λ_j ≥ 0: the null distribution of the RFF independence test of
// package covariance (and of any statistic that is asymptotically a weighted
// sum of χ²₁, such as HSIC).
//
// # Overview
//
// Survival returns P(Q > x). It inverts the characteristic function by
// Imhof's integral (Imhof 1961, Biometrika 48):
//
//	P(Q > x) = 1/2 + (1/π) ∫₀^∞ sin θ(u) / (u ρ(u)) du,
//	θ(u) = ½ Σ arctan(λ_j u) − ½ x u,   ρ(u) = Π (1 + λ_j² u²)^{1/4},
//
// integrated by Gauss–Legendre panels up to a point beyond which the rest
// of the integral is bounded below 1e-13 (second mean value theorem). That
// is an absolute accuracy, a relative one only for probabilities well above
// it: below 1e-9, and whenever the integral would need too many panels (a
// few dominant weights make the integrand decay as a small power of u), the
// saddlepoint approximation of Lugannani and Rice (1980; for quadratic
// forms Kuonen 1999, Biometrika 86) is used instead, whose relative error
// stays bounded far into the tail (measured: up to 8% on the skewed
// spectra of quadform_test.go, 0.02% to 1% with equal weights):
//
//	K(s) = −½ Σ log(1 − 2sλ_j),   K′(ŝ) = x,
//	w = sign(ŝ) √(2(ŝx − K(ŝ))),   v = ŝ √K″(ŝ),
//	P(Q > x) ≈ 1 − Φ(w) + φ(w) (1/v − 1/w).
//
// Both are tested against each other, against Monte Carlo and against the
// χ² distribution when the weights are equal (quadform_test.go).
package quadform

import (
	"math"
	"slices"
)

// Method says how a probability was computed.
type Method uint8

const (
	// Exact: the form is degenerate (x ≤ 0, or no positive weight).
	Exact Method = iota
	// Imhof: numerical inversion of the characteristic function.
	Imhof
	// Saddlepoint: the Lugannani–Rice approximation.
	Saddlepoint
)

var methodNames = [...]string{Exact: "exact", Imhof: "imhof", Saddlepoint: "saddlepoint"}

// String returns the method's name.
func (m Method) String() string {
	if int(m) < len(methodNames) {
		return methodNames[m]
	}
	return "unknown"
}

// imhofFloor is the probability below which Survival prefers the
// saddlepoint: Imhof's absolute error (≤ ~1e-12 here) is then no longer
// small relative to the result, while the saddlepoint's relative error is.
const imhofFloor = 1e-9

// Survival returns P(Q > x) for Q = Σ λ_j Z_j², and how it was computed.
// Weights ≤ 0 (round-off in computed eigenvalues) and NaN are ignored. With
// no positive weight Q is 0: the result is 1 for x < 0 and 0 otherwise.
func Survival(weights []float64, x float64) (float64, Method) {
	lam := positive(weights)
	switch {
	case math.IsNaN(x):
		return math.NaN(), Exact
	case len(lam) == 0:
		if x < 0 {
			return 1, Exact
		}
		return 0, Exact
	case x <= 0:
		return 1, Exact
	}
	// The saddlepoint is cheap and its relative error is far below 10×:
	// deep in the tail Imhof's integral (long, and absolute) is skipped.
	sp := saddlepoint(lam, x)
	if sp < imhofFloor/10 {
		return sp, Saddlepoint
	}
	if p, ok := imhof(lam, x); ok && p >= imhofFloor {
		return p, Imhof
	}
	return sp, Saddlepoint
}

// ImhofSurvival returns P(Q > x) by Imhof's integral alone, and false if
// the integral cannot be evaluated to 1e-12 within its panel budget.
func ImhofSurvival(weights []float64, x float64) (float64, bool) {
	lam := positive(weights)
	if len(lam) == 0 || !(x > 0) {
		p, _ := Survival(weights, x)
		return p, !math.IsNaN(p)
	}
	return imhof(lam, x)
}

// SaddlepointSurvival returns the Lugannani–Rice approximation of P(Q > x).
func SaddlepointSurvival(weights []float64, x float64) float64 {
	lam := positive(weights)
	if len(lam) == 0 || !(x > 0) {
		p, _ := Survival(weights, x)
		return p
	}
	return saddlepoint(lam, x)
}

// positive returns the positive finite weights, sorted descending.
func positive(weights []float64) []float64 {
	lam := make([]float64, 0, len(weights))
	for _, v := range weights {
		if v > 0 && !math.IsInf(v, 0) {
			lam = append(lam, v)
		}
	}
	slices.Sort(lam)
	slices.Reverse(lam)
	return lam
}

// normalize divides the weights and x by the sum of the weights (Q/Σλ has
// mean 1), in place, returning the new x.
func normalize(lam []float64, x float64) float64 {
	var s float64
	for _, v := range lam {
		s += v
	}
	for i := range lam {
		lam[i] /= s
	}
	return x / s
}

// Gauss–Legendre nodes and weights on [−1, 1], 16 points.
var glNodes, glWeights = gaussLegendre(16)

// gaussLegendre returns the n-point Gauss–Legendre rule on [−1, 1] by
// Newton's iteration on the Legendre polynomial.
func gaussLegendre(n int) (nodes, weights []float64) {
	nodes, weights = make([]float64, n), make([]float64, n)
	for i := range (n + 1) / 2 {
		z := math.Cos(math.Pi * (float64(i) + 0.75) / (float64(n) + 0.5))
		var dp float64
		for range 100 {
			p0, p1 := 1.0, 0.0
			for j := 1; j <= n; j++ {
				p0, p1 = ((2*float64(j)-1)*z*p0-(float64(j)-1)*p1)/float64(j), p0
			}
			dp = float64(n) * (z*p0 - p1) / (z*z - 1)
			dz := p0 / dp
			z -= dz
			if math.Abs(dz) < 1e-16 {
				break
			}
		}
		nodes[i], nodes[n-1-i] = -z, z
		weights[i] = 2 / ((1 - z*z) * dp * dp)
		weights[n-1-i] = weights[i]
	}
	return nodes, weights
}

// maxEvaluations bounds the work of one Imhof integral, counted in
// evaluations of one weight's terms (an arctangent and a logarithm): about
// 0.2 s.
const maxEvaluations = 1 << 23

// smallPhase is the λu below which a weight's terms in θ and log ρ are
// summed by their Taylor series, through (λu)^14, from suffix power sums of
// the weights instead of one by one: the first term left out is below
// 1e-15·λu.
const smallPhase = 0.1

// seriesTerms is the number of powers of λ kept in the series.
const seriesTerms = 14

// imhof evaluates Imhof's integral for positive weights lam (sorted
// descending) and x > 0.
func imhof(weights []float64, x float64) (float64, bool) {
	lam := slices.Clone(weights)
	x = normalize(lam, x)
	m := len(lam)
	// pow[k][i] = Σ_{j ≥ i} λ_j^(k+1).
	var pow [seriesTerms][]float64
	for k := range pow {
		pow[k] = make([]float64, m+1)
		for i := m - 1; i >= 0; i-- {
			pow[k][i] = pow[k][i+1] + math.Pow(lam[i], float64(k+1))
		}
	}
	evaluations := 0
	// terms returns Σ arctan(λu), Σ log1p(λ²u²) and Σ λ/(1+λ²u²).
	terms := func(u float64) (th, lr, d float64) {
		e, _ := slices.BinarySearchFunc(lam, smallPhase/u, func(l, t float64) int {
			if l >= t {
				return -1
			}
			return 1
		})
		evaluations += e + 1
		for _, l := range lam[:e] {
			lu := l * u
			th += math.Atan(lu)
			lr += math.Log1p(lu * lu)
			d += l / (1 + lu*lu)
		}
		// arctan z = Σ (−1)^k z^(2k+1)/(2k+1), log1p z² = Σ (−1)^(k+1) z^(2k)/k,
		// λ/(1+z²) = Σ (−1)^k λ z^(2k), z = λu, k from 0 (from 1 for log1p).
		u2, up, sign := u*u, u, 1.0 // up = u^(2k+1)
		for k := 0; 2*k+1 < seriesTerms; k++ {
			th += sign * up * pow[2*k][e] / float64(2*k+1)
			d += sign * up / u * pow[2*k][e]
			lr += sign * up * u * pow[2*k+1][e] / float64(k+1)
			up *= u2
			sign = -sign
		}
		return th, lr, d
	}
	f := func(u float64) float64 {
		th, lr, _ := terms(u)
		return math.Sin((th-x*u)/2) / (u * math.Exp(lr/4))
	}
	// Truncation at U: for u ≥ U with θ′(U) < 0, |θ′| increases and the
	// envelope g(u) = 1/(u ρ(u)) decreases, so by the second mean value
	// theorem |∫_U^∞ g sin θ| ≤ 2 g(U)/|θ′(U)|.
	tail := func(u float64) float64 {
		_, lr, d := terms(u)
		slope := (x - d) / 2 // −θ′(u)
		if !(slope > 0) {
			return math.Inf(1)
		}
		return 2 / (u * math.Exp(lr/4) * slope * math.Pi)
	}
	// θ′(u) lies between −x/2 and (1−x)/2 (normalized weights), so panels
	// of width π/max(1, x) hold at most a quarter period of sin θ. The
	// integral grows panel by panel, U doubling, until the bound on the
	// rest is below 1e-13, or below 1e-8 of the result.
	const tol = 1e-13
	width := math.Pi / math.Max(1, x)
	panels := max(1, int(math.Ceil(1/(lam[0]*width))))
	done := 0
	var sum float64
	for {
		for ; done < panels; done++ {
			mid, half := (float64(done)+0.5)*width, width/2
			var s float64
			for i, z := range glNodes {
				s += glWeights[i] * f(mid+half*z)
			}
			sum += s * half
		}
		p := 0.5 + sum/math.Pi
		if b := tail(float64(done) * width); b <= max(tol, 1e-8*p) {
			return min(max(p, 0), 1), true
		}
		if panels *= 2; evaluations > maxEvaluations {
			return math.NaN(), false
		}
	}
}

// saddlepoint returns the Lugannani–Rice approximation of P(Q > x) for
// positive weights (sorted descending) and x > 0.
func saddlepoint(weights []float64, x float64) float64 {
	lam := slices.Clone(weights)
	x = normalize(lam, x)
	// Cumulants: K′(0) = 1 (normalized), K″(0) = 2Σλ², K‴(0) = 8Σλ³.
	var k2, k3 float64
	for _, l := range lam {
		k2 += 2 * l * l
		k3 += 8 * l * l * l
	}
	K := func(s float64) float64 {
		var v float64
		for _, l := range lam {
			v += math.Log1p(-2 * s * l)
		}
		return -v / 2
	}
	K1 := func(s float64) (d1, d2 float64) {
		for _, l := range lam {
			r := 1 / (1 - 2*s*l)
			d1 += l * r
			d2 += 2 * l * l * r * r
		}
		return d1, d2
	}
	// K′ increases from 0 (s → −∞) to ∞ (s → 1/(2λ_max)): bracket and
	// solve K′(s) = x by Newton steps kept inside the bracket.
	hi := 1 / (2 * lam[0])
	lo := -1.0
	for d1, _ := K1(lo); d1 > x; d1, _ = K1(lo) {
		lo *= 2
		if lo < -1e300 {
			return 1
		}
	}
	s := 0.0
	if x > 1 {
		s = hi / 2
	}
	for range 200 {
		d1, d2 := K1(s)
		if d1 > x {
			hi = s
		} else {
			lo = s
		}
		next := s - (d1-x)/d2
		if !(next > lo && next < hi) {
			next = (lo + hi) / 2
		}
		if math.Abs(next-s) <= 1e-15*math.Max(1, math.Abs(s)) {
			s = next
			break
		}
		s = next
	}
	_, d2 := K1(s)
	r := s*x - K(s)
	if math.Abs(s)*math.Sqrt(k2) < 1e-6 || !(r > 0) {
		// x at the mean: the limit of the formula, 1/2 − K‴/(6√(2π)K″^{3/2}).
		return 0.5 - k3/(6*math.Sqrt(2*math.Pi)*math.Pow(k2, 1.5))
	}
	w := math.Copysign(math.Sqrt(2*r), s)
	v := s * math.Sqrt(d2)
	tail := math.Erfc(w/math.Sqrt2) / 2
	dens := math.Exp(-w*w/2) / math.Sqrt(2*math.Pi)
	return min(max(tail+dens*(1/v-1/w), 0), 1)
}
