package covariance

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

var (
	// ErrIncompatible is matched by the error of a Merge of accumulators with
	// different descriptions, or of ProductOfMarginals of mismatched parts.
	ErrIncompatible = errors.New("covariance: incompatible accumulators")
	// ErrEmpty is matched by the error of a quantity that needs rows from an
	// accumulator that has none.
	ErrEmpty = errors.New("covariance: accumulator has no rows")
	// ErrInvalid is matched by errors about invalid arguments: descriptions,
	// block shapes, scale factors.
	ErrInvalid = errors.New("covariance: invalid argument")
)

// Part says which features an accumulator sums.
type Part uint8

const (
	// PartX sums the part features φ_X(x_i) of view X.
	PartX Part = iota
	// PartY sums the part features φ_Y(y_i) of view Y.
	PartY
	// PartJoint sums the joint features φ(x_i, y_i) of the observed pairs.
	PartJoint
	// PartPermuted sums joint features φ(x_i, y_π(i)) of permuted pairs; its
	// Description.Index tells which of the permutation accumulators it is.
	PartPermuted
	// PartCopyX sums the features of X through the copy map of X
	// (rff.PairSpec.CopyX): the part features of an identical copy X′.
	PartCopyX
	// PartCopyY sums the features of Y through the copy map of Y.
	PartCopyY
	// PartSelfX sums the joint features of the pairs (x_i, x_i) through X's
	// map and its copy: e^{i(a_j + a′_j)·x_i}, the joint of X with X′.
	PartSelfX
	// PartSelfY sums the joint features of (y_i, y_i) through Y's map and
	// its copy.
	PartSelfY
)

var partNames = [...]string{PartX: "x", PartY: "y", PartJoint: "joint", PartPermuted: "permuted",
	PartCopyX: "copy-x", PartCopyY: "copy-y", PartSelfX: "self-x", PartSelfY: "self-y"}

// String returns the part's name.
func (p Part) String() string {
	if int(p) < len(partNames) {
		return partNames[p]
	}
	return fmt.Sprintf("Part(%d)", uint8(p))
}

// Description identifies the features an accumulator sums: the feature maps
// of the two views and which part of them.
type Description struct {
	Map  rff.PairSpec
	Part Part
	// Index tells which permutation accumulator, for PartPermuted; for the
	// other parts, which group of rows (package stream splits rows into
	// groups for its jackknife; 0 for an accumulator of every row).
	Index int
}

// MaxIndex bounds Description.Index.
const MaxIndex = 1 << 20

// Validate returns an error matching ErrInvalid if the description is invalid.
func (d Description) Validate() error {
	if err := d.Map.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if int(d.Part) >= len(partNames) {
		return fmt.Errorf("%w: unknown part %d", ErrInvalid, uint8(d.Part))
	}
	if d.Index < 0 || d.Index > MaxIndex {
		return fmt.Errorf("%w: index %d for part %v", ErrInvalid, d.Index, d.Part)
	}
	return nil
}

// Dim returns the feature dimension 2D of the described accumulator.
func (d Description) Dim() int { return 2 * d.Map.Features }

// diff returns a short description of how d and o differ, or "".
func (d Description) diff(o Description) string {
	a, b := d.Map, o.Map
	switch {
	case d.Part != o.Part || d.Index != o.Index:
		return fmt.Sprintf("part %v#%d vs %v#%d", d.Part, d.Index, o.Part, o.Index)
	case a.Kernel != b.Kernel:
		return fmt.Sprintf("kernel %v vs %v", a.Kernel, b.Kernel)
	case a.Variant != b.Variant:
		return fmt.Sprintf("variant %v vs %v", a.Variant, b.Variant)
	case a.Features != b.Features:
		return fmt.Sprintf("features %d vs %d", a.Features, b.Features)
	case a.Seed != b.Seed:
		return fmt.Sprintf("seed %d vs %d", a.Seed, b.Seed)
	case a.DimX != b.DimX || a.DimY != b.DimY:
		return fmt.Sprintf("widths %d,%d vs %d,%d", a.DimX, a.DimY, b.DimX, b.DimY)
	case a.SigmaX != b.SigmaX || a.SigmaY != b.SigmaY:
		return fmt.Sprintf("sigmas %v,%v vs %v,%v", a.SigmaX, a.SigmaY, b.SigmaX, b.SigmaY)
	}
	return ""
}

