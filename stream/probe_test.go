package stream

import (
	"sort"
	"testing"

	"github.com/dime-project/dime/synth"
)

func TestProbeTail(t *testing.T) {
	for _, c := range []struct{ n, D, d int }{{2500, 64, 2}, {2500, 256, 2}} {
		const sets = 1000
		ps := make([]float64, 0, sets)
		for s := 0; s < sets; s++ {
			e, _ := New(c.d, c.d, testConfig(c.d, c.D, 5, uint64(s+1)))
			feed(t, e, synth.Spec{Kind: synth.Independent, Dim: c.d, Seed: uint64(20000 + s)}, c.n, 4096)
			r, _ := e.Result()
			ps = append(ps, r.PValue)
		}
		sort.Float64s(ps)
		frac := func(th float64) float64 { i := sort.SearchFloat64s(ps, th); return float64(i) / sets }
		t.Logf("n=%d D=%d: p<0.001 %.3f p<0.01 %.3f p<0.05 %.3f p<0.1 %.3f p<0.5 %.3f", c.n, c.D, frac(0.001), frac(0.01), frac(0.05), frac(0.1), frac(0.5))
	}
}
