package covariance

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/internal/quadform"
)

// IndependenceTest is the RFF-HSIC test of independence computed by
// Independence.
type IndependenceTest struct {
	// Statistic is T = n Σ_j |ĉ_j|², ĉ_j the empirical covariance of the
	// part features u_j = e^{i a_j·x} and v_j = e^{i b_j·y}.
	Statistic float64
	// Rows is n, the effective number of rows ((Σw)²/Σw² with decay).
	Rows float64
	// NullMean is the expectation of T under independence, the sum of the
	// weights of its null distribution.
	NullMean float64
	// NullVariance is the variance of T under independence, 2 Σ λ² over
	// the weights λ of its null distribution: with NullMean it gives the
	// null's effective number of degrees of freedom, 2·NullMean²/NullVariance.
	NullVariance float64
	// PValue is P(T′ ≥ T) for T′ distributed as T under independence,
	// reported as at least 1e-300 (the saddlepoint reaches far below what
	// float64 holds).
	PValue float64
	// Method tells how the p-value was computed: "imhof" or "saddlepoint"
	// (package quadform), or "exact" for degenerate views.
	Method string
}

// Independence tests the independence of X and Y from the part
// accumulators x and y (PartX, PartY), the first moments of the parts mx and
// my, and the first moment of the joint features mxy (PartJoint), all of
// the same rows and map. The package documentation derives the test. Cost:
// one 2D×2D eigenproblem and a p-value (a few milliseconds).
func Independence(x, y *Accumulator, mx, my, mxy *Mean) (IndependenceTest, error) {
	return IndependenceGroups([]*Accumulator{x}, []*Accumulator{y}, mx, my, mxy)
}

// IndependenceGroups is Independence of the sums of groups of part
// accumulators (xs of PartX, ys of PartY, as SumGroups would sum them),
// without forming those sums: beside the eigensolver's, its only O(D²)
// allocation is the 2D×2D covariance of the null distribution. Its result
// equals Independence of SumGroups(xs...) and SumGroups(ys...).
func IndependenceGroups(xs, ys []*Accumulator, mx, my, mxy *Mean) (IndependenceTest, error) {
	var zero IndependenceTest
	x, errX := marginalOf(xs, "the independence test")
	y, errY := marginalOf(ys, "the independence test")
	if errX != nil && !errors.Is(errX, ErrIncompatible) || errY != nil && !errors.Is(errY, ErrIncompatible) ||
		mx == nil || my == nil || mxy == nil || mx.sum == nil || my.sum == nil || mxy.sum == nil {
		return zero, fmt.Errorf("%w: the independence test needs two accumulators and three means", ErrInvalid)
	}
	if errX != nil {
		return zero, errX
	}
	if errY != nil {
		return zero, errY
	}
	if x.desc.Part != PartX || y.desc.Part != PartY || mx.desc.Part != PartX || my.desc.Part != PartY || mxy.desc.Part != PartJoint {
		return zero, fmt.Errorf("%w: independence test of parts %v, %v, %v, %v, %v, want x, y, x, y, joint",
			ErrIncompatible, x.desc.Part, y.desc.Part, mx.desc.Part, my.desc.Part, mxy.desc.Part)
	}
	for _, d := range []Description{y.desc, mx.desc, my.desc, mxy.desc} {
		if d.Map != x.desc.Map {
			return zero, fmt.Errorf("%w: parts of different maps", ErrIncompatible)
		}
	}
	if err := x.checkRows(); err != nil {
		return zero, err
	}
	if err := y.checkRows(); err != nil {
		return zero, err
	}
	W := mxy.weight
	for _, w := range []float64{x.weight, y.weight, mx.weight, my.weight} {
		if math.Abs(w-W) > 1e-9*W {
			return zero, fmt.Errorf("%w: the accumulators and means hold different rows (weights %v and %v)", ErrIncompatible, w, W)
		}
	}
	n := mxy.EffectiveRows()
	if !(n > 1) {
		return zero, fmt.Errorf("%w: %v effective rows, want more than 1", ErrEmpty, n)
	}
	D := x.desc.Map.Features
	// Means of u_j, v_j and u_j v_j: √D (Σ cos + i Σ sin)/W.
	f := math.Sqrt(float64(D)) / W
	ur, ui := scaled(mx.sum[:D], f), scaled(mx.sum[D:], f)
	vr, vi := scaled(my.sum[:D], f), scaled(my.sum[D:], f)
	var t float64
	for j := 0; j < D; j++ {
		cr := f*mxy.sum[j] - (ur[j]*vr[j] - ui[j]*vi[j])
		ci := f*mxy.sum[D+j] - (ur[j]*vi[j] + ui[j]*vr[j])
		t += cr*cr + ci*ci
	}
	t *= n
	// Null covariance of √n [Re ĉ, Im ĉ]: D times the product of the
	// centered moments, with the n/(n−1) that unbiases the two covariances.
	sigma := nullCovariance(&x, &y, ur, ui, vr, vi, n)
	var solver linalg.SymEigensolver
	weights, err := solver.EigenvaluesInPlace(nil, sigma.RawSymmetric())
	if err != nil {
		return zero, err
	}
	var mean, variance float64
	for _, l := range weights {
		if l > 0 {
			mean += l
			variance += 2 * l * l
		}
	}
	p, method := quadform.Survival(weights, t)
	if method != quadform.Exact {
		p = math.Max(p, minPValue)
	}
	return IndependenceTest{Statistic: t, Rows: n, NullMean: mean, NullVariance: variance, PValue: p, Method: method.String()}, nil
}

// minPValue is the smallest p-value reported.
const minPValue = 1e-300

// nullCovariance returns the covariance of √n [Re ĉ, Im ĉ] under
// independence: with Γ = Cov(u) ∘ Cov(v) and Π = PCov(u) ∘ PCov(v) (the
// Hadamard products of the covariances E(u−μ)(u−μ)* and pseudo-covariances
// E(u−μ)(u−μ)ᵀ of the parts), it is [[Re(Γ+Π), Im(Π−Γ)], [·ᵀ, Re(Γ−Π)]]/2:
// D times the product of marginals of the centered moments, times the
// n/(n−1) that unbiases the two plug-in covariances.
func nullCovariance(x, y *marginal, ur, ui, vr, vi []float64, n float64) *mat.SymDense {
	D := x.desc.Map.Features
	x.re, x.im = ur, ui
	y.re, y.im = vr, vi
	sigma := new(mat.SymDense)
	sigma.SetRawSymmetric(linalg.NewEigenScratch(2 * D)) // the eigensolver's stride
	product(sigma.RawSymmetric(), x, y, float64(D)*n/(n-1))
	return sigma
}

// scaled returns f·v in a new slice.
func scaled(v []float64, f float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = f * x
	}
	return out
}
