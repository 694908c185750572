//go:build !purego

package asm

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

var (
	// HasAVX2 reports whether the AVX2+FMA kernels can run.
	HasAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	// HasAVX512 reports whether the AVX-512 kernels can run.
	HasAVX512 = cpu.X86.HasAVX512F
)

// DKern4x12AVX2 is the float64 AVX2+FMA kernel: w = 4, mr = 4, 12 YMM
// accumulators.
//
//go:noescape
func DKern4x12AVX2(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64)

// DKern8x24AVX512 is the float64 AVX-512 kernel: w = 8, mr = 8, 24 ZMM
// accumulators.
//
//go:noescape
func DKern8x24AVX512(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64)

// SKern4x24AVX2 is the float32 AVX2+FMA kernel: w = 8, mr = 4.
//
//go:noescape
func SKern4x24AVX2(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64)

// SKern8x48AVX512 is the float32 AVX-512 kernel: w = 16, mr = 8.
//
//go:noescape
func SKern8x48AVX512(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64)

// SKern8x48AVX512Masked is SKern8x48AVX512 with a masked store: row r
// of C is stored as six vectors of 8 float64, and vector h (columns
// 8h … 8h+7) is added under the opmask mask[6r + h] (bit l for column
// 8h + l); the entries whose bit is clear are neither read nor written.
// Each entry whose bit is set becomes c + (alpha·acc + 0), rounded after
// the FMA and after the addition: the bits of the scratch tile of
// linalg.rankUpdate (a tile of zeros into which SKern8x48AVX512 adds, then
// added into C), not the single rounding of SKern8x48AVX512.
//
//go:noescape
func SKern8x48AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16)

// SKern8x32AVX512Masked is SKern8x48AVX512Masked on two R panels: an 8×32
// tile, four opmasks per row (mask[4r + h]).
//
//go:noescape
func SKern8x32AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16)

// SKern8x16AVX512Masked is SKern8x48AVX512Masked on one R panel: an 8×16
// tile, two opmasks per row (mask[2r + h]).
//
//go:noescape
func SKern8x16AVX512Masked(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64, mask *uint16)

// FMAPeakAVX2 runs n iterations of twelve independent register-only YMM
// FMAs (96 float64 flops each).
func FMAPeakAVX2(n int)

// FMAPeakAVX512 runs n iterations of twelve independent register-only ZMM
// FMAs (192 float64 flops each).
func FMAPeakAVX512(n int)

// DotAxpyAVX2 returns Σ a[j]·x[j] and adds xi·a[j] to y[j] for j < n,
// reading a once (a row of a symmetric matrix-vector product), with AVX2
// and FMA.
//
//go:noescape
func DotAxpyAVX2(n int, a, x, y *float64, xi float64) (dot float64)

// DotAxpyAVX512 is DotAxpyAVX2 with AVX-512.
//
//go:noescape
func DotAxpyAVX512(n int, a, x, y *float64, xi float64) (dot float64)

// CvtGroupsAVX2 rounds n groups of w float64 values (w a positive multiple
// of 4), contiguous from src, to float32, writing group g at dst plus
// g·dstride bytes. It needs AVX2.
//
//go:noescape
func CvtGroupsAVX2(n, w int, src *float64, dst *float32, dstride int)

// PrefetchRows asks for the cache lines of rows rows of cols float64 values
// from c, rows ldc values apart (PREFETCHT0: a hint, never a fault).
//
//go:noescape
func PrefetchRows(c *float64, ldc, rows, cols int)

// SumRowsAVX2 adds m rows of n float64 values, row r at rows plus r·stride
// values, into sum, in the order of the rows for each column (the bits of
// adding them one at a time), reading and writing sum once per group of
// eight rows. It needs AVX2.
//
//go:noescape
func SumRowsAVX2(n, m int, sum, rows *float64, stride int)

// SumRowsAVX512 is SumRowsAVX2 with AVX-512.
//
//go:noescape
func SumRowsAVX512(n, m int, sum, rows *float64, stride int)
