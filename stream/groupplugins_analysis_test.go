package stream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"os"
	"testing"
)

func invX3(x float64) float64 { return 1 / (x * x * x) }

// TestGroupPluginsAnalysis reads DIME_PLUGINS_IN (the output of
// TestGroupPluginsStudy) and prints, per family, the mean plug-in without 0
// to 3 groups and the mean, spread, standard error and t(7) coverage of 0
// of several jackknifes computed from the same plug-ins.
func TestGroupPluginsAnalysis(t *testing.T) {
	in := os.Getenv("DIME_PLUGINS_IN")
	if in == "" {
		t.Skip("set DIME_PLUGINS_IN")
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byFam := map[string][]pluginRecord{}
	var order []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var r pluginRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := byFam[r.Family]; !ok {
			order = append(order, r.Family)
		}
		byFam[r.Family] = append(byFam[r.Family], r)
	}
	type variant struct {
		name  string
		basis []func(float64) float64
		pick  func(m uint64) bool // which sets of the level to use
	}
	all := func(uint64) bool { return true }
	cyc := func(m uint64) bool { // triples {k, k+1, k+3} mod 8
		for k := 0; k < 8; k++ {
			if m == 1<<k|1<<((k+1)%8)|1<<((k+3)%8) {
				return true
			}
		}
		return bits.OnesCount64(m) < 3
	}
	variants := []variant{
		{"group", nil, all},
		{"gen(1/x,logx/x)", []func(float64) float64{invX, logInvX}, all},
		{"2nd(1/x,1/x2)", []func(float64) float64{invX, invX2}, all},
		{"3rd(1/x,logx/x,1/x2)", []func(float64) float64{invX, logInvX, invX2}, all},
		{"3rd cyc", []func(float64) float64{invX, logInvX, invX2}, cyc},
		{"poly3(1/x,1/x2,1/x3)", []func(float64) float64{invX, invX2, invX3}, all},
	}
	for _, fam := range order {
		recs := byFam[fam]
		// plug-in by level
		line := fmt.Sprintf("%-16s n=%d (%d):", fam, recs[0].Rows, len(recs))
		for lev := 0; lev <= 3; lev++ {
			var v []float64
			for _, r := range recs {
				var s float64
				var c int
				for j, m := range r.Masks {
					if bits.OnesCount64(m) == lev {
						s += r.Plugins[j]
						c++
					}
				}
				v = append(v, s/float64(c))
			}
			m, se := meanSE(v)
			line += fmt.Sprintf(" L%d %.5f±%.5f", lev, m, se)
		}
		fmt.Println(line)
		for _, va := range variants {
			var est, ses []float64
			for _, r := range recs {
				var loo, n []float64
				levels := make([]jackLevel, 3)
				var all0 float64
				for j, m := range r.Masks {
					var rem float64
					for g := range r.Groups {
						if m&(1<<g) != 0 {
							rem += r.Groups[g]
						}
					}
					c := bits.OnesCount64(m)
					switch {
					case c == 0:
						all0 = r.Plugins[j]
					case c == 1:
						loo, n = append(loo, r.Plugins[j]), append(n, rem)
					}
					if c >= 1 && va.pick(m) {
						levels[c-1].vals = append(levels[c-1].vals, r.Plugins[j])
						levels[c-1].removed = append(levels[c-1].removed, rem)
					}
				}
				// n must be group weights in group order
				n = r.Groups
				g, se := jackknife(all0, loo, n)
				if va.basis != nil {
					var ok bool
					g2, ok := extrapolate(all0, n, levels[:len(va.basis)], va.basis)
					if !ok {
						t.Fatalf("%s: singular", va.name)
					}
					se = math.Hypot(se, g2-g)
					g = g2
				}
				est, ses = append(est, g), append(ses, se)
			}
			m, se := meanSE(est)
			ms, _ := meanSE(ses)
			var sd float64
			for _, v := range est {
				sd += (v - m) * (v - m)
			}
			sd = math.Sqrt(sd / float64(len(est)-1))
			// coverage with t(7)
			cov := 0
			for k := range est {
				if math.Abs(est[k]) <= 2.365*ses[k] {
					cov++
				}
			}
			fmt.Printf("    %-22s %+.6f ± %.6f (z %+.1f) sd %.5f mean se %.5f t7cov %d/%d\n", va.name, m, se, m/se, sd, ms, cov, len(est))
		}
	}
}
