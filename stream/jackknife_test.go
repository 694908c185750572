package stream

import (
	"math"
	"testing"
)

// TestGeneralizedJackknifeExact checks that the generalized jackknife
// removes a bias a·(log n)/n + b/n exactly, with equal and unequal groups,
// where the group jackknife leaves K·log(K/(K−1))·a/N (equal groups), and
// that it declines fewer than 3 groups.
func TestGeneralizedJackknifeExact(t *testing.T) {
	const theta, a, b = 0.25, 7.5, -30.0
	stat := func(n float64) float64 { return theta + a*math.Log(n)/n + b/n }
	for _, groups := range [][]float64{{5000, 5000, 5000, 5000}, {5000, 4800, 5200, 4100}, {700, 900, 800}, {2500, 2500, 2500, 2500, 2500, 2500, 2500, 2500}} {
		var N float64
		for _, g := range groups {
			N += g
		}
		var loo, l2o, n2 []float64
		for k, g := range groups {
			loo = append(loo, stat(N-g))
			g2 := groups[(k+1)%len(groups)]
			l2o, n2 = append(l2o, stat(N-g-g2)), append(n2, g+g2)
		}
		est, ok := generalizedJackknife(stat(N), loo, groups, l2o, n2)
		if !ok || math.Abs(est-theta) > 1e-12 {
			t.Errorf("groups %v: generalized %v (ok %v), want %v", groups, est, ok, theta)
		}
		old, _ := jackknife(stat(N), loo, groups)
		if math.Abs(old-theta) < 1e-6 {
			t.Errorf("groups %v: the group jackknife removed the log term too (%v)", groups, old)
		}
		if len(groups) == 4 && groups[0] == groups[1] {
			K := 4.0
			if want := K * math.Log(K/(K-1)) * a / N; math.Abs(old-theta-want) > 1e-12 {
				t.Errorf("group jackknife residual %v, want K·log(K/(K−1))·a/N = %v", old-theta, want)
			}
		}
	}
	// The weights quoted in the documentation (K = 4, equal groups).
	unit := func(v0, v1, v2 float64) float64 {
		est, _ := generalizedJackknife(v0, []float64{v1, v1, v1, v1}, []float64{1, 1, 1, 1}, []float64{v2, v2, v2, v2}, []float64{2, 2, 2, 2})
		return est
	}
	for i, want := range []float64{13.77, -17.65, 4.88} {
		v := [3]float64{}
		v[i] = 1
		if got := unit(v[0], v[1], v[2]); math.Abs(got-want) > 0.006 {
			t.Errorf("weight %d: %v, want %v", i, got, want)
		}
	}
	if _, ok := generalizedJackknife(1, []float64{1, 1}, []float64{1, 1}, []float64{1}, []float64{2}); ok {
		t.Errorf("2 groups: want no generalized jackknife")
	}
}
