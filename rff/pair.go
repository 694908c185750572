package rff

import (
	"fmt"
	"math"

	"github.com/dime-project/dime/vocab"
)

// PairSpec describes the feature maps of two paired views X and Y, which share
// the kernel, the variant and the number of frequencies D.
type PairSpec struct {
	Kernel         vocab.Kernel
	Variant        Variant
	Features       int // D
	Seed           uint64
	SigmaX, SigmaY float64
	DimX, DimY     int
}

// X returns the spec of the map of view X: the pair's seed.
func (p PairSpec) X() Spec {
	return Spec{Kernel: p.Kernel, Sigma: p.SigmaX, InputDim: p.DimX, Features: p.Features, Variant: p.Variant, Seed: p.Seed}
}

// Y returns the spec of the map of view Y: a seed derived from the pair's
// seed, so that the frequencies of Y are drawn independently of those of X.
func (p PairSpec) Y() Spec {
	return Spec{Kernel: p.Kernel, Sigma: p.SigmaY, InputDim: p.DimY, Features: p.Features, Variant: p.Variant, Seed: splitmix64(p.Seed)}
}

// CopyX returns the spec of a second, independent map of view X, through
// which X is seen as an identical copy of itself for the self term
// DiME(X;X′) of the normalized score (package stream): X's kernel,
// bandwidth and width, and frequencies drawn independently of X's. When Y's
// map draws from the same density (same width and bandwidth), its
// frequencies are such a draw and CopyX returns Y's spec: with Y = X the
// self terms and DiME(X;Y) then pair the same frequencies, a_j with b_j, and
// estimate the same quantity. Otherwise the frequencies come from a seed
// derived from the pair's.
func (p PairSpec) CopyX() Spec {
	if p.sameDensity() {
		return p.Y()
	}
	s := p.X()
	s.Seed = splitmix64(p.Seed ^ copyXSalt)
	return s
}

// CopyY returns the spec of a second, independent map of view Y, as CopyX
// does for X: X's spec when both views share their density.
func (p PairSpec) CopyY() Spec {
	if p.sameDensity() {
		return p.X()
	}
	s := p.Y()
	s.Seed = splitmix64(p.Seed ^ copyYSalt)
	return s
}

// sameDensity reports whether the frequencies of X and Y are drawn from the
// same density: the same width and bandwidth (the kernel and variant are
// shared).
func (p PairSpec) sameDensity() bool { return p.DimX == p.DimY && p.SigmaX == p.SigmaY }

// Salts of the copies' seeds ("copyX---", "copyY---").
const (
	copyXSalt = 0x636f7079582d2d2d
	copyYSalt = 0x636f7079592d2d2d
)

// splitmix64 is the finalizer of SplitMix64 (Steele, Lea and Flood, 2014), a
// bijection of uint64 that decorrelates neighbouring seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Validate returns an error matching ErrInvalidSpec if either view's spec is
// invalid; the message names the view.
func (p PairSpec) Validate() error {
	if err := p.X().Validate(); err != nil {
		return fmt.Errorf("X: %w", err)
	}
	if err := p.Y().Validate(); err != nil {
		return fmt.Errorf("Y: %w", err)
	}
	return nil
}

// Pair holds the feature maps of two paired views. It is immutable and safe
// for concurrent use.
type Pair struct {
	spec PairSpec
	X, Y *Map
}

// NewPair returns the maps that spec describes.
func NewPair(spec PairSpec) (*Pair, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	x, err := New(spec.X())
	if err != nil {
		return nil, err
	}
	y, err := New(spec.Y())
	if err != nil {
		return nil, err
	}
	return &Pair{spec: spec, X: x, Y: y}, nil
}

// Spec returns the description of the pair.
func (p *Pair) Spec() PairSpec { return p.spec }

// Dim returns the number of features of each part and of the joint map, 2D.
func (p *Pair) Dim() int { return 2 * p.spec.Features }

// Joint writes to dst (row-major n×2D) the joint features of the n pairs
// (x_i, y_perm[i]), computed from the part features px (of x, n×2D) and py (of
// y, at least max(perm)+1 rows of 2D), and returns dst. A nil perm pairs row i
// with row i. With θ_j = a_j·x + b_j·y the joint features are
//
//	D^(−1/2) [cos θ_j, sin θ_j] = √D [cx·cy − sx·sy, sx·cy + cx·sy]
//
// where cx = cos(a_j·x)/√D etc. are the part features: no sin or cos is
// evaluated. dst must not overlap px or py; if it is too short a new slice is
// allocated. ‖row‖ = ‖px row‖·‖py row‖ = 1. Without perm, and with the build
// tag openblas on a CPU with AVX2 and FMA, a vectorized C version runs
// (transform_native.go), which differs from the Go one by an ulp or so.
func Joint(dst, px, py []float64, n, features int, perm []int) ([]float64, error) {
	p := 2 * features
	if features < 1 || n < 0 || len(px) < n*p || len(py)%p != 0 || (perm == nil && len(py) < n*p) {
		return nil, fmt.Errorf("%w: joint of %d rows of %d features from %d and %d values", ErrShape, n, p, len(px), len(py))
	}
	if perm != nil && len(perm) < n {
		return nil, fmt.Errorf("%w: permutation of length %d for %d rows", ErrShape, len(perm), n)
	}
	rowsY := len(py) / p
	if len(dst) < n*p {
		dst = make([]float64, n*p)
	}
	dst = dst[:n*p]
	scale := math.Sqrt(float64(features))
	if perm == nil && jointNative(dst, px, py, n, features, scale) {
		return dst, nil
	}
	D := features
	for i := 0; i < n; i++ {
		k := i
		if perm != nil {
			k = perm[i]
			if k < 0 || k >= rowsY {
				return nil, fmt.Errorf("%w: permutation pairs row %d with row %d of %d", ErrShape, i, k, rowsY)
			}
		}
		x := px[i*p : (i+1)*p]
		y := py[k*p : (k+1)*p]
		out := dst[i*p : (i+1)*p]
		xc, xs := x[:D], x[D:]
		yc, ys := y[:D], y[D:]
		oc, os := out[:D], out[D:]
		for j := range oc {
			oc[j] = scale * (xc[j]*yc[j] - xs[j]*ys[j])
			os[j] = scale * (xs[j]*yc[j] + xc[j]*ys[j])
		}
	}
	return dst, nil
}
