//go:build openblas && !cgo

package linalg

// The build tag openblas calls OpenBLAS through cgo: it needs CGO_ENABLED=1,
// a C compiler and the libraries (apt-get install libopenblas-dev
// liblapacke-dev). This undefined name makes the compiler say so.
var _ = buildTagOpenblasNeedsCgo_SetCGO_ENABLED1
