package exact

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
)

// This file is the one place where bandwidths are chosen: the rules and
// their parsing, each rule's σ for one view (Bandwidth.Resolve), and
// ResolveBandwidths for both views, which Estimate, package stream's pilot
// sample and the Beam pipeline's sampling stage (module beam) all call, so
// that a σ chosen on the same rows is the same everywhere.

// BandwidthRule says how the bandwidth σ of a view is chosen.
type BandwidthRule uint8

const (
	// FixedRule is the paper's default σ = √(d/2) for a view of d columns.
	FixedRule BandwidthRule = iota
	// MedianRule is the median heuristic: the median pairwise distance between
	// rows, in the kernel's own norm (ℓ₁ for Laplacian, ℓ₂ otherwise), over √2.
	MedianRule
	// ExplicitRule uses the value given in Bandwidth.Sigma.
	ExplicitRule
	// AutoRule maximizes DiME over σ on a sample of the data (Sweep): DiME
	// has an interior maximum in σ where MI_α does not. It needs both views,
	// so Resolve alone cannot apply it; Estimate and package stream do.
	AutoRule
)

// medianSampleRows caps the number of rows that the median heuristic looks
// at: 1000 rows give 499,500 pairwise distances, plenty for a median.
const medianSampleRows = 1000

// Bandwidth is a bandwidth rule and, for ExplicitRule, its value. The zero
// value is the Fixed rule.
type Bandwidth struct {
	Rule  BandwidthRule
	Sigma float64 // used by ExplicitRule only
}

// Fixed returns the bandwidth rule σ = √(d/2).
func Fixed() Bandwidth { return Bandwidth{Rule: FixedRule} }

// Median returns the median-heuristic bandwidth rule.
func Median() Bandwidth { return Bandwidth{Rule: MedianRule} }

// Auto returns the rule that maximizes DiME over σ.
func Auto() Bandwidth { return Bandwidth{Rule: AutoRule} }

// NeedsData reports whether the rule looks at the data (median, auto).
func (b Bandwidth) NeedsData() bool { return b.Rule == MedianRule || b.Rule == AutoRule }

// Sigma returns an explicit bandwidth.
func Sigma(sigma float64) Bandwidth { return Bandwidth{Rule: ExplicitRule, Sigma: sigma} }

// ParseBandwidth parses "fixed", "median", "auto" or a positive number.
func ParseBandwidth(s string) (Bandwidth, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "fixed":
		return Fixed(), nil
	case "median":
		return Median(), nil
	case "auto":
		return Auto(), nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return Bandwidth{}, invalidf("bandwidth %q is not fixed, median, auto or a number", s)
	}
	if err := CheckSigma(v); err != nil {
		return Bandwidth{}, err
	}
	return Sigma(v), nil
}

// String returns the form that ParseBandwidth accepts.
func (b Bandwidth) String() string {
	switch b.Rule {
	case FixedRule:
		return "fixed"
	case MedianRule:
		return "median"
	case ExplicitRule:
		return strconv.FormatFloat(b.Sigma, 'g', -1, 64)
	case AutoRule:
		return "auto"
	}
	return fmt.Sprintf("BandwidthRule(%d)", uint8(b.Rule))
}

// Resolve returns the bandwidth of this rule for the view x (rows are points).
func (b Bandwidth) Resolve(kern Kernel, x mat.Matrix) (float64, error) {
	_, d := x.Dims()
	switch b.Rule {
	case FixedRule:
		if d < 1 {
			return 0, invalidf("view has no columns")
		}
		return FixedSigma(d), nil
	case MedianRule:
		return MedianSigma(kern, x)
	case ExplicitRule:
		return b.Sigma, CheckSigma(b.Sigma)
	case AutoRule:
		return 0, invalidf("the auto bandwidth needs both views: use ResolveBandwidths")
	}
	return 0, invalidf("unknown bandwidth rule %d", uint8(b.Rule))
}

// FixedSigma returns √(d/2), the paper's bandwidth for a view of d columns.
func FixedSigma(d int) float64 { return math.Sqrt(float64(d) / 2) }

