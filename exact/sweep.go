package exact

import (
	"math"

	"gonum.org/v1/gonum/mat"
)

// AutoSampleRows is the number of rows the auto bandwidth rule looks at: the
// exact DiME of each grid point costs P + 1 eigenproblems of this size.
const AutoSampleRows = 512

// AutoScales returns the grid of the auto rule (a new slice): σ is the
// view's fixed bandwidth √(d/2) times 2^(k/2) for k = −8 … 6, from σ/16 to
// 8σ in steps of √2.
func AutoScales() []float64 {
	s := make([]float64, 0, 15)
	for k := -8; k <= 6; k++ {
		s = append(s, math.Pow(2, float64(k)/2))
	}
	return s
}

// SweepPoint is the exact estimate at one point of a bandwidth sweep.
type SweepPoint struct {
	Scale          float64 // the factor applied to each swept view's base bandwidth
	SigmaX, SigmaY float64
	Result         Result
}

// Sweep returns the exact estimate of x and y at every scale: each view whose
// rule is AutoRule gets σ = scale·√(d/2), the other keeps its own rule's σ.
// If neither view is auto, both are swept. This is the paper's Appendix A:
// MI_α grows toward log n as σ shrinks while DiME has an interior maximum.
// Each point costs P + 3 eigenproblems: Sweep skips the normalized score and
// takes the p-value from the P permutations of DiME (the permutation test
// with B = P) unless cfg asks for more permutations.
func Sweep(x, y mat.Matrix, cfg Config, scales []float64) ([]SweepPoint, error) {
	if len(scales) == 0 {
		return nil, invalidf("empty sweep grid")
	}
	for _, s := range scales {
		if err := CheckSigma(s); err != nil {
			return nil, invalidf("sweep scale %v must be finite and > 0", s)
		}
	}
	sweepX := cfg.SigmaX.Rule == AutoRule || cfg.SigmaY.Rule != AutoRule
	sweepY := cfg.SigmaY.Rule == AutoRule || cfg.SigmaX.Rule != AutoRule
	_, sx, sy, err := resolveViews(x, y, cfg)
	if err != nil {
		return nil, err
	}
	_, dx := x.Dims()
	_, dy := y.Dims()
	points := make([]SweepPoint, len(scales))
	cfg.SkipNormalized = true
	cfg.TestPermutations = max(cfg.TestPermutations, cfg.Permutations)
	for i, s := range scales {
		c := cfg
		c.SigmaX, c.SigmaY = Sigma(sx), Sigma(sy)
		if sweepX {
			c.SigmaX = Sigma(s * FixedSigma(dx))
		}
		if sweepY {
			c.SigmaY = Sigma(s * FixedSigma(dy))
		}
		r, err := Estimate(x, y, c)
		if err != nil {
			return nil, err
		}
		points[i] = SweepPoint{Scale: s, SigmaX: r.SigmaX, SigmaY: r.SigmaY, Result: r}
	}
	return points, nil
}

// BestDiME returns the index of the sweep point with the largest DiME.
func BestDiME(points []SweepPoint) int {
	best := 0
	for i, p := range points {
		if p.Result.DiME > points[best].Result.DiME {
			best = i
		}
	}
	return best
}
