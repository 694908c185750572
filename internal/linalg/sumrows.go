package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/floats"
)

// sumRowsAsm, if not nil, is the assembly of SumRows (asm.SumRowsAVX512 or
// asm.SumRowsAVX2, set with the kernels); tests set it to nil for the
// portable path.
var sumRowsAsm func(n, m int, sum, rows *float64, stride int)

// SumRows adds m rows of len(sum) values into sum, row r being
// a[r·stride : r·stride+len(sum)]: for each column j, sum[j] += a[j], then
// sum[j] += a[stride+j], and so on in the order of the rows, so that the
// result has the bits of adding the rows one at a time (a loop of
// floats.Add). With AVX2 or AVX-512 it reads and writes sum once per group
// of eight rows rather than once per row (the column sums of the
// covariance package's Mean: BenchmarkSumRows); elsewhere it is that loop.
// It panics if a is too short or stride < len(sum) while m > 1.
func SumRows(sum, a []float64, m, stride int) {
	n := len(sum)
	if m <= 0 || n == 0 {
		return
	}
	if (m > 1 && stride < n) || len(a) < (m-1)*stride+n {
		panic(fmt.Sprintf("linalg: SumRows of %d rows of %d values, stride %d, from %d values", m, n, stride, len(a)))
	}
	if sumRowsAsm != nil {
		sumRowsAsm(n, m, &sum[0], &a[0], stride)
		return
	}
	for r := range m {
		floats.Add(sum, a[r*stride:r*stride+n])
	}
}
