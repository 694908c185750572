package rff

import "github.com/dime-project/dime/internal/linalg"

// The tests run on the linear-algebra backend the dime program installs in
// its main (linalg.Install: OpenBLAS with the tag openblas), so that they
// test what it runs; importing the library installs nothing.
func init() { linalg.Install() }
