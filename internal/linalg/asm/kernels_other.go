//go:build !amd64 || purego

package asm

// Without amd64 assembly (other architectures, or the build tag purego)
// there are no kernels: HasAVX2 and HasAVX512 are false and the functions
// panic.

var HasAVX2, HasAVX512 = false, false

func DKern4x12AVX2(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64) {
	panic(noAsm)
}

func DKern8x24AVX512(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64) {
	panic(noAsm)
}

func SKern4x24AVX2(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64) {
	panic(noAsm)
}

func SKern8x48AVX512(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64) {
	panic(noAsm)
}

func SKern8x48AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16) {
	panic(noAsm)
}

func SKern8x32AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16) {
	panic(noAsm)
}

func SKern8x16AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16) {
	panic(noAsm)
}

func CvtGroupsAVX2(n, w int, src *float64, dst *float32, dstride int) { panic(noAsm) }

func PrefetchRows(c *float64, ldc, rows, cols int) { panic(noAsm) }

func FMAPeakAVX2(n int)   { panic(noAsm) }
func FMAPeakAVX512(n int) { panic(noAsm) }

const noAsm = "linalg/asm: no assembly kernels in this build"

func DotAxpyAVX2(n int, a, x, y *float64, xi float64) float64   { panic(noAsm) }
func DotAxpyAVX512(n int, a, x, y *float64, xi float64) float64 { panic(noAsm) }

func SumRowsAVX2(n, m int, sum, rows *float64, stride int)   { panic(noAsm) }
func SumRowsAVX512(n, m int, sum, rows *float64, stride int) { panic(noAsm) }
