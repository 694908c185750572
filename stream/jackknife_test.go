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

// generalizedJackknife is extrapolate with the default basis.
func generalizedJackknife(all float64, loo, n, l2o, n2 []float64) (float64, bool) {
	return extrapolate(all, n, []jackLevel{{loo, n}, {l2o, n2}}, []func(float64) float64{invX, logInvX})
}

// TestHigherOrderJackknifesExact: the second-order jackknife removes
// b/n + c/n² exactly, the third-order one a·(log n)/n + b/n + c/n², with
// equal and unequal groups.
func TestHigherOrderJackknifesExact(t *testing.T) {
	const theta, a, b, c = 0.25, 7.5, -30.0, -17500.0
	for _, groups := range [][]float64{{1250, 1250, 1250, 1250}, {1250, 1100, 1400, 1000}, {900, 800, 700, 600, 500}} {
		var N float64
		for _, g := range groups {
			N += g
		}
		for _, withLog := range []bool{false, true} {
			stat := func(n float64) float64 {
				v := theta + b/n + c/(n*n)
				if withLog {
					v += a * math.Log(n) / n
				}
				return v
			}
			var levels [3]jackLevel
			K := len(groups)
			for i := range K {
				levels[0].vals, levels[0].removed = append(levels[0].vals, stat(N-groups[i])), append(levels[0].removed, groups[i])
				for j := i + 1; j < K; j++ {
					r := groups[i] + groups[j]
					levels[1].vals, levels[1].removed = append(levels[1].vals, stat(N-r)), append(levels[1].removed, r)
					for k := j + 1; k < K; k++ {
						r := groups[i] + groups[j] + groups[k]
						levels[2].vals, levels[2].removed = append(levels[2].vals, stat(N-r)), append(levels[2].removed, r)
					}
				}
			}
			third, ok3 := extrapolate(stat(N), groups, levels[:], []func(float64) float64{invX, logInvX, invX2})
			if !ok3 || math.Abs(third-theta) > 1e-9 {
				t.Errorf("groups %v, log term %v: third-order %v (ok %v), want %v", groups, withLog, third, ok3, theta)
			}
			second, ok2 := extrapolate(stat(N), groups, levels[:2], []func(float64) float64{invX, invX2})
			if !withLog && (!ok2 || math.Abs(second-theta) > 1e-9) {
				t.Errorf("groups %v: second-order %v (ok %v), want %v", groups, second, ok2, theta)
			}
		}
	}
}
