package exact

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dime-project/dime/internal/randstream"
	"gonum.org/v1/gonum/mat"
)

// NewPermutationRand returns the random source of the permutations for seed.
// Permutations(n, p, seed) is p successive r.Perm(n) of this source.
func NewPermutationRand(seed uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, randstream.Permutation))
}

// Permutations returns p seeded random permutations of 0..n-1, the same on
// every machine and every run for the same (n, p, seed). The k-th permutation
// pairs row i of X with row perms[k][i] of Y.
func Permutations(n, p int, seed uint64) [][]int {
	r := NewPermutationRand(seed)
	perms := make([][]int, p)
	for k := range perms {
		perms[k] = r.Perm(n)
	}
	return perms
}

// Config holds the parameters of an exact estimate. DefaultConfig returns the
// paper's settings.
type Config struct {
	// Kernel is the kernel of both views (the zero value is Gaussian).
	Kernel Kernel
	// Alpha is the order of the Rényi entropies, > 0 (the paper uses 1.01).
	Alpha float64
	// SigmaX and SigmaY choose the bandwidth of each view.
	SigmaX, SigmaY Bandwidth
	// Permutations is the number P ≥ 1 of random permutations for DiME.
	Permutations int
	// Seed drives the permutations.
	Seed uint64
	// TestPermutations chooses the independence test of Result.PValue.
	// 0 (the default) is the HSIC test of the same Gram matrices
	// (HSICTest, with Seed): O(n²) per random pairing of the rows, exact
	// down to 0.001 and an asymptotic tail below. B ≥ 1 is the permutation
	// test of the joint entropy with max(B, Permutations) null replicates,
	// the first P of which are DiME's permutations: max(B − P, 0) more
	// eigenproblems, and p-values never below 1/(B + 1).
	TestPermutations int
	// SkipNormalized skips the normalized score (Result.Normalized is then
	// NaN), which saves its 2(P + 1) eigenproblems: more than half of the
	// default estimate's.
	SkipNormalized bool
}

// TestKind names the independence test behind a p-value.
type TestKind uint8

const (
	// TestHSIC is the HSIC test of HSICTest.
	TestHSIC TestKind = iota
	// TestPermutation is the permutation test of the joint entropy.
	TestPermutation
)

// String returns "hsic" or "permutation".
func (k TestKind) String() string {
	switch k {
	case TestHSIC:
		return "hsic"
	case TestPermutation:
		return "permutation"
	}
	return fmt.Sprintf("TestKind(%d)", uint8(k))
}

// DefaultConfig returns the paper's settings: Gaussian kernel, α = 1.01,
// σ = √(d/2) for each view, P = 5 permutations, seed 1.
func DefaultConfig() Config {
	return Config{Kernel: Gaussian, Alpha: 1.01, SigmaX: Fixed(), SigmaY: Fixed(), Permutations: 5, Seed: 1}
}

// Validate returns an error matching ErrInvalidInput if a parameter is out of
// range.
func (c Config) Validate() error {
	if !c.Kernel.Valid() {
		return invalidf("unknown kernel %d", uint8(c.Kernel))
	}
	if err := CheckAlpha(c.Alpha); err != nil {
		return err
	}
	if c.Permutations < 1 {
		return invalidf("permutations must be at least 1, got %d", c.Permutations)
	}
	if c.TestPermutations < 0 {
		return invalidf("test permutations must be >= 0, got %d", c.TestPermutations)
	}
	for _, b := range []Bandwidth{c.SigmaX, c.SigmaY} {
		if b.Rule > AutoRule {
			return invalidf("unknown bandwidth rule %d", uint8(b.Rule))
		}
		if b.Rule == ExplicitRule {
			if err := CheckSigma(b.Sigma); err != nil {
				return err
			}
		}
	}
	return nil
}

// Result is an exact estimate with every parameter that produced it.
type Result struct {
	Rows           int
	Kernel         Kernel
	Alpha          float64
	SigmaX, SigmaY float64
	Permutations   int
	Seed           uint64

	// EntropyX, EntropyY and EntropyJoint are S_α(K_X), S_α(K_Y) and
	// S_α(K_X ∘ K_Y), in nats.
	EntropyX, EntropyY, EntropyJoint float64
	// MutualInformation is I_α = EntropyX + EntropyY − EntropyJoint.
	MutualInformation float64
	// DiME is MeanPermutedJoint − EntropyJoint, and DiMEStdErr its standard
	// error over the permutations (NaN for P = 1).
	DiME, DiMEStdErr float64
	// MeanPermutedJoint is the mean of PermutedJoint, the joint entropies of
	// K_X ∘ Π K_Y Πᵀ for each permutation.
	MeanPermutedJoint float64
	PermutedJoint     []float64
	// Normalized is DiME / √(DiMESelfX · DiMESelfY), the normalized score
	// (dime_normalized): 0 in expectation under independence, exactly 1 when
	// Y is X with the same bandwidth. DiMESelfX is the DiME of X with an
	// identical copy of itself, mean_k S(K_X ∘ Π_k K_X Π_kᵀ) − S(K_X ∘ K_X)
	// over the estimate's P permutations, and DiMESelfY likewise. All three
	// are NaN with Config.SkipNormalized; Normalized is NaN when a self
	// term is not positive (a constant view).
	Normalized           float64
	DiMESelfX, DiMESelfY float64
	// PValue is the p-value of the test of independence named by Test.
	//
	// TestHSIC (the default): the HSIC test of the same Gram matrices,
	// HSIC holds its statistic, pairings and null moments (see HSICTest):
	// a sequential permutation test, exact at every level from 0.001 up,
	// and below 0.001 the spectral tail of its asymptotic null (down to
	// 1e-300). Its calibration on held-out data is in CALIBRATION.md.
	//
	// TestPermutation: under independence the observed pairing is
	// exchangeable with random ones, and dependence lowers the joint
	// entropy, so with B = TestPermutations null replicates
	// p = (1 + #{b: S(K_X ∘ Π_b K_Y Π_bᵀ) ≤ S(K_X ∘ K_Y)}) / (1 + B).
	// It is exact (not asymptotic) and never below 1/(B + 1).
	PValue float64
	Test   TestKind
	HSIC   HSICResult
	// TestPermutations is B, the null replicates of the permutation test
	// (0 for the HSIC test).
	TestPermutations int
}