// Precision says how Add forms and sums the products φφᵀ of a chunk of rows
// before they reach the float64 sum (vocab.Precision). Float64 (the zero
// value) forms and sums them in float64: the default of an Accumulator
// (stream.DefaultConfig, and so the dime commands, choose Float32). Float32
// rounds the features to float32 and sums their products in float32 over
// blocks of at most 256 rows, then adds each block into the float64 sum:
// the rank-k update runs up to twice as fast (more values per vector
// register), at a relative error of order 1e-7 per block in the sum
// (measured effect on DiME at the dime commands' defaults: up to 2.3e-9
// nats at 10 columns per view, up to 1.1e-6 at 1 or 2,
// stream.TestPrecisionEffect). Sums of many blocks, merges and the
// entropies stay in float64.
type Precision = vocab.Precision

// The precisions of package vocab.
const (
	Float64 = vocab.Float64
	Float32 = vocab.Float32
)

// ParsePrecision returns the precision named "float64" or "float32"
// (case-insensitive), or an error matching ErrInvalid.
func ParsePrecision(name string) (Precision, error) {
	p, err := vocab.ParsePrecision(name)
	if err != nil {
		return p, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return p, nil
}

// Accumulator holds Σ φφᵀ over the feature rows added to it and their total
// weight. The zero value has no description: it can receive a Merge or an
// UnmarshalBinary, which give it one. An Accumulator is not safe for
// concurrent use.
type Accumulator struct {
	desc Description
	// sum is the upper triangle of Σ φφᵀ, packed (linalg.Triangle: about
	// half the memory of a dense matrix); its Data is nil in the zero value.
	sum    linalg.Triangle
	weight float64
	prec   Precision // of Add's products; not part of the description or the encoding
}

// New returns an empty accumulator for the described features.
func New(desc Description) (*Accumulator, error) {
	if err := desc.Validate(); err != nil {
		return nil, err
	}
	return &Accumulator{desc: desc, sum: linalg.NewTriangle(desc.Dim())}, nil
}

// Description returns what the accumulator sums.
func (a *Accumulator) Description() Description { return a.desc }

// Dim returns the feature dimension 2D (0 for the zero value).
func (a *Accumulator) Dim() int { return a.sum.N }

// empty reports whether a is the zero value, without a description.
func (a *Accumulator) empty() bool { return a.sum.Data == nil }

// SetPrecision sets the precision of the products of later Adds (Float64
// unless set). It is a property of this accumulator's computation, not of
// its contents: accumulators of different precisions merge, and
// MarshalBinary does not record it. It returns an error matching ErrInvalid
// for an unknown precision.
func (a *Accumulator) SetPrecision(p Precision) error {
	if !linalg.Precision(p).Valid() {
		return fmt.Errorf("%w: precision %d", ErrInvalid, uint8(p))
	}
	a.prec = p
	return nil
}

// Precision returns the precision of Add's products.
func (a *Accumulator) Precision() Precision { return a.prec }

// Weight returns the total weight of the rows added: their number, scaled by
// every Scale since.
func (a *Accumulator) Weight() float64 { return a.weight }

// Add adds rows feature rows, given row-major in features (rows×Dim), with
// one symmetric rank-k update of the packed upper triangle
// (linalg.AddAtATriangle: float64 products at the default precision
// Float64; see SetPrecision), and adds rows to the weight. It does not
// allocate once warm. Features must be finite.
func (a *Accumulator) Add(features []float64, rows int) error {
	if a.empty() {
		return fmt.Errorf("%w: Add to an accumulator without description", ErrInvalid)
	}
	p := a.Dim()
	if rows < 0 || len(features) != rows*p {
		return fmt.Errorf("%w: %d values for %d rows of %d features", ErrInvalid, len(features), rows, p)
	}
	if rows == 0 {
		return nil
	}
	if err := linalg.AddAtATriangle(linalg.Precision(a.prec), 1, blas64.General{Rows: rows, Cols: p, Stride: p, Data: features}, a.sum); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	a.weight += float64(rows)
	return nil
}

// AddWeighted adds rows feature rows that the caller has already scaled by
// the square roots of their weights (row i by √wᵢ, so that it contributes
// wᵢφᵢφᵢᵀ), and adds weight = Σ wᵢ to the accumulator's weight. Decaying
// windows use it to weight each row by its age. It does not allocate.
func (a *Accumulator) AddWeighted(features []float64, rows int, weight float64) error {
	if !(weight >= 0) || math.IsInf(weight, 0) {
		return fmt.Errorf("%w: weight %v, want a finite value >= 0", ErrInvalid, weight)
	}
	if err := a.Add(features, rows); err != nil {
		return err
	}
	a.weight += weight - float64(rows)
	return nil
}

// Merge adds other's sum and weight to a. A nil or empty other is a no-op; a
// zero-value receiver adopts other's description. Accumulators of different
// descriptions are refused with an error matching ErrIncompatible, and a is
// left unchanged.
func (a *Accumulator) Merge(other *Accumulator) error {
	if other == nil || other.empty() {
		return nil
	}
	if a.empty() {
		a.desc = other.desc
		a.sum = linalg.NewTriangle(other.sum.N)
		copy(a.sum.Data, other.sum.Data)
		a.weight = other.weight
		return nil
	}
	if d := a.desc.diff(other.desc); d != "" {
		return fmt.Errorf("%w: %s", ErrIncompatible, d)
	}
	addUpper(a.sum, other.sum)
	a.weight += other.weight
	return nil
}

// addUpper adds the triangle src to dst, entry by entry.
func addUpper(dst, src linalg.Triangle) {
	for i := range dst.N {
		row := dst.Row(i)
		for j, v := range src.Row(i) {
			row[j] += v
		}
	}
}

// addUpperTo adds the triangle src to the upper triangle of the dense dst,
// entry by entry.
func addUpperTo(dst blas64.Symmetric, src linalg.Triangle) {
	for i := range src.N {
		row := dst.Data[i*dst.Stride+i : i*dst.Stride+src.N]
		for j, v := range src.Row(i) {
			row[j] += v
		}
	}
}

// Scale multiplies the sum and the weight by f, a finite number ≥ 0: with
// f = 2^(−rows/h) before each Add, rows lose half their weight every h rows.
func (a *Accumulator) Scale(f float64) error {
	if !(f >= 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%w: scale factor %v, want a finite value >= 0", ErrInvalid, f)
	}
	if a.empty() {
		return nil
	}
	for i := range a.sum.N {
		row := a.sum.Row(i)
		for j := range row {
			row[j] *= f
		}
	}
	a.weight *= f
	return nil
}

// Reset empties the accumulator, keeping its description and storage.
func (a *Accumulator) Reset() {
	clear(a.sum.Data)
	a.weight = 0
}

// Sum returns a new matrix holding the accumulated Σ φφᵀ (not divided by
// the weight), or nil for the zero value. The accumulator stores only the
// upper triangle, packed: SumTo writes it to a matrix the caller reuses.
func (a *Accumulator) Sum() *mat.SymDense {
	if a.empty() {
		return nil
	}
	dst, _ := a.SumTo(nil)
	return dst
}

// SumTo writes Σ φφᵀ to dst (allocated if nil, resized if empty) and
// returns it.
func (a *Accumulator) SumTo(dst *mat.SymDense) (*mat.SymDense, error) {
	if a.empty() {
		return nil, fmt.Errorf("%w: the sum of an accumulator without description", ErrInvalid)
	}
	dst, err := symDst(dst, a.Dim())
	if err != nil {
		return nil, err
	}
	a.sum.Unpack(dst.RawSymmetric(), 1)
	return dst, nil
}

// Covariance writes C = Σ φφᵀ / weight to dst (allocated if nil, resized if
// empty) and returns it.
func (a *Accumulator) Covariance(dst *mat.SymDense) (*mat.SymDense, error) {
	if err := a.checkRows(); err != nil {
		return nil, err
	}
	dst, err := symDst(dst, a.Dim())
	if err != nil {
		return nil, err
	}
	a.sum.Unpack(dst.RawSymmetric(), 1/a.weight) // as dst.ScaleSym would: 1/weight times each entry
	return dst, nil
}

// symDst returns dst ready to receive a p×p matrix: allocated if nil,
// resized if empty, or an error if it has another size.
func symDst(dst *mat.SymDense, p int) (*mat.SymDense, error) {
	switch {
	case dst == nil:
		return mat.NewSymDense(p, nil), nil
	case dst.IsEmpty():
		dst.ReuseAsSym(p)
	case dst.SymmetricDim() != p:
		return nil, fmt.Errorf("%w: destination is %d×%d, want %d×%d", ErrInvalid, dst.SymmetricDim(), dst.SymmetricDim(), p, p)
	}
	return dst, nil
}

func (a *Accumulator) checkRows() error {
	if a.empty() || !(a.weight > 0) {
		return ErrEmpty
	}
	return nil
}

// Spectrum writes the eigenvalues of the covariance, in ascending order, to
// dst (allocated if too short) and returns it. They sum to 1 up to round-off.
func (a *Accumulator) Spectrum(dst []float64) ([]float64, error) {
	c, err := a.Covariance(nil)
	if err != nil {
		return nil, err
	}
	var solver linalg.SymEigensolver
	return solver.EigenvaluesInPlace(dst, c.RawSymmetric())
}

// Entropy returns the matrix-based Rényi entropy of order alpha of the
// covariance, in nats, by exact.MatrixEntropy: the same spectrum-to-entropy
// code as the exact estimators (Frobenius norm at alpha = 2).
func (a *Accumulator) Entropy(alpha float64) (float64, error) {
	if err := a.checkRows(); err != nil {
		return 0, err
	}
	return exact.MatrixEntropy(a.Sum(), alpha)
}
