package covariance

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/blas/blas64"

	"github.com/dime-project/dime/rff"
)

// refProduct is product as it was written before it read the accumulators
// in blocks of rows: every entry read from the groups' triangles one at a
// time (at, half of them down a column), with the same arithmetic
// (moment, storeProduct, scaleUpper). TestProductBlocks checks that the
// blocked gathering gives its bits.
func refProduct(out blas64.Symmetric, a, b *marginal, f float64) {
	at := func(m *marginal, i, j int) float64 {
		var s float64
		for _, c := range m.sums {
			s += c.At(i, j)
		}
		return s
	}
	moment := func(m *marginal, j, k int) moments {
		D := m.desc.Map.Features
		return m.moment(j, k, at(m, j, k), at(m, D+j, D+k), at(m, j, D+k), at(m, k, D+j))
	}
	D := a.desc.Map.Features
	scale := 1 / (2 * float64(D))
	for j := 0; j < D; j++ {
		for k := 0; k < D; k++ {
			storeProduct(out, D, j, k, scale, moment(a, j, k), moment(b, j, k))
		}
	}
	scaleUpper(out, f)
}

// TestProductBlocks: the product of marginals read productBlock rows at a
// time equals the entry-by-entry reference bit for bit, raw and centered,
// for one group and several, at sizes below, at and across the block and
// the triangle's strips (2D = 10, 16, 34, 66, 130), every entry of the
// upper triangle, the strict lower triangle left untouched.
func TestProductBlocks(t *testing.T) {
	for _, D := range []int{5, 8, 17, 33, 65} {
		spec := testMap
		spec.Features = D
		pair, err := rff.NewPair(spec)
		if err != nil {
			t.Fatal(err)
		}
		var xs, ys []*Accumulator
		for k := range 3 {
			n := 30 + 7*k
			x, y := block(n, spec.DimX, uint64(k+10*D)), block(n, spec.DimY, uint64(k+10*D+100))
			ax, ay, _, _, _ := accumulateTest(t, pair, x, y, n)
			ax.desc.Index, ay.desc.Index = k, k
			xs, ys = append(xs, ax), append(ys, ay)
		}
		for _, groups := range []int{1, 3} {
			a, err := marginalOf(xs[:groups], "test")
			if err != nil {
				t.Fatal(err)
			}
			b, err := marginalOf(ys[:groups], "test")
			if err != nil {
				t.Fatal(err)
			}
			for _, centered := range []bool{false, true} {
				a.re, a.im, b.re, b.im = nil, nil, nil, nil
				if centered {
					// Means as IndependenceGroups passes them (any values
					// exercise the arithmetic).
					a.re, a.im = block(1, D, uint64(D)), block(1, D, uint64(D+1))
					b.re, b.im = block(1, D, uint64(D+2)), block(1, D, uint64(D+3))
				}
				n := 2 * D
				got := blas64.Symmetric{N: n, Stride: n, Data: make([]float64, n*n)}
				want := blas64.Symmetric{N: n, Stride: n, Data: make([]float64, n*n)}
				for i := range got.Data {
					got.Data[i], want.Data[i] = math.NaN(), math.NaN()
				}
				const f = 1.375
				product(got, &a, &b, f)
				refProduct(want, &a, &b, f)
				for i := range n {
					for j := range n {
						g, w := got.Data[i*n+j], want.Data[i*n+j]
						if math.Float64bits(g) != math.Float64bits(w) {
							t.Fatalf("D = %d, %d groups, centered %v: entry (%d, %d) = %v, want %v", D, groups, centered, i, j, g, w)
						}
					}
				}
			}
		}
	}
}