// ConditionalEntropyXGivenY returns S_α(X | Y) = S_α(K_X ∘ K_Y) − S_α(K_Y).
func (r Result) ConditionalEntropyXGivenY() float64 { return r.EntropyJoint - r.EntropyY }

// ConditionalEntropyYGivenX returns S_α(Y | X) = S_α(K_X ∘ K_Y) − S_α(K_X).
func (r Result) ConditionalEntropyYGivenX() float64 { return r.EntropyJoint - r.EntropyX }

// Estimate computes the exact entropies, mutual information and DiME of the
// paired views x and y (row i of x goes with row i of y). Both need at least 2
// rows, the same number of rows, at least one column and finite values.
// Errors about the input match ErrInvalidInput and name the view, row and
// column at fault.
func Estimate(x, y mat.Matrix, cfg Config) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	n, sigmaX, sigmaY, err := resolveViews(x, y, cfg)
	if err != nil {
		return Result{}, err
	}
	if cfg.SigmaX.Rule == AutoRule || cfg.SigmaY.Rule == AutoRule {
		if sigmaX, sigmaY, err = ResolveBandwidths(x, y, cfg); err != nil {
			return Result{}, err
		}
	}
	kx, err := Gram(nil, cfg.Kernel, sigmaX, x)
	if err != nil {
		return Result{}, err
	}
	ky, err := Gram(nil, cfg.Kernel, sigmaY, y)
	if err != nil {
		return Result{}, err
	}
	// The first P permutations serve DiME and the permutation test, which
	// may take more from the same seeded sequence.
	useHSIC := cfg.TestPermutations == 0
	B := 0
	if !useHSIC {
		B = max(cfg.TestPermutations, cfg.Permutations)
	}
	opts := entropyOptions{marginals: true}
	if !cfg.SkipNormalized {
		opts.self = cfg.Permutations
	}
	s, err := entropies(kx, ky, cfg.Alpha, Permutations(n, max(B, cfg.Permutations), cfg.Seed), opts)
	if err != nil {
		return Result{}, err
	}
	norm, selfX, selfY := math.NaN(), math.NaN(), math.NaN()
	if !cfg.SkipNormalized {
		selfX, selfY = s.selfX.DiME, s.selfY.DiME
	}
	parts := newDiMEParts(s.joint, s.permuted[:cfg.Permutations])
	if !cfg.SkipNormalized {
		norm = NormalizedScore(parts.DiME, selfX, selfY)
	}
	var hsic HSICResult
	test, p := TestPermutation, PermutationPValue(s.joint, s.permuted)
	if useHSIC {
		// The entropies are done with the Grams' upper triangles: K_Y's
		// lower triangle takes its full storage for the pairings.
		raw := ky.RawSymmetric()
		if hsic, err = hsicTest(kx.RawSymmetric(), raw, mirrorInPlace(raw), HSICOptions{Seed: cfg.Seed}); err != nil {
			return Result{}, err
		}
		test, p = TestHSIC, hsic.PValue
	}
	return Result{
		Rows: n, Kernel: cfg.Kernel, Alpha: cfg.Alpha,
		SigmaX: sigmaX, SigmaY: sigmaY,
		Permutations: cfg.Permutations, Seed: cfg.Seed,
		EntropyX: s.x, EntropyY: s.y, EntropyJoint: s.joint,
		MutualInformation: s.x + s.y - s.joint,
		DiME:              parts.DiME, DiMEStdErr: parts.StdErr,
		MeanPermutedJoint: parts.MeanPermutedJoint, PermutedJoint: parts.PermutedJoint,
		Normalized: norm, DiMESelfX: selfX, DiMESelfY: selfY,
		PValue: p, Test: test, HSIC: hsic, TestPermutations: B,
	}, nil
}

// NormalizedScore returns dime / √(selfX · selfY), the normalized score of
// a DiME given the DiME of each view with an identical copy of itself (see
// Result.Normalized), or NaN unless both self terms are positive. Equal self
// terms divide by their common value, so that Y = X gives exactly 1.
func NormalizedScore(dime, selfX, selfY float64) float64 {
	if !(selfX > 0) || !(selfY > 0) {
		return math.NaN()
	}
	if selfX == selfY {
		return dime / selfX
	}
	return dime / math.Sqrt(selfX*selfY)
}

// PermutationPValue returns (1 + #{b: null[b] ≤ joint}) / (1 + B), the p-value
// of the permutation test of independence from the joint entropy and B null
// replicates of it (joint entropies of permuted pairings).
func PermutationPValue(joint float64, null []float64) float64 {
	k := 1
	for _, v := range null {
		if v <= joint {
			k++
		}
	}
	return float64(k) / float64(len(null)+1)
}

// trimPrefix returns the message of an error of this package without its
// "exact: " prefix, so that it can be prefixed again with context.
func trimPrefix(err error) string {
	if e, ok := err.(*inputError); ok {
		return e.msg
	}
	return err.Error()
}
