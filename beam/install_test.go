package dimebeam

import "github.com/dime-project/dime/host"

// The tests run on the linear-algebra backend dimebeam's main installs
// (host.UseBLAS), so that they test what it runs; importing the library
// installs nothing.
func init() { host.UseBLAS() }
