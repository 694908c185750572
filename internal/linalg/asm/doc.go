// Package asm holds the assembly micro-kernels of package linalg's blocked
// rank-k updates and the register-only FMA loops its benchmarks measure the
// cores' peak with.
//
// They live in a package of their own because package linalg calls
// OpenBLAS through cgo with the build tag openblas, and a package that uses
// cgo cannot contain Go assembly.
//
// kernels_amd64.s, and the Go declarations of its functions in
// kernels_amd64.go and kernels_other.go, are written by gen_kernels.go;
// regenerate them with
//
//	go generate ./internal/linalg/asm
//
// (CI does, and fails if the committed files differ).
//
// The kernels need AVX2 and FMA, or AVX-512F: HasAVX2 and HasAVX512 say
// whether the CPU (and the operating system) supports them, and callers
// must check before calling. On other architectures, and with the build tag
// purego, there is no assembly: both are false and the functions panic.
//
// Each kernel K(k, a, b, bstride, c, ldc, alpha) multiplies packed panels,
// w values (one vector register) per step of k: it sums, for p < k,
// a[p·w + r]·b_v[p·w + j] into acc[r][v·w + j] (r < mr, v < 3, j < w), where
// b_v starts bstride bytes after b_{v−1}, then adds alpha·acc, in float64,
// into c[r·ldc + v·w + j]. k ≥ 1. The name gives mr × 3w and the
// instruction set; the D kernels take float64 panels, the S kernels float32
// panels whose products are summed in float32.
//
// The Masked kernels (AVX-512 float32, on 3, 2 or 1 R panels) take a last
// argument mask *uint16, one opmask per 8 float64 of a row of C, and add
// only the entries whose bit is set, as c + (alpha·acc + 0): the tiles
// across the diagonal of C's triangle and past its last column, with the
// bits that adding a scratch tile would give, without touching the other
// entries.
// The float32 AVX-512 kernels prefetch each R panel 16 steps of k ahead.
//
// SumRowsAVX2 and SumRowsAVX512 add m rows into a vector of sums, eight
// rows per pass over it, each column in the order of the rows.
package asm

//go:generate go run gen_kernels.go
