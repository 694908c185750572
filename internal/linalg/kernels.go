package linalg

// Kernels names the dense kernels this process uses for its rank-k updates
// (float64 and float32 accumulators) and its symmetric matrix-vector
// products, as kind=name: "go-2x4" is the portable kernel, "avx2-…" and
// "avx512-…" the assembly ones chosen for the CPU at start-up. With the
// OpenBLAS backend, the accumulators' updates (AddAtA) still use these
// kernels, and OpenBLAS's own do the other float64 work (Syrk of exact's
// Gram matrices, LAPACK: see Current). It is what dime version
// reports, so that a bug report says which code ran.
func Kernels() []string {
	return []string{"syrk64=" + kernel64.name, "syrk32=" + kernel32.name, "symv=" + dotAxpy.name}
}
