//go:build !unix

package memlimit

// getRlimits returns no limits where there are no rlimits.
func getRlimits() Rlimits { return Rlimits{} }
