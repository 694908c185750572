package exact

import (
	"fmt"
	"testing"

	"github.com/dime-project/dime/synth"
)

// Benchmarks of exact DiME, d = 10 columns per view, P = 5 permutations, on
// the paper's toy with 4 nats of true MI. Targets on 2 cores in pure Go
// (issues 2 and 6): n = 1024 in at most 2 s; with -tags openblas, DiME at
// n = 1024 in at most 0.3 s.
//
//	go test ./exact -run '^$' -bench . -benchtime 3x
//	go test -tags openblas ./exact -run '^$' -bench . -benchtime 10x

// BenchmarkDiME measures DiME from data: two Gram matrices and the P + 1
// eigenproblems of the joint and permuted joint entropies.
func BenchmarkDiME(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, y := toy(b, synth.Gaussian, 10, 4, n, 1)
			perms := Permutations(n, 5, 1)
			b.ResetTimer()
			for range b.N {
				kx := mustGram(b, Gaussian, FixedSigma(10), x)
				ky := mustGram(b, Gaussian, FixedSigma(10), y)
				if _, err := DiME(kx, ky, 1.01, perms); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkEstimate measures the whole exact estimate at the defaults
// (entropies of X and Y, MI, DiME, the HSIC test and the normalized score:
// 3P + 7 = 22 eigenproblems), and in two lighter settings: "hsic" without
// the normalized score (P + 5 = 10) and "paper", the estimate before issue
// 12, with the permutation test of the P permutations of DiME and no
// normalized score (P + 3 = 8).
func BenchmarkEstimate(b *testing.B) {
	settings := []struct {
		name string
		cfg  func() Config
	}{
		{"default", DefaultConfig},
		{"hsic", func() Config { c := DefaultConfig(); c.SkipNormalized = true; return c }},
		{"paper", func() Config {
			c := DefaultConfig()
			c.SkipNormalized, c.TestPermutations = true, c.Permutations
			return c
		}},
	}
	for _, n := range []int{256, 1024} {
		for _, s := range settings {
			b.Run(fmt.Sprintf("n=%d/%s", n, s.name), func(b *testing.B) {
				x, y := toy(b, synth.Gaussian, 10, 4, n, 1)
				cfg := s.cfg()
				b.ResetTimer()
				for range b.N {
					if _, err := Estimate(x, y, cfg); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkHSICTest measures the default p-value alone (Grams given) at
// n = 1024: on independent data (sequential stopping after about 100
// pairings) and on dependent data (z ≈ 330: Cantelli's bound skips the
// pairings; the two eigenproblems of the spectral tail).
func BenchmarkHSICTest(b *testing.B) {
	for _, kind := range []synth.Kind{synth.Independent, synth.Gaussian} {
		b.Run(kind.String(), func(b *testing.B) {
			x, y := toy(b, kind, 10, 4, 1024, 1)
			kx := mustGram(b, Gaussian, FixedSigma(10), x)
			ky := mustGram(b, Gaussian, FixedSigma(10), y)
			b.ResetTimer()
			for i := range b.N {
				if _, err := HSICTest(kx, ky, HSICOptions{Seed: uint64(i)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
