package rank

import (
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/synth"
)

// The studies behind dime rank's defaults and CALIBRATION.md: run with
// DIME_RANK_STUDY=screening (the choice of D, on tuning seeds 1–6, or on
// DIME_RANK_TABLES held-out seeds from DIME_RANK_SEED, at the D of
// DIME_RANK_DS, e.g. 32,64) or
// DIME_RANK_STUDY=calibration (held-out seeds 1000–1099, or 100 from
// DIME_RANK_SEED; DIME_RANK_ROWS rows, DIME_RANK_D frequencies), e.g.
//
//	DIME_RANK_STUDY=calibration GOMAXPROCS=1 go test ./rank -run TestStudy -v -timeout 3h

// screenTable returns rows of a synth.Screen table of 40 candidates, its
// plan and its dependent columns' indices, strongest first.
func screenTable(t *testing.T, rows int, seed uint64) ([]float64, Plan, []int) {
	t.Helper()
	s, err := synth.NewScreen(40, seed)
	if err != nil {
		t.Fatal(err)
	}
	cols := s.Columns()
	data := make([]float64, rows*len(cols))
	s.Fill(data)
	p := Plan{Width: len(cols)}
	for j := 1; j < len(cols); j++ {
		p.Views = append(p.Views, View{Name: cols[j], Columns: cols[j : j+1], Index: []int{j}})
		p.Pairs = append(p.Pairs, [2]int{j - 1, 40})
		p.OrderX = append(p.OrderX, j-1)
	}
	p.Views = append(p.Views, View{Name: "y", Columns: []string{"y"}, Index: []int{0}})
	p.OrderY = []int{40}
	var dep []int
	for _, name := range s.Dependent() {
		j, _ := strconv.Atoi(name[1:])
		dep = append(dep, j)
	}
	return data, p, dep
}

// cpuSeconds returns the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// rankTable ranks a table at D features; it returns the results and the
// CPU seconds of adding the rows and of the results.
func rankTable(t *testing.T, data []float64, plan Plan, D int) ([]PairResult, *Accumulator, float64, float64) {
	t.Helper()
	cfg := testConfig(D)
	acc, err := New(plan, Config{Stream: cfg})
	if err != nil {
		t.Fatal(err)
	}
	c0 := cpuSeconds()
	feed(t, data, plan.Width, 16384, acc.Add)
	if err := acc.Flush(); err != nil {
		t.Fatal(err)
	}
	c1 := cpuSeconds()
	res, err := acc.Results()
	if err != nil {
		t.Fatal(err)
	}
	return res, acc, c1 - c0, cpuSeconds() - c1
}

// topInOrder reports whether the first len(dep) ranks are dep, in order.
func topInOrder(res []PairResult, dep []int) bool {
	for k, j := range dep {
		if res[j].Rank != k+1 {
			return false
		}
	}
	return true
}

// spearman returns the rank correlation of a and b.
func spearman(a, b []float64) float64 {
	ra, rb := ranks(a), ranks(b)
	return stat.Correlation(ra, rb, nil)
}

func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(i, j int) bool { return v[idx[i]] < v[idx[j]] })
	r := make([]float64, len(v))
	for k, i := range idx {
		r[i] = float64(k)
	}
	return r
}

// exactDiME returns exact DiME of candidate j with the target on the
// first n rows of a table, standardized with the accumulator's scales, at
// the fixed bandwidths, with P permutations.
func exactDiME(t *testing.T, data []float64, plan Plan, acc *Accumulator, j, n, P int) float64 {
	t.Helper()
	center, scale := acc.Scales()
	x, y := make([]float64, n), make([]float64, n)
	W := plan.Width
	for i := range n {
		x[i] = (data[i*W+plan.Views[j].Index[0]] - center[j][0]) / scale[j][0]
		y[i] = (data[i*W+plan.Views[40].Index[0]] - center[40][0]) / scale[40][0]
	}
	s := exact.FixedSigma(1)
	kx, err := exact.Gram(nil, exact.Gaussian, s, mat.NewDense(n, 1, x))
	if err != nil {
		t.Fatal(err)
	}
	ky, err := exact.Gram(nil, exact.Gaussian, s, mat.NewDense(n, 1, y))
	if err != nil {
		t.Fatal(err)
	}
	d, err := exact.DiME(kx, ky, 1.01, exact.Permutations(n, P, 1))
	if err != nil {
		t.Fatal(err)
	}
	return d.DiME
}

