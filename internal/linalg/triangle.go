package linalg

import (
	"fmt"

	"gonum.org/v1/gonum/blas/blas64"
)

// StripRows is the number of rows of a strip of a Triangle. Every
// micro-kernel's tile height mr and panel width w divide it (checked by the
// package's tests), so that a tile of the blocked update never straddles
// two strips and never starts left of its strip's first column.
const StripRows = 16

// Triangle is the upper triangle of an n×n symmetric matrix in packed
// storage by strips: the rows are cut into strips of StripRows rows (the
// last may be shorter), and the strip of rows [s, s+h) stores the h×(n−s)
// block of columns [s, n), row-major with stride n−s, after the strips
// before it. The entries below the diagonal inside a strip's first h
// columns are stored but not part of the matrix: they stay zero.
//
// It holds n(n+1)/2 + O(n·StripRows) values (TriangleLen), about half of a
// dense n×n matrix, and the blocked rank-k updates write it as they write
// a dense matrix: each tile of a micro-kernel lies in one strip, whose rows
// are a constant stride apart, so the kernels add into it in place and the
// sums are the same, to the bit, as into a dense matrix's upper triangle
// (TestAddAtATriangle). It is the storage of the covariance accumulators.
type Triangle struct {
	N    int
	Data []float64 // TriangleLen(N) values
}

// TriangleLen returns the number of values of an n×n Triangle:
// Σ over strips of h·(n−s), at most n(n+1)/2 + n·(StripRows−1)/2.
func TriangleLen(n int) int {
	if n <= 0 {
		return 0
	}
	full := n / StripRows
	size := stripOffset(n, full)
	if h := n - full*StripRows; h > 0 {
		size += h * h
	}
	return size
}

// stripOffset returns the index in Data of the first value of strip s (all
// strips before it are full): Σ_{t<s} StripRows·(n − t·StripRows).
func stripOffset(n, s int) int {
	return StripRows*s*n - StripRows*StripRows*s*(s-1)/2
}

// NewTriangle returns an n×n Triangle of zeros.
func NewTriangle(n int) Triangle {
	return Triangle{N: n, Data: make([]float64, TriangleLen(n))}
}

// rowOffset returns off and ld such that entry (i, j) of the triangle, for
// j at or right of the first column of i's strip, is Data[off+j], and rows
// i and i+r of one strip are ld values apart.
func (t Triangle) rowOffset(i int) (off, ld int) {
	s := i / StripRows
	first := s * StripRows
	ld = t.N - first
	return stripOffset(t.N, s) + (i-first)*ld - first, ld
}

// Row returns the stored entries (i, i), (i, i+1), …, (i, N−1) of row i: a
// slice of Data.
func (t Triangle) Row(i int) []float64 {
	off, _ := t.rowOffset(i)
	return t.Data[off+i : off+t.N : off+t.N]
}

// At returns entry (i, j) of the symmetric matrix, for any i and j.
func (t Triangle) At(i, j int) float64 {
	if i > j {
		i, j = j, i
	}
	off, _ := t.rowOffset(i)
	return t.Data[off+j]
}

// Unpack writes the matrix to the upper triangle of the dense n×n dst
// (dst.Uplo must be blas.Upper), times f: entry by entry f·t(i,j), so that
// f = 1 copies it bit for bit.
func (t Triangle) Unpack(dst blas64.Symmetric, f float64) {
	for i := range t.N {
		row := dst.Data[i*dst.Stride+i : i*dst.Stride+t.N]
		if f == 1 {
			copy(row, t.Row(i))
			continue
		}
		for j, v := range t.Row(i) {
			row[j] = f * v
		}
	}
}

// Pack sets the triangle to the upper triangle of the dense src.
func (t Triangle) Pack(src blas64.Symmetric) {
	for i := range t.N {
		copy(t.Row(i), src.Data[i*src.Stride+i:i*src.Stride+t.N])
	}
}

// valid returns an error if t's data does not fit its size.
func (t Triangle) valid() error {
	if t.N < 0 || len(t.Data) < TriangleLen(t.N) {
		return fmt.Errorf("linalg: a %d×%d triangle of %d values, want %d", t.N, t.N, len(t.Data), TriangleLen(t.N))
	}
	return nil
}

// cMatrix is the destination C of rankUpdate: a dense row-major matrix of
// stride ldc, or a Triangle (tri set, upper triangle only).
type cMatrix struct {
	data []float64
	ldc  int
	tri  bool
	n    int
}

// denseC returns the cMatrix of a dense matrix.
func denseC(c []float64, ldc int) cMatrix { return cMatrix{data: c, ldc: ldc} }

// triangleC returns the cMatrix of a Triangle.
func triangleC(t Triangle) cMatrix { return cMatrix{data: t.Data, tri: true, n: t.N} }

// row returns off and ld such that entry (i, j) is data[off+j] and row i+r,
// for the rows of one strip of a micro-kernel (r < mr), starts ld values
// after row i.
func (c cMatrix) row(i int) (off, ld int) {
	if !c.tri {
		return i * c.ldc, c.ldc
	}
	return Triangle{N: c.n}.rowOffset(i)
}