// MedianSigma returns the median pairwise distance between the rows of x, in
// the norm of the kernel (ℓ₁ for Laplacian, ℓ₂ for Gaussian and Elliptical),
// divided by √2. With more than 1000 rows it uses 1000 rows evenly spaced
// through x (deterministic, and not fooled by sorted input as a prefix is).
// The median of an even count is the mean of the two middle distances.
func MedianSigma(kern Kernel, x mat.Matrix) (float64, error) {
	n, d := x.Dims()
	if n < 2 || d < 1 {
		return 0, invalidf("median bandwidth needs at least 2 rows and 1 column, got %d×%d", n, d)
	}
	if err := CheckFinite(x); err != nil {
		return 0, err
	}
	m := min(n, medianSampleRows)
	rows := make([][]float64, m)
	for k := range rows {
		rows[k] = mat.Row(nil, k*n/m, x)
	}
	dist := make([]float64, 0, m*(m-1)/2)
	for i := 0; i < m; i++ {
		for j := i + 1; j < m; j++ {
			var s float64
			for k, v := range rows[i] {
				if kern == Laplacian {
					s += math.Abs(v - rows[j][k])
				} else {
					s += (v - rows[j][k]) * (v - rows[j][k])
				}
			}
			if kern != Laplacian {
				s = math.Sqrt(s)
			}
			dist = append(dist, s)
		}
	}
	slices.Sort(dist)
	med := dist[len(dist)/2]
	if len(dist)%2 == 0 {
		med = (dist[len(dist)/2-1] + med) / 2
	}
	if !(med > 0) {
		return 0, invalidf("median pairwise distance is 0 (are most rows identical?): give sigma explicitly")
	}
	return med / math.Sqrt2, nil
}

// ResolveBandwidths returns the bandwidths of both views under cfg's rules.
// Fixed, median and explicit rules resolve per view; the auto rule takes the
// argmax of DiME over AutoScales on the first AutoSampleRows rows (the rows
// are used as given: pass a random sample if the data is sorted).
func ResolveBandwidths(x, y mat.Matrix, cfg Config) (sigmaX, sigmaY float64, err error) {
	if cfg.SigmaX.Rule != AutoRule && cfg.SigmaY.Rule != AutoRule {
		_, sigmaX, sigmaY, err = resolveViews(x, y, cfg)
		return sigmaX, sigmaY, err
	}
	n, _ := x.Dims()
	if m := min(n, AutoSampleRows); m < n {
		x = firstRows(x, m)
		y = firstRows(y, m)
	}
	points, err := Sweep(x, y, cfg, AutoScales)
	if err != nil {
		return 0, 0, err
	}
	best := points[BestDiME(points)]
	return best.SigmaX, best.SigmaY, nil
}

// firstRows returns the first m rows of x.
func firstRows(x mat.Matrix, m int) mat.Matrix {
	_, d := x.Dims()
	if dense, ok := x.(*mat.Dense); ok {
		return dense.Slice(0, m, 0, d)
	}
	return mat.DenseCopyOf(x).Slice(0, m, 0, d)
}

// resolveViews checks the shapes and values of the two views and resolves
// their bandwidths.
func resolveViews(x, y mat.Matrix, cfg Config) (n int, sigmaX, sigmaY float64, err error) {
	if x == nil || y == nil {
		return 0, 0, 0, invalidf("a view is nil")
	}
	nx, dx := x.Dims()
	ny, dy := y.Dims()
	switch {
	case nx != ny:
		return 0, 0, 0, invalidf("X has %d rows and Y has %d, want the same number", nx, ny)
	case nx < 2:
		return 0, 0, 0, invalidf("%d rows, want at least 2", nx)
	case dx < 1:
		return 0, 0, 0, invalidf("X has no columns")
	case dy < 1:
		return 0, 0, 0, invalidf("Y has no columns")
	}
	if err := CheckFinite(x); err != nil {
		return 0, 0, 0, invalidf("X: %s", trimPrefix(err))
	}
	if err := CheckFinite(y); err != nil {
		return 0, 0, 0, invalidf("Y: %s", trimPrefix(err))
	}
	// The auto rule is resolved by the caller, from both views; here it
	// stands for the fixed bandwidth it scales.
	if sigmaX, err = orFixed(cfg.SigmaX).Resolve(cfg.Kernel, x); err != nil {
		return 0, 0, 0, invalidf("X: %s", trimPrefix(err))
	}
	if sigmaY, err = orFixed(cfg.SigmaY).Resolve(cfg.Kernel, y); err != nil {
		return 0, 0, 0, invalidf("Y: %s", trimPrefix(err))
	}
	return nx, sigmaX, sigmaY, nil
}

// orFixed returns b, or the fixed rule in place of the auto rule.
func orFixed(b Bandwidth) Bandwidth {
	if b.Rule == AutoRule {
		return Fixed()
	}
	return b
}
