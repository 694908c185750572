package linalg

import (
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
)

func TestBackends(t *testing.T) {
	if !Gonum.Available() {
		t.Error("Gonum not available")
	}
	if got, want := OpenBLAS.Available(), openblasCompiled; got != want {
		t.Errorf("OpenBLAS.Available() = %v in a build with openblasCompiled = %v", got, want)
	}
	def := Current()
	if want := map[bool]Backend{true: OpenBLAS, false: Gonum}[openblasCompiled]; def != want {
		t.Errorf("default backend %v, want %v", def, want)
	}
	if err := Use(Backend(7)); err == nil || Current() != def {
		t.Errorf("Use(Backend(7)) = %v and left %v, want an error and %v", err, Current(), def)
	}
	if !openblasCompiled {
		if err := Use(OpenBLAS); err == nil || Current() != Gonum {
			t.Errorf("Use(OpenBLAS) without the tag = %v and left %v, want an error and gonum", err, Current())
		}
	}
	for b, name := range map[Backend]string{Gonum: "gonum", OpenBLAS: "openblas", 9: "Backend(9)"} {
		if b.String() != name {
			t.Errorf("String() = %q, want %q", b.String(), name)
		}
	}
}

// TestUseSwitchesBLAS checks that Use(Gonum) really makes blas64 pure Go (gonumBLAS, so
// that gonum's LAPACK, which calls blas64, is pure Go too) and that the
// default backend's BLAS is restored.
func TestUseSwitchesBLAS(t *testing.T) {
	def := Current()
	defer Use(def)
	if err := Use(Gonum); err != nil {
		t.Fatal(err)
	}
	if _, ok := blas64.Implementation().(gonumBLAS); !ok {
		t.Errorf("after Use(Gonum) blas64 is %T", blas64.Implementation())
	}
	if err := Use(def); err != nil {
		t.Fatal(err)
	}
	_, pure := blas64.Implementation().(gonumBLAS)
	if pure != (def == Gonum) {
		t.Errorf("after Use(%v) blas64 is %T", def, blas64.Implementation())
	}
}

func TestOpenBLASThreads(t *testing.T) {
	if !OpenBLAS.Available() {
		t.Skip("OpenBLAS not compiled in (build with -tags openblas)")
	}
	if v, set := os.LookupEnv("OPENBLAS_NUM_THREADS"); set {
		t.Skipf("OPENBLAS_NUM_THREADS=%s set by the user", v)
	}
	if got := openblasThreads(); got != 1 {
		t.Errorf("OpenBLAS uses %d threads per call, want 1", got)
	}
}

// poisonedSym returns a symmetric n×n matrix with row stride n+3 holding sym
// in the triangle uplo, and NaN in the other triangle and in the padding, so
// that a solver reading anything but the named triangle returns NaN.
func poisonedSym(sym func(i, j int) float64, n int, uplo blas.Uplo) blas64.Symmetric {
	a := blas64.Symmetric{N: n, Stride: n + 3, Uplo: uplo, Data: make([]float64, (n-1)*(n+3)+n)}
	for i := range a.Data {
		a.Data[i] = math.NaN()
	}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if (uplo == blas.Upper && j >= i) || (uplo == blas.Lower && j <= i) {
				a.Data[i*a.Stride+j] = sym(min(i, j), max(i, j))
			}
		}
	}
	return a
}

// gaussianGram returns the Gaussian Gram matrix exp(−‖xᵢ − xⱼ‖²/(2σ²)) of n
// seeded normal points in d dimensions with σ = √(d/2), as package exact
// builds them: positive semidefinite, with a long tail of tiny eigenvalues.
func gaussianGram(n, d int, seed uint64) func(i, j int) float64 {
	r := rand.New(rand.NewPCG(seed, 3))
	x := make([]float64, n*d)
	for i := range x {
		x[i] = r.NormFloat64()
	}
	return func(i, j int) float64 {
		var s float64
		for k := 0; k < d; k++ {
			v := x[i*d+k] - x[j*d+k]
			s += v * v
		}
		return math.Exp(-s / float64(d))
	}
}

// eigenvaluesWith returns the eigenvalues of a copy of a with backend b.
func eigenvaluesWith(t *testing.T, b Backend, a blas64.Symmetric) []float64 {
	t.Helper()
	def := Current()
	defer Use(def)
	if err := Use(b); err != nil {
		t.Fatal(err)
	}
	c := a
	c.Data = slices.Clone(a.Data)
	var s SymEigensolver
	got, err := s.EigenvaluesInPlace(nil, c)
	if err != nil {
		t.Fatalf("%v: %v", b, err)
	}
	return got
}

