//go:build unix

package outfile

import "golang.org/x/sys/unix"

// writable reports whether the process may create files in dir.
func writable(dir string) error { return unix.Access(dir, unix.W_OK) }
