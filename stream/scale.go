package stream

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/vocab"
)

// This file holds the pilot: the one sample of rows on which every setting
// that looks at the data is chosen (the columns' centers and scales, then
// the median and auto bandwidths), and the standardization it leads to.
// The estimator, the dime commands and the Beam pipeline all call
// ResolvePilot on the same rows (decode.ReadPilot's), so that the same rows
// give the same scales and bandwidths everywhere.

// MADScale is the factor that makes the median absolute deviation a
// consistent estimate of the standard deviation of a Gaussian: 1/Φ⁻¹(3/4).
const MADScale = 1.482602218505602

// Scaling is the affine map that standardizes the columns of each view:
// column j of X becomes (x_j − CenterX[j]) / ScaleX[j], and likewise for Y.
// The zero value is no scaling.
type Scaling struct {
	CenterX, ScaleX []float64
	CenterY, ScaleY []float64
}

// Empty reports whether s is the zero value (no scaling).
func (s Scaling) Empty() bool {
	return s.CenterX == nil && s.ScaleX == nil && s.CenterY == nil && s.ScaleY == nil
}

// Equal reports whether s and o are the same map, bit for bit.
func (s Scaling) Equal(o Scaling) bool {
	return slices.Equal(s.CenterX, o.CenterX) && slices.Equal(s.ScaleX, o.ScaleX) &&
		slices.Equal(s.CenterY, o.CenterY) && slices.Equal(s.ScaleY, o.ScaleY)
}

// check returns an error if s does not fit views of dimX and dimY columns or
// holds a center that is not finite or a scale that is not finite and > 0.
func (s Scaling) check(dimX, dimY int) error {
	if len(s.CenterX) != dimX || len(s.ScaleX) != dimX || len(s.CenterY) != dimY || len(s.ScaleY) != dimY {
		return invalidf("scaling of %d+%d centers and %d+%d scales for views of %d and %d columns",
			len(s.CenterX), len(s.CenterY), len(s.ScaleX), len(s.ScaleY), dimX, dimY)
	}
	for _, v := range [][]float64{s.CenterX, s.CenterY} {
		for _, c := range v {
			if math.IsNaN(c) || math.IsInf(c, 0) || math.Abs(c) > vocab.MaxAbsValue {
				return invalidf("scaling: center %v", c)
			}
		}
	}
	for _, v := range [][]float64{s.ScaleX, s.ScaleY} {
		for _, c := range v {
			if !(c > 0) || math.IsInf(c, 0) || c > 2*vocab.MaxAbsValue {
				return invalidf("scaling: scale %v, want finite and > 0", c)
			}
		}
	}
	return nil
}

// clone returns a deep copy of s.
func (s Scaling) clone() Scaling {
	return Scaling{CenterX: slices.Clone(s.CenterX), ScaleX: slices.Clone(s.ScaleX),
		CenterY: slices.Clone(s.CenterY), ScaleY: slices.Clone(s.ScaleY)}
}

// apply writes the standardized rows of a row-major block of d columns into
// dst (grown as needed) and returns it.
func apply(dst, v []float64, d int, center, scale []float64) []float64 {
	dst = slices.Grow(dst[:0], len(v))[:len(v)]
	for i := 0; i < len(v); i += d {
		for j := range d {
			dst[i+j] = (v[i+j] - center[j]) / scale[j]
		}
	}
	return dst
}

// Apply returns the standardized copies of row-major blocks of X and Y
// (views of len(s.CenterX) and len(s.CenterY) columns).
func (s Scaling) Apply(x, y []float64) (sx, sy []float64) {
	return apply(nil, x, len(s.CenterX), s.CenterX, s.ScaleX), apply(nil, y, len(s.CenterY), s.CenterY, s.ScaleY)
}

// ColumnScales returns the center and scale of each column of a row-major
// block of rows×d values: the median, and MADScale times the median
// absolute deviation from it (the standard deviation for Gaussian data); a
// column with a median absolute deviation of 0 (more than half its values
// equal, as in counts that are mostly 0) gets its standard deviation about
// the mean instead. Both are equivariant: a column multiplied by a > 0 and
// shifted by b gets center a·c + b and scale a·s, to round-off. A column
// whose scale is still 0 (constant) is an error naming it by index; names,
// if given, name it by name.
func ColumnScales(v []float64, rows, d int, names []string) (center, scale []float64, err error) {
	if rows < 2 || len(v) != rows*d {
		return nil, nil, invalidf("scales need at least 2 rows, got %d", rows)
	}
	center, scale = make([]float64, d), make([]float64, d)
	col := make([]float64, rows)
	for j := range d {
		for i := range rows {
			col[i] = v[i*d+j]
		}
		slices.Sort(col)
		m := median(col)
		for i := range col {
			col[i] = math.Abs(col[i] - m)
		}
		slices.Sort(col)
		s := MADScale * median(col)
		if !(s > 0) {
			var mean float64
			for i := range rows {
				mean += v[i*d+j]
			}
			mean /= float64(rows)
			var ss float64
			for i := range rows {
				ss += (v[i*d+j] - mean) * (v[i*d+j] - mean)
			}
			s = math.Sqrt(ss / float64(rows-1))
		}
		if !(s > 0) || math.IsInf(s, 0) {
			name := fmt.Sprintf("column %d", j)
			if j < len(names) {
				name = fmt.Sprintf("column %q", names[j])
			}
			return nil, nil, invalidf("%s is constant (%v) in the %d rows of the pilot sample: it carries no information; leave it out, or turn standardization off to keep it", name, m, rows)
		}
		center[j], scale[j] = m, s
	}
	return center, scale, nil
}

