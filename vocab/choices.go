package vocab

import (
	"fmt"
	"math"
	"strings"
)

// Variant is how random frequencies are drawn.
type Variant uint8

const (
	// Plain draws independent frequencies from the kernel's spectral density.
	Plain Variant = iota
	// Orthogonal draws orthogonal random features (Gaussian kernel only).
	Orthogonal
)

var variantNames = [...]string{Plain: "plain", Orthogonal: "orthogonal"}

// String returns the variant's name as ParseVariant accepts it.
func (v Variant) String() string {
	if int(v) < len(variantNames) {
		return variantNames[v]
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// Valid reports whether v is one of the defined variants.
func (v Variant) Valid() bool { return int(v) < len(variantNames) }

// ParseVariant returns the variant with the given name (case-insensitive).
func ParseVariant(name string) (Variant, error) {
	for i, n := range variantNames {
		if strings.EqualFold(name, n) {
			return Variant(i), nil
		}
	}
	return 0, Errorf("unknown variant %q (want plain or orthogonal)", name)
}

// MarshalText implements encoding.TextMarshaler.
func (v Variant) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, Errorf("unknown variant %d", uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (v *Variant) UnmarshalText(text []byte) error {
	p, err := ParseVariant(string(text))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Precision says how the accumulators form and sum the products φφᵀ of a
// chunk of rows before they reach the float64 sum.
type Precision uint8

const (
	// Float64 forms and sums the products in float64 (the zero value: the
	// precision of a bare accumulator).
	Float64 Precision = iota
	// Float32 rounds the features to float32 and sums their products in
	// float32 over blocks of at most 256 rows, then adds each block into
	// the float64 sum (the default of the dime commands).
	Float32
)

// String returns "float64" or "float32".
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// ParsePrecision returns the precision named "float64" or "float32"
// (case-insensitive).
func ParsePrecision(name string) (Precision, error) {
	for _, p := range []Precision{Float64, Float32} {
		if strings.EqualFold(name, p.String()) {
			return p, nil
		}
	}
	return 0, Errorf("unknown precision %q (want float32 or float64)", name)
}

// Valid reports whether p is Float64 or Float32.
func (p Precision) Valid() bool { return p == Float64 || p == Float32 }

// MarshalText implements encoding.TextMarshaler.
func (p Precision) MarshalText() ([]byte, error) {
	if !p.Valid() {
		return nil, Errorf("unknown precision %d", uint8(p))
	}
	return []byte(p.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Precision) UnmarshalText(text []byte) error {
	v, err := ParsePrecision(string(text))
	if err != nil {
		return err
	}
	*p = v
	return nil
}

// RowModel is what the rows are assumed to be.
type RowModel uint8

const (
	// IIDRows: independent, identically distributed rows (the zero value).
	IIDRows RowModel = iota
	// SerialRows: a stationary series, rows dependent on their neighbours
	// over a range well below 256 rows (one chunk).
	SerialRows
)

// String returns "iid" or "serial".
func (m RowModel) String() string {
	switch m {
	case IIDRows:
		return "iid"
	case SerialRows:
		return "serial"
	}
	return fmt.Sprintf("RowModel(%d)", uint8(m))
}

// ParseRowModel parses "iid" or "serial".
func ParseRowModel(s string) (RowModel, error) {
	switch s {
	case "iid":
		return IIDRows, nil
	case "serial":
		return SerialRows, nil
	}
	return IIDRows, Errorf("rows %q: want iid or serial", s)
}

// MarshalText implements encoding.TextMarshaler.
func (m RowModel) MarshalText() ([]byte, error) {
	if m > SerialRows {
		return nil, Errorf("unknown row model %d", uint8(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (m *RowModel) UnmarshalText(text []byte) error {
	v, err := ParseRowModel(string(text))
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// MaxAbsValue bounds the magnitude of the values the estimators take. The
// squared distance of two rows of d columns is at most 4·d·MaxAbsValue², which
// stays below the largest float64 for every width up to 2^20 columns;
// larger values would overflow the kernel to a NaN or an infinity. No
// measured quantity comes near it: a value beyond it is garbage (an
// overflowed sentinel), or data to rescale. Readers given it drop such a
// row with --skip-invalid, as they drop a NaN.
const MaxAbsValue = 1e150

// CheckValue returns a description of what is wrong with a value for the
// estimators (NaN, ±Inf, or beyond ±MaxAbsValue), or "" if nothing is.
func CheckValue(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Sprintf("value %v is not finite", v)
	case v > MaxAbsValue || v < -MaxAbsValue:
		return fmt.Sprintf("value %v is beyond ±%g, where the kernel's squared distances overflow: rescale the column", v, MaxAbsValue)
	}
	return ""
}

// FirstInvalid returns the index of the first value of v that CheckValue
// refuses, or -1.
func FirstInvalid(v []float64) int {
	for i, x := range v {
		if x-x != 0 || x > MaxAbsValue || x < -MaxAbsValue { // NaN, ±Inf or too large
			return i
		}
	}
	return -1
}
