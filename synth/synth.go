package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/dime-project/dime/internal/randstream"
	"github.com/dime-project/dime/vocab"
	"gonum.org/v1/gonum/mat"
)

// Kind is a family of paired data.
type Kind uint8

const (
	Gaussian Kind = iota
	Sine
	Circle
	Independent
	// StudentT is independent heavy-tailed views: every column of X and Y
	// is Student's t with 3 degrees of freedom (infinite fourth moment).
	StudentT
	// Discrete is independent views of different types: X Student-t(3),
	// Y integers drawn uniformly from 0..4 (ties in every column).
	Discrete
	// MixedWidths is independent Gaussian views whose columns have very
	// different scales: column k has standard deviation 10^((k mod 5) − 2),
	// that is 0.01, 0.1, 1, 10, 100, 0.01, …
	MixedWidths
	// Square is Y = X² + noise coordinate by coordinate, X ~ N(0, I_d):
	// dependent, with zero Pearson correlation (E X³ = 0).
	Square
	// Units is a table in real units: column k of each view is an age in
	// years, an amount of money, a count or a measurement of order 1e-3
	// (by k mod 4, Y shifted by one), and Yₖ depends on Xₖ through the
	// square of a latent normal (Pearson correlation near 0).
	Units
	// UnitsNull is Units with independent views (the same marginals).
	UnitsNull
)

var kindNames = [...]string{
	Gaussian: "gaussian", Sine: "sine", Circle: "circle", Independent: "independent",
	StudentT: "student-t", Discrete: "discrete", MixedWidths: "mixed-widths", Square: "square",
	Units: "units", UnitsNull: "units-null",
}

// Kinds lists every kind, in the order of their values.
var Kinds = []Kind{Gaussian, Sine, Circle, Independent, StudentT, Discrete, MixedWidths, Square, Units, UnitsNull}

// Null reports whether the kind's views are independent (any dependence
// measured on it is estimation error).
func (k Kind) Null() bool {
	return k == Independent || k == StudentT || k == Discrete || k == MixedWidths || k == UnitsNull
}

// KindNames returns the names of every kind, in order, as ParseKind accepts
// them.
func KindNames() []string { return append([]string(nil), kindNames[:]...) }

