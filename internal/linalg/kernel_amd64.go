//go:build !purego

package linalg

import "golang.org/x/sys/cpu"

//go:generate go run gen_kernels.go

// The assembly micro-kernels of kernel_amd64.s, written by gen_kernels.go
// (see microKernel for what they compute).

//go:noescape
func dkern4x12AVX2(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64)

//go:noescape
func dkern8x24AVX512(k int, a, b *float64, bstride int, c *float64, ldc int, alpha float64)

//go:noescape
func skern4x24AVX2(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64)

//go:noescape
func skern8x48AVX512(k int, a, b *float32, bstride int, c *float64, ldc int, alpha float64)

// fmaPeakAVX2 and fmaPeakAVX512 run n iterations of twelve independent
// register-only FMAs (96 and 192 float64 flops): the benchmarks measure the
// cores' FMA peak with them.
func fmaPeakAVX2(n int)
func fmaPeakAVX512(n int)

var (
	hasAVX2   = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasAVX512 = cpu.X86.HasAVX512F
)

func init() {
	if hasAVX2 {
		kernels64 = append(kernels64, microKernel[float64]{name: "avx2-4x12", w: 4, mr: 4, np: 3, fn: dkern4x12AVX2})
		kernels32 = append(kernels32, microKernel[float32]{name: "avx2-4x24", w: 8, mr: 4, np: 3, fn: skern4x24AVX2})
	}
	if hasAVX512 {
		kernels64 = append(kernels64, microKernel[float64]{name: "avx512-8x24", w: 8, mr: 8, np: 3, fn: dkern8x24AVX512})
		kernels32 = append(kernels32, microKernel[float32]{name: "avx512-8x48", w: 16, mr: 8, np: 3, fn: skern8x48AVX512})
	}
	kernel64 = kernels64[len(kernels64)-1]
	kernel32 = kernels32[len(kernels32)-1]
	blocked64 = hasAVX2 // see blocked64
}
