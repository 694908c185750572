package stream

import (
	"runtime"
	"testing"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/synth"
)

// resultBytes returns the fewest bytes that Result allocated over a few
// calls on e (warmed up first), from runtime.MemStats.TotalAlloc: the
// least is the one least disturbed by the runtime's own allocations.
func resultBytes(t *testing.T, e *Estimator) uint64 {
	t.Helper()
	if _, err := e.Result(); err != nil {
		t.Fatal(err)
	}
	best := ^uint64(0)
	var before, after runtime.MemStats
	for range 3 {
		runtime.ReadMemStats(&before)
		if _, err := e.Result(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		best = min(best, after.TotalAlloc-before.TotalAlloc)
	}
	return best
}

// TestResultAllocations bounds the memory a Result allocates, so that the
// scratch of the default estimator (the sums over all groups and over all
// but one, the products of marginals, the test's moments: about 60
// matrices of (2D)² float64 when they were formed, with the test's
// moments: 197 MB per Result of dime score at the defaults' D = 256,
// measured by runtime.MemStats.TotalAlloc) does not come back. Result now writes every matrix straight
// into the scratch of the goroutine computing its entropy: it allocates
// one (2D)² matrix per such goroutine (at most GOMAXPROCS), one for the
// test's null covariance, and eigensolver workspaces and small slices.
// Measured at D = 64, K = 4 with the self terms, GOMAXPROCS = 2 (pure
// Go): 4.1 matrices' worth, where the Result of before allocated 96.7; the
// bound is GOMAXPROCS + 3 matrices.
func TestResultAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates more (12.5 matrices' worth measured)")
	}
	const D, d = 64, 3
	cfg := testConfig(d, D, 0, 1)
	e, err := New(d, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// 16 rounds of 4 chunks of 256 rows: every group holds self chunks.
	feed(t, e, synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: 3}, 16*4*256, 4096)
	matrix := uint64(2*D) * uint64(2*D) * 8
	got := resultBytes(t, e)
	bound := uint64(runtime.GOMAXPROCS(0)+3) * matrix
	t.Logf("Result allocated %d bytes: %.2f matrices of (2D)² float64 (GOMAXPROCS %d)", got, float64(got)/float64(matrix), runtime.GOMAXPROCS(0))
	if got > bound {
		t.Errorf("Result allocated %d bytes, %.1f matrices of (2D)² float64; want at most %d (GOMAXPROCS + 3)",
			got, float64(got)/float64(matrix), runtime.GOMAXPROCS(0)+3)
	}
}

// TestEstimatorAccumulatorBytes is the memory guard of the accumulators at
// the dime commands' defaults (D = 256, K = 4 groups of 7 accumulators, the
// normalized score's self terms): New allocates the packed triangles,
// 28 × covariance.StoredSize(256) = 28.9 MiB, where the dense matrices of
// before took 28 × 2 MiB = 56 MiB. Measured (runtime.MemStats.TotalAlloc
// over New, d = 10 per view): 28.9 MiB, the feature maps and the
// estimator's other state being a few KiB; the bound is the packed
// triangles plus 4 MiB, well under the dense matrices' 56 MiB.
func TestEstimatorAccumulatorBytes(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates more")
	}
	cfg := DefaultConfig()
	const d = 10
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e, err := New(d, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got := after.TotalAlloc - before.TotalAlloc
	accs := len(e.accumulators())
	packed := uint64(accs) * uint64(covariance.StoredSize(cfg.Features))
	dense := uint64(accs) * uint64(2*cfg.Features) * uint64(2*cfg.Features) * 8
	t.Logf("New at the defaults allocated %.1f MiB: %d accumulators, %.1f MiB packed (%.1f MiB dense)", float64(got)/(1<<20), accs, float64(packed)/(1<<20), float64(dense)/(1<<20))
	if bound := packed + 4<<20; got > bound {
		t.Errorf("New at the defaults allocated %d bytes, want at most %d (%d packed accumulators + 4 MiB)", got, bound, accs)
	}
	runtime.KeepAlive(e)
}
