//go:build unix

package memlimit

import "golang.org/x/sys/unix"

// getRlimits returns the soft limits RLIMIT_AS and RLIMIT_DATA.
func getRlimits() Rlimits {
	get := func(resource int) uint64 {
		var r unix.Rlimit
		if err := unix.Getrlimit(resource, &r); err != nil || r.Cur == unix.RLIM_INFINITY {
			return 0
		}
		return r.Cur
	}
	return Rlimits{AS: get(unix.RLIMIT_AS), Data: get(unix.RLIMIT_DATA)}
}
