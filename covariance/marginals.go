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
	dst, err := symDst(dst, x.Dim())
	if err != nil {
		return nil, err
	}
	mx, my := momentsOf(x), momentsOf(y)
	product(dst, &mx, &my)
	return dst, nil
}

// SelfProductOfMarginals writes to dst (allocated if nil, resized if empty)
// the product-of-marginals covariance of a view with an identical copy of
// itself: the mean of the joint features e^{i(a_j + a′_j)·(z_i, z_k)} over all
// pairs (z_i, z_k), pairing part (PartX or PartY) with the same view's copy
// (PartCopyX or PartCopyY, the copy map's features). The rows of part and
// copy need not be the same: each estimates its own marginal. Cost O(D²).
func SelfProductOfMarginals(dst *mat.SymDense, part, copy *Accumulator) (*mat.SymDense, error) {
	if part == nil || copy == nil || part.sum == nil || copy.sum == nil {
		return nil, fmt.Errorf("%w: self product of marginals needs two accumulators", ErrInvalid)
	}
	ok := (part.desc.Part == PartX && copy.desc.Part == PartCopyX) || (part.desc.Part == PartY && copy.desc.Part == PartCopyY)
	if !ok {
		return nil, fmt.Errorf("%w: self product of marginals of parts %v and %v, want x and copy-x or y and copy-y", ErrIncompatible, part.desc.Part, copy.desc.Part)
	}
	if part.desc.Map != copy.desc.Map {
		return nil, fmt.Errorf("%w: parts of different maps", ErrIncompatible)
	}
	if err := part.checkRows(); err != nil {
		return nil, err
	}
	if err := copy.checkRows(); err != nil {
		return nil, err
	}
	dst, err := symDst(dst, part.Dim())
	if err != nil {
		return nil, err
	}
	ma, mb := momentsOf(part), momentsOf(copy)
	product(dst, &ma, &mb)
	return dst, nil
}

// moments holds the second moments of a part's features as D×D complex
// matrices, row-major: with u_j = e^{i a_j·z} (so that φ = [Re u, Im u]/√D),
// M−[j,k] = E u_j ū_k = CC + SS + i(CSᵀ − CS) and M+[j,k] = E u_j u_k =
// CC − SS + i(CSᵀ + CS), real and imaginary parts apart.
type moments struct {
	d              int
	mr, mi, pr, pi []float64
}

// momentsOf returns the moments of an accumulator's covariance Σφφᵀ/weight.
func momentsOf(a *Accumulator) moments {
	D := a.desc.Map.Features
	c := a.sum.RawSymmetric()
	f := float64(D) / a.weight
	// With φ = [cos, sin]/√D the blocks of D·C are CC, CS, CSᵀ and SS; at
	// reads the symmetric matrix from its upper triangle.
	at := func(i, j int) float64 {
		if i > j {
			i, j = j, i
		}
		return c.Data[i*c.Stride+j]
	}
	m := moments{d: D, mr: make([]float64, D*D), mi: make([]float64, D*D), pr: make([]float64, D*D), pi: make([]float64, D*D)}
	for j := 0; j < D; j++ {
		for k := 0; k < D; k++ {
			cc := f * at(j, k)
			ss := f * at(D+j, D+k)
			cs := f * at(j, D+k)  // E cos_j sin_k
			csT := f * at(k, D+j) // E cos_k sin_j
			i := j*D + k
			m.mr[i], m.mi[i], m.pr[i], m.pi[i] = cc+ss, csT-cs, cc-ss, csT+cs
		}
	}
	return m
}

// center turns the moments into covariances: M− − μμ* and M+ − μμᵀ, for the
// means μ_j = E u_j (real and imaginary parts).
func (m *moments) center(re, im []float64) {
	D := m.d
	for j := 0; j < D; j++ {
		for k := 0; k < D; k++ {
			i := j*D + k
			// μ_j μ̄_k and μ_j μ_k.
			m.mr[i] -= re[j]*re[k] + im[j]*im[k]
			m.mi[i] -= im[j]*re[k] - re[j]*im[k]
			m.pr[i] -= re[j]*re[k] - im[j]*im[k]
			m.pi[i] -= im[j]*re[k] + re[j]*im[k]
		}
	}
}

// product writes to dst (2D×2D, upper triangle) the real covariance of the
// joint features whose complex moments are the Hadamard products
// P− = A− ∘ B− and P+ = A+ ∘ B+:
//
//	(1/D) [[(Re P− + Re P+)/2, (Im P+ − Im P−)/2], [·ᵀ, (Re P− − Re P+)/2]].
func product(dst *mat.SymDense, a, b *moments) {
	D := a.d
	out := dst.RawSymmetric()
	scale := 1 / (2 * float64(D))
	for j := 0; j < D; j++ {
		for k := 0; k < D; k++ {
			i := j*D + k
			reMinus := a.mr[i]*b.mr[i] - a.mi[i]*b.mi[i]
			imMinus := a.mr[i]*b.mi[i] + a.mi[i]*b.mr[i]
			rePlus := a.pr[i]*b.pr[i] - a.pi[i]*b.pi[i]
			imPlus := a.pr[i]*b.pi[i] + a.pi[i]*b.pr[i]
			if k >= j {
				out.Data[j*out.Stride+k] = (reMinus + rePlus) * scale
				out.Data[(D+j)*out.Stride+D+k] = (reMinus - rePlus) * scale
			}
			// Cross block: row j (cos), column D+k (sin), always upper.
			out.Data[j*out.Stride+D+k] = (imPlus - imMinus) * scale
		}
	}
}
