package exact

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/synth"
)

// estimateWith runs Estimate with the whole process switched to backend b
// (BLAS of the Gram matrices and the eigensolver), then switches back.
func estimateWith(t *testing.T, b linalg.Backend, x, y mat.Matrix, cfg Config) Result {
	t.Helper()
	def := linalg.Current()
	defer linalg.Use(def)
	if err := linalg.Use(b); err != nil {
		t.Fatal(err)
	}
	r, err := Estimate(x, y, cfg)
	if err != nil {
		t.Fatalf("%v: %v", b, err)
	}
	return r
}

// TestBackendsAgree compares exact estimates computed with OpenBLAS (Syrk of
// the Gram matrices and dsyevd) against the pure-Go path (gonum's BLAS and
// Dsyev) on the same inputs: every entropy, MI, DiME and its standard error
// within 1e-9 nats. Measured on the development machine (Debian's OpenBLAS
// 0.3.21): at most 5.3e-15 nats (the n = 512 case), 0 for alpha = 2 (no
// eigensolve, and the Gram matrices agree exactly there).
//
// The alpha < 1 cases here have full-rank Gram matrices; on numerically
// low-rank ones the backends differ by more, as any two eigensolvers would
// (TestBackendsLowRankBelowOne).
func TestBackendsAgree(t *testing.T) {
	if !linalg.OpenBLAS.Available() {
		t.Skip("OpenBLAS not compiled in (build with -tags openblas)")
	}
	cases := []struct {
		kind   synth.Kind
		d      int
		mi     float64
		n      int
		kernel Kernel
		alpha  float64
	}{
		{synth.Gaussian, 10, 4, 512, Gaussian, 1.01},
		{synth.Gaussian, 10, 0, 256, Gaussian, 1.01},
		{synth.Gaussian, 3, 2, 300, Elliptical, 1},
		{synth.Sine, 2, 0, 300, Laplacian, 3},
		{synth.Circle, 1, 0, 200, Gaussian, 2},
		{synth.Gaussian, 10, 4, 256, Gaussian, 0.5},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%v d=%d mi=%g n=%d %v alpha=%g", c.kind, c.d, c.mi, c.n, c.kernel, c.alpha)
		x, y := toy(t, c.kind, c.d, c.mi, c.n, 1)
		cfg := DefaultConfig()
		cfg.Kernel, cfg.Alpha = c.kernel, c.alpha
		want := estimateWith(t, linalg.Gonum, x, y, cfg)
		got := estimateWith(t, linalg.OpenBLAS, x, y, cfg)
		worst := maxResultDifference(t, name, got, want, 1e-9)
		t.Logf("%s: max difference %.2g nats", name, worst)

		// The Gram matrix itself (blas64.Syrk for Gaussian and Elliptical).
		// Measured: up to 7.8e-16 (Gaussian) and 3.1e-15 (Elliptical, whose
		// square root amplifies the round-off of small distances).
		var gram [2]*mat.SymDense
		for i, b := range []linalg.Backend{linalg.Gonum, linalg.OpenBLAS} {
			gram[i] = gramWith(t, b, c.kernel, got.SigmaX, x)
		}
		var gworst float64
		for i := 0; i < c.n; i++ {
			for j := i; j < c.n; j++ {
				gworst = max(gworst, math.Abs(gram[0].At(i, j)-gram[1].At(i, j)))
			}
		}
		if !(gworst <= 1e-13) {
			t.Errorf("%s: Gram matrices differ by up to %.3g", name, gworst)
		}
		t.Logf("%s: Gram matrices differ by up to %.2g", name, gworst)
	}
}

// gramWith returns the Gram matrix of x computed with backend b.
func gramWith(t *testing.T, b linalg.Backend, k Kernel, sigma float64, x mat.Matrix) *mat.SymDense {
	t.Helper()
	def := linalg.Current()
	defer linalg.Use(def)
	if err := linalg.Use(b); err != nil {
		t.Fatal(err)
	}
	return mustGram(t, k, sigma, x)
}

