package linalg

// The tests run on the backend the dime program installs in its main
// (Install: OpenBLAS with the tag openblas), so that they test what it
// runs; TestInstall checks what importing the package leaves, from a fresh
// process.
func init() {
	if !importOnly() {
		Install()
	}
}