// TestBackendsAgree compares the eigenvalues of OpenBLAS's dsyevd with those
// of the pure-Go path (gonum's Dsyev with gonum's BLAS) on random symmetric
// matrices and on Gaussian Gram matrices, both triangles, with a row stride
// larger than n and NaN everywhere the solver must not read.
//
// Both are backward stable, so eigenvalues agree to a few n·ε·max|λ|. Measured
// on the development machine (Debian's OpenBLAS 0.3.21, 2 cores): largest
// difference over max|λ| 5.8e-15 (random, n = 512, max|λ| ≈ 45) and 5.3e-16
// (Gram, n = 512). The bound 1e-12·max|λ| (below 1e-9 in absolute terms for
// every case here) leaves room for other CPU kernels and block sizes while
// still catching a wrong triangle, a wrong stride or a lost eigenvalue.
func TestBackendsAgree(t *testing.T) {
	if !OpenBLAS.Available() {
		t.Skip("OpenBLAS not compiled in (build with -tags openblas)")
	}
	type tc struct {
		name string
		n    int
		sym  func(i, j int) float64
	}
	var cases []tc
	for _, n := range []int{1, 2, 3, 17, 64, 255, 512} {
		r := rand.New(rand.NewPCG(uint64(n), 4))
		m := make([]float64, n*n)
		for i := range m {
			m[i] = r.NormFloat64()
		}
		cases = append(cases, tc{"random", n, func(i, j int) float64 { return m[i*n+j] }})
	}
	for _, n := range []int{2, 100, 512} {
		cases = append(cases, tc{"gram", n, gaussianGram(n, 10, uint64(n))})
	}
	for _, c := range cases {
		for _, uplo := range []blas.Uplo{blas.Upper, blas.Lower} {
			a := poisonedSym(c.sym, c.n, uplo)
			want := eigenvaluesWith(t, Gonum, a)
			got := eigenvaluesWith(t, OpenBLAS, a)
			scale := max(math.Abs(want[0]), math.Abs(want[c.n-1]))
			var worst float64
			for i := range want {
				worst = max(worst, math.Abs(got[i]-want[i]))
			}
			tri := map[blas.Uplo]string{blas.Upper: "upper", blas.Lower: "lower"}[uplo]
			if !slices.IsSorted(got) || !(worst <= 1e-12*scale) {
				t.Errorf("%s n=%d %s: max |Δλ| = %.3g (max|λ| %.3g), sorted %v",
					c.name, c.n, tri, worst, scale, slices.IsSorted(got))
			}
			t.Logf("%s n=%d %s: max |Δλ| / max|λ| = %.2g", c.name, c.n, tri, worst/scale)
		}
	}
}

// TestSolverAcrossBackends reuses one solver while the backend changes, so
// that a workspace sized by one backend is never handed to the other.
func TestSolverAcrossBackends(t *testing.T) {
	def := Current()
	defer Use(def)
	var backends []Backend
	for _, b := range []Backend{Gonum, OpenBLAS, Gonum, OpenBLAS} {
		if b.Available() {
			backends = append(backends, b)
		}
	}
	var s SymEigensolver
	sym := gaussianGram(50, 3, 5)
	var first []float64
	for k, b := range backends {
		if err := Use(b); err != nil {
			t.Fatal(err)
		}
		got, err := s.EigenvaluesInPlace(nil, poisonedSym(sym, 50, blas.Upper))
		if err != nil {
			t.Fatalf("%v: %v", b, err)
		}
		if k == 0 {
			first = got
			continue
		}
		for i := range got {
			// As in TestBackendsAgree: measured ≤ 5e-16·max|λ|.
			if math.Abs(got[i]-first[i]) > 1e-12*first[49] {
				t.Errorf("solve %d (%v): eigenvalue %d = %.17g, first solve %.17g", k, b, i, got[i], first[i])
			}
		}
	}
}

func TestInvalidTriangle(t *testing.T) {
	var s SymEigensolver
	a := blas64.Symmetric{N: 2, Stride: 2, Uplo: blas.All, Data: []float64{1, 0, 0, 1}}
	if _, err := s.EigenvaluesInPlace(nil, a); err == nil {
		t.Error("no error for a matrix with Uplo = blas.All")
	}
}

// TestNonFiniteInput checks that NaN or Inf in the matrix gives
// ErrNoConvergence on every backend, never a panic, a hang or NaN eigenvalues
// (callers such as package exact refuse such input earlier, with a better
// message).
func TestNonFiniteInput(t *testing.T) {
	def := Current()
	defer Use(def)
	for _, b := range []Backend{Gonum, OpenBLAS} {
		if !b.Available() {
			continue
		}
		if err := Use(b); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
			a := poisonedSym(gaussianGram(40, 2, 6), 40, blas.Upper)
			a.Data[3*a.Stride+7] = bad
			var s SymEigensolver
			if got, err := s.EigenvaluesInPlace(nil, a); err != ErrNoConvergence {
				t.Errorf("%v with %v: got %v, %v; want ErrNoConvergence", b, bad, got, err)
			}
		}
	}
}

// TestKernelsNamed: Kernels names the kernels in use, the last registered
// of each kind.
func TestKernelsNamed(t *testing.T) {
	got := Kernels()
	want := []string{"syrk64=" + kernels64[len(kernels64)-1].name, "syrk32=" + kernels32[len(kernels32)-1].name, "symv=" + rowKernels[len(rowKernels)-1].name}
	if len(got) != len(want) {
		t.Fatalf("Kernels() = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Kernels() = %q, want %q", got, want)
		}
	}
}
