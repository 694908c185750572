package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// sentinel is a NaN with a payload of its own: an entry of C outside the
// triangle that still holds these bits was neither written nor used in a
// sum (a NaN added to anything would show in the triangle's entries too).
var sentinel = math.Float64frombits(0x7ff8_dead_beef_0001)

// maskedKernels32 returns the float32 kernels of the CPU that have a masked
// variant.
func maskedKernels32() []microKernel[float32] {
	var ks []microKernel[float32]
	for _, k := range kernels32 {
		if len(k.masked) > 0 {
			ks = append(ks, k)
		}
	}
	return ks
}

// TestMaskedKernel checks each masked micro-kernel alone (every width q of
// 1 … np R panels) against the scratch tile it replaces (the plain kernel
// into a tile of zeros, then c += t entry by entry, on the first q·w
// columns): for every diagonal offset d < w, and for masks that also cut
// columns, with alpha = 1, 0.3 and −0.75 and k across the unrolled loop's
// tail, the entries under the mask must have the scratch path's bits and
// the others must keep the sentinel.
func TestMaskedKernel(t *testing.T) {
	kerns := maskedKernels32()
	if len(kerns) == 0 {
		t.Skip("no masked kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(31, 32))
	for _, kern := range kerns {
		w, mr, nr := kern.w, kern.mr, kern.nr()
		for _, k := range []int{1, 3, 4, 7, 256} {
			a := make([]float32, k*w)
			b := make([]float32, kern.np*k*w)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			tile := make([]float64, mr*nr)
			for _, alpha := range []float64{1, 0.3, -0.75} {
				clear(tile)
				kern.fn(k, &a[0], &b[0], k*w*4, &tile[0], nr, alpha)
				for q := 1; q <= kern.np; q++ {
					qw := q * w
					for d := -mr; d < w; d++ {
						for _, cols := range []int{qw, qw - 1, qw - w + 1, 1} {
							name := fmt.Sprintf("%s/q=%d/k=%d/alpha=%v/d=%d/cols=%d", kern.name, q, k, alpha, d, cols)
							mask := upperMasks(make([]uint16, mr*qw/8), mr, qw, d, cols)
							const ldc = 53 // not nr: rows of a wider C
							c := make([]float64, (mr-1)*ldc+nr)
							for i := range c {
								c[i] = sentinel
							}
							in := func(r, j int) bool { return j >= r+d && j < cols }
							for r := range mr {
								for j := range qw {
									if in(r, j) {
										c[r*ldc+j] = rng.NormFloat64()
									}
								}
							}
							want := append([]float64(nil), c...)
							for r := range mr {
								for j := range qw {
									if in(r, j) {
										want[r*ldc+j] += tile[r*nr+j]
									}
								}
							}
							kern.masked[q-1](k, &a[0], &b[0], k*w*4, &c[0], ldc, alpha, &mask[0])
							for i := range c {
								if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
									t.Fatalf("%s: entry (%d, %d) = %v (%#x), want %v (%#x)", name, i/ldc, i%ldc, c[i], math.Float64bits(c[i]), want[i], math.Float64bits(want[i]))
								}
							}
						}
					}
				}
			}
		}
	}
}

// TestAddAtAMasked checks that AddAtA and AddAtATriangle give the same bits
// with a kernel's masked tiles (across the diagonal, past the last column
// on fewer panels, both) as with the scratch tiles they replace (the same kernel without its
// masked variant), for alpha = 1 and 0.3 and over two updates in a row,
// and that a dense C's lower triangle and the padding past its rows are
// left alone (they hold the sentinel throughout).
func TestAddAtAMasked(t *testing.T) {
	kerns := maskedKernels32()
	if len(kerns) == 0 {
		t.Skip("no masked kernel on this CPU")
	}
	rng := rand.New(rand.NewPCG(33, 34))
	nList, rowsList := []int{16, 32, 48, 64, 80, 100, 131, 512}, []int{1, 256, 300}
	if testing.Short() {
		nList, rowsList = []int{48, 131}, []int{257}
	}
	for _, kern := range kerns {
		scratch := kern
		scratch.masked, scratch.diagMasks, scratch.colMasks = nil, nil, nil
		for _, n := range nList {
			for _, rows := range rowsList {
				for _, alpha := range []float64{1, 0.3} {
					name := fmt.Sprintf("%s/n=%d/rows=%d/alpha=%v", kern.name, n, rows, alpha)
					// Two dense Cs (masked and scratch path) with their
					// lower triangles and the 3 columns of padding past
					// each row set to the sentinel, and a Triangle.
					const pad = 3
					ld := n + pad
					var dense [2]blas64.Symmetric
					for p := range dense {
						dense[p] = blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: ld, Data: make([]float64, n*ld)}
					}
					for i := range n {
						for j := range ld {
							v := sentinel
							if j >= i && j < n {
								v = rng.NormFloat64()
							}
							dense[0].Data[i*ld+j], dense[1].Data[i*ld+j] = v, v
						}
					}
					tri := NewTriangle(n)
					tri.Pack(dense[0])
					for range 2 {
						a := blas64.General{Rows: rows, Cols: n, Stride: n, Data: make([]float64, rows*n)}
						for i := range a.Data {
							a.Data[i] = rng.NormFloat64() * 2
						}
						for p, kp := range []microKernel[float32]{kern, scratch} {
							saved := kernel32
							kernel32 = kp
							err := AddAtA(Float32, alpha, a, dense[p])
							if err == nil && p == 0 {
								err = AddAtATriangle(Float32, alpha, a, tri)
							}
							kernel32 = saved
							if err != nil {
								t.Fatalf("%s: %v", name, err)
							}
						}
					}
					for i := range n {
						for j := range ld {
							got, want := dense[0].Data[i*ld+j], dense[1].Data[i*ld+j]
							if math.Float64bits(got) != math.Float64bits(want) {
								t.Fatalf("%s: dense entry (%d, %d) = %v, scratch path %v", name, i, j, got, want)
							}
							if j < i || j >= n {
								if math.Float64bits(got) != math.Float64bits(sentinel) {
									t.Fatalf("%s: entry (%d, %d) outside the upper triangle was written: %v", name, i, j, got)
								}
								continue
							}
							if got := tri.At(i, j); math.Float64bits(got) != math.Float64bits(want) {
								t.Fatalf("%s: Triangle entry (%d, %d) = %v, scratch path %v", name, i, j, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestUpperMasks checks the masks of the diagonal tiles against their
// definition on a few shapes.
func TestUpperMasks(t *testing.T) {
	for _, sh := range [][4]int{{8, 48, 0, 48}, {8, 48, 8, 48}, {8, 48, 15, 48}, {8, 48, -8, 20}, {4, 24, 3, 9}} {
		mr, nr, d, cols := sh[0], sh[1], sh[2], sh[3]
		m := upperMasks(make([]uint16, mr*nr/8), mr, nr, d, cols)
		if len(m) != mr*nr/8 {
			t.Fatalf("%v: %d masks, want %d", sh, len(m), mr*nr/8)
		}
		for r := range mr {
			for j := range nr {
				got := m[r*nr/8+j/8]>>(j%8)&1 == 1
				if want := j >= r+d && j < cols; got != want {
					t.Errorf("%v: row %d column %d: bit %v, want %v", sh, r, j, got, want)
				}
			}
			if m[r*nr/8]>>8 != 0 {
				t.Errorf("%v: row %d: bits above 8 set", sh, r)
			}
		}
	}
}
