package stream

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// sums holds the accumulators of every group, summed: X, Y, joint, the
// means, the copies and the self joints (nil without them).
type sums struct {
	x, y, xy, cx, cy, sx, sy *covariance.Accumulator
	mx, my, mxy              *covariance.Mean
}

// totals returns the estimator's accumulators and means summed over its
// groups.
func totals(t testing.TB, e *Estimator) sums {
	t.Helper()
	var out sums
	for _, c := range []struct {
		dst *(*covariance.Accumulator)
		get func(*group) *covariance.Accumulator
	}{{&out.x, partX}, {&out.y, partY}, {&out.xy, partJoint}, {&out.cx, partCopyX}, {&out.cy, partCopyY}, {&out.sx, partSelfX}, {&out.sy, partSelfY}} {
		if parts, _ := e.parts(0, c.get); parts != nil {
			var err error
			if *c.dst, err = covariance.SumGroups(parts...); err != nil {
				t.Fatal(err)
			}
		}
	}
	var mx, my, mxy []*covariance.Mean
	for k := range e.groups {
		g := &e.groups[k]
		mx, my, mxy = append(mx, g.mx), append(my, g.my), append(mxy, g.mxy)
	}
	var err error
	if out.mx, err = covariance.SumMeanGroups(mx...); err != nil {
		t.Fatal(err)
	}
	if out.my, err = covariance.SumMeanGroups(my...); err != nil {
		t.Fatal(err)
	}
	if out.mxy, err = covariance.SumMeanGroups(mxy...); err != nil {
		t.Fatal(err)
	}
	return out
}

func testConfig(d int, D, P int, seed uint64) Config {
	return Config{Kernel: vocab.Gaussian, Alpha: 1.01, Features: D, Permutations: P, Seed: seed}
}

// feed adds n rows of spec to e in blocks of the given size.
func feed(t testing.TB, e *Estimator, spec synth.Spec, n, block int) {
	t.Helper()
	s, err := synth.NewStream(spec)
	if err != nil {
		t.Fatal(err)
	}
	x, y := make([]float64, block*spec.Dim), make([]float64, block*spec.Dim)
	for done := 0; done < n; {
		b := min(block, n-done)
		s.Fill(x[:b*spec.Dim], y[:b*spec.Dim])
		if err := e.Add(x[:b*spec.Dim], y[:b*spec.Dim], b); err != nil {
			t.Fatal(err)
		}
		done += b
	}
}

// TestStreamingRegime checks, with N ≫ D (N = 50000, D = 128, P = 5), that
// permutation and analytic DiME agree and that both are near 0 for
// independent data. Measured (seeds 1, 2): |analytic − permutation| = 0.0024
// (toy d = 20, 4 nats) and 0.0008 (sine d = 2); on independent d = 20 data
// |permutation| ≤ 0.0006 and analytic 0.0018 to 0.0028, its positive bias of
// order D/N = 0.0026 (ESTIMATORS.md section 3). Bounds are about twice the
// measured values.
func TestStreamingRegime(t *testing.T) {
	if testing.Short() {
		t.Skip("50000 rows × 3 datasets take about 9 s")
	}
	const N, block = 50000, 5000
	cases := []struct {
		spec      synth.Spec
		agreement float64 // bound on |analytic − permutation|
		nearZero  bool
	}{
		{synth.Spec{Kind: synth.Gaussian, Dim: 20, MI: 4, Seed: 1}, 0.005, false},
		{synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 4}, 0.002, false},
		{synth.Spec{Kind: synth.Independent, Dim: 20, Seed: 2}, 0.005, true},
	}
	for _, c := range cases {
		e, err := New(c.spec.Dim, c.spec.Dim, testConfig(c.spec.Dim, 128, 5, 1))
		if err != nil {
			t.Fatal(err)
		}
		feed(t, e, c.spec, N, block)
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%v d=%d: permutation DiME %.5f ± %.5f, analytic %.5f", c.spec.Kind, c.spec.Dim, r.DiME, r.DiMEStdErr, r.DiMEAnalytic)
		if r.Rows != N {
			t.Errorf("rows %d, want %d", r.Rows, N)
		}
		if d := math.Abs(r.DiMEAnalytic - r.DiME); d > c.agreement {
			t.Errorf("%v: analytic %.5f and permutation %.5f differ by %.5f > %v", c.spec.Kind, r.DiMEAnalytic, r.DiME, d, c.agreement)
		}
		if c.nearZero {
			if math.Abs(r.DiME) > 0.0015 {
				t.Errorf("independent: permutation DiME %.5f, want |DiME| <= 0.0015", r.DiME)
			}
			if r.DiMEAnalytic < 0 || r.DiMEAnalytic > 0.006 {
				t.Errorf("independent: analytic DiME %.5f, want within [0, 0.006]", r.DiMEAnalytic)
			}
		} else if r.DiME < 0.02 {
			t.Errorf("%v: dependent data gives DiME %.5f", c.spec.Kind, r.DiME)
		}
	}
}

