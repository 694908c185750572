package vocab

import (
	"fmt"
	"strings"
)

// Kernel names a normalized shift-invariant kernel (κ(x, x) = 1). The zero
// value is Gaussian.
type Kernel uint8

const (
	// Gaussian is exp(−‖x − x′‖₂² / (2σ²)).
	Gaussian Kernel = iota
	// Laplacian is the factorized Laplacian kernel exp(−‖x − x′‖₁ / (√2 σ)),
	// a product of one-dimensional Laplacian kernels.
	Laplacian
	// Elliptical is the elliptical Laplacian kernel exp(−‖x − x′‖₂ / (√2 σ)).
	Elliptical
)

var kernelNames = [...]string{Gaussian: "gaussian", Laplacian: "laplacian", Elliptical: "elliptical"}

// Kernels returns every kernel, in the order of their values (a new slice).
func Kernels() []Kernel { return []Kernel{Gaussian, Laplacian, Elliptical} }

// String returns the kernel's lower-case name, as ParseKernel accepts it.
func (k Kernel) String() string {
	if int(k) < len(kernelNames) {
		return kernelNames[k]
	}
	return fmt.Sprintf("Kernel(%d)", uint8(k))
}

// Valid reports whether k is one of the defined kernels.
func (k Kernel) Valid() bool { return int(k) < len(kernelNames) }

// ParseKernel returns the kernel with the given name (case-insensitive).
func ParseKernel(name string) (Kernel, error) {
	for i, n := range kernelNames {
		if strings.EqualFold(name, n) {
			return Kernel(i), nil
		}
	}
	return 0, Errorf("unknown kernel %q (want gaussian, laplacian or elliptical)", name)
}

// MarshalText implements encoding.TextMarshaler (the kernel's name).
func (k Kernel) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, Errorf("unknown kernel %d", uint8(k))
	}
	return []byte(k.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *Kernel) UnmarshalText(text []byte) error {
	v, err := ParseKernel(string(text))
	if err != nil {
		return err
	}
	*k = v
	return nil
}
