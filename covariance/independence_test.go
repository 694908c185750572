package covariance

import (
	"bytes"
	"errors"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// TestSelfProductAllPairs checks SelfProductOfMarginals against the mean of
// the self-joint features e^{i(a_j + a′_j)·(x_i, x_k)} over all pairs of rows,
// computed from X's map and its copy's (rows of the copy differ from the
// part's: each is a marginal).
func TestSelfProductAllPairs(t *testing.T) {
	const n, m = 7, 5
	spec := testMap
	pair, err := rff.NewPair(spec)
	if err != nil {
		t.Fatal(err)
	}
	copyX, err := rff.New(spec.CopyX())
	if err != nil {
		t.Fatal(err)
	}
	D, p := spec.Features, 2*spec.Features
	x, x2 := block(n, spec.DimX, 1), block(m, spec.DimX, 2)
	px, _ := pair.X.Transform(nil, x, n)
	pc, _ := copyX.Transform(nil, x2, m)
	ax := mustNew(t, Description{Map: spec, Part: PartX})
	ac := mustNew(t, Description{Map: spec, Part: PartCopyX, Index: 2})
	ac.desc.Index = 0 // the same group as ax
	ax.Add(px, n)
	ac.Add(pc, m)
	got, err := SelfProductOfMarginals(nil, ax, ac)
	if err != nil {
		t.Fatal(err)
	}
	all := mustNew(t, Description{Map: spec, Part: PartSelfX})
	for i := range n {
		for k := range m {
			row, _ := rff.Joint(nil, px[i*p:(i+1)*p], pc[k*p:(k+1)*p], 1, D, nil)
			all.Add(row, 1)
		}
	}
	want, _ := all.Covariance(nil)
	if d := maxAbsDiff(got, want); d > 1e-12 {
		t.Errorf("self product differs from the all-pairs mean by %g", d)
	}
	ay := mustNew(t, Description{Map: spec, Part: PartY})
	ay.Add(block(n*2*p, 1, 3)[:n*p], n)
	if _, err := SelfProductOfMarginals(nil, ay, ac); !errors.Is(err, ErrIncompatible) {
		t.Errorf("y with copy-x: %v", err)
	}
}

func TestMean(t *testing.T) {
	px, _ := features(t, testMap, 30, 4)
	p := 2 * testMap.Features
	desc := Description{Map: testMap, Part: PartX, Index: 1}
	a, err := NewMean(desc)
	if err != nil {
		t.Fatal(err)
	}
	w := make([]float64, 30)
	for i := range w {
		w[i] = 0.5 + float64(i)/30
	}
	if err := a.AddWeighted(px[:20*p], 20, w[:20]); err != nil {
		t.Fatal(err)
	}
	b, _ := NewMean(desc)
	b.AddWeighted(px[20*p:], 10, w[20:])
	enc, err := b.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var c Mean
	if err := c.UnmarshalBinary(enc); err != nil {
		t.Fatal(err)
	}
	if err := a.Merge(&c); err != nil {
		t.Fatal(err)
	}
	var sw, sw2 float64
	for i := range w {
		sw += w[i]
		sw2 += w[i] * w[i]
	}
	for j := range p {
		var want float64
		for i := range 30 {
			want += w[i] * px[i*p+j]
		}
		if d := math.Abs(a.Sum()[j] - want); d > 1e-13 {
			t.Errorf("sum %d: %v, want %v", j, a.Sum()[j], want)
		}
	}
	if math.Abs(a.Weight()-sw) > 1e-13 || math.Abs(a.SquaredWeight()-sw2) > 1e-13 {
		t.Errorf("weights %v, %v, want %v, %v", a.Weight(), a.SquaredWeight(), sw, sw2)
	}
	if got, want := a.EffectiveRows(), sw*sw/sw2; math.Abs(got-want) > 1e-12 {
		t.Errorf("effective rows %v, want %v", got, want)
	}
	a.Scale(0.5)
	if math.Abs(a.Weight()-sw/2) > 1e-13 || math.Abs(a.SquaredWeight()-sw2/4) > 1e-13 {
		t.Errorf("scaled weights %v, %v", a.Weight(), a.SquaredWeight())
	}
	other, _ := NewMean(Description{Map: testMap, Part: PartY, Index: 1})
	if err := a.Merge(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merge of x and y means: %v", err)
	}
	if err := a.AddWeighted(px[:p], 1, []float64{math.NaN()}); !errors.Is(err, ErrInvalid) {
		t.Errorf("NaN weight: %v", err)
	}
	if allocs := testing.AllocsPerRun(10, func() { a.Add(px, 30) }); allocs != 0 {
		t.Errorf("Add allocates %v times", allocs)
	}
	// Every byte matters: a flipped bit or a short input is refused.
	for i := 0; i < len(enc); i += 7 {
		bad := bytes.Clone(enc)
		bad[i] ^= 1
		if err := c.UnmarshalBinary(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("byte %d flipped: %v", i, err)
		}
	}
	if err := c.UnmarshalBinary(enc[:len(enc)-1]); !errors.Is(err, ErrFormat) {
		t.Errorf("truncated: %v", err)
	}
	a.Reset()
	if a.Weight() != 0 || a.EffectiveRows() != 0 || a.Sum()[0] != 0 {
		t.Errorf("reset mean: weight %v, sum %v", a.Weight(), a.Sum()[0])
	}
}

// nullViews draws n independent rows of a heavy-tailed X (Student t, 3
// degrees of freedom, 2 columns) and a discrete Y (integers 0 … 4, 3
// columns).
func nullViews(r *rand.Rand, n int) (x, y []float64) {
	x, y = make([]float64, 2*n), make([]float64, 3*n)
	for i := range x {
		z := r.NormFloat64()
		var chi float64
		for range 3 {
			g := r.NormFloat64()
			chi += g * g
		}
		x[i] = z / math.Sqrt(chi/3)
	}
	for i := range y {
		y[i] = float64(r.IntN(5))
	}
	return x, y
}

// accumulateTest returns the accumulators and means of the rows.
func accumulateTest(t testing.TB, pair *rff.Pair, x, y []float64, n int) (ax, ay *Accumulator, mx, my, mxy *Mean) {
	t.Helper()
	spec := pair.Spec()
	px, _ := pair.X.Transform(nil, x, n)
	py, _ := pair.Y.Transform(nil, y, n)
	pj, _ := rff.Joint(nil, px, py, n, spec.Features, nil)
	ax, ay = mustNew(t, Description{Map: spec, Part: PartX}), mustNew(t, Description{Map: spec, Part: PartY})
	mx, _ = NewMean(Description{Map: spec, Part: PartX})
	my, _ = NewMean(Description{Map: spec, Part: PartY})
	mxy, _ = NewMean(Description{Map: spec, Part: PartJoint})
	ax.Add(px, n)
	ay.Add(py, n)
	mx.Add(px, n)
	my.Add(py, n)
	mxy.Add(pj, n)
	return ax, ay, mx, my, mxy
}

// TestNullCovarianceMonteCarlo checks the null covariance of √n ĉ by
// simulation. The frequencies are fixed (D = 4); 6000 datasets of n = 300
// independent rows (heavy-tailed X, discrete Y) give 6000 vectors
// √n [Re ĉ, Im ĉ], computed directly with complex exponentials, whose
// empirical covariance is compared with the formula (nullCovariance)
// evaluated on 300 000 rows. The bandwidths (2.5) are wide enough for the
// pseudo-covariance Π to matter. Relative Frobenius distance measured 0.036
// (0.27 with Π left out, largest |z| 21: the test can tell); bound 0.06.
// Every entry is within 4.5 normal-theory standard errors (measured largest
// 1.8).
func TestNullCovarianceMonteCarlo(t *testing.T) {
	if testing.Short() {
		t.Skip("6000 simulated datasets")
	}
	const D, n, reps, big = 4, 300, 6000, 300000
	spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: D, Seed: 11, SigmaX: 2.5, SigmaY: 2.5, DimX: 2, DimY: 3}
	pair, err := rff.NewPair(spec)
	if err != nil {
		t.Fatal(err)
	}
	a, b := make([][]float64, D), make([][]float64, D)
	for j := range D {
		a[j], b[j] = pair.X.Frequency(nil, j), pair.Y.Frequency(nil, j)
	}
	phase := func(w, v []float64) float64 {
		var s float64
		for i := range w {
			s += w[i] * v[i]
		}
		return s
	}
	r := rand.New(rand.NewPCG(5, 6))
	z := make([][]float64, reps)
	for rep := range z {
		x, y := nullViews(r, n)
		var mu, mv, muv [D]complex128
		for i := range n {
			for j := range D {
				u := cmplx.Exp(complex(0, phase(a[j], x[2*i:2*i+2])))
				v := cmplx.Exp(complex(0, phase(b[j], y[3*i:3*i+3])))
				mu[j] += u / n
				mv[j] += v / n
				muv[j] += u * v / n
			}
		}
		z[rep] = make([]float64, 2*D)
		for j := range D {
			c := (muv[j] - mu[j]*mv[j]) * complex(math.Sqrt(n), 0)
			z[rep][j], z[rep][D+j] = real(c), imag(c)
		}
	}
	emp := mat.NewSymDense(2*D, nil)
	for i := range 2 * D {
		for j := i; j < 2*D; j++ {
			var s, mi, mj float64
			for _, v := range z {
				mi += v[i] / reps
				mj += v[j] / reps
			}
			for _, v := range z {
				s += (v[i] - mi) * (v[j] - mj)
			}
			emp.SetSym(i, j, s/(reps-1))
		}
	}
	x, y := nullViews(r, big)
	ax, ay, mx, my, _ := accumulateTest(t, pair, x, y, big)
	f := math.Sqrt(D) / big
	mgx, err := marginalOf([]*Accumulator{ax}, "test")
	if err != nil {
		t.Fatal(err)
	}
	mgy, err := marginalOf([]*Accumulator{ay}, "test")
	if err != nil {
		t.Fatal(err)
	}
	sigma := nullCovariance(&mgx, &mgy, scaled(mx.sum[:D], f), scaled(mx.sum[D:], f), scaled(my.sum[:D], f), scaled(my.sum[D:], f), big)
	var diff, norm, worstZ float64
	for i := range 2 * D {
		for j := range 2 * D {
			d := emp.At(i, j) - sigma.At(i, j)
			diff += d * d
			norm += sigma.At(i, j) * sigma.At(i, j)
			se := math.Sqrt((sigma.At(i, i)*sigma.At(j, j) + sigma.At(i, j)*sigma.At(i, j)) / reps)
			worstZ = math.Max(worstZ, math.Abs(d)/se)
		}
	}
	rel := math.Sqrt(diff / norm)
	t.Logf("relative Frobenius distance %.4f, largest |z| %.2f", rel, worstZ)
	if rel > 0.06 || worstZ > 4.5 {
		t.Errorf("null covariance: relative distance %.4f (bound 0.06), largest |z| %.2f (bound 4.5)", rel, worstZ)
	}
}

