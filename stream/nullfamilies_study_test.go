package stream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// heldOutFamilies are the null families of the held-out study of the
// default DiME: other generators than the tuning nulls' (heldOutNulls:
// PCG, NormFloat64, Student-t as Z/√(χ²/3), Y uniform on 0..4), here
// ChaCha8 and inverse distribution functions, Y binomial, and a table in
// real units made here (ages, incomes, counts, measurements spanning
// 1e-3 to 1e7).
var heldOutFamilies = []struct {
	name       string
	dimX, dimY int
	draw       func(r *rand.Rand, x, y []float64)
}{
	{"lognormal d=2", 2, 2, func(r *rand.Rand, x, y []float64) {
		for _, v := range [][]float64{x, y} {
			for i := range v {
				v[i] = 3 * math.Exp(1.2*normQ(r))
			}
		}
	}},
	{"outliers d=2", 2, 2, func(r *rand.Rand, x, y []float64) {
		for _, v := range [][]float64{x, y} {
			for i := range v {
				v[i] = normQ(r)
				if r.Float64() < 0.05 {
					v[i] = 50
					if r.Uint64()&1 == 0 {
						v[i] = -50
					}
				}
			}
		}
	}},
	{"student-t d=2", 2, 2, func(r *rand.Rand, x, y []float64) {
		for _, v := range [][]float64{x, y} {
			for i := range v {
				v[i] = t3Q(r)
			}
		}
	}},
	{"discrete d=2", 2, 2, func(r *rand.Rand, x, y []float64) {
		for i := range x {
			x[i] = t3Q(r)
		}
		for i := range y {
			var b float64
			for range 4 {
				if r.Float64() < 0.5 {
					b++
				}
			}
			y[i] = b
		}
	}},
	{"gaussian d=1", 1, 1, gaussQ},
	{"gaussian d=2", 2, 2, gaussQ},
	{"gaussian d=10", 10, 10, gaussQ},
	{"real units d=2", 2, 2, func(r *rand.Rand, x, y []float64) {
		x[0] = float64(18 + r.IntN(73))                // age in years
		x[1] = 20000 * math.Pow(1-r.Float64(), -1/2.5) // income, Pareto(2.5)
		y[0] = float64(poissonQ(r, 3*r.ExpFloat64()))  // a count, overdispersed
		y[1] = 1e-3 * math.Pow(10, 10*r.Float64())     // a measurement, 1e-3 … 1e7
	}},
}

func normQ(r *rand.Rand) float64 { return distuv.UnitNormal.Quantile(r.Float64()) }
func t3Q(r *rand.Rand) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: 3}.Quantile(r.Float64())
}
func gaussQ(r *rand.Rand, x, y []float64) {
	for _, v := range [][]float64{x, y} {
		for i := range v {
			v[i] = normQ(r)
		}
	}
}
func poissonQ(r *rand.Rand, lambda float64) int {
	n := 0
	for t := r.ExpFloat64(); t < lambda; t += r.ExpFloat64() {
		n++
	}
	return n
}

// TestNullFamiliesStudy prints, when DIME_NULLS is the number of datasets
// per family, the mean of the default DiME under independence per family
// (heldOutFamilies; DIME_NULLS_ROWS rows, default 5000; data seeds
// DIME_NULLS_SEED + 1000000·family + i, ChaCha8; DIME_NULLS_ONLY a comma
// list of families), with its standard error over the datasets, the mean
// reported dime_stderr beside the datasets' spread, how often dime_ci95
// covers 0 and how many p-values are at most 0.05.
func TestNullFamiliesStudy(t *testing.T) {
	v := os.Getenv("DIME_NULLS")
	if v == "" {
		t.Skip("set DIME_NULLS to the number of datasets per family")
	}
	datasets, _ := strconv.Atoi(v)
	N := 5000
	if s := os.Getenv("DIME_NULLS_ROWS"); s != "" {
		N, _ = strconv.Atoi(s)
	}
	seed := uint64(2260000000)
	if s := os.Getenv("DIME_NULLS_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	for fi, k := range heldOutFamilies {
		if only := os.Getenv("DIME_NULLS_ONLY"); only != "" && !strings.Contains(only, k.name) {
			continue
		}
		var dimes, ses []float64
		var cover, p05 int
		for i := range datasets {
			s := seed + uint64(fi)*1000000 + uint64(i)
			var key [32]byte
			for j := range 8 {
				key[j] = byte(s >> (8 * j))
			}
			r := rand.New(rand.NewChaCha8(key))
			x, y := make([]float64, N*k.dimX), make([]float64, N*k.dimY)
			for row := range N {
				k.draw(r, x[row*k.dimX:(row+1)*k.dimX], y[row*k.dimY:(row+1)*k.dimY])
			}
			cfg := DefaultConfig()
			cfg.SkipNormalized, cfg.Workers = true, 1
			if g := os.Getenv("DIME_NULLS_GROUPS"); g != "" {
				cfg.Groups, _ = strconv.Atoi(g)
			}
			e, err := New(k.dimX, k.dimY, cfg)
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off < N; off += 10000 {
				b := min(10000, N-off)
				if err := e.Add(x[off*k.dimX:(off+b)*k.dimX], y[off*k.dimY:(off+b)*k.dimY], b); err != nil {
					t.Fatal(err)
				}
			}
			res, err := e.Result()
			if err != nil {
				t.Fatal(err)
			}
			dimes, ses = append(dimes, res.DiME), append(ses, res.DiMEStdErr)
			if res.DiMELow <= 0 && 0 <= res.DiMEHigh {
				cover++
			}
			if res.PValue <= 0.05 {
				p05++
			}
		}
		m, se := meanSE(dimes)
		ms, _ := meanSE(ses)
		sd := se * math.Sqrt(float64(len(dimes)))
		fmt.Printf("| %s | %d | %d | %+.6f ± %.6f | %+.1f | %.5f | %.5f | %d | %d |\n", k.name, N, len(dimes), m, se, m/se, sd, ms, cover, p05)
	}
}
