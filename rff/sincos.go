package rff

import "math"

// The feature maps evaluate D sines and cosines per row: their cost decides
// the speed of Transform. math.Sincos branches on the quadrant of its
// argument; on the random phases of RFF those branches are unpredictable and
// it runs at about 60 million per second per core (measured on the 2-core
// development machine, AMD EPYC), slower than the rank-k updates that consume
// the features. sincosScaled below has no data-dependent branch for
// |θ| < sincosMaxArg and runs at about 220 million per second there
// (BenchmarkSincos), within 2 units in the last place of the exactly rounded
// values (TestSincosAccuracy).
//
// Method: θ = k·(2π/N) + r with N = sincosTableSize, k the nearest integer to
// θ·N/(2π) and |r| ≤ π/N, by a three-part Cody–Waite reduction (the first two
// parts of 2π/N have 33 significant bits, so k times them is exact for
// |k| < 2²⁰ and no precision is lost to cancellation). Then
//
//	sin θ = sin a + (sin a·(cos r − 1) + cos a·sin r)
//	cos θ = cos a + (cos a·(cos r − 1) − sin a·sin r)
//
// with a = 2πk/N from a table and sin r, cos r − 1 from their Taylor series,
// whose next terms (r⁹/9!, r⁸/8!) are below 1e-19 for |r| ≤ π/256. The
// corrections in parentheses are small next to the table values, so their
// rounding errors hardly count.

const (
	sincosTableBits = 8
	sincosTableSize = 1 << sincosTableBits
	// stepsPerRadian is N/(2π).
	stepsPerRadian = sincosTableSize / (2 * math.Pi)
	// step1 + step2 + step3 = 2π/N to about 2⁻¹²⁰ relative: π/2 split as in
	// fdlibm's __ieee754_rem_pio2 (pio2_1, pio2_2 of 33 significant bits, and
	// pio2_2t, the 53-bit rest), each scaled by 4/N, a power of two.
	step1 = 1.57079632673412561417e+00 * 4 / sincosTableSize
	step2 = 6.07710050630396597660e-11 * 4 / sincosTableSize
	step3 = 2.02226624879595063154e-21 * 4 / sincosTableSize
	// roundMagic rounds a float64 of magnitude below 2⁵¹ to an integer when
	// added and subtracted, and leaves that integer in the low bits of the
	// sum's mantissa (two's complement for negative values).
	roundMagic = 0x1.8p52
	// sincosMaxArg bounds the arguments of the table method: |k| < 2²⁰.
	// Larger phases (rare: heavy-tailed Laplacian or elliptical frequencies
	// on large inputs) go to math.Sincos.
	sincosMaxArg = 0x1p20 / stepsPerRadian
)

// sinTable and cosTable hold sin and cos of 2πk/N, k = 0 … N−1.
var sinTable, cosTable = sincosTables()

// sincosTables fills the tables from the first octant, where the angle
// j·(π/2)/(N/4) is computed with a relative error of at most half an ulp
// (π/2 divided by a power of two, times a small integer), by the symmetries
// sin(π/2 − a) = cos a and the quarter turns, so that every entry is within
// an ulp of the exact value and the entries at multiples of π/2 are exactly
// 0 and ±1.
func sincosTables() (sin, cos [sincosTableSize]float64) {
	const quarter = sincosTableSize / 4
	for j := 0; j <= quarter/2; j++ {
		s, c := math.Sincos(float64(j) * (math.Pi / 2 / quarter))
		for _, e := range [2]struct {
			k    int
			s, c float64
		}{{j, s, c}, {quarter - j, c, s}} {
			for turn := range 4 {
				k := e.k + turn*quarter
				if k == sincosTableSize { // 2π: the same as k = 0
					continue
				}
				s, c := e.s, e.c
				switch turn {
				case 1:
					s, c = c, -s
				case 2:
					s, c = -s, -c
				case 3:
					s, c = -c, s
				}
				sin[k], cos[k] = s, c
			}
		}
	}
	return sin, cos
}

// sincosScaled writes scale·cos θ_j to cos[j] and scale·sin θ_j to sin[j]
// for every phase θ_j of theta. theta may be cos itself (each phase is read
// before its slot is written), which Transform uses; otherwise the slices
// must not overlap. The phases must be finite.
func sincosScaled(cos, sin, theta []float64, scale float64) {
	cos, sin = cos[:len(theta)], sin[:len(theta)]
	for j, x := range theta {
		if !(math.Abs(x) < sincosMaxArg) {
			s, c := math.Sincos(x)
			cos[j], sin[j] = c*scale, s*scale
			continue
		}
		t := x*stepsPerRadian + roundMagic
		k := math.Float64bits(t) & (sincosTableSize - 1)
		fk := t - roundMagic
		r := x - fk*step1
		r -= fk * step2
		r -= fk * step3
		z := r * r
		sr := r + r*z*(-1.0/6+z*(1.0/120+z*(-1.0/5040))) // sin r
		cm := z * (-1.0/2 + z*(1.0/24+z*(-1.0/720)))     // cos r − 1
		sa, ca := sinTable[k], cosTable[k]
		sin[j] = (sa + (sa*cm + ca*sr)) * scale
		cos[j] = (ca + (ca*cm - sa*sr)) * scale
	}
}
