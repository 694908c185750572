package stream

import (
	"fmt"
	"math"
	"testing"

	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// withBackend runs f with the whole process switched to backend b (the BLAS
// of the accumulators' rank-k updates and the eigensolver of the entropies),
// then switches back. No estimator computes while the backend changes: Add
// and Result return only once their workers are done.
func withBackend(t *testing.T, b linalg.Backend, f func()) {
	t.Helper()
	def := linalg.Current()
	defer linalg.Use(def)
	if err := linalg.Use(b); err != nil {
		t.Fatal(err)
	}
	f()
}

// TestBackendsAgree compares streaming estimates computed with OpenBLAS
// (dsyrk for the accumulators, dsyevd for the entropies, and the C feature
// maps of package rff where the CPU has AVX2 and FMA) against the pure-Go
// path (gonum's Dsyrk and Dsyev, the Go feature maps) on the same rows, in
// one binary: every entropy, MI, DiME (permutation, analytic, jackknifed),
// standard error, permuted entropy, self term, normalized score, test
// statistic and p-value within 1e-9. Measured on the
// development machine (Debian's OpenBLAS 0.3.21): at most 5.3e-15 at alpha
// 1.01 and 2, 6e-14 to 3.6e-13 at alpha 0.5 (where the smallest eigenvalues
// count most), and the accumulators within 1.5e-16 of their total weight.
func TestBackendsAgree(t *testing.T) {
	if !linalg.OpenBLAS.Available() {
		t.Skip("OpenBLAS not compiled in (build with -tags openblas)")
	}
	cases := []struct {
		spec            synth.Spec
		kernel          vocab.Kernel
		D, P, rows      int
		block, workers  int
		halfLife, alpha float64
	}{
		{synth.Spec{Kind: synth.Gaussian, Dim: 10, MI: 2, Seed: 1}, vocab.Gaussian, 128, 5, 20000, 4096, 2, 0, 1.01},
		{synth.Spec{Kind: synth.Gaussian, Dim: 10, MI: 2, Seed: 1}, vocab.Gaussian, 128, 0, 20000, 4096, 2, 0, 1.01},
		{synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 2}, vocab.Laplacian, 64, 3, 9000, 1000, 1, 0, 2},
		{synth.Spec{Kind: synth.Independent, Dim: 3, Seed: 3}, vocab.Elliptical, 32, 4, 12000, 3000, 3, 4000, 0.5},
	}
	for _, c := range cases {
		name := fmt.Sprintf("%v d=%d %v D=%d P=%d workers=%d half-life %v alpha %v", c.spec.Kind, c.spec.Dim, c.kernel, c.D, c.P, c.workers, c.halfLife, c.alpha)
		x, y := rows(t, c.spec, c.rows)
		var res [2]Result
		var est [2]*Estimator
		for i, b := range []linalg.Backend{linalg.Gonum, linalg.OpenBLAS} {
			withBackend(t, b, func() {
				cfg := testConfig(c.spec.Dim, c.D, c.P, 7)
				cfg.Kernel, cfg.Workers, cfg.HalfLife, cfg.Alpha = c.kernel, c.workers, c.halfLife, c.alpha
				e, err := New(c.spec.Dim, c.spec.Dim, cfg)
				if err != nil {
					t.Fatal(err)
				}
				addBlocks(t, e, x, y, c.spec.Dim, c.block)
				if res[i], err = e.Result(); err != nil {
					t.Fatalf("%s, %v: %v", name, b, err)
				}
				est[i] = e
			})
		}
		got, want := res[1], res[0]
		pairs := [][2]float64{
			{got.EntropyX, want.EntropyX}, {got.EntropyY, want.EntropyY}, {got.EntropyJoint, want.EntropyJoint},
			{got.MutualInformation, want.MutualInformation}, {got.DiME, want.DiME}, {got.DiMEStdErr, want.DiMEStdErr},
			{got.DiMEAnalytic, want.DiMEAnalytic}, {got.EntropyProduct, want.EntropyProduct}, {got.PValue, want.PValue},
			{got.EffectiveRows, want.EffectiveRows}, {got.DiMESelfX, want.DiMESelfX}, {got.DiMESelfY, want.DiMESelfY},
			{got.DiMENormalized, want.DiMENormalized}, {got.TestStatistic, want.TestStatistic},
			{got.PValuePermutations, want.PValuePermutations},
		}
		for k := range want.EntropyPermuted {
			pairs = append(pairs, [2]float64{got.EntropyPermuted[k], want.EntropyPermuted[k]})
		}
		var worst float64
		for k, p := range pairs {
			if math.IsNaN(p[0]) && math.IsNaN(p[1]) {
				continue
			}
			d := math.Abs(p[0] - p[1])
			worst = math.Max(worst, d)
			if !(d <= 1e-9) {
				t.Errorf("%s: value %d is %.17g with OpenBLAS, %.17g in pure Go", name, k, p[0], p[1])
			}
		}
		var acc float64
		for k, a := range est[1].accumulators() {
			g, w := a.Sum(), est[0].accumulators()[k].Sum()
			for i := 0; i < g.SymmetricDim(); i++ {
				for j := i; j < g.SymmetricDim(); j++ {
					acc = math.Max(acc, math.Abs(g.At(i, j)-w.At(i, j))/float64(est[0].rows))
				}
			}
		}
		t.Logf("%s: results differ by at most %.2g, accumulators by %.2g of the total weight", name, worst, acc)
		if !(acc <= 1e-13) {
			t.Errorf("%s: accumulators differ by %.3g of the total weight", name, acc)
		}
	}
}
