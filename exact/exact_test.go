package exact

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

var alphas = []float64{0.5, 1, 1.01, 2, 3}

func mustGram(t testing.TB, k Kernel, sigma float64, x mat.Matrix) *mat.SymDense {
	t.Helper()
	g, err := Gram(nil, k, sigma, x)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func toy(t testing.TB, kind synth.Kind, d int, mi float64, n int, seed uint64) (x, y *mat.Dense) {
	t.Helper()
	x, y, err := synth.Generate(synth.Spec{Kind: kind, Dim: d, MI: mi, Noise: 0.2, Seed: seed}, n)
	if err != nil {
		t.Fatal(err)
	}
	return x, y
}

// TestClosedForms checks the entropies that have closed forms.
func TestClosedForms(t *testing.T) {
	for _, n := range []int{2, 7, 64} {
		id := mat.NewSymDense(n, nil)
		ones := mat.NewSymDense(n, nil)
		for i := 0; i < n; i++ {
			id.SetSym(i, i, 1)
			for j := i; j < n; j++ {
				ones.SetSym(i, j, 1)
			}
		}
		for _, a := range alphas {
			s, err := MatrixEntropy(id, a)
			if err != nil {
				t.Fatal(err)
			}
			if !scalar.EqualWithinAbs(s, math.Log(float64(n)), 1e-14) {
				t.Errorf("S_%v(I_%d) = %.17g, want log n = %.17g", a, n, s, math.Log(float64(n)))
			}
			s, err = MatrixEntropy(ones, a)
			if err != nil {
				t.Fatal(err)
			}
			// The all-ones matrix has one eigenvalue n and n-1 round-off ones
			// of size up to ~nε (relative). For alpha >= 1 they change nothing
			// visible; for alpha < 1 each adds up to (nε)^alpha to Σλ^alpha,
			// so S can be up to n(nε)^alpha/(1-alpha) (measured at n = 64,
			// alpha = 0.5: 4.8e-7 against a bound of 1.5e-5).
			tol := 1e-12
			if a < 1 {
				tol = float64(n) * math.Pow(float64(n)*0x1p-52, a) / (1 - a)
			}
			if !scalar.EqualWithinAbs(s, 0, tol) {
				t.Errorf("S_%v(ones_%d) = %g, want 0 within %g", a, n, s, tol)
			}
		}
	}
	// A spectrum uniform on m of its values has entropy log m at every alpha.
	for _, a := range alphas {
		s, err := SpectrumEntropy([]float64{0.25, 0.25, 0, -1e-17, 0.25, 0.25}, a)
		if err != nil {
			t.Fatal(err)
		}
		if !scalar.EqualWithinAbs(s, math.Log(4), 1e-15) {
			t.Errorf("alpha %v: S(uniform on 4) = %.17g, want log 4", a, s)
		}
	}
}

// TestFrobeniusPathEqualsEigenvalues checks that alpha = 2 computed from the
// Frobenius norm equals the eigenvalue formula on Gram matrices of all kernels.
func TestFrobeniusPathEqualsEigenvalues(t *testing.T) {
	x, _ := toy(t, synth.Gaussian, 3, 1, 200, 7)
	for _, k := range vocab.Kernels() {
		g := mustGram(t, k, 1.1, x)
		fro, err := FrobeniusEntropy(g)
		if err != nil {
			t.Fatal(err)
		}
		var es mat.EigenSym
		if !es.Factorize(g, false) {
			t.Fatal("eigendecomposition failed")
		}
		eig, err := SpectrumEntropy(es.Values(nil), 2)
		if err != nil {
			t.Fatal(err)
		}
		// Measured difference ~1e-15: the paths differ only by the round-off
		// eigenvalues <= 0 that the eigenvalue path drops.
		if !scalar.EqualWithinAbs(fro, eig, 1e-12) {
			t.Errorf("%v: Frobenius %.17g, eigenvalues %.17g", k, fro, eig)
		}
	}
}

// TestAlphaOneLimit checks that S_alpha is continuous at alpha = 1, on both
// sides of the threshold below which the von Neumann formula is used.
func TestAlphaOneLimit(t *testing.T) {
	x, _ := toy(t, synth.Gaussian, 3, 1, 200, 8)
	var es mat.EigenSym
	es.Factorize(mustGram(t, Gaussian, 1, x), false)
	values := es.Values(nil)
	s1, _ := SpectrumEntropy(values, 1)
	const h = 1e-6
	plus, _ := SpectrumEntropy(values, 1+h)
	minus, _ := SpectrumEntropy(values, 1-h)
	// S is smooth in alpha: |S(1±h) - S(1)| = h|S'(1)| + O(h²) with |S'| of
	// order log² n ~ 30, and the centred difference cancels the first order.
	if d := math.Abs(plus - s1); d > 30*h {
		t.Errorf("|S(1+h) - S(1)| = %g, want <= %g", d, 30*h)
	}
	if d := math.Abs(minus - s1); d > 30*h {
		t.Errorf("|S(1-h) - S(1)| = %g, want <= %g", d, 30*h)
	}
	if d := math.Abs((plus+minus)/2 - s1); d > 1e-9 {
		t.Errorf("centred difference at alpha = 1 is %g, want <= 1e-9 (a jump at the threshold)", d)
	}
	// Just inside the von Neumann threshold S is S(1) exactly; just outside
	// it must be S(1) plus the slope times the step, with no jump.
	slope := (plus - minus) / (2 * h)
	in, _ := SpectrumEntropy(values, 1+0.5*vonNeumannTolerance)
	out, _ := SpectrumEntropy(values, 1+2*vonNeumannTolerance)
	if in != s1 {
		t.Errorf("inside the threshold S = %.17g, want S(1) = %.17g", in, s1)
	}
	if d := math.Abs(out - (s1 + 2*vonNeumannTolerance*slope)); d > 1e-13 {
		t.Errorf("entropy jumps by %g across the von Neumann threshold", d)
	}
}

// TestGramMatchesKernelEval checks every Gram entry against the kernel
// evaluated from direct coordinate differences, on data far from the origin
// (where an uncentred expansion of squared distances loses digits).
func TestGramMatchesKernelEval(t *testing.T) {
	x, _ := toy(t, synth.Gaussian, 5, 1, 120, 9)
	shifted := mat.DenseCopyOf(x)
	shifted.Apply(func(_, _ int, v float64) float64 { return v + 1e6 }, shifted)
	for _, data := range []*mat.Dense{x, shifted} {
		for _, k := range vocab.Kernels() {
			g := mustGram(t, k, 0.8, data)
			n, _ := data.Dims()
			var worst float64
			for i := 0; i < n; i++ {
				for j := i; j < n; j++ {
					want := Eval(k, data.RawRowView(i), data.RawRowView(j), 0.8)
					worst = max(worst, math.Abs(g.At(i, j)-want))
				}
			}
			// Measured: 1e-16 at the origin, 4e-11 at offset 1e6 (the
			// differences themselves lose ~10 digits in Eval there).
			if worst > 1e-9 {
				t.Errorf("%v: largest Gram error %g", k, worst)
			}
		}
	}
}

// TestProperties checks the inequalities of ESTIMATORS.md section 1 on data of
// three kinds, all kernels and alphas.
func TestProperties(t *testing.T) {
	const eps = 1e-10
	for _, kind := range []synth.Kind{synth.Gaussian, synth.Sine, synth.Independent} {
		x, y := toy(t, kind, 2, 1, 150, 3)
		for _, k := range vocab.Kernels() {
			for _, a := range alphas {
				cfg := DefaultConfig()
				cfg.Kernel, cfg.Alpha = k, a
				r, err := Estimate(x, y, cfg)
				if err != nil {
					t.Fatal(err)
				}
				logn := math.Log(float64(r.Rows))
				for _, s := range []float64{r.EntropyX, r.EntropyY, r.EntropyJoint} {
					if s < 0 || s > logn+eps {
						t.Errorf("%v %v alpha %v: entropy %g outside [0, log n]", kind, k, a, s)
					}
				}
				if r.EntropyJoint < max(r.EntropyX, r.EntropyY)-eps {
					t.Errorf("%v %v alpha %v: joint %g < marginals %g, %g", kind, k, a, r.EntropyJoint, r.EntropyX, r.EntropyY)
				}
				if r.MutualInformation < -eps {
					t.Errorf("%v %v alpha %v: MI %g < 0", kind, k, a, r.MutualInformation)
				}
				if r.DiME > r.MutualInformation+eps {
					t.Errorf("%v %v alpha %v: DiME %g > MI %g", kind, k, a, r.DiME, r.MutualInformation)
				}
				if !scalar.EqualWithinAbs(r.ConditionalEntropyXGivenY(), r.EntropyX-r.MutualInformation, 1e-12) {
					t.Errorf("%v %v alpha %v: S(X|Y) != S(X) - I", kind, k, a)
				}
			}
		}
	}
}

// TestIndependentNearZero checks that DiME is near 0 for independent views
// and clearly positive for dependent ones of the same size.
func TestIndependentNearZero(t *testing.T) {
	// Measured: max |DiME| = 0.025 over seeds 1..20 (n = 512, d = 4,
	// defaults); the bound leaves a factor 2. The dependent toy with rho = 0.7
	// gives about 0.34 (ESTIMATORS.md section 4).
	const bound = 0.05
	cfg := DefaultConfig()
	cfg.SkipNormalized = true // DiME only
	for seed := uint64(1); seed <= 4; seed++ {
		x, y := toy(t, synth.Independent, 4, 0, 512, seed)
		r, err := Estimate(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(r.DiME) > bound {
			t.Errorf("seed %d: independent DiME = %.4f, want |DiME| <= %v", seed, r.DiME, bound)
		}
	}
	mi := -2 * math.Log(1-0.49) // rho = 0.7 in d = 4
	x, y := toy(t, synth.Gaussian, 4, mi, 512, 1)
	r, err := Estimate(x, y, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.DiME < 6*bound {
		t.Errorf("dependent DiME = %.4f, want > %v", r.DiME, 6*bound)
	}
}

// TestRowOrderInvariance checks that reordering the rows of X and Y together
// changes no entropy, and DiME only through which pairs its permutations make.
func TestRowOrderInvariance(t *testing.T) {
	x, y := toy(t, synth.Sine, 2, 0, 100, 4)
	n, _ := x.Dims()
	order := rand.New(rand.NewPCG(5, 6)).Perm(n)
	xr, yr := mat.NewDense(n, 2, nil), mat.NewDense(n, 2, nil)
	for i, o := range order {
		xr.SetRow(i, x.RawRowView(o))
		yr.SetRow(i, y.RawRowView(o))
	}
	for _, k := range vocab.Kernels() {
		kx, ky := mustGram(t, k, 1, x), mustGram(t, k, 1, y)
		kxr, kyr := mustGram(t, k, 1, xr), mustGram(t, k, 1, yr)
		perms := Permutations(n, 3, 1)
		// The same pairings in the new order: row i of the reordered data is
		// row order[i] of the original, paired with original row perm[order[i]].
		inverse := make([]int, n)
		for i, o := range order {
			inverse[o] = i
		}
		reordered := make([][]int, len(perms))
		for k, p := range perms {
			reordered[k] = make([]int, n)
			for i, o := range order {
				reordered[k][i] = inverse[p[o]]
			}
		}
		a, err := DiME(kx, ky, 1.01, perms)
		if err != nil {
			t.Fatal(err)
		}
		b, err := DiME(kxr, kyr, 1.01, reordered)
		if err != nil {
			t.Fatal(err)
		}
		if !scalar.EqualWithinAbs(a.EntropyJoint, b.EntropyJoint, 1e-12) || !scalar.EqualWithinAbs(a.DiME, b.DiME, 1e-12) {
			t.Errorf("%v: reordering changed joint %g -> %g, DiME %g -> %g", k, a.EntropyJoint, b.EntropyJoint, a.DiME, b.DiME)
		}
		mi1, _ := MutualInformation(kx, ky, 1.01)
		mi2, _ := MutualInformation(kxr, kyr, 1.01)
		if !scalar.EqualWithinAbs(mi1, mi2, 1e-12) {
			t.Errorf("%v: reordering changed MI %g -> %g", k, mi1, mi2)
		}
	}
}

// TestPermutationsReproducible checks that permutations and results depend on
// the seed only.
func TestPermutationsReproducible(t *testing.T) {
	a, b, c := Permutations(50, 3, 42), Permutations(50, 3, 42), Permutations(50, 3, 43)
	for k := range a {
		if !slices.Equal(a[k], b[k]) {
			t.Fatalf("permutation %d differs for the same seed", k)
		}
		if err := checkPermutation(a[k], 50); err != nil {
			t.Fatal(err)
		}
	}
	if slices.Equal(a[0], c[0]) {
		t.Error("seeds 42 and 43 give the same first permutation")
	}
	if slices.Equal(a[0], a[1]) {
		t.Error("consecutive permutations are equal")
	}
	x, y := toy(t, synth.Gaussian, 3, 1, 80, 2)
	cfg := DefaultConfig()
	cfg.Seed = 42
	r1, _ := Estimate(x, y, cfg)
	r2, _ := Estimate(x, y, cfg)
	cfg.Seed = 43
	r3, _ := Estimate(x, y, cfg)
	if r1.DiME != r2.DiME || !slices.Equal(r1.PermutedJoint, r2.PermutedJoint) {
		t.Errorf("same seed, different DiME: %v vs %v", r1.DiME, r2.DiME)
	}
	if r1.DiME == r3.DiME {
		t.Errorf("seeds 42 and 43 give the same DiME %v", r1.DiME)
	}
}

// TestBandwidthBehaviour checks the paper's Appendix A: as sigma shrinks MI
// grows toward log n, while DiME has an interior maximum.
func TestBandwidthBehaviour(t *testing.T) {
	x, y := toy(t, synth.Gaussian, 4, 2, 256, 1)
	sigmas := []float64{100, 30, 10, 3, 1, 0.3, 0.1, 0.01} // decreasing
	dime := make([]float64, len(sigmas))
	mi := make([]float64, len(sigmas))
	for i, s := range sigmas {
		cfg := DefaultConfig()
		cfg.SigmaX, cfg.SigmaY = Sigma(s), Sigma(s)
		r, err := Estimate(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		dime[i], mi[i] = r.DiME, r.MutualInformation
	}
	for i := 1; i < len(mi); i++ {
		if mi[i] < mi[i-1]-1e-12 {
			t.Errorf("MI fell from %g to %g as sigma shrank from %v to %v", mi[i-1], mi[i], sigmas[i-1], sigmas[i])
		}
	}
	logn := math.Log(256)
	if !scalar.EqualWithinAbs(mi[len(mi)-1], logn, 1e-6) {
		t.Errorf("MI at sigma 0.01 = %g, want log n = %g", mi[len(mi)-1], logn)
	}
	best := 0
	for i, v := range dime {
		if v > dime[best] {
			best = i
		}
	}
	// Measured: DiME 0.0003 at sigma 100, 0.27 at sigma 3, 0.0000 at 0.01.
	if best == 0 || best == len(dime)-1 {
		t.Fatalf("DiME maximum at the end of the grid (sigma %v): %v", sigmas[best], dime)
	}
	if dime[best] < 10*max(math.Abs(dime[0]), math.Abs(dime[len(dime)-1]), 0.001) {
		t.Errorf("DiME maximum %g is not well above its ends %g and %g", dime[best], dime[0], dime[len(dime)-1])
	}
}

// TestToyDiMERisesWithMI reproduces the paper's toy (ESTIMATORS.md section 5)
// at n = 512, d = 20: DiME rises strictly with the true MI. Measured on seed 1:
// DiME = -0.0004, 0.018, 0.036, 0.052, 0.066, 0.079 with standard errors below
// 0.001, so each step of 0.013 or more is many standard errors wide.
func TestToyDiMERisesWithMI(t *testing.T) {
	if testing.Short() {
		t.Skip("toy at n = 512 takes a few seconds")
	}
	prev := math.Inf(-1)
	cfg := DefaultConfig()
	cfg.SkipNormalized = true // DiME only (TestNormalizedScale has the score)
	for _, m := range []float64{0, 2, 4, 6, 8, 10} {
		x, y := toy(t, synth.Gaussian, 20, m, 512, 1)
		r, err := Estimate(x, y, cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("true MI %2.0f nats: DiME %.4f ± %.4f, MI_alpha %.4f", m, r.DiME, r.DiMEStdErr, r.MutualInformation)
		if r.DiME <= prev {
			t.Errorf("DiME %.4f at MI %v is not above %.4f", r.DiME, m, prev)
		}
		if m == 0 && math.Abs(r.DiME) > 0.01 {
			t.Errorf("DiME %.4f at MI 0, want |DiME| <= 0.01", r.DiME)
		}
		prev = r.DiME
	}
}

// TestInvalidInput checks that bad input gives an error matching
// ErrInvalidInput that says what is wrong, never a panic.
func TestInvalidInput(t *testing.T) {
	good := mat.NewDense(4, 2, []float64{0, 1, 2, 3, 4, 5, 6, 7})
	nanData := mat.DenseCopyOf(good)
	nanData.Set(2, 1, math.NaN())
	infData := mat.DenseCopyOf(good)
	infData.Set(3, 0, math.Inf(-1))
	constant := mat.NewDense(4, 1, []float64{1, 1, 1, 1})
	withCfg := func(f func(*Config)) Config { c := DefaultConfig(); f(&c); return c }
	cases := []struct {
		name string
		x, y mat.Matrix
		cfg  Config
		want string
	}{
		{"one row", mat.NewDense(1, 2, nil), mat.NewDense(1, 2, nil), DefaultConfig(), "at least 2"},
		{"row mismatch", good, mat.NewDense(3, 2, nil), DefaultConfig(), "4 rows and Y has 3"},
		{"nil view", good, nil, DefaultConfig(), "nil"},
		{"NaN in Y", good, nanData, DefaultConfig(), "Y: row 2, column 1"},
		{"Inf in X", infData, good, DefaultConfig(), "X: row 3, column 0"},
		{"alpha zero", good, good, withCfg(func(c *Config) { c.Alpha = 0 }), "alpha"},
		{"alpha negative", good, good, withCfg(func(c *Config) { c.Alpha = -1 }), "alpha"},
		{"alpha NaN", good, good, withCfg(func(c *Config) { c.Alpha = math.NaN() }), "alpha"},
		{"alpha Inf", good, good, withCfg(func(c *Config) { c.Alpha = math.Inf(1) }), "alpha"},
		{"sigma zero", good, good, withCfg(func(c *Config) { c.SigmaX = Sigma(0) }), "sigma"},
		{"sigma negative", good, good, withCfg(func(c *Config) { c.SigmaY = Sigma(-2) }), "sigma"},
		{"sigma NaN", good, good, withCfg(func(c *Config) { c.SigmaY = Sigma(math.NaN()) }), "sigma"},
		{"sigma Inf", good, good, withCfg(func(c *Config) { c.SigmaX = Sigma(math.Inf(1)) }), "sigma"},
		{"no permutations", good, good, withCfg(func(c *Config) { c.Permutations = 0 }), "permutations"},
		{"bad kernel", good, good, withCfg(func(c *Config) { c.Kernel = 9 }), "kernel"},
		{"median of constant view", constant, good, withCfg(func(c *Config) { c.SigmaX = Median() }), "X: median pairwise distance is 0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Estimate(c.x, c.y, c.cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, ErrInvalidInput) {
				t.Errorf("error %q does not match ErrInvalidInput", err)
			}
			if !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "exact: ") {
				t.Errorf("error %q, want it to start with \"exact: \" and mention %q", err, c.want)
			}
		})
	}
	// Zero-width views cannot be built with gonum (it panics on a 0 dimension);
	// a mat.Matrix with no columns must still be refused.
	if _, err := Estimate(emptyCols{4}, good, DefaultConfig()); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero-width X: error %v", err)
	}
	// Lower-level functions.
	g := mustGram(t, Gaussian, 1, good)
	if _, err := DiME(g, g, 1.01, [][]int{{0, 1, 1, 3}}); err == nil || !strings.Contains(err.Error(), "repeated") {
		t.Errorf("non-permutation accepted: %v", err)
	}
	if _, err := DiME(g, mustGram(t, Gaussian, 1, mat.NewDense(3, 1, []float64{1, 2, 3})), 1.01, nil); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("Gram size mismatch: %v", err)
	}
	if _, err := Gram(nil, Gaussian, 1, nanData); err == nil || !strings.Contains(err.Error(), "row 2, column 1") {
		t.Errorf("Gram of NaN data: %v", err)
	}
	if _, err := SpectrumEntropy([]float64{0, -1}, 1); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("spectrum without positive values: %v", err)
	}
	if _, err := SpectrumEntropy([]float64{1, math.NaN()}, 1); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("spectrum with NaN: %v", err)
	}
	for _, s := range []string{"", "abc", "-1", "0", "NaN", "+Inf"} {
		if _, err := ParseBandwidth(s); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("ParseBandwidth(%q): error %v", s, err)
		}
	}
	if _, err := ParseKernel("rbf"); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("ParseKernel(rbf): %v", err)
	}
}

