package rank

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/stream"
)

// table returns n rows of c candidate columns and a target (the last
// column): candidate j < dep depends on the target through a nonlinear
// shape (Pearson correlation about 0) of decreasing strength, the others are
// independent noise in arbitrary units.
func table(n, c, dep int, seed uint64) []float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	W := c + 1
	out := make([]float64, n*W)
	for i := range n {
		row := out[i*W : (i+1)*W]
		y := r.NormFloat64()
		row[c] = 3 + 2*y
		for j := range c {
			e := r.NormFloat64()
			switch {
			case j < dep:
				s := 1.5 / float64(1+j) // strength falls with j
				switch j % 3 {
				case 0:
					row[j] = s*(y*y-1) + e
				case 1:
					row[j] = s*math.Abs(y)*2 + e
				default:
					row[j] = s*math.Cos(2*y)*2 + e
				}
			default:
				row[j] = e
			}
			row[j] = row[j]*float64(1+j*10) + float64(j) // real units
		}
	}
	return out
}

// rankPlan ranks the first c columns of a table against its last.
func rankPlan(c int) Plan {
	p := Plan{Width: c + 1}
	for j := range c {
		p.Views = append(p.Views, View{Name: string(rune('a' + j)), Columns: []string{string(rune('a' + j))}, Index: []int{j}})
		p.Pairs = append(p.Pairs, [2]int{j, c})
		p.OrderX = append(p.OrderX, j)
	}
	p.Views = append(p.Views, View{Name: "y", Columns: []string{"y"}, Index: []int{c}})
	p.OrderY = []int{c}
	return p
}

func testConfig(D int) stream.Config {
	c := stream.DefaultConfig()
	c.Features = D
	return c
}

// columnsOf returns the given columns of a row-major block of W columns.
func columnsOf(block []float64, W int, cols ...int) []float64 {
	n := len(block) / W
	out := make([]float64, 0, n*len(cols))
	for i := range n {
		for _, c := range cols {
			out = append(out, block[i*W+c])
		}
	}
	return out
}

// feed adds the rows in blocks of the given size to add.
func feed(t *testing.T, block []float64, W, size int, add func(b []float64, rows int) error) {
	t.Helper()
	n := len(block) / W
	for i := 0; i < n; i += size {
		m := min(size, n-i)
		if err := add(block[i*W:(i+m)*W], m); err != nil {
			t.Fatal(err)
		}
	}
}

// score runs stream.Estimator (what dime score runs) on columns x and y of
// a table, in blocks of the given size.
func score(t *testing.T, block []float64, W, size int, cfg stream.Config, x, y int) stream.Result {
	t.Helper()
	est, err := stream.New(1, 1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	feed(t, block, W, size, func(b []float64, rows int) error {
		return est.Add(columnsOf(b, W, x), columnsOf(b, W, y), rows)
	})
	r, err := est.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func relDiff(a, b float64) float64 {
	if a == b {
		return 0
	}
	return math.Abs(a-b) / math.Max(math.Abs(a), math.Abs(b))
}

// TestOneCandidateIsScore: a ranking of one candidate is dime score's
// estimate of that pair, field by field, with the same blocks of rows
// (pooled small blocks and blocks of their own, the pilot rows held back).
func TestOneCandidateIsScore(t *testing.T) {
	const n, W = 7000, 4
	data := table(n, 3, 3, 11)
	for _, size := range []int{700, 2500} {
		cfg := testConfig(32)
		// Column 1 against the target, column 3: a plan of one pair.
		plan := Plan{Width: W, Views: []View{{Name: "b", Columns: []string{"b"}, Index: []int{1}}, {Name: "y", Columns: []string{"y"}, Index: []int{3}}},
			Pairs: [][2]int{{0, 1}}, OrderX: []int{0}, OrderY: []int{1}}
		acc, err := New(plan, Config{Stream: cfg})
		if err != nil {
			t.Fatal(err)
		}
		feed(t, data, W, size, acc.Add)
		res, err := acc.Results()
		if err != nil {
			t.Fatal(err)
		}
		want := score(t, data, W, size, cfg, 1, 3)
		got := res[0].Result
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"dime", got.DiME, want.DiME}, {"dime_stderr", got.DiMEStdErr, want.DiMEStdErr},
			{"dime_normalized", got.DiMENormalized, want.DiMENormalized}, {"p_value", got.PValue, want.PValue},
			{"entropy_joint", got.EntropyJoint, want.EntropyJoint}, {"dime_analytic", got.DiMEAnalytic, want.DiMEAnalytic},
			{"sigma_x", got.SigmaX, want.SigmaX}, {"self_y", got.DiMESelfY, want.DiMESelfY},
		} {
			// Bit for bit: the same rows, chunks, groups and float32 sums.
			if f.got != f.want {
				t.Errorf("blocks of %d: %s %v, score %v", size, f.name, f.got, f.want)
			}
		}
		if got.Rows != n || res[0].Rank != 1 || res[0].QValue != got.PValue {
			t.Errorf("rows %d rank %d q %v p %v", got.Rows, res[0].Rank, res[0].QValue, got.PValue)
		}
	}
}

