//go:build !(openblas && cgo)

package rff

// nativeTransform reports whether a native version of Transform is compiled
// in: only with the build tag openblas (see transform_native.go).
const nativeTransform = false

// native512 is never set in this build.
var native512 = false

// transformNative is never used in this build.
func (m *Map) transformNative(dst, x []float64, n int, scale float64, px, joint []float64, jscale float64) bool {
	return false
}

// jointNative is never used in this build.
func jointNative(dst, px, py []float64, n, features int, scale float64) bool { return false }