// emptyCols is an r×0 matrix, which gonum's own types cannot represent.
type emptyCols struct{ r int }

func (e emptyCols) Dims() (int, int)    { return e.r, 0 }
func (e emptyCols) At(int, int) float64 { panic("no columns") }
func (e emptyCols) T() mat.Matrix       { return mat.Transpose{Matrix: e} }

// TestBandwidthRules checks the fixed and median rules and their parsing.
func TestBandwidthRules(t *testing.T) {
	x := mat.NewDense(3, 2, []float64{0, 0, 3, 4, 6, 8})
	// l2 distances 5, 10, 5 → median 5; l1 distances 7, 14, 7 → median 7.
	for _, c := range []struct {
		k    Kernel
		want float64
	}{{Gaussian, 5 / math.Sqrt2}, {Elliptical, 5 / math.Sqrt2}, {Laplacian, 7 / math.Sqrt2}} {
		got, err := Resolve(Median(), c.k, x)
		if err != nil || !scalar.EqualWithinAbs(got, c.want, 1e-15) {
			t.Errorf("%v median sigma = %v (%v), want %v", c.k, got, err, c.want)
		}
	}
	if got, _ := Resolve(Fixed(), Gaussian, x); got != 1 {
		t.Errorf("fixed sigma for d = 2 is %v, want 1", got)
	}
	for _, s := range []string{"fixed", "median", "2.5"} {
		b, err := ParseBandwidth(s)
		if err != nil || b.String() != s {
			t.Errorf("ParseBandwidth(%q) = %v, %v", s, b, err)
		}
	}
	// Even number of distances: mean of the middle two.
	x4 := mat.NewDense(4, 1, []float64{0, 1, 3, 7})
	// distances 1 3 7 2 6 4 → sorted 1 2 3 4 6 7 → median 3.5
	if got, _ := MedianSigma(Gaussian, x4); !scalar.EqualWithinAbs(got, 3.5/math.Sqrt2, 1e-15) {
		t.Errorf("median sigma = %v, want %v", got, 3.5/math.Sqrt2)
	}
}

