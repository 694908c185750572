package rff

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dime-project/dime/internal/randstream"
	"github.com/dime-project/dime/vocab"
	"gonum.org/v1/gonum/floats"
)

// FrequencyVersion identifies how frequencies are drawn from a Spec. It
// changes whenever a Spec would give different frequencies, so that states
// saved by one version are not merged with states of another.
const FrequencyVersion = 1

// ErrInvalidSpec is matched by every error about an invalid Spec or PairSpec.
var ErrInvalidSpec = errors.New("rff: invalid spec")

// Variant is how frequencies are drawn (vocab.Variant).
type Variant = vocab.Variant

// The variants of package vocab.
const (
	Plain      = vocab.Plain
	Orthogonal = vocab.Orthogonal
)

// ParseVariant returns the variant with the given name, or an error
// matching ErrInvalidSpec.
func ParseVariant(name string) (Variant, error) {
	v, err := vocab.ParseVariant(name)
	if err != nil {
		return v, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	return v, nil
}

// MaxFeatures bounds Spec.Features: 2D features make 2D×2D covariance
// accumulators, 8·(2·65536)² bytes = 128 GiB at the bound.
const MaxFeatures = 1 << 16

// MaxInputDim bounds Spec.InputDim.
const MaxInputDim = 1 << 20

// Spec describes the feature map of one view.
type Spec struct {
	Kernel   vocab.Kernel
	Sigma    float64 // bandwidth, > 0
	InputDim int     // d, columns of the view
	Features int     // D, number of frequencies; the map has 2D features
	Variant  Variant
	Seed     uint64
}

// Validate returns an error matching ErrInvalidSpec if the spec is invalid.
func (s Spec) Validate() error {
	switch {
	case !s.Kernel.Valid():
		return fmt.Errorf("%w: unknown kernel %d", ErrInvalidSpec, uint8(s.Kernel))
	case !(s.Sigma > 0) || math.IsInf(s.Sigma, 0):
		return fmt.Errorf("%w: sigma must be finite and > 0, got %v", ErrInvalidSpec, s.Sigma)
	case s.InputDim < 1 || s.InputDim > MaxInputDim:
		return fmt.Errorf("%w: input width %d, want 1 to %d", ErrInvalidSpec, s.InputDim, MaxInputDim)
	case s.Features < 1 || s.Features > MaxFeatures:
		return fmt.Errorf("%w: %d frequencies, want 1 to %d", ErrInvalidSpec, s.Features, MaxFeatures)
	case !s.Variant.Valid():
		return fmt.Errorf("%w: unknown variant %d", ErrInvalidSpec, uint8(s.Variant))
	case s.Variant == Orthogonal && s.Kernel != vocab.Gaussian:
		return fmt.Errorf("%w: orthogonal features need the gaussian kernel, not %v", ErrInvalidSpec, s.Kernel)
	}
	return nil
}

// Map is a random Fourier feature map. It is immutable and safe for
// concurrent use.
type Map struct {
	spec Spec
	// w holds the frequencies as a d×D row-major matrix: column j is w_j, so
	// that the phases of a row-major block X (n×d) are X·w (n×D).
	w []float64
}

// New returns the map that spec describes.
func New(spec Spec) (*Map, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	d, D := spec.InputDim, spec.Features
	w := make([]float64, d*D)
	r := &normals{r: rand.New(rand.NewPCG(spec.Seed, randstream.Frequency))}
	freq := make([]float64, d) // one frequency vector
	switch spec.Variant {
	case Orthogonal:
		drawOrthogonal(w, d, D, r)
		scaleAll(w, 1/spec.Sigma)
	default:
		for j := 0; j < D; j++ {
			drawFrequency(freq, spec.Kernel, spec.Sigma, r)
			for k, v := range freq {
				w[k*D+j] = v
			}
		}
	}
	return &Map{spec: spec, w: w}, nil
}

// drawFrequency writes one frequency vector of the kernel's spectral density.
func drawFrequency(dst []float64, kern vocab.Kernel, sigma float64, r *normals) {
	switch kern {
	case vocab.Laplacian:
		// A standard Cauchy variate is the ratio of two independent
		// standard normals: one exactly rounded division, no tangent.
		scale := float64(math.Sqrt2 * sigma)
		for k := range dst {
			num, den := r.next(), r.next()
			dst[k] = num / den / scale
		}
	case vocab.Elliptical:
		for k := range dst {
			dst[k] = r.next()
		}
		scale := float64(math.Sqrt2 * sigma * math.Abs(r.next()))
		for k := range dst {
			dst[k] /= scale
		}
	default: // Gaussian
		for k := range dst {
			dst[k] = r.next() / sigma
		}
	}
}

// normals draws standard normal variates by Marsaglia's polar method. Unlike
// a ziggurat, whose rejection tests compare results of math.Exp, its only
// decision (s < 1) uses explicitly rounded products, so every IEEE 754
// machine consumes the PCG stream identically; the values then differ across
// platforms at most in the last bit of math.Log (assembly on amd64, so
// identical there whatever GOAMD64 allows).
type normals struct {
	r     *rand.Rand
	spare float64
	has   bool
}

func (g *normals) next() float64 {
	if g.has {
		g.has = false
		return g.spare
	}
	for {
		u := float64(2*g.r.Float64()) - 1
		v := float64(2*g.r.Float64()) - 1
		s := float64(u*u) + float64(v*v)
		if s > 0 && s < 1 {
			f := math.Sqrt(float64(-2*math.Log(s)) / s)
			g.spare, g.has = float64(v*f), true
			return float64(u * f)
		}
	}
}

// drawOrthogonal writes D orthogonal random features for the Gaussian kernel
// with σ = 1 into the d×D matrix w: blocks of d frequencies are the rows of a
// uniformly random orthogonal d×d matrix (Gram–Schmidt of Gaussian vectors),
// each rescaled by the norm of an independent N(0, I_d) vector (χ_d).
func drawOrthogonal(w []float64, d, D int, r *normals) {
	block := make([][]float64, d)
	for i := range block {
		block[i] = make([]float64, d)
	}
	for start := 0; start < D; start += d {
		for _, v := range block {
			for k := range v {
				v[k] = r.next()
			}
		}
		gramSchmidt(block)
		for i := 0; i < d && start+i < D; i++ {
			var norm float64
			for k := 0; k < d; k++ {
				g := r.next()
				norm += float64(g * g)
			}
			norm = math.Sqrt(norm)
			for k, v := range block[i] {
				w[k*D+start+i] = float64(v * norm)
			}
		}
	}
}

// gramSchmidt orthonormalizes the rows of a square matrix in place by modified
// Gram–Schmidt applied twice (for orthogonality to round-off). Products are
// rounded explicitly (float64 conversions) so that no fused multiply-add can
// change the result on any platform.
func gramSchmidt(rows [][]float64) {
	for pass := 0; pass < 2; pass++ {
		for i, v := range rows {
			for _, u := range rows[:i] {
				var dot float64
				for k := range v {
					dot += float64(v[k] * u[k])
				}
				for k := range v {
					v[k] -= float64(dot * u[k])
				}
			}
			var norm float64
			for _, x := range v {
				norm += float64(x * x)
			}
			norm = math.Sqrt(norm)
			for k := range v {
				v[k] /= norm
			}
		}
	}
}

func scaleAll(v []float64, f float64) {
	for i := range v {
		v[i] = float64(v[i] * f)
	}
}

// Spec returns the description of the map.
func (m *Map) Spec() Spec { return m.spec }

// Dim returns the number of features, 2D.
func (m *Map) Dim() int { return 2 * m.spec.Features }

// Frequency writes frequency j (0 ≤ j < D) to dst, allocating if dst is too
// short, and returns it.
func (m *Map) Frequency(dst []float64, j int) []float64 {
	d, D := m.spec.InputDim, m.spec.Features
	if len(dst) < d {
		dst = make([]float64, d)
	}
	dst = dst[:d]
	for k := range dst {
		dst[k] = m.w[k*D+j]
	}
	return dst
}

// ErrShape is matched by the errors of a block whose length does not match
// its number of rows and the map's width.
var ErrShape = errors.New("rff: block shape mismatch")

// Transform writes the features of the n rows of the row-major block x
// (n×d) to dst (row-major n×2D) and returns dst. If dst is too short a new
// slice is allocated; with a long enough dst it does not allocate. Row i of
// dst is φ(x_i) = D^(−1/2)[cos(x_i·w), sin(x_i·w)]. Values must be finite
// (callers validate input once, where they can name the row and column).
// A row's features do not depend on the other rows of the block. With the
// build tag openblas and a CPU with AVX2 and FMA, a vectorized C version
// runs (transform_native.go), whose results differ from the Go version's by
// an ulp or so.
func (m *Map) Transform(dst, x []float64, n int) ([]float64, error) {
	d, D := m.spec.InputDim, m.spec.Features
	p := 2 * D
	if n < 0 || len(x) != n*d {
		return nil, fmt.Errorf("%w: %d values for %d rows of %d columns", ErrShape, len(x), n, d)
	}
	if len(dst) < n*p {
		dst = make([]float64, n*p)
	}
	dst = dst[:n*p]
	scale := 1 / math.Sqrt(float64(D))
	if !m.transformNative(dst, x, n, scale, nil, nil, 0) {
		m.transformGo(dst, x, n, scale)
	}
	return dst, nil
}

// TransformJoint writes the features of the n rows of x to dst, as
// Transform, and the joint features of the rows of px (part features of
// another map with as many frequencies, n rows) with them to joint, as
// Joint(joint, px, dst, n, Features, nil); it returns both. Short dst or
// joint are allocated. The results are those of Transform then Joint, to
// the bit; with the build tag openblas (the C version of Transform) each
// joint row is made while the row's features are still in the cache, which
// saves reading them back: the features of a chunk of 256 rows at D = 256
// (1 MiB) do not fit in a core's L2 cache.
func (m *Map) TransformJoint(dst, joint, x, px []float64, n int) ([]float64, []float64, error) {
	d, D := m.spec.InputDim, m.spec.Features
	p := 2 * D
	if n < 0 || len(x) != n*d {
		return nil, nil, fmt.Errorf("%w: %d values for %d rows of %d columns", ErrShape, len(x), n, d)
	}
	if len(px) < n*p {
		return nil, nil, fmt.Errorf("%w: joint of %d rows of %d features with %d values", ErrShape, n, p, len(px))
	}
	if len(dst) < n*p {
		dst = make([]float64, n*p)
	}
	if len(joint) < n*p {
		joint = make([]float64, n*p)
	}
	dst, joint = dst[:n*p], joint[:n*p]
	if m.transformNative(dst, x, n, 1/math.Sqrt(float64(D)), px, joint, math.Sqrt(float64(D))) {
		return dst, joint, nil
	}
	m.transformGo(dst, x, n, 1/math.Sqrt(float64(D)))
	joint, err := Joint(joint, px, dst, n, D, nil)
	return dst, joint, err
}

// transformGo is Transform in Go.
func (m *Map) transformGo(dst, x []float64, n int, scale float64) {
	d, D := m.spec.InputDim, m.spec.Features
	p := 2 * D
	for i := 0; i < n; i++ {
		row := dst[i*p : (i+1)*p]
		theta := row[:D]
		m.phases(theta, x[i*d:(i+1)*d])
		sincosScaled(row[:D], row[D:], theta, scale)
	}
}

// phases writes x·w_j for every frequency j to theta (length D).
func (m *Map) phases(theta, x []float64) {
	D := m.spec.Features
	clear(theta)
	for k, xk := range x {
		if xk == 0 {
			continue
		}
		floats.AddScaled(theta, xk, m.w[k*D:(k+1)*D])
	}
}
