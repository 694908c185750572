package covariance

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// ProductOfMarginals writes to dst (allocated if nil, resized if empty) the
// analytic product-of-marginals covariance C⊥ of the joint features, computed
// from the part accumulators x (PartX) and y (PartY) of the same pair of maps:
// the mean of φ(x_i, y_k)φ(x_i, y_k)ᵀ over all pairs of a row of x and a row
// of y (see the package documentation for the formula). Its trace is 1. Cost
// O(D²), whatever the number of rows.
func ProductOfMarginals(dst *mat.SymDense, x, y *Accumulator) (*mat.SymDense, error) {
	if x == nil || y == nil || x.sum == nil || y.sum == nil {
		return nil, fmt.Errorf("%w: product of marginals needs two accumulators", ErrInvalid)
	}
	if x.desc.Part != PartX || y.desc.Part != PartY {
		return nil, fmt.Errorf("%w: product of marginals of parts %v and %v, want x and y", ErrIncompatible, x.desc.Part, y.desc.Part)
	}
	if x.desc.Map != y.desc.Map {
		return nil, fmt.Errorf("%w: parts of different maps", ErrIncompatible)
	}
	if err := x.checkRows(); err != nil {
		return nil, err
	}
	if err := y.checkRows(); err != nil {
		return nil, err
	}
	D := x.desc.Map.Features
	p := 2 * D
	dst, err := symDst(dst, p)
	if err != nil {
		return nil, err
	}
	// With C = Σφφᵀ/N and φ = [cos, sin]/√D, the blocks of D·C are CC, CS,
	// CSᵀ and SS. at(c, i, j) reads the symmetric matrix c from its upper
	// triangle.
	cx, cy := x.sum.RawSymmetric(), y.sum.RawSymmetric()
	fx, fy := float64(D)/x.weight, float64(D)/y.weight
	at := func(c []float64, stride, i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return c[i*stride+j]
	}
	// moments returns M− and M+ (real and imaginary parts) at (j, k).
	moments := func(c []float64, stride int, f float64, j, k int) (mr, mi, pr, pi float64) {
		cc := f * at(c, stride, j, k)
		ss := f * at(c, stride, D+j, D+k)
		cs := f * at(c, stride, j, D+k)  // E cos_j sin_k
		csT := f * at(c, stride, k, D+j) // E cos_k sin_j
		return cc + ss, csT - cs, cc - ss, csT + cs
	}
	out := dst.RawSymmetric()
	scale := 1 / (2 * float64(D))
	for j := 0; j < D; j++ {
		for k := 0; k < D; k++ {
			amr, ami, apr, api := moments(cx.Data, cx.Stride, fx, j, k)
			bmr, bmi, bpr, bpi := moments(cy.Data, cy.Stride, fy, j, k)
			reMinus, imMinus := amr*bmr-ami*bmi, amr*bmi+ami*bmr
			rePlus, imPlus := apr*bpr-api*bpi, apr*bpi+api*bpr
			if k >= j {
				out.Data[j*out.Stride+k] = (reMinus + rePlus) * scale
				out.Data[(D+j)*out.Stride+D+k] = (reMinus - rePlus) * scale
			}
			// Cross block: row j (cos), column D+k (sin), always upper.
			out.Data[j*out.Stride+D+k] = (imPlus - imMinus) * scale
		}
	}
	return dst, nil
}