// TestJointEntropyOfThreeViews checks the Hadamard product of three views
// against two-step products.
func TestJointEntropyOfThreeViews(t *testing.T) {
	x, y := toy(t, synth.Gaussian, 2, 1, 60, 11)
	z, _ := toy(t, synth.Independent, 1, 0, 60, 12)
	kx, ky, kz := mustGram(t, Gaussian, 1, x), mustGram(t, Laplacian, 1, y), mustGram(t, Elliptical, 1, z)
	xy := mat.NewSymDense(60, nil)
	for i := 0; i < 60; i++ {
		for j := i; j < 60; j++ {
			xy.SetSym(i, j, kx.At(i, j)*ky.At(i, j))
		}
	}
	three, err := JointEntropy(1.01, kx, ky, kz)
	if err != nil {
		t.Fatal(err)
	}
	two, err := JointEntropy(1.01, xy, kz)
	if err != nil {
		t.Fatal(err)
	}
	if !scalar.EqualWithinAbs(three, two, 1e-13) {
		t.Errorf("S(Kx∘Ky∘Kz) = %.15g, S((Kx∘Ky)∘Kz) = %.15g", three, two)
	}
	if s, _ := JointEntropy(1.01, kx, ky); three < s-1e-12 {
		t.Errorf("adding a view lowered the joint entropy: %g < %g", three, s)
	}
	if _, err := JointEntropy(1.01, kx); err == nil {
		t.Error("joint entropy of one view accepted")
	}
}
