package vocab

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

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
	// AutoRule maximizes DiME over σ on a sample of the data: DiME has an
	// interior maximum in σ where MI_α does not. It needs both views.
	AutoRule
)

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

// Sigma returns an explicit bandwidth.
func Sigma(sigma float64) Bandwidth { return Bandwidth{Rule: ExplicitRule, Sigma: sigma} }

// NeedsData reports whether the rule looks at the data (median, auto).
func (b Bandwidth) NeedsData() bool { return b.Rule == MedianRule || b.Rule == AutoRule }

// CheckSigma returns an *Error unless sigma is a finite number greater than
// zero.
func CheckSigma(sigma float64) error {
	if !(sigma > 0) || math.IsInf(sigma, 0) {
		return Errorf("sigma must be finite and > 0, got %v", sigma)
	}
	return nil
}

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
		return Bandwidth{}, Errorf("bandwidth %q is not fixed, median, auto or a number", s)
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

// MarshalText implements encoding.TextMarshaler (String).
func (b Bandwidth) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler (ParseBandwidth).
func (b *Bandwidth) UnmarshalText(text []byte) error {
	v, err := ParseBandwidth(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}