// TestIndependenceCalibrated runs the test on 300 held-out null datasets
// (n = 400, D = 16; heavy-tailed X, discrete Y): the share of p ≤ 0.05 must
// lie in the binomial 99% band around 5% for 300 draws, [2%, 8.7%]
// (measured 4.7%), and that of p ≤ 0.01 at most 3% (measured 1.0%). On
// dependent data (a column of Y is tanh of one of X plus noise) every one of
// 20 datasets has p < 0.001.
func TestIndependenceCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("300 simulated datasets")
	}
	const n, reps = 400, 300
	spec := rff.PairSpec{Kernel: vocab.Gaussian, Features: 16, Seed: 21, SigmaX: 1, SigmaY: 1.2, DimX: 2, DimY: 3}
	pair, err := rff.NewPair(spec)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(31, 32))
	below5, below1 := 0, 0
	for range reps {
		x, y := nullViews(r, n)
		res, err := Independence(accumulateTest(t, pair, x, y, n))
		if err != nil {
			t.Fatal(err)
		}
		if res.PValue <= 0.05 {
			below5++
		}
		if res.PValue <= 0.01 {
			below1++
		}
	}
	t.Logf("null: %d of %d at p <= 0.05, %d at p <= 0.01", below5, reps, below1)
	if below5 < 6 || below5 > 26 || below1 > 9 {
		t.Errorf("null: %d of %d at p <= 0.05 (band 6 to 26), %d at p <= 0.01 (at most 9)", below5, reps, below1)
	}
	for rep := range 20 {
		x, y := nullViews(r, n)
		for i := range n {
			y[3*i] = math.Tanh(x[2*i]) + 0.2*r.NormFloat64()
		}
		res, err := Independence(accumulateTest(t, pair, x, y, n))
		if err != nil {
			t.Fatal(err)
		}
		if res.PValue >= 1e-3 {
			t.Errorf("dependent dataset %d: p = %.3g (T %.1f, null mean %.1f)", rep, res.PValue, res.Statistic, res.NullMean)
		}
	}
}