// maxResultDifference reports every number of the two results that differs by
// more than tol and returns the largest difference.
func maxResultDifference(t *testing.T, name string, got, want Result, tol float64) float64 {
	t.Helper()
	{
		fields := []struct {
			name      string
			got, want float64
		}{
			{"EntropyX", got.EntropyX, want.EntropyX},
			{"EntropyY", got.EntropyY, want.EntropyY},
			{"EntropyJoint", got.EntropyJoint, want.EntropyJoint},
			{"MutualInformation", got.MutualInformation, want.MutualInformation},
			{"DiME", got.DiME, want.DiME},
			{"DiMEStdErr", got.DiMEStdErr, want.DiMEStdErr},
		}
		for k := range want.PermutedJoint {
			fields = append(fields, struct {
				name      string
				got, want float64
			}{fmt.Sprintf("PermutedJoint[%d]", k), got.PermutedJoint[k], want.PermutedJoint[k]})
		}
		var worst float64
		for _, f := range fields {
			diff := math.Abs(f.got - f.want)
			worst = max(worst, diff)
			if !(diff <= tol) {
				t.Errorf("%s: %s = %.17g with OpenBLAS, %.17g in pure Go", name, f.name, f.got, f.want)
			}
		}
		return worst
	}
}

// TestBackendsLowRankBelowOne compares the backends where the 1e-9 of
// TestBackendsAgree cannot hold: alpha < 1 on Gram matrices of 1-dimensional
// data, whose spectra fall to round-off (~nε of the largest eigenvalue) after a
// few dozen eigenvalues. Each round-off eigenvalue that comes out positive adds
// up to (nε)^α to Σ λ^α (see SpectrumEntropy), and two eigensolvers round
// differently. Measured: up to 1.3e-7 nats (sine, n = 400); the bound 1e-6
// stays well below the worst case n·(nε)^α/((1−α)·Σλ^α) ≈ 2e-4 at n = 400.
//
// To show that the difference lies only in those round-off eigenvalues, the
// test also drops the eigenvalues below n·ε·λ_max from both spectra, after which
// the entropies agree within 1e-9 (measured 6e-12 and 9e-13).
func TestBackendsLowRankBelowOne(t *testing.T) {
	if !linalg.OpenBLAS.Available() {
		t.Skip("OpenBLAS not compiled in (build with -tags openblas)")
	}
	cases := []struct {
		kind synth.Kind
		n    int
	}{
		{synth.Circle, 200},
		{synth.Sine, 400},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%v d=1 n=%d gaussian alpha=0.5", c.kind, c.n)
		x, y := toy(t, c.kind, 1, 0, c.n, 1)
		cfg := DefaultConfig()
		cfg.Alpha = 0.5
		want := estimateWith(t, linalg.Gonum, x, y, cfg)
		got := estimateWith(t, linalg.OpenBLAS, x, y, cfg)
		worst := maxResultDifference(t, name, got, want, 1e-6)
		t.Logf("%s: max difference %.2g nats", name, worst)

		k := mustGram(t, Gaussian, math.Sqrt(0.5), x)
		truncated := make(map[linalg.Backend]float64)
		for _, b := range []linalg.Backend{linalg.Gonum, linalg.OpenBLAS} {
			values := eigenvaluesWith(t, b, k)
			cut := float64(c.n) * 0x1p-52 * values[len(values)-1]
			for i, v := range values {
				if v < cut {
					values[i] = 0
				}
			}
			s, err := SpectrumEntropy(values, cfg.Alpha)
			if err != nil {
				t.Fatal(err)
			}
			truncated[b] = s
		}
		if d := math.Abs(truncated[linalg.OpenBLAS] - truncated[linalg.Gonum]); !(d <= 1e-9) {
			t.Errorf("%s: entropies of X without round-off eigenvalues %.17g (OpenBLAS) and %.17g (pure Go)",
				name, truncated[linalg.OpenBLAS], truncated[linalg.Gonum])
		} else {
			t.Logf("%s: entropies of X without round-off eigenvalues differ by %.2g", name, d)
		}
	}
}

// eigenvaluesWith returns the eigenvalues of k computed with backend b.
func eigenvaluesWith(t *testing.T, b linalg.Backend, k *mat.SymDense) []float64 {
	t.Helper()
	def := linalg.Current()
	defer linalg.Use(def)
	if err := linalg.Use(b); err != nil {
		t.Fatal(err)
	}
	scratch := mat.NewSymDense(k.SymmetricDim(), nil)
	scratch.CopySym(k)
	var s linalg.SymEigensolver
	values, err := s.EigenvaluesInPlace(nil, scratch.RawSymmetric())
	if err != nil {
		t.Fatal(err)
	}
	return values
}