// TestPairing reconstructs every pair that the estimator forms in one scope
// (random order o; chunks of consecutive positions to the groups in turn; X
// at position i with Y at position i + s_k cyclically; the copies and self
// joints on the chunks of one round in selfRounds) and checks all
// accumulators and means against sums built row by row, for scopes that
// span several chunks (carry-over and wrap), scopes with fewer rows than
// permutations or groups, a lone row paired with the previous scope, enough
// chunks to reach a second self round, and scopes added by several workers,
// with and without permutations.
func TestPairing(t *testing.T) {
	const d, D = 3, 8
	for _, c := range []struct {
		sizes   []int
		workers int
		P       int
	}{
		{[]int{700}, 1, 4}, {[]int{2}, 1, 4}, {[]int{3, 1}, 1, 4}, {[]int{chunkRows + 1}, 1, 4}, {[]int{5, 600}, 1, 4},
		{[]int{3 * chunkRows}, 3, 4}, {[]int{1700, 1, 2*chunkRows + 1}, 2, 4}, {[]int{5*chunkRows - 3}, 7, 4}, {[]int{900}, 5, 4},
		{[]int{700}, 1, 0}, {[]int{3, 1}, 1, 0}, {[]int{1700, 1, 2*chunkRows + 1}, 2, 0}, {[]int{5*chunkRows - 3}, 7, 0},
		{[]int{70 * chunkRows}, 2, 0}, {[]int{67 * chunkRows}, 2, 1},
	} {
		sizes, P := c.sizes, c.P
		cfg := testConfig(d, D, P, 9)
		cfg.Workers = c.workers
		e, err := New(d, d, cfg)
		if err != nil {
			t.Fatal(err)
		}
		K := len(e.groups)
		spec := cfg.pairSpec(d, d, exact.FixedSigma(d), exact.FixedSigma(d))
		pair, _ := rff.NewPair(spec)
		copyX, _ := rff.New(spec.CopyX())
		copyY, _ := rff.New(spec.CopyY())
		newAcc := func(part covariance.Part, k int) *covariance.Accumulator {
			a, _ := covariance.New(covariance.Description{Map: spec, Part: part, Index: k})
			return a
		}
		newMean := func(part covariance.Part, k int) *covariance.Mean {
			m, _ := covariance.NewMean(covariance.Description{Map: spec, Part: part, Index: k})
			return m
		}
		want := make([]group, K)
		for k := range want {
			g := &want[k]
			g.x, g.y, g.xy = newAcc(covariance.PartX, k), newAcc(covariance.PartY, k), newAcc(covariance.PartJoint, k)
			g.mx, g.my, g.mxy = newMean(covariance.PartX, k), newMean(covariance.PartY, k), newMean(covariance.PartJoint, k)
			g.cx, g.cy = newAcc(covariance.PartCopyX, k), newAcc(covariance.PartCopyY, k)
			g.sx, g.sy = newAcc(covariance.PartSelfX, k), newAcc(covariance.PartSelfY, k)
		}
		wp := make([]*covariance.Accumulator, P)
		for k := range wp {
			wp[k] = newAcc(covariance.PartPermuted, k)
		}
		var lastY []float64
		var chunk int64
		for si, n := range sizes {
			x, y, _ := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: uint64(10 + si)}, n)
			xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
			e.cfg.ShuffleRows = n
			if err := e.Add(xd, yd, n); err != nil {
				t.Fatal(err)
			}
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
			order := make([]int, n)
			for i := range order {
				order[i] = i
			}
			rng := rand.New(rand.NewPCG(9, scopeStream(xd, yd, n, d, d, false)))
			rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
			px, _ := pair.X.Transform(nil, xd, n)
			py, _ := pair.Y.Transform(nil, yd, n)
			cx, _ := copyX.Transform(nil, xd, n)
			cy, _ := copyY.Transform(nil, yd, n)
			p := 2 * D
			row := func(f []float64, i int) []float64 { return f[i*p : (i+1)*p] }
			size := min(chunkRows, (n+K-1)/K)
			for i := 0; i < n; i++ {
				a := order[i]
				c := chunk + int64(i/size)
				g := &want[c%int64(K)]
				g.x.Add(row(px, a), 1)
				g.y.Add(row(py, a), 1)
				g.mx.Add(row(px, a), 1)
				g.my.Add(row(py, a), 1)
				j, _ := rff.Joint(nil, row(px, a), row(py, a), 1, D, nil)
				g.xy.Add(j, 1)
				g.mxy.Add(j, 1)
				if round := c / int64(K); round < selfFirstRounds || round%selfRounds == 0 {
					g.cx.Add(row(cx, a), 1)
					g.cy.Add(row(cy, a), 1)
					j, _ := rff.Joint(nil, row(px, a), row(cx, a), 1, D, nil)
					g.sx.Add(j, 1)
					j, _ = rff.Joint(nil, row(py, a), row(cy, a), 1, D, nil)
					g.sy.Add(j, 1)
				}
				for k := 0; k < P; k++ {
					var yk []float64
					switch {
					case n > 1:
						s := 1 + k%(n-1)
						yk = row(py, order[(i+s)%n])
					case lastY != nil:
						yk = lastY
					default:
						continue
					}
					j, _ := rff.Joint(nil, row(px, a), yk, 1, D, nil)
					wp[k].Add(j, 1)
				}
			}
			chunk += int64((n + size - 1) / size)
			lastY = append([]float64(nil), row(py, order[n-1])...)
		}
		name := fmt.Sprintf("sizes %v, %d workers, P = %d", sizes, c.workers, P)
		check := func(what string, got, want *covariance.Accumulator) {
			t.Helper()
			if got.Weight() != want.Weight() {
				t.Errorf("%s: %s weight %v, want %v", name, what, got.Weight(), want.Weight())
				return
			}
			g, w := got.Sum(), want.Sum()
			var worst, largest float64
			for i := 0; i < g.SymmetricDim(); i++ {
				for j := i; j < g.SymmetricDim(); j++ {
					worst = math.Max(worst, math.Abs(g.At(i, j)-w.At(i, j)))
					largest = math.Max(largest, math.Abs(w.At(i, j)))
				}
			}
			// The estimator adds rank-256 updates (the blocked kernels of
			// internal/linalg), the reference one row at a time: the sums
			// differ by round-off that grows as √rows (a random walk of
			// rounding errors) times the largest entry and 2⁻⁵². Measured:
			// at most 0.34 of that scale over every case here (2.4e-12 on
			// the 17 152-row one, AVX-512 kernel); the bound is 4 times it,
			// and never below the 1e-12 of the smaller cases.
			tol := math.Max(1e-12, 4*0x1p-52*math.Sqrt(want.Weight())*largest)
			if worst > tol {
				t.Errorf("%s: %s differs by %g (bound %g)", name, what, worst, tol)
			}
		}
		checkMean := func(what string, got, want *covariance.Mean) {
			t.Helper()
			var worst float64
			for j, v := range got.Sum() {
				worst = math.Max(worst, math.Abs(v-want.Sum()[j]))
			}
			if got.Weight() != want.Weight() || worst > 1e-12 {
				t.Errorf("%s: %s weight %v (want %v), sums differ by %g", name, what, got.Weight(), want.Weight(), worst)
			}
		}
		for k := range want {
			g, w := &e.groups[k], &want[k]
			check(fmt.Sprintf("X#%d", k), g.x, w.x)
			check(fmt.Sprintf("Y#%d", k), g.y, w.y)
			check(fmt.Sprintf("joint#%d", k), g.xy, w.xy)
			check(fmt.Sprintf("copy X#%d", k), g.cx, w.cx)
			check(fmt.Sprintf("copy Y#%d", k), g.cy, w.cy)
			check(fmt.Sprintf("self X#%d", k), g.sx, w.sx)
			check(fmt.Sprintf("self Y#%d", k), g.sy, w.sy)
			checkMean(fmt.Sprintf("mean X#%d", k), g.mx, w.mx)
			checkMean(fmt.Sprintf("mean Y#%d", k), g.my, w.my)
			checkMean(fmt.Sprintf("mean joint#%d", k), g.mxy, w.mxy)
		}
		for k := range wp {
			check("permuted", e.perm[k], wp[k])
		}
		if e.chunks != chunk {
			t.Errorf("%s: %d chunks, want %d", name, e.chunks, chunk)
		}
	}
}

