package exact

import (
	"math"
	"slices"

	"github.com/dime-project/dime/vocab"
	"gonum.org/v1/gonum/mat"
)

// This file is the one place where bandwidths are chosen: the rules and
// their parsing, each rule's σ for one view (Bandwidth.Resolve), and
// ResolveBandwidths for both views, which Estimate, package stream's pilot
// sample and the Beam pipeline's sampling stage (module beam) all call, so
// that a σ chosen on the same rows is the same everywhere.

type (
	// BandwidthRule is vocab.BandwidthRule.
	BandwidthRule = vocab.BandwidthRule
	// Bandwidth is vocab.Bandwidth.
	Bandwidth = vocab.Bandwidth
)

// The bandwidth rules of package vocab.
const (
	FixedRule    = vocab.FixedRule
	MedianRule   = vocab.MedianRule
	ExplicitRule = vocab.ExplicitRule
	AutoRule     = vocab.AutoRule
)

// medianSampleRows caps the number of rows that the median heuristic looks
// at: 1000 rows give 499,500 pairwise distances, plenty for a median.
const medianSampleRows = 1000

// Fixed returns the bandwidth rule σ = √(d/2) (vocab.Fixed).
func Fixed() Bandwidth { return vocab.Fixed() }

// Median returns the median-heuristic bandwidth rule (vocab.Median).
func Median() Bandwidth { return vocab.Median() }

// Auto returns the rule that maximizes DiME over σ (vocab.Auto).
func Auto() Bandwidth { return vocab.Auto() }

// Sigma returns an explicit bandwidth (vocab.Sigma).
func Sigma(sigma float64) Bandwidth { return vocab.Sigma(sigma) }

// ParseBandwidth parses "fixed", "median", "auto" or a positive number, or
// returns an error matching ErrInvalidInput.
func ParseBandwidth(s string) (Bandwidth, error) {
	b, err := vocab.ParseBandwidth(s)
	if err != nil {
		return b, invalidf("%v", err)
	}
	return b, nil
}

// Resolve returns the bandwidth of rule b for the view x (rows are points).
func Resolve(b Bandwidth, kern Kernel, x mat.Matrix) (float64, error) {
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
	points, err := Sweep(x, y, cfg, AutoScales())
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
	if sigmaX, err = Resolve(orFixed(cfg.SigmaX), cfg.Kernel, x); err != nil {
		return 0, 0, 0, invalidf("X: %s", trimPrefix(err))
	}
	if sigmaY, err = Resolve(orFixed(cfg.SigmaY), cfg.Kernel, y); err != nil {
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
