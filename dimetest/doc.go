// Package dimetest and its subpackages are test support shared by the dime
// module and the Beam module (github.com/dime-project/dime/beam), which may
// not import the other module's internal packages: s3test runs a real
// S3-protocol server on loopback, planted plants credentials where a
// command could print them. They import package testing and are meant for
// tests only; their API follows the tests' needs, not a compatibility
// promise.
package dimetest

import (
	"net"
	"testing"
)

// FreeAddr returns a loopback address (127.0.0.1:port) whose port was free
// a moment ago, for a server a test starts (another process may take it
// in between).
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