// median returns the median of sorted values (the mean of the middle two of
// an even count).
func median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return sorted[n/2-1]/2 + sorted[n/2]/2
}

// Pilot is what ResolvePilot chose on a pilot sample.
type Pilot struct {
	// Scaling is the columns' standardization (empty without Standardize,
	// or when the Config gives it).
	Scaling Scaling
	// SigmaX and SigmaY are the bandwidths, in the units of the
	// standardized columns when Scaling is not empty.
	SigmaX, SigmaY float64
	// Rows is the number of rows of the pilot sample.
	Rows int
}

// ResolvePilot chooses the data-dependent settings of cfg on a pilot sample
// of rows (row-major blocks of X and Y): first the scaling (cfg.Scaling if
// given, else, with cfg.Standardize, ColumnScales of each column), then the
// bandwidths of both views on the standardized rows (exact.ResolveBandwidths
// with cfg's kernel, alpha and rules; the auto rule looks at the first
// exact.AutoSampleRows of them). The estimator calls it on its first
// cfg.PilotRows rows; callers that hold a dataset call it on the pilot that
// decode.ReadPilot reads (a seeded sample of a Parquet dataset's rows) and
// pass the result to NewResolved, so that every command chooses the same.
func ResolvePilot(x, y []float64, rows, dimX, dimY int, cfg Config) (Pilot, error) {
	if rows < 0 || dimX < 1 || dimY < 1 || len(x) != rows*dimX || len(y) != rows*dimY {
		return Pilot{}, invalidf("pilot block of %d rows has %d X values and %d Y values", rows, len(x), len(y))
	}
	p := Pilot{Rows: rows, Scaling: cfg.Scaling}
	if cfg.Standardize && p.Scaling.Empty() {
		var err error
		if p.Scaling.CenterX, p.Scaling.ScaleX, err = ColumnScales(x, rows, dimX, cfg.XColumns); err != nil {
			return Pilot{}, fmt.Errorf("X: %w", err)
		}
		if p.Scaling.CenterY, p.Scaling.ScaleY, err = ColumnScales(y, rows, dimY, cfg.YColumns); err != nil {
			return Pilot{}, fmt.Errorf("Y: %w", err)
		}
	}
	if !p.Scaling.Empty() {
		if err := p.Scaling.check(dimX, dimY); err != nil {
			return Pilot{}, err
		}
		x, y = p.Scaling.Apply(x, y)
	}
	if !cfg.needsBandwidthData() {
		p.SigmaX, p.SigmaY = resolveDataFree(cfg.BandwidthX, dimX), resolveDataFree(cfg.BandwidthY, dimY)
		return p, nil
	}
	if rows < 2 {
		return Pilot{}, invalidf("%d rows, want at least 2 to choose the bandwidths", rows)
	}
	sx, sy, err := exact.ResolveBandwidths(mat.NewDense(rows, dimX, x), mat.NewDense(rows, dimY, y), cfg.exactConfig())
	if err != nil {
		return Pilot{}, err
	}
	p.SigmaX, p.SigmaY = sx, sy
	return p, nil
}

// NeedsPilot reports whether a setting of c looks at the data: a median or
// auto bandwidth, or standardization without a given Scaling. An
// estimator of such a Config holds back its first PilotRows rows, unless
// NewResolved gives it what a pilot chose.
func (c Config) NeedsPilot() bool { return c.needsPilot() }

// NewResolved returns an estimator whose data-dependent settings are those
// that p, ResolvePilot on the caller's pilot sample of cfg, chose: the
// scaling (with cfg.Standardize, unless cfg.Scaling gives it) and the
// bandwidths of the median and auto rules. It starts at once, holding no
// rows back, and records the rules as cfg gives them and the chosen
// bandwidths, as an estimator that chose them on its own first rows does.
// The dime commands choose the pilot of a Parquet dataset as a sample of
// all its rows (decode.ReadPilot) and pass it here.
func NewResolved(dimX, dimY int, cfg Config, p Pilot) (*Estimator, error) {
	if cfg.Standardize && cfg.Scaling.Empty() {
		if p.Scaling.Empty() {
			return nil, invalidf("standardization needs the pilot's scaling, and the pilot chose none")
		}
		cfg.Scaling = p.Scaling
	}
	e, err := New(dimX, dimY, cfg)
	if err != nil || e.Started() {
		return e, err
	}
	sx, sy := p.SigmaX, p.SigmaY
	if !cfg.BandwidthX.NeedsData() {
		sx = resolveDataFree(cfg.BandwidthX, dimX)
	}
	if !cfg.BandwidthY.NeedsData() {
		sy = resolveDataFree(cfg.BandwidthY, dimY)
	}
	if err := e.start(sx, sy); err != nil {
		return nil, err
	}
	return e, nil
}
