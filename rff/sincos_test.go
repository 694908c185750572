package rff

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// piDigits is π to 120 decimal digits (about 400 bits).
const piDigits = "3.14159265358979323846264338327950288419716939937510582097494459230781640628620899862803482534211706798214808651328230665"

// referenceSincos returns sin x and cos x by reducing x modulo π/2 in
// 400-bit arithmetic and applying math.Sincos to the remainder (|r| ≤ π/4,
// where math.Sincos needs no reduction and is accurate to an ulp), then the
// quadrant's exact symmetry.
func referenceSincos(x float64) (sin, cos float64) {
	const prec = 400
	pi, _, err := big.ParseFloat(piDigits, 10, prec, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	half := new(big.Float).SetPrec(prec).Quo(pi, big.NewFloat(2))
	bx := new(big.Float).SetPrec(prec).SetFloat64(x)
	q, _ := new(big.Float).SetPrec(prec).Quo(bx, half).Float64()
	k := math.Round(q)
	r, _ := new(big.Float).SetPrec(prec).Sub(bx, new(big.Float).SetPrec(prec).Mul(half, big.NewFloat(k))).Float64()
	s, c := math.Sincos(r)
	switch int64(math.Mod(k, 4)+4) % 4 {
	case 1:
		s, c = c, -s
	case 2:
		s, c = -s, -c
	case 3:
		s, c = -c, s
	}
	return s, c
}

// ulpsApart returns |got − want| in units of the last place of want.
func ulpsApart(got, want float64) float64 {
	if got == want {
		return 0
	}
	w := math.Abs(want)
	return math.Abs(got-want) / (math.Nextafter(w, math.Inf(1)) - w)
}

// TestSincosAccuracy compares sincosScaled (scale 1) with a 400-bit
// reduction on phases of every scale the table method handles: around zero,
// typical Gaussian phases, up to its bound, and near the table's points and
// multiples of π/2. Measured on 160,000 phases: at most 2 ulps and 2.2e-16
// absolute (the bound allows one more ulp; the reference itself, which
// rounds the remainder and uses math.Sincos, is within about an ulp of the
// exact values). Beyond the bound sincosScaled is math.Sincos, bit for bit.
func TestSincosAccuracy(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var theta []float64
	for i := 0; i < 40000; i++ {
		theta = append(theta,
			3*r.NormFloat64(),
			(2*r.Float64()-1)*1000,
			(2*r.Float64()-1)*sincosMaxArg,
			float64(r.IntN(1<<12)-1<<11)*(2*math.Pi/sincosTableSize)+(2*r.Float64()-1)*1e-9,
		)
	}
	theta = append(theta, 0, math.Copysign(0, -1), 1e-300, -1e-300, math.Pi/2, math.Pi, -math.Pi,
		math.Nextafter(sincosMaxArg, 0), -math.Nextafter(sincosMaxArg, 0))
	sin, cos := make([]float64, len(theta)), make([]float64, len(theta))
	sincosScaled(cos, sin, theta, 1)
	var worstULP, worstAbs float64
	for i, x := range theta {
		s, c := referenceSincos(x)
		u := max(ulpsApart(sin[i], s), ulpsApart(cos[i], c))
		a := max(math.Abs(sin[i]-s), math.Abs(cos[i]-c))
		if u > worstULP {
			worstULP = u
			t.Logf("θ = %.17g: sin %.17g (reference %.17g), cos %.17g (reference %.17g): %g ulps", x, sin[i], s, cos[i], c, u)
		}
		worstAbs = max(worstAbs, a)
	}
	t.Logf("%d phases: at most %g ulps, %.2g absolute", len(theta), worstULP, worstAbs)
	if worstULP > 3 || worstAbs > 3.5e-16 {
		t.Errorf("sincos: %g ulps and %.2g absolute, want at most 3 ulps and 3.5e-16", worstULP, worstAbs)
	}

	// Beyond the bound, and in place as Transform calls it, with a scale.
	in := []float64{0.5, -2, sincosMaxArg, -sincosMaxArg, 1e9, -3e15, 1e300}
	want := append([]float64(nil), in...)
	sincosScaled(in, sin, in, 0.25)
	for i, x := range want {
		s, c := math.Sincos(x)
		if math.Abs(in[i]-c/4) > 1e-16 || math.Abs(sin[i]-s/4) > 1e-16 || (math.Abs(x) >= sincosMaxArg && (in[i] != c*0.25 || sin[i] != s*0.25)) {
			t.Errorf("θ = %v: (%v, %v), want (%v, %v)", x, in[i], sin[i], c/4, s/4)
		}
	}
}

// BenchmarkSincos measures sines and cosines per second on 65536 Gaussian
// phases (unpredictable quadrants), against math.Sincos.
func BenchmarkSincos(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	theta := make([]float64, 1<<16)
	for i := range theta {
		theta[i] = 2 * r.NormFloat64()
	}
	sin, cos := make([]float64, len(theta)), make([]float64, len(theta))
	b.Run("table", func(b *testing.B) {
		for range b.N {
			sincosScaled(cos, sin, theta, 0.1)
		}
		b.ReportMetric(float64(b.N*len(theta))/b.Elapsed().Seconds(), "sincos/s")
	})
	b.Run("math.Sincos", func(b *testing.B) {
		for range b.N {
			for j, x := range theta {
				s, c := math.Sincos(x)
				cos[j], sin[j] = c*0.1, s*0.1
			}
		}
		b.ReportMetric(float64(b.N*len(theta))/b.Elapsed().Seconds(), "sincos/s")
	})
}
