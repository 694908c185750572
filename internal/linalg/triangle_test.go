package linalg

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

// TestTriangleLayout checks TriangleLen against the strips it describes,
// the bound of its documentation, and that Row, At and the rank update's
// row offsets address every entry of the upper triangle once, inside Data.
func TestTriangleLayout(t *testing.T) {
	for _, n := range []int{1, 2, 15, 16, 17, 31, 32, 33, 100, 512, 1000} {
		var want int
		for s := 0; s < n; s += StripRows {
			want += min(StripRows, n-s) * (n - s)
		}
		if got := TriangleLen(n); got != want {
			t.Errorf("TriangleLen(%d) = %d, want %d", n, got, want)
		}
		if bound := n*(n+1)/2 + n*(StripRows-1)/2; want > bound {
			t.Errorf("TriangleLen(%d) = %d > n(n+1)/2 + n(StripRows−1)/2 = %d", n, want, bound)
		}
		tri := NewTriangle(n)
		seen := make([]int, len(tri.Data))
		for i := range n {
			row := tri.Row(i)
			if len(row) != n-i {
				t.Fatalf("n=%d: row %d has %d entries, want %d", n, i, len(row), n-i)
			}
			for j := range row {
				row[j] = float64(i*n + i + j)
			}
			off, ld := triangleC(tri).row(i)
			if i%StripRows != 0 {
				prev, ldPrev := triangleC(tri).row(i - 1)
				if ld != ldPrev || off != prev+ld {
					t.Fatalf("n=%d: row %d at %d (stride %d), row %d at %d (stride %d): not one strip", n, i, off, ld, i-1, prev, ldPrev)
				}
			}
			for j := i / StripRows * StripRows; j < n; j++ {
				if j >= i {
					seen[off+j]++
				}
			}
		}
		for k, c := range seen {
			if c > 1 {
				t.Fatalf("n=%d: value %d addressed %d times", n, k, c)
			}
		}
		for i := range n {
			for j := range n {
				lo, hi := min(i, j), max(i, j)
				if got := tri.At(i, j); got != float64(lo*n+hi) {
					t.Fatalf("n=%d: At(%d, %d) = %v, want %v", n, i, j, got, float64(lo*n+hi))
				}
			}
		}
		// Unpack and Pack are inverse.
		d := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n + 1, Data: make([]float64, n*(n+1))}
		tri.Unpack(d, 1)
		back := NewTriangle(n)
		back.Pack(d)
		for k := range tri.Data {
			if back.Data[k] != tri.Data[k] {
				t.Fatalf("n=%d: Pack(Unpack) differs at %d", n, k)
			}
		}
	}
	// The blocked update relies on every kernel's tiles fitting the strips.
	for _, k := range kernels64 {
		if StripRows%k.mr != 0 || StripRows%k.w != 0 {
			t.Errorf("float64 kernel %s: mr %d, w %d do not divide StripRows %d", k.name, k.mr, k.w, StripRows)
		}
	}
	for _, k := range kernels32 {
		if StripRows%k.mr != 0 || StripRows%k.w != 0 {
			t.Errorf("float32 kernel %s: mr %d, w %d do not divide StripRows %d", k.name, k.mr, k.w, StripRows)
		}
	}
}

// TestAddAtATriangle checks that AddAtATriangle gives the same values, to
// the bit, as AddAtA into a dense matrix's upper triangle, with every
// micro-kernel (float64 and float32), gonum's or OpenBLAS's dsyrk, and
// OpenBLAS's ssyrk when compiled in, over a few updates in a row from a
// random start (the accumulators' sums depend on these bits: the JSON of
// dime score must not change with the storage).
func TestAddAtATriangle(t *testing.T) {
	type path struct {
		name string
		prec Precision
		set  func() (restore func())
	}
	var paths []path
	for _, kern := range kernels64 {
		paths = append(paths, path{"float64/" + kern.name, Float64, func() func() {
			saved := kernel64
			kernel64 = kern
			return func() { kernel64 = saved }
		}})
	}
	for _, kern := range kernels32 {
		paths = append(paths, path{"float32/" + kern.name, Float32, func() func() {
			saved := kernel32
			kernel32 = kern
			return func() { kernel32 = saved }
		}})
	}
	paths = append(paths, path{"float64/dsyrk", Float64, func() func() {
		forceDsyrk64 = true
		return func() { forceDsyrk64 = false }
	}})
	if OpenBLAS.Available() {
		paths = append(paths, path{"float32/openblas-ssyrk", Float32, func() func() {
			def := Current()
			if err := Use(OpenBLAS); err != nil {
				t.Fatal(err)
			}
			forceSsyrk32 = true
			return func() { Use(def); forceSsyrk32 = false }
		}})
	}
	rng := rand.New(rand.NewPCG(21, 22))
	nList, rowsList := []int{1, 5, 16, 17, 48, 100, 131}, []int{1, 3, 256, 300}
	if testing.Short() {
		nList, rowsList = []int{1, 17, 48}, []int{3, 257}
	}
	for _, pa := range paths {
		for _, n := range nList {
			for _, rows := range rowsList {
				name := fmt.Sprintf("%s/n=%d/rows=%d", pa.name, n, rows)
				dense := blas64.Symmetric{Uplo: blas.Upper, N: n, Stride: n, Data: make([]float64, n*n)}
				for i := range n {
					for j := i; j < n; j++ {
						dense.Data[i*n+j] = rng.NormFloat64()
					}
				}
				tri := NewTriangle(n)
				tri.Pack(dense)
				restore := pa.set()
				for step := range 3 {
					a := blas64.General{Rows: rows, Cols: n, Stride: n, Data: make([]float64, rows*n)}
					for i := range a.Data {
						a.Data[i] = rng.NormFloat64() * 2
					}
					alpha := []float64{1, -0.5, 3}[step]
					if err := AddAtA(pa.prec, alpha, a, dense); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if err := AddAtATriangle(pa.prec, alpha, a, tri); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
				}
				restore()
				for i := range n {
					for j := i; j < n; j++ {
						want, got := dense.Data[i*n+j], tri.At(i, j)
						if math.Float64bits(got) != math.Float64bits(want) {
							t.Fatalf("%s: entry (%d, %d) = %v, dense %v", name, i, j, got, want)
						}
					}
					// The unused entries of a strip stay zero.
					off, _ := triangleC(tri).row(i)
					for j := i / StripRows * StripRows; j < i; j++ {
						if v := tri.Data[off+j]; v != 0 {
							t.Fatalf("%s: unused entry (%d, %d) of the strip is %v", name, i, j, v)
						}
					}
				}
			}
		}
	}
	// Errors: wrong size, short data.
	a := blas64.General{Rows: 2, Cols: 3, Stride: 3, Data: make([]float64, 6)}
	if err := AddAtATriangle(Float64, 1, a, NewTriangle(4)); err == nil {
		t.Error("AddAtATriangle of 3 columns into a 4×4 triangle: no error")
	}
	if err := AddAtATriangle(Float64, 1, a, Triangle{N: 3, Data: make([]float64, 5)}); err == nil {
		t.Error("AddAtATriangle into a short triangle: no error")
	}
	if err := AddAtATriangle(Precision(7), 1, a, NewTriangle(3)); err == nil {
		t.Error("AddAtATriangle with an invalid precision: no error")
	}
}