// TestBlockSizeInvariance checks that with a fixed shuffle scope the result
// does not depend on how rows are cut into blocks, bit for bit.
func TestBlockSizeInvariance(t *testing.T) {
	spec := synth.Spec{Kind: synth.Circle, Dim: 2, Noise: 0.1, Seed: 3}
	var ref Result
	for i, block := range []int{1, 7, 100, 1000, 3000} {
		cfg := testConfig(2, 16, 3, 2)
		cfg.ShuffleRows = 1000
		e, _ := New(2, 2, cfg)
		feed(t, e, spec, 3000, block)
		r, err := e.Result()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			ref = r
			continue
		}
		if r.EntropyJoint != ref.EntropyJoint || r.DiME != ref.DiME || r.DiMEAnalytic != ref.DiMEAnalytic {
			t.Errorf("block %d: joint %v DiME %v analytic %v; block 1: %v %v %v", block, r.EntropyJoint, r.DiME, r.DiMEAnalytic, ref.EntropyJoint, ref.DiME, ref.DiMEAnalytic)
		}
	}
}

// TestWorkersAgree checks that the number of workers does not change the
// accumulators at all, bit for bit, for plain and decaying estimators and
// scopes with a partial last chunk: every accumulator receives the same
// rank-k updates in the same order, and every feature row is computed by the
// same code whichever worker maps it.
func TestWorkersAgree(t *testing.T) {
	const d = 3
	x, y := rows(t, synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 1, Seed: 4}, 9000)
	for _, P := range []int{0, 3} {
		for _, halfLife := range []float64{0, 2500} {
			var ref *Estimator
			for _, workers := range []int{1, 2, 3, 5, 8} {
				cfg := testConfig(d, 24, P, 6)
				cfg.Workers, cfg.HalfLife = workers, halfLife
				e, _ := New(d, d, cfg)
				addBlocks(t, e, x, y, d, 4000) // scopes of 4000, 4000 and 1000 rows
				if err := e.Flush(); err != nil {
					t.Fatal(err)
				}
				want := min(workers, DefaultGroups) // the groups
				if P > 0 {
					want = min(workers, P+5) // the slots
				}
				if got := e.workerCount(4000, 16); got != want {
					t.Errorf("P = %d, %d workers: %d used for 4000 rows, want %d", P, workers, got, want)
				}
				if workers == 1 {
					ref = e
					continue
				}
				for k, a := range e.accumulators() {
					w := ref.accumulators()[k]
					if a.Weight() != w.Weight() || !mat.Equal(a.Sum(), w.Sum()) {
						t.Errorf("P = %d, half-life %v, %d workers: accumulator %d differs from one worker's", P, halfLife, workers, k)
					}
				}
				for k, m := range e.means {
					w := ref.means[k]
					if m.Weight() != w.Weight() || m.SquaredWeight() != w.SquaredWeight() || !slices.Equal(m.Sum(), w.Sum()) {
						t.Errorf("P = %d, half-life %v, %d workers: mean %d differs from one worker's", P, halfLife, workers, k)
					}
				}
			}
		}
	}
}

