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

// BenchmarkEstimate measures the whole exact estimate: entropies of X and Y,
// MI and DiME (P + 3 eigenproblems).
func BenchmarkEstimate(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			x, y := toy(b, synth.Gaussian, 10, 4, n, 1)
			b.ResetTimer()
			for range b.N {
				if _, err := Estimate(x, y, DefaultConfig()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
