package stream

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/covariance"
)

// serialTest returns the p-value of the RFF-HSIC test for serial rows
// (Config.RowModel = SerialRows), from the test of every row t and the
// first moments of the groups, whose rows are interleaved blocks of chunkRows
// consecutive rows.
//
// With ĥ the empirical cross-covariance of the part features over every row
// (2D real numbers; T = n|ĥ|², t.Statistic) and ĥ_k that of group k alone
// (n_k effective rows), dependent neighbouring rows inflate the variance of
// ĥ by a long-run factor that the iid null (t.NullMean) does not see, but
// that the groups do: under independence of the two series, and blocks long
// against the range of the dependence, the ĥ_k are close to independent with
// covariance Ω/n_k, Ω the long-run covariance, and
//
//	W = Σ_k n_k |ĥ_k − h̄|²,   h̄ = Σ_k n_k ĥ_k / Σ_k n_k,
//
// has expectation (K − 1) tr Ω, that of T being tr Ω. The statistic
// F = (K − 1) T / W is then, by Satterthwaite's approximation of both
// quadratic forms by scaled χ², F-distributed with ν and (K − 1)ν degrees
// of freedom, ν = 2·NullMean²/NullVariance the effective degrees of freedom
// of the iid null (the shape of Ω is taken from it, its scale from the
// groups). ok is false with fewer than 2 non-empty groups or no spread.
func serialTest(groups []group, features int, t covariance.IndependenceTest) (p, f float64, ok bool) {
	if !(t.Statistic >= 0) || !(t.NullMean > 0) || !(t.NullVariance > 0) {
		return math.NaN(), math.NaN(), false
	}
	D := features
	var hs [][]float64
	var ns []float64
	for k := range groups {
		g := &groups[k]
		w := g.mxy.Weight()
		if !(w > 0) {
			continue
		}
		s := math.Sqrt(float64(D)) / w
		mx, my, mxy := g.mx.Sum(), g.my.Sum(), g.mxy.Sum()
		h := make([]float64, 2*D)
		for j := 0; j < D; j++ {
			ur, ui := s*mx[j], s*mx[D+j]
			vr, vi := s*my[j], s*my[D+j]
			h[j] = s*mxy[j] - (ur*vr - ui*vi)
			h[D+j] = s*mxy[D+j] - (ur*vi + ui*vr)
		}
		hs = append(hs, h)
		ns = append(ns, g.mxy.EffectiveRows())
	}
	K := len(hs)
	if K < 2 {
		return math.NaN(), math.NaN(), false
	}
	var N float64
	mean := make([]float64, 2*D)
	for k, h := range hs {
		N += ns[k]
		for j, v := range h {
			mean[j] += ns[k] * v
		}
	}
	for j := range mean {
		mean[j] /= N
	}
	var W float64
	for k, h := range hs {
		var d2 float64
		for j, v := range h {
			d := v - mean[j]
			d2 += d * d
		}
		W += ns[k] * d2
	}
	if !(W > 0) {
		return math.NaN(), math.NaN(), false
	}
	// The effective degrees of freedom: those of the iid null, or fewer
	// when the groups say so. Dependence inflates the variance of some
	// directions more than others (slowly varying features most), which
	// concentrates Ω on fewer directions than the iid null. With
	// d_k = √n_k (ĥ_k − h̄) and A = Σ d_k d_kᵀ, Wishart with m = K − 1
	// degrees of freedom for Gaussian ĥ_k, E tr(A²) = m(m+1) tr(Ω²) +
	// m (tr Ω)² and E (tr A)² = m² (tr Ω)² + 2m tr(Ω²) give unbiased
	// estimates of tr(Ω²) and (tr Ω)², whose ratio is ν̂.
	nu := 2 * t.NullMean * t.NullMean / t.NullVariance
	var a float64
	for k := range hs {
		for l := range hs {
			var dot float64
			for j := range mean {
				dot += (hs[k][j] - mean[j]) * (hs[l][j] - mean[j])
			}
			dot *= math.Sqrt(ns[k] * ns[l])
			a += dot * dot
		}
	}
	m := float64(K - 1)
	b := W * W
	x := (a - b/m) / ((m + 2) * (m - 1))
	if K > 2 && x > 0 {
		y := (b - 2*m*x) / (m * m)
		nu = math.Max(1, math.Min(nu, y/x))
	}
	f = float64(K-1) * t.Statistic / W
	p = distuv.F{D1: nu, D2: float64(K-1) * nu}.Survival(f)
	return math.Max(p, 1e-300), f, true
}

// lagStats accumulates, per column of a view, what the lag-1
// autocorrelation of the rows in their order of arrival needs: sums of the
// values, of their squares and of the products of consecutive values, each
// value shifted by the first row's (for accuracy with large offsets).
type lagStats struct {
	n          int64
	shift      []float64
	last       []float64
	s, ss, sl  []float64
	haveValues bool
}

// add adds rows of d columns, row-major.
func (l *lagStats) add(v []float64, rows, d int) {
	if rows == 0 {
		return
	}
	if !l.haveValues {
		l.shift = append([]float64(nil), v[:d]...)
		l.last = make([]float64, d)
		l.s, l.ss, l.sl = make([]float64, d), make([]float64, d), make([]float64, d)
		l.haveValues = true
	}
	for i := range rows {
		row := v[i*d : (i+1)*d]
		for c, x := range row {
			z := x - l.shift[c]
			l.s[c] += z
			l.ss[c] += z * z
			if l.n > 0 {
				l.sl[c] += z * l.last[c]
			}
			l.last[c] = z
		}
		l.n++
	}
}

// largest returns the largest absolute lag-1 autocorrelation over the
// columns (constant columns left out), NaN with fewer than 3 rows.
func (l *lagStats) largest() float64 {
	if l.n < 3 {
		return math.NaN()
	}
	n := float64(l.n)
	best := 0.0
	for c := range l.s {
		m := l.s[c] / n
		v := l.ss[c]/n - m*m
		if !(v > 1e-12*(l.ss[c]/n)) {
			continue
		}
		r := (l.sl[c]/(n-1) - m*m) / v
		best = math.Max(best, math.Min(math.Abs(r), 1))
	}
	return best
}

// SerialThreshold is the product of the views' largest lag-1
// autocorrelations (Result.Lag1X · Result.Lag1Y) from which Result.LooksSerial
// reports rows as serially dependent: for two AR(1) series of coefficients
// φ_X and φ_Y, the variance of the test's statistic is (1 + φ_Xφ_Y)/(1 −
// φ_Xφ_Y) times the iid one, 1.22 at the threshold.
const SerialThreshold = 0.1

// LooksSerial reports whether the rows look serially dependent
// (Lag1X·Lag1Y above SerialThreshold) while the iid row model was used: the
// p-value and standard error then assume independent rows that these are
// not, and RowModel SerialRows should be used.
func (r Result) LooksSerial() bool {
	return r.RowModel == IIDRows && r.Lag1X*r.Lag1Y > SerialThreshold
}