// TestEstimateMatricesAgreesWithCovariance checks the in-memory estimate in
// both of its modes (Gram matrices when n < 2D, covariances otherwise)
// against each other on the same pairings.
func TestEstimateMatricesModes(t *testing.T) {
	x, y, _ := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 5}, 100)
	perms := exact.Permutations(100, 3, 1)
	cfg := testConfig(2, 60, 3, 4) // 2D = 120 > n = 100: Gram mode
	gram, err := EstimateWithPermutations(x, y, cfg, perms)
	if err != nil {
		t.Fatal(err)
	}
	// The same estimate through accumulators: add the rows in two halves.
	e, _ := New(2, 2, cfg)
	pair, _ := e.featureMaps()
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	px, _ := pair.X.Transform(nil, xd, 100)
	py, _ := pair.Y.Transform(nil, yd, 100)
	g := &e.groups[0]
	g.x.Add(px, 100)
	g.y.Add(py, 100)
	j, _ := rff.Joint(nil, px, py, 100, 60, nil)
	g.xy.Add(j, 100)
	g.mx.Add(px, 100)
	g.my.Add(py, 100)
	g.mxy.Add(j, 100)
	for k, p := range perms {
		j, _ := rff.Joint(nil, px, py, 100, 60, p)
		e.perm[k].Add(j, 100)
	}
	e.rows = 100
	cov, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		g, cov float64
	}{
		{"S_X", gram.EntropyX, cov.EntropyX}, {"S_Y", gram.EntropyY, cov.EntropyY},
		{"S_XY", gram.EntropyJoint, cov.EntropyJoint}, {"DiME", gram.DiME, cov.DiME},
		{"analytic", gram.DiMEAnalytic, cov.DiMEAnalytic}, {"p-value", gram.PValue, cov.PValue},
	} {
		// Measured: 4e-14 (the same nonzero spectrum from two matrices).
		if math.Abs(c.g-c.cov) > 1e-10 {
			t.Errorf("%s: Gram mode %.15g, covariance mode %.15g", c.name, c.g, c.cov)
		}
	}
	all, err := EstimateMatrices(x, y, cfg)
	if err != nil || all.Rows != 100 || math.IsNaN(all.DiME) {
		t.Errorf("EstimateMatrices: %+v %v", all, err)
	}
	cfg.SkipAnalytic = true
	skip, _ := EstimateWithPermutations(x, y, cfg, perms)
	if !math.IsNaN(skip.DiMEAnalytic) || skip.DiME != gram.DiME {
		t.Errorf("SkipAnalytic: analytic %v, DiME %v (want NaN, %v)", skip.DiMEAnalytic, skip.DiME, gram.DiME)
	}
}