// TestManyCandidatesMatchScore: in a ranking of several candidates each
// pair's quantities that do not depend on how rows are grouped (entropies
// of the sums, plug-in DiME, the test) equal dime score's of that pair to
// round-off (float64 products: the rows are grouped by a hash of every
// candidate, not of the pair's own rows), and its jackknifed DiME agrees
// within the jackknife's noise.
func TestManyCandidatesMatchScore(t *testing.T) {
	const n, c = 6000, 5
	W := c + 1
	data := table(n, c, 3, 12)
	cfg := testConfig(32)
	cfg.Precision = covariance.Float64
	acc, err := New(rankPlan(c), Config{Stream: cfg})
	if err != nil {
		t.Fatal(err)
	}
	feed(t, data, W, 1500, acc.Add)
	res, err := acc.Results()
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	defer func() { t.Logf("largest relative difference %.2g", worst) }()
	for j := range c {
		want := score(t, data, W, 1500, cfg, j, c)
		got := res[j]
		for _, f := range []struct {
			name      string
			got, want float64
		}{
			{"entropy_x", got.EntropyX, want.EntropyX}, {"entropy_y", got.EntropyY, want.EntropyY},
			{"entropy_joint", got.EntropyJoint, want.EntropyJoint}, {"dime_analytic", got.DiMEAnalytic, want.DiMEAnalytic},
			{"p_value", got.PValue, want.PValue}, {"test_statistic", got.TestStatistic, want.TestStatistic},
		} {
			// Measured: at most 8.6e-12 relative (summation order of
			// the groups' sums).
			d := relDiff(f.got, f.want)
			worst = max(worst, d)
			if d > 1e-9 {
				t.Errorf("candidate %d: %s %v, score %v (relative %.2g)", j, f.name, f.got, f.want, d)
			}
		}
		if d := math.Abs(got.DiME - want.DiME); d > 4*math.Hypot(got.DiMEStdErr, want.DiMEStdErr) {
			t.Errorf("candidate %d: DiME %v ± %v, score %v ± %v", j, got.DiME, got.DiMEStdErr, want.DiME, want.DiMEStdErr)
		}
	}
}

// TestQValues: Benjamini–Hochberg as R's p.adjust(p, "BH") gives it
// (p.adjust(c(.01, .04, .03, .005), "BH") = .02 .04 .04 .02), NaN kept
// out of the count, ties and ones.
func TestQValues(t *testing.T) {
	for _, c := range []struct{ p, want []float64 }{
		{[]float64{0.01, 0.04, 0.03, 0.005, math.NaN()}, []float64{0.02, 0.04, 0.04, 0.02, math.NaN()}},
		{[]float64{0.5, 0.5, 1}, []float64{0.75, 0.75, 1}},
		{[]float64{0.9, 0.001}, []float64{0.9, 0.002}},
		{nil, []float64{}},
	} {
		got := QValues(c.p)
		for i := range c.want {
			if !(math.Abs(got[i]-c.want[i]) < 1e-15 || math.IsNaN(got[i]) && math.IsNaN(c.want[i])) {
				t.Errorf("QValues(%v) = %v, want %v", c.p, got, c.want)
				break
			}
		}
	}
}

