//go:build !amd64 || purego

package linalg

// Without the amd64 assembly (other architectures, or the build tag purego)
// the portable Go kernels of gemm.go are the only ones.

func fmaPeakAVX2(n int)   { panic("linalg: no AVX2 in this build") }
func fmaPeakAVX512(n int) { panic("linalg: no AVX-512 in this build") }

var hasAVX2, hasAVX512 = false, false
