//go:build !purego

package linalg

import "github.com/dime-project/dime/internal/linalg/asm"

// The assembly kernels of package asm (the micro-kernels of the rank-k
// updates and the fused row of Dsymv), registered when the CPU has them:
// the last one registered (AVX-512 if there, else AVX2) is the one in use.
func init() {
	if asm.HasAVX2 {
		kernels64 = append(kernels64, microKernel[float64]{name: "avx2-4x12", w: 4, mr: 4, np: 3, fn: asm.DKern4x12AVX2})
		kernels32 = append(kernels32, microKernel[float32]{name: "avx2-4x24", w: 8, mr: 4, np: 3, fn: asm.SKern4x24AVX2})
	}
	if asm.HasAVX512 {
		kernels64 = append(kernels64, microKernel[float64]{name: "avx512-8x24", w: 8, mr: 8, np: 3, fn: asm.DKern8x24AVX512})
		kernels32 = append(kernels32, microKernel[float32]{name: "avx512-8x48", w: 16, mr: 8, np: 3, fn: asm.SKern8x48AVX512}.withMasked(asm.SKern8x16AVX512Masked, asm.SKern8x32AVX512Masked, asm.SKern8x48AVX512Masked))
	}
	if asm.HasAVX2 {
		rowKernels = append(rowKernels, asmDotAxpy("avx2", asm.DotAxpyAVX2))
		cvtGroups = asm.CvtGroupsAVX2
		sumRowsAsm = asm.SumRowsAVX2
	}
	if asm.HasAVX512 {
		rowKernels = append(rowKernels, asmDotAxpy("avx512", asm.DotAxpyAVX512))
		sumRowsAsm = asm.SumRowsAVX512
	}
	dotAxpy = rowKernels[len(rowKernels)-1]
	prefetchRows = asm.PrefetchRows
	kernel64 = kernels64[len(kernels64)-1]
	kernel32 = kernels32[len(kernels32)-1]
	blocked64 = asm.HasAVX2 // see blocked64
}