// TestScaleFree: multiplying a candidate by 1e4 and shifting the target by
// 1e6 changes no estimate by more than 1e-6 relative (standardized columns;
// the scopes' order is hashed from them rounded to float32). Measured:
// 1.7e-7 (float32 products round the features' last bits differently).
func TestScaleFree(t *testing.T) {
	const n, c = 5000, 3
	W := c + 1
	data := table(n, c, 2, 41)
	moved := append([]float64{}, data...)
	for i := range n {
		moved[i*W+1] *= 1e4
		moved[i*W+c] += 1e6
	}
	var res [2][]PairResult
	for k, d := range [][]float64{data, moved} {
		acc, err := New(rankPlan(c), Config{Stream: testConfig(16)})
		if err != nil {
			t.Fatal(err)
		}
		feed(t, d, W, 1000, acc.Add)
		if res[k], err = acc.Results(); err != nil {
			t.Fatal(err)
		}
	}
	var worst float64
	for j := range c {
		a, b := res[0][j], res[1][j]
		for _, f := range [][2]float64{{a.DiME, b.DiME}, {a.DiMEStdErr, b.DiMEStdErr}, {a.DiMENormalized, b.DiMENormalized}, {a.PValue, b.PValue}, {a.EntropyJoint, b.EntropyJoint}} {
			worst = max(worst, relDiff(f[0], f[1]))
		}
	}
	t.Logf("largest relative change %.2g", worst)
	if worst > 1e-6 {
		t.Errorf("rescaling moved an estimate by %.2g relative", worst)
	}
}

// floatFields returns every float64 field of a PairResult (and of its
// embedded stream.Result and Config), by name, as bits.
func floatFields(r PairResult) map[string]uint64 {
	out := map[string]uint64{}
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		for i := range v.NumField() {
			f, name := v.Field(i), prefix+v.Type().Field(i).Name
			switch f.Kind() {
			case reflect.Float64:
				out[name] = math.Float64bits(f.Float())
			case reflect.Struct:
				walk(f, name+".")
			}
		}
	}
	walk(reflect.ValueOf(r), "")
	return out
}

// TestSharedViewTermsAreExact: a view's entropy and self terms, computed
// once for every pair that shares the view (the target of a ranking; each
// view of a matrix), give every pair's result to the bit, as computing
// them for each pair does.
func TestSharedViewTermsAreExact(t *testing.T) {
	const n, c = 4000, 4
	W := c + 1
	data := table(n, c, 2, 43)
	matrix := Plan{Width: W}
	for j := range W {
		matrix.Views = append(matrix.Views, View{Name: string(rune('a' + j)), Columns: []string{string(rune('a' + j))}, Index: []int{j}})
		matrix.OrderX = append(matrix.OrderX, j)
		for k := j + 1; k < W; k++ {
			matrix.Pairs = append(matrix.Pairs, [2]int{j, k})
		}
	}
	for name, plan := range map[string]Plan{"rank": rankPlan(c), "matrix": matrix} {
		// Float64 products: sums of groups whose last bits depend on the
		// order of additions.
		cfg := testConfig(16)
		cfg.Precision = covariance.Float64
		var res [2][]PairResult
		for k, noShare := range []bool{false, true} {
			acc, err := New(plan, Config{Stream: cfg})
			if err != nil {
				t.Fatal(err)
			}
			acc.noShare = noShare
			feed(t, data, W, 1000, acc.Add)
			if res[k], err = acc.Results(); err != nil {
				t.Fatal(err)
			}
		}
		for i := range res[0] {
			got, want := floatFields(res[0][i]), floatFields(res[1][i])
			if len(got) < 20 {
				t.Fatalf("%d float fields", len(got))
			}
			for f, b := range want {
				if got[f] != b {
					t.Errorf("%s, pair %v: %s %v shared, %v each", name, plan.Pairs[i], f, math.Float64frombits(got[f]), math.Float64frombits(b))
				}
			}
			if math.IsNaN(res[0][i].DiMENormalized) || math.IsNaN(res[0][i].EntropyY) {
				t.Errorf("%s, pair %v: no normalized score or entropy of y", name, plan.Pairs[i])
			}
		}
	}
}
