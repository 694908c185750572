package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/blas/gonum"
)

// TestAddAtA32 checks AddAtA with Float32, with every float32 micro-kernel
// of the CPU, with the scalar packing where the assembly one is used, and
// with OpenBLAS's ssyrk when compiled in, against gonum's float64 Dsyrk.
//
// The float32 path rounds each value of A to float32 (relative error
// ≤ u = 2⁻²⁴), sums at most 256 products per block in float32 (≤ (256+1)·u
// of the sum of their magnitudes) and adds the blocks in float64; OpenBLAS's
// path also rounds alpha to float32. So the bound is
// (min(k, 256)+4)·u·scale(i, j) + (k+2)·2⁻⁵³·scale(i, j), scale =
// |alpha|·Σ_p |a_pi·a_pj| + |C_ij|, the worst case of the error analysis
// (1.5e-5 at k ≥ 256). Measured: at most 9.6e-7 of scale (logged with -v),
// because rounding errors of random sign add up like √k. A wrong block or a
// product in the wrong place is off by O(1) of scale.
func TestAddAtA32(t *testing.T) {
	type path struct {
		name string
		run  func(alpha float64, a blas64.General, c blas64.Symmetric) error
	}
	var paths []path
	for _, kern := range kernels32 {
		paths = append(paths, path{"gonum/" + kern.name, func(alpha float64, a blas64.General, c blas64.Symmetric) error {
			def, saved := Current(), kernel32
			defer func() { Use(def); kernel32 = saved }()
			if err := Use(Gonum); err != nil {
				return err
			}
			kernel32 = kern
			return AddAtA(Float32, alpha, a, c)
		}})
	}
	if cvtGroups != nil {
		// The packing's scalar conversion, which the assembly one replaces.
		paths = append(paths, path{"gonum/" + kernel32.name + "/go-packing", func(alpha float64, a blas64.General, c blas64.Symmetric) error {
			def, saved := Current(), cvtGroups
			defer func() { Use(def); cvtGroups = saved }()
			if err := Use(Gonum); err != nil {
				return err
			}
			cvtGroups = nil
			return AddAtA(Float32, alpha, a, c)
		}})
	}
	if OpenBLAS.Available() {
		paths = append(paths, path{"openblas-ssyrk", func(alpha float64, a blas64.General, c blas64.Symmetric) error {
			def := Current()
			defer func() { Use(def); forceSsyrk32 = false }()
			if err := Use(OpenBLAS); err != nil {
				return err
			}
			forceSsyrk32 = true
			return AddAtA(Float32, alpha, a, c)
		}})
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, pa := range paths {
		var worst float64
		rowsList, nList := []int{1, 3, 255, 256, 257, 600}, []int{1, 5, 17, 48, 100, 131}
		if testing.Short() { // the race run
			rowsList, nList = []int{1, 3, 257}, []int{1, 5, 17, 48}
		}
		for _, rows := range rowsList {
			for _, n := range nList {
				pad := rng.IntN(2) * 3
				alpha := []float64{1, -0.75, 3}[rng.IntN(3)]
				a := blas64.General{Rows: rows, Cols: n, Stride: n + pad, Data: make([]float64, (rows-1)*(n+pad)+n)}
				for i := range a.Data {
					a.Data[i] = rng.NormFloat64() * 3
				}
				c := blas64.Symmetric{N: n, Stride: n + 2, Uplo: blas.Upper, Data: make([]float64, (n-1)*(n+2)+n)}
				for i := range c.Data {
					c.Data[i] = math.NaN()
				}
				for i := range n {
					for j := i; j < n; j++ {
						c.Data[i*c.Stride+j] = rng.NormFloat64()
					}
				}
				c0 := append([]float64(nil), c.Data...)
				want := append([]float64(nil), c.Data...)
				gonum.Implementation{}.Dsyrk(blas.Upper, blas.Trans, n, rows, alpha, a.Data, a.Stride, 1, want, c.Stride)
				name := fmt.Sprintf("%s/rows=%d/n=%d", pa.name, rows, n)
				if err := pa.run(alpha, a, c); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				scale := func(i, j int) float64 {
					return math.Abs(alpha)*absDot(blas.Trans, rows, a.Data, a.Stride, a.Data, a.Stride, i, j) + math.Abs(c0[i*c.Stride+j])
				}
				tol := float64(min(rows, block32)+4)*0x1p-24 + float64(rows+2)*0x1p-53
				worst = max(worst, checkUpdate(t, name, blas.Upper, n, c.Stride, c0, c.Data, want, scale, tol))
			}
		}
		t.Logf("%s: largest |Δ|/scale %.3g", pa.name, worst)
	}
}

func TestAddAtAFloat64AndErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	a := blas64.General{Rows: 7, Cols: 9, Stride: 9, Data: make([]float64, 63)}
	for i := range a.Data {
		a.Data[i] = rng.NormFloat64()
	}
	c := blas64.Symmetric{N: 9, Stride: 9, Uplo: blas.Upper, Data: make([]float64, 81)}
	want := make([]float64, 81)
	gonum.Implementation{}.Dsyrk(blas.Upper, blas.Trans, 9, 7, 2, a.Data, 9, 1, want, 9)
	if err := AddAtA(Float64, 2, a, c); err != nil {
		t.Fatal(err)
	}
	for i := range 9 {
		for j := i; j < 9; j++ {
			// The same k = 7 products as gonum's: (k+2)·ε of scale ≤ 2·7·max|a|² ≈ 200.
			if d := math.Abs(c.Data[i*9+j] - want[i*9+j]); d > 1e-13 {
				t.Errorf("Float64: C[%d,%d] = %v, gonum %v", i, j, c.Data[i*9+j], want[i*9+j])
			}
		}
	}
	bad := []struct {
		name string
		prec Precision
		a    blas64.General
		c    blas64.Symmetric
	}{
		{"precision", Precision(5), a, c},
		{"lower", Float32, a, blas64.Symmetric{N: 9, Stride: 9, Uplo: blas.Lower, Data: c.Data}},
		{"size", Float32, a, blas64.Symmetric{N: 8, Stride: 9, Uplo: blas.Upper, Data: c.Data}},
		{"short a", Float32, blas64.General{Rows: 7, Cols: 9, Stride: 9, Data: a.Data[:62]}, c},
		{"short c", Float64, a, blas64.Symmetric{N: 9, Stride: 9, Uplo: blas.Upper, Data: c.Data[:80]}},
		{"stride", Float32, blas64.General{Rows: 7, Cols: 9, Stride: 8, Data: a.Data}, c},
	}
	for _, b := range bad {
		if err := AddAtA(b.prec, 1, b.a, b.c); err == nil {
			t.Errorf("%s: no error", b.name)
		}
	}
	if Float32.String() != "float32" || Float64.String() != "float64" || Precision(3).String() != "Precision(3)" {
		t.Error("Precision.String")
	}
}

