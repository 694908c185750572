//go:build !unix

package outfile

// writable does not check: the creation of the file will tell.
func writable(string) error { return nil }