// String returns the kind's name as ParseKind accepts it.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ParseKind returns the kind with the given name (case-insensitive).
func ParseKind(name string) (Kind, error) {
	for i, n := range kindNames {
		if strings.EqualFold(name, n) {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("synth: unknown kind %q (want one of %s)", name, strings.Join(kindNames[:], ", "))
}

// ErrInvalidSpec is matched by the errors of Spec.Validate.
var ErrInvalidSpec = vocab.NewSentinel("synth: invalid spec")

// Spec describes a synthetic dataset.
type Spec struct {
	Kind Kind
	// Dim is the number of columns d of each view (≥ 1).
	Dim int
	// MI is the true Shannon mutual information in nats (Gaussian only, ≥ 0).
	MI float64
	// Noise is the standard deviation of the additive noise (Sine, Circle,
	// Square).
	Noise float64
	// Seed drives the random draws.
	Seed uint64
}

// Validate reports a spec that cannot be generated.
func (s Spec) Validate() error {
	switch {
	case int(s.Kind) >= len(kindNames):
		return fmt.Errorf("%w: unknown kind %d", ErrInvalidSpec, s.Kind)
	case s.Dim < 1:
		return fmt.Errorf("%w: dimension %d, want at least 1", ErrInvalidSpec, s.Dim)
	case !(s.MI >= 0) || math.IsInf(s.MI, 0):
		return fmt.Errorf("%w: mutual information %v, want a finite value ≥ 0", ErrInvalidSpec, s.MI)
	case !(s.Noise >= 0) || math.IsInf(s.Noise, 0):
		return fmt.Errorf("%w: noise %v, want a finite value ≥ 0", ErrInvalidSpec, s.Noise)
	}
	return nil
}

// Rho returns the per-coordinate correlation ρ = √(1 − exp(−2m/d)) that gives
// the Gaussian toy a true mutual information of m nats in d dimensions.
func Rho(d int, mi float64) float64 {
	return math.Sqrt(-math.Expm1(-2 * mi / float64(d)))
}

// Stream draws rows of a Spec block by block.
type Stream struct {
	spec  Spec
	rho   float64 // correlation of the Gaussian kind
	noise float64 // √(1 − ρ²) = exp(−m/d), computed without cancellation
	rng   *rand.Rand
}

// NewStream returns a Stream for spec, or an error matching ErrInvalidSpec.
func NewStream(spec Spec) (*Stream, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	return &Stream{spec: spec, rho: Rho(spec.Dim, spec.MI), noise: math.Exp(-spec.MI / float64(spec.Dim)), rng: rand.New(rand.NewPCG(spec.Seed, randstream.Synth))}, nil
}

// Fill writes len(x)/d rows to the row-major blocks x and y (each d columns;
// they must have the same length, a multiple of d) and returns the number of
// rows written. Successive calls continue the same sequence: filling in blocks
// of any size gives the same rows as filling all at once.
func (s *Stream) Fill(x, y []float64) int {
	d := s.spec.Dim
	rows := min(len(x), len(y)) / d
	r := s.rng
	for i := 0; i < rows; i++ {
		xr, yr := x[i*d:(i+1)*d], y[i*d:(i+1)*d]
		for k := range xr {
			switch s.spec.Kind {
			case Gaussian:
				a, e := r.NormFloat64(), r.NormFloat64()
				xr[k] = a
				yr[k] = s.rho*a + s.noise*e
			case Independent:
				xr[k], yr[k] = r.NormFloat64(), r.NormFloat64()
			case Sine:
				a := math.Pi * (2*r.Float64() - 1)
				xr[k] = a
				yr[k] = math.Cos(2*a) + s.spec.Noise*r.NormFloat64()
			case Circle:
				t := 2 * math.Pi * r.Float64()
				xr[k] = math.Cos(t) + s.spec.Noise*r.NormFloat64()
				yr[k] = math.Sin(t) + s.spec.Noise*r.NormFloat64()
			case StudentT:
				xr[k], yr[k] = studentT3(r), studentT3(r)
			case Discrete:
				xr[k], yr[k] = studentT3(r), float64(r.IntN(discreteLevels))
			case MixedWidths:
				w := mixedWidth(k)
				xr[k], yr[k] = w*r.NormFloat64(), w*r.NormFloat64()
			case Square:
				a := r.NormFloat64()
				xr[k] = a
				yr[k] = a*a + s.spec.Noise*r.NormFloat64()
			case Units, UnitsNull:
				a := r.NormFloat64()
				b := r.NormFloat64()
				if s.spec.Kind == Units {
					b = (a*a-1)/math.Sqrt2 + s.spec.Noise*b
				}
				xr[k] = inUnits(k, a, r)
				yr[k] = inUnits(k+1, b, r)
			}
		}
	}
	return rows
}

// inUnits returns the latent value v (of order 1) in the units of column k
// of the Units kinds, by k mod 4: an age 49 + 12v years; an amount of money
// 50,000·e^(1.2v) (from about 1e3 to 1e7 over millions of rows); a count
// drawn from Poisson(e^(1 + 0.6v)); a measurement 0.002·e^(0.3v).
func inUnits(k int, v float64, r *rand.Rand) float64 {
	switch k % 4 {
	case 0:
		return 49 + 12*v
	case 1:
		return 50000 * math.Exp(1.2*v)
	case 2:
		return float64(poisson(math.Exp(1+0.6*v), r))
	}
	return 0.002 * math.Exp(0.3*v)
}

// poisson draws Poisson(lambda) by counting exponential arrivals (lambda
// is at most a few hundred here).
func poisson(lambda float64, r *rand.Rand) int {
	n := 0
	for t := r.ExpFloat64(); t < lambda; t += r.ExpFloat64() {
		n++
	}
	return n
}

// discreteLevels is the number of values 0..discreteLevels−1 of the Y
// columns of the Discrete kind.
const discreteLevels = 5

// studentT3 draws Student's t with 3 degrees of freedom as Z / √(V/3), with
// Z standard normal and V = Z₁² + Z₂² + Z₃² chi-squared with 3 degrees of
// freedom, independent.
func studentT3(r *rand.Rand) float64 {
	z := r.NormFloat64()
	var v float64
	for range 3 {
		e := r.NormFloat64()
		v += e * e
	}
	return z / math.Sqrt(v/3)
}

// mixedWidth returns the standard deviation 10^((k mod 5) − 2) of column k of
// the MixedWidths kind.
func mixedWidth(k int) float64 {
	return [5]float64{0.01, 0.1, 1, 10, 100}[k%5]
}

// Generate returns n rows of spec as two n×d matrices.
func Generate(spec Spec, n int) (x, y *mat.Dense, err error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("%w: %d rows, want at least 1", ErrInvalidSpec, n)
	}
	s, err := NewStream(spec)
	if err != nil {
		return nil, nil, err
	}
	xd, yd := make([]float64, n*spec.Dim), make([]float64, n*spec.Dim)
	s.Fill(xd, yd)
	return mat.NewDense(n, spec.Dim, xd), mat.NewDense(n, spec.Dim, yd), nil
}