func TestStudyScreeningD(t *testing.T) {
	if os.Getenv("DIME_RANK_STUDY") != "screening" {
		t.Skip("DIME_RANK_STUDY=screening runs it")
	}
	sample := 768
	rows := 20000
	if v, err := strconv.Atoi(os.Getenv("DIME_RANK_ROWS")); err == nil {
		rows = v
	}
	Ds := []int{16, 32, 64, 128, 256}
	if rows < 20000 {
		Ds, sample = Ds[:3], 512
	}
	seeds := []uint64{1, 2, 3, 4, 5, 6}
	if first, err := strconv.ParseUint(os.Getenv("DIME_RANK_SEED"), 10, 64); err == nil {
		// Held-out tables: DIME_RANK_TABLES (default 6) seeds from first.
		n := 6
		if v, err := strconv.Atoi(os.Getenv("DIME_RANK_TABLES")); err == nil && v > 0 {
			n = v
		}
		seeds = seeds[:0]
		for i := range n {
			seeds = append(seeds, first+uint64(i))
		}
	}
	if v := os.Getenv("DIME_RANK_DS"); v != "" {
		Ds = Ds[:0]
		for _, f := range strings.Split(v, ",") {
			D, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("DIME_RANK_DS: %v", err)
			}
			Ds = append(Ds, D)
		}
	}
	tables := make([][]float64, len(seeds))
	plans := make([]Plan, len(seeds))
	deps := make([][]int, len(seeds))
	exacts := make([][]float64, len(seeds))
	for i, s := range seeds {
		tables[i], plans[i], deps[i] = screenTable(t, rows, s)
	}
	for _, D := range Ds {
		var inOrder, top6 int
		var rho []float64
		var add, result float64
		for i := range seeds {
			res, acc, a, r := rankTable(t, tables[i], plans[i], D)
			add, result = add+a, result+r
			if topInOrder(res, deps[i]) {
				inOrder++
			}
			set := 0
			for _, j := range deps[i] {
				if res[j].Rank <= 6 {
					set++
				}
			}
			if set == 6 {
				top6++
			}
			if exacts[i] == nil {
				for _, j := range deps[i] {
					exacts[i] = append(exacts[i], exactDiME(t, tables[i], plans[i], acc, j, min(sample, rows), 3))
				}
				t.Logf("seed %d: exact DiME on %d rows of the six, strongest first: %.4f", seeds[i], sample, exacts[i])
			}
			var got []float64
			for _, j := range deps[i] {
				got = append(got, res[j].DiME)
			}
			rho = append(rho, spearman(got, exacts[i]))
		}
		n := float64(len(seeds))
		t.Logf("D = %3d: six on top %d/%d, in true order %d/%d, Spearman with exact on the six: mean %.3f, min %.3f; CPU per table: %.2f s adding %d rows, %.2f s results",
			D, top6, len(seeds), inOrder, len(seeds), stat.Mean(rho, nil), slices.Min(rho), add/n, rows, result/n)
	}
}

func TestStudyCalibration(t *testing.T) {
	if os.Getenv("DIME_RANK_STUDY") != "calibration" {
		t.Skip("DIME_RANK_STUDY=calibration runs it")
	}
	rows := 10000
	if v, err := strconv.Atoi(os.Getenv("DIME_RANK_ROWS")); err == nil {
		rows = v
	}
	D := 32
	if v, err := strconv.Atoi(os.Getenv("DIME_RANK_D")); err == nil {
		D = v
	}
	const tables = 100
	first := uint64(1000)
	if v, err := strconv.ParseUint(os.Getenv("DIME_RANK_SEED"), 10, 64); err == nil {
		first = v // fresh held-out seeds
	}
	var inOrder, depQ, depTotal, nullQ05, nullP05, nullP01, nullTotal, tablesWithFalse int
	var fdp []float64
	var cpu float64
	for s := first; s < first+tables; s++ {
		data, plan, dep := screenTable(t, rows, s)
		res, _, a, r := rankTable(t, data, plan, D)
		cpu += a + r
		if topInOrder(res, dep) {
			inOrder++
		}
		isDep := map[int]bool{}
		for _, j := range dep {
			isDep[j] = true
			depTotal++
			if res[j].QValue <= 0.01 {
				depQ++
			}
		}
		var disc, falseDisc int
		for j := range 40 {
			if res[j].QValue <= 0.05 {
				disc++
			}
			if isDep[j] {
				continue
			}
			nullTotal++
			if res[j].QValue <= 0.05 {
				nullQ05++
				falseDisc++
			}
			if res[j].PValue <= 0.05 {
				nullP05++
			}
			if res[j].PValue <= 0.01 {
				nullP01++
			}
		}
		if falseDisc > 0 {
			tablesWithFalse++
		}
		fdp = append(fdp, float64(falseDisc)/math.Max(1, float64(disc)))
		if done := s - first + 1; done%10 == 0 {
			t.Logf("%d tables: %d in true order, %d of %d independent at q <= 0.05, %d at p <= 0.05", done, inOrder, nullQ05, nullTotal, nullP05)
		}
	}
	t.Logf("%d held-out tables (seeds %d on) of %d rows, 40 candidates, D = %d: six on top in true order in %d; dependent with q <= 0.01: %d of %d; independent: q <= 0.05 %d of %d (%.4f), p <= 0.05 %d (%.4f), p <= 0.01 %d (%.4f); tables with a false discovery at q <= 0.05: %d; mean false discovery proportion %.4f; CPU %.1f s per table",
		tables, first, rows, D, inOrder, depQ, depTotal, nullQ05, nullTotal, float64(nullQ05)/float64(nullTotal), nullP05, float64(nullP05)/float64(nullTotal),
		nullP01, float64(nullP01)/float64(nullTotal), tablesWithFalse, stat.Mean(fdp, nil), cpu/tables)
	fmt.Fprintln(os.Stderr, "done")
}