// TestAddDoesNotAllocate checks that Add allocates nothing in steady state,
// with one worker, with two (goroutines started per scope), and with decay.
func TestAddDoesNotAllocate(t *testing.T) {
	const n, d = 2048, 10
	x, y, _ := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: d, MI: 2, Seed: 1}, n)
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	for _, c := range []struct {
		workers  int
		halfLife float64
	}{{1, 0}, {2, 0}, {2, 5000}} {
		cfg := testConfig(d, 128, 1, 1)
		cfg.Workers, cfg.HalfLife = c.workers, c.halfLife
		e, _ := New(d, d, cfg)
		e.Add(xd, yd, n) // the first call sizes the scope's order slice and the workers
		if allocs := testing.AllocsPerRun(5, func() { e.Add(xd, yd, n) }); allocs != 0 {
			t.Errorf("%d workers, half-life %v: %v allocations per Add of %d rows", c.workers, c.halfLife, allocs, n)
		}
	}
}

func TestInvalidInput(t *testing.T) {
	good := testConfig(2, 8, 2, 1)
	bad := func(f func(*Config)) Config { c := good; f(&c); return c }
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"alpha", bad(func(c *Config) { c.Alpha = 0 })},
		{"sigma", bad(func(c *Config) { c.BandwidthY = vocab.Sigma(math.NaN()) })},
		{"sigma zero", bad(func(c *Config) { c.BandwidthX = vocab.Sigma(0) })},
		{"pilot", bad(func(c *Config) { c.PilotRows = -1 })},
		{"features", bad(func(c *Config) { c.Features = 0 })},
		{"permutations", bad(func(c *Config) { c.Permutations = -1 })},
		{"groups", bad(func(c *Config) { c.Groups = MaxGroups + 1 })},
		{"analytic without analytic", bad(func(c *Config) { c.Permutations, c.SkipAnalytic = 0, true })},
		{"shuffle", bad(func(c *Config) { c.ShuffleRows = -1 })},
		{"kernel", bad(func(c *Config) { c.Kernel = 7 })},
		{"orthogonal laplacian", bad(func(c *Config) { c.Kernel, c.Variant = vocab.Laplacian, vocab.Orthogonal })},
	} {
		if _, err := New(2, 2, c.cfg); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%s: error %v", c.name, err)
		}
	}
	if _, err := New(0, 2, good); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("zero width: %v", err)
	}
	e, _ := New(2, 2, good)
	if err := e.Add([]float64{1, 2, 3}, []float64{1, 2}, 1); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("mismatched block: %v", err)
	}
	e.Add([]float64{1, 2, 3, 4}, []float64{1, 2, 3, 4}, 2)
	err := e.Add([]float64{1, 2, 3, math.Inf(1)}, []float64{1, 2, 3, 4}, 2)
	if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "X row 3, column 1") {
		t.Errorf("Inf: %v", err)
	}
	one, _ := New(2, 2, good)
	one.Add([]float64{1, 2}, []float64{1, 2}, 1)
	if _, err := one.Result(); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("one row: %v", err)
	}
	if _, err := EstimateMatrices(mat.NewDense(3, 1, nil), mat.NewDense(2, 1, nil), good); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("row mismatch: %v", err)
	}
	if _, err := EstimateWithPermutations(mat.NewDense(3, 1, []float64{1, 2, 3}), mat.NewDense(3, 1, []float64{1, 2, 3}), good, [][]int{{0, 1}}); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("short permutation: %v", err)
	}
}