// TestMeanAddBits checks that Add (rows of weight 1, summed by
// linalg.SumRows several rows per pass) gives the bits of the row-by-row
// loop it replaced (gonum's floats.Add per row) and of AddWeighted with
// weights of 1 (which still runs that loop), on row counts around the
// kernels' groups of eight and dimensions around their vectors, after a
// Scale so that the weights are not whole numbers.
func TestMeanAddBits(t *testing.T) {
	for _, features := range []int{3, 6, 37, 256} {
		spec := testMap
		spec.Features = features
		desc := Description{Map: spec, Part: PartJoint}
		p := 2 * features
		for _, rows := range []int{1, 7, 8, 9, 17, 64, 259} {
			phi := block(rows, p, uint64(rows*features))
			for i := range phi {
				phi[i] *= math.Pow(10, float64(i%13-6)) // magnitudes whose order of addition shows in the bits
			}
			a, _ := NewMean(desc)
			b, _ := NewMean(desc)
			ref := make([]float64, p)
			ones := make([]float64, rows)
			for i := range ones {
				ones[i] = 1
			}
			var wRef, w2Ref float64
			for pass, f := range []float64{1, 0.3} {
				if err := a.Add(phi, rows); err != nil {
					t.Fatal(err)
				}
				if err := b.AddWeighted(phi, rows, ones); err != nil {
					t.Fatal(err)
				}
				for r := range rows {
					floats.Add(ref, phi[r*p:(r+1)*p])
					wRef++
					w2Ref++
				}
				for j := range ref {
					if math.Float64bits(a.Sum()[j]) != math.Float64bits(ref[j]) || math.Float64bits(b.Sum()[j]) != math.Float64bits(ref[j]) {
						t.Fatalf("D=%d rows=%d pass %d: sum[%d] = %v (Add), %v (AddWeighted), want %v", features, rows, pass, j, a.Sum()[j], b.Sum()[j], ref[j])
					}
				}
				if a.Weight() != wRef || a.SquaredWeight() != w2Ref || b.Weight() != wRef || b.SquaredWeight() != w2Ref {
					t.Fatalf("D=%d rows=%d pass %d: weights %v, %v and %v, %v, want %v, %v", features, rows, pass, a.Weight(), a.SquaredWeight(), b.Weight(), b.SquaredWeight(), wRef, w2Ref)
				}
				a.Scale(f)
				b.Scale(f)
				floats.Scale(f, ref)
				wRef *= f
				w2Ref *= f * f
			}
		}
	}
}