// TestAssemblyKernelsIdentical: the AVX2 and AVX-512 kernels give the same
// sums to the bit, with float32 and float64 products (each sums the
// products of every element in the same order, p = 0, 1, … within a block,
// with fused multiply-adds, and alpha = 1 makes the scratch tiles' extra
// rounding exact), so a result does not depend on which of them the CPU
// has. The portable Go kernel (no fused multiply-add on amd64) differs by
// round-off, within TestAddAtA32's bounds.
func TestAssemblyKernelsIdentical(t *testing.T) {
	var asm32 []microKernel[float32]
	var asm64 []microKernel[float64]
	for i := range kernels32 {
		if kernels32[i].name != goKernel32.name {
			asm32, asm64 = append(asm32, kernels32[i]), append(asm64, kernels64[i])
		}
	}
	if len(asm32) < 2 {
		t.Skipf("%d assembly kernel(s) on this CPU: nothing to compare", len(asm32))
	}
	def := Current()
	defer Use(def)
	if err := Use(Gonum); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, sh := range [][2]int{{256, 512}, {300, 131}, {37, 64}} {
		rows, n := sh[0], sh[1]
		a := blas64.General{Rows: rows, Cols: n, Stride: n, Data: make([]float64, rows*n)}
		for i := range a.Data {
			a.Data[i] = math.Cos(7 * rng.Float64())
		}
		for _, prec := range []Precision{Float32, Float64} {
			var first []float64
			for i := range asm32 {
				s32, s64 := kernel32, kernel64
				kernel32, kernel64 = asm32[i], asm64[i]
				c := blas64.Symmetric{N: n, Stride: n, Uplo: blas.Upper, Data: make([]float64, n*n)}
				for range 2 {
					if err := AddAtA(prec, 1, a, c); err != nil {
						t.Fatal(err)
					}
				}
				kernel32, kernel64 = s32, s64
				if i == 0 {
					first = c.Data
					continue
				}
				for j := range first {
					if c.Data[j] != first[j] {
						t.Fatalf("%v, %d rows × %d: %s gives %v at %d, %s %v", prec, rows, n, asm32[i].name, c.Data[j], j, asm32[0].name, first[j])
					}
				}
			}
		}
	}
}
