package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/dime-project/dime/internal/linalg/asm"
)

// sumRowsImpl is one implementation of SumRows: nil fn is the portable loop.
type sumRowsImpl struct {
	name string
	fn   func(n, m int, sum, rows *float64, stride int)
}

// sumRowsImpls lists the implementations of SumRows this CPU and build can
// run: the portable loop, and each assembly kernel available.
func sumRowsImpls() []sumRowsImpl {
	impls := []sumRowsImpl{{"go", nil}}
	if asm.HasAVX2 {
		impls = append(impls, sumRowsImpl{"avx2", asm.SumRowsAVX2})
	}
	if asm.HasAVX512 {
		impls = append(impls, sumRowsImpl{"avx512", asm.SumRowsAVX512})
	}
	return impls
}

// TestSumRowsBits checks every implementation of SumRows against the plain
// loop sum[j] += row[j], row after row, to the bit, on sizes around the
// kernels' vectors and groups of eight rows, with values of mixed
// magnitudes (so that the order of the additions shows in the bits), a
// stride longer than the rows, and guard values after sum and around the
// rows that must stay untouched.
func TestSumRowsBits(t *testing.T) {
	saved := sumRowsAsm
	defer func() { sumRowsAsm = saved }()
	r := rand.New(rand.NewPCG(12, 1))
	for _, impl := range sumRowsImpls() {
		sumRowsAsm = impl.fn
		for _, n := range []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 512, 513} {
			for _, m := range []int{1, 2, 7, 8, 9, 15, 16, 17, 33} {
				for _, pad := range []int{0, 3} {
					stride := n + pad
					a := make([]float64, (m-1)*stride+n+5)
					for i := range a {
						a[i] = r.NormFloat64() * math.Pow(10, float64(r.IntN(17)-8))
					}
					sum := make([]float64, n+2)
					for j := range sum {
						sum[j] = r.NormFloat64() * 1e3
					}
					want := append([]float64(nil), sum...)
					for row := range m {
						for j := range n {
							want[j] += a[row*stride+j]
						}
					}
					ac := append([]float64(nil), a...)
					SumRows(sum[:n], a[:(m-1)*stride+n], m, stride)
					for j := range sum {
						if math.Float64bits(sum[j]) != math.Float64bits(want[j]) {
							t.Fatalf("%s n=%d m=%d stride=%d: sum[%d] = %v, want %v", impl.name, n, m, stride, j, sum[j], want[j])
						}
					}
					for i := range a {
						if math.Float64bits(a[i]) != math.Float64bits(ac[i]) {
							t.Fatalf("%s n=%d m=%d: rows changed at %d", impl.name, n, m, i)
						}
					}
				}
			}
		}
	}
}

// TestSumRowsPanics checks that SumRows refuses operands too short for its
// rows instead of reading past them.
func TestSumRowsPanics(t *testing.T) {
	for _, c := range []struct{ n, m, stride, len int }{{8, 2, 8, 15}, {8, 2, 7, 16}, {8, 1, 0, 7}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SumRows(n=%d, m=%d, stride=%d, len=%d) did not panic", c.n, c.m, c.stride, c.len)
				}
			}()
			SumRows(make([]float64, c.n), make([]float64, c.len), c.m, c.stride)
		}()
	}
	SumRows(nil, nil, 3, 0)                // no columns: nothing to do
	SumRows(make([]float64, 4), nil, 0, 4) // no rows
}

// BenchmarkSumRows adds 256 rows of 512 values (the joint features of a
// block at D = 256) into one sum with each implementation.
func BenchmarkSumRows(b *testing.B) {
	saved := sumRowsAsm
	defer func() { sumRowsAsm = saved }()
	const m, n = 256, 512
	r := rand.New(rand.NewPCG(12, 2))
	a := make([]float64, m*n)
	for i := range a {
		a[i] = r.NormFloat64()
	}
	sum := make([]float64, n)
	for _, impl := range sumRowsImpls() {
		b.Run(fmt.Sprintf("%s/rows=%d/n=%d", impl.name, m, n), func(b *testing.B) {
			sumRowsAsm = impl.fn
			b.SetBytes(m * n * 8)
			for range b.N {
				SumRows(sum, a, m, n)
			}
		})
	}
}
