package exact

import (
	"math"
	"slices"

	"github.com/dime-project/dime/internal/quadform"
)

// Limits of the explicit part of the spectral null (see productSurvival):
// products λᵢμⱼ below mixtureRelCut times the largest go to the remainder,
// at most mixtureMaxKept products are kept (the cut is raised until they
// fit), and the remainder is summarized by at most remainderMaxWeights
// equal weights.
const (
	mixtureRelCut       = 1e-4
	mixtureMaxKept      = 1 << 15
	remainderMaxWeights = 1 << 12
)

// productSurvival returns P(T ≥ q) for
//
//	T = Σᵢ Σⱼ λᵢ μⱼ Zᵢⱼ²,   Zᵢⱼ independent standard normal,
//
// the weighted sum of χ²₁ variables with the products of two sets of
// weights, which is the asymptotic null distribution of the HSIC statistic
// n·HSIC_b when λ and μ are the eigenvalues of the centered Gram matrices
// of the two views divided by n (Gretton et al. 2009, "A fast, consistent
// kernel two-sample test"; Zhang et al. 2018, "Large-scale kernel methods
// for independence testing"). Weights ≤ 0 are round-off and are dropped;
// the slices are not modified.
//
// The tail is package quadform's Lugannani–Rice saddlepoint
// (SaddlepointSurvival), not its Imhof integral: the HSIC test reads it only
// below 0.001, where the saddlepoint's relative error is a few percent
// (TestProductSurvival; up to 8% on quadform's skewed spectra), while
// Imhof's integral over the 5,000 to 30,000 weights of a 1024-row sample
// took 20 to 30 s per call in the bulk. What is particular here
// is the number of weights, n² for n rows: the products of at least 10⁻⁴
// times the largest are kept (at most 32768 of them, the cut rising if need
// be), and the sum R of the rest, a sum of many small weights, is replaced
// by m equal weights a plus a constant c with the same mean and variance:
// with r_k = Σ w^k over the remainder, ν = r₂³/r₃² (the degrees of freedom
// of the scaled χ² with R's first three cumulants), m = min(round(ν), 4096),
// a = √(r₂/m) and c = r₁ − m·a (≥ 0 by Cauchy–Schwarz up to the rounding of
// ν). For m = round(ν) the third cumulant matches too (a = r₃/r₂ up to
// rounding); beyond 4096 both skewnesses are below √(8/4096) = 0.044.
// Measured against all n² products in TestMixtureTruncation.
//
// The result is in [1e-300, 1]; it is 1 when q ≤ 0 or every weight is 0
// (T is then 0), and NaN if q or a weight is NaN.
func productSurvival(q float64, lambda, mu []float64) float64 {
	if math.IsNaN(q) {
		return math.NaN()
	}
	lam, ok1 := positiveDescending(lambda)
	m, ok2 := positiveDescending(mu)
	if !ok1 || !ok2 {
		return math.NaN()
	}
	if q <= 0 || len(lam) == 0 || len(m) == 0 {
		return 1
	}
	w, c := productWeights(lam, m, mixtureRelCut, mixtureMaxKept)
	if q <= c {
		return 1 // the approximating T is at least c
	}
	return min(1, max(quadform.SaddlepointSurvival(w, q-c), 1e-300))
}

// positiveDescending returns the positive values of v sorted in decreasing
// order, and false if v holds a NaN.
func positiveDescending(v []float64) ([]float64, bool) {
	out := make([]float64, 0, len(v))
	for _, x := range v {
		if math.IsNaN(x) {
			return nil, false
		}
		if x > 0 {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out, true
}

// productWeights returns the products λᵢμⱼ (both sorted decreasing and
// positive) of at least relCut times the largest, at most maxKept of them
// (raising the cut as needed), followed by the equal weights that stand for
// the rest, and the constant c that goes with them (see productSurvival).
// The remainder's power sums come without cancellation from suffix power
// sums of μ.
func productWeights(lam, mu []float64, relCut float64, maxKept int) (w []float64, c float64) {
	cut := relCut * lam[0] * mu[0]
	// Raise the cut until at most maxKept products pass it.
	for {
		count := 0
		for _, l := range lam {
			k := keptPrefix(mu, cut/l)
			if k == 0 {
				break
			}
			count += k
		}
		if count <= maxKept {
			break
		}
		cut *= 2
	}
	// Suffix power sums of μ: s[k][j] = Σ_{i≥j} μᵢ^(k+1).
	var s [3][]float64
	for k := range s {
		s[k] = make([]float64, len(mu)+1)
	}
	for j := len(mu) - 1; j >= 0; j-- {
		m := mu[j]
		s[0][j] = s[0][j+1] + m
		s[1][j] = s[1][j+1] + m*m
		s[2][j] = s[2][j+1] + m*m*m
	}
	var r1, r2, r3 float64 // power sums of the remainder's weights
	for _, l := range lam {
		k := keptPrefix(mu, cut/l)
		for _, v := range mu[:k] {
			w = append(w, l*v)
		}
		r1 += l * s[0][k]
		r2 += l * l * s[1][k]
		r3 += l * l * l * s[2][k]
	}
	if !(r1 > 0 && r2 > 0 && r3 > 0) {
		return w, 0
	}
	nu := r2 * r2 * r2 / (r3 * r3)
	m := max(1, min(math.Round(nu), remainderMaxWeights))
	a := math.Sqrt(r2 / m)
	for range int(m) {
		w = append(w, a)
	}
	return w, r1 - m*a
}

// keptPrefix returns the number of leading values of the decreasing slice mu
// that are at least bound.
func keptPrefix(mu []float64, bound float64) int {
	lo, hi := 0, len(mu)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if mu[mid] >= bound {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
