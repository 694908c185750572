package synth

import (
	"errors"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat"
)

func TestRhoGivesMI(t *testing.T) {
	for _, d := range []int{1, 4, 20} {
		for _, m := range []float64{0, 0.5, 2, 10} {
			// I = -(d/2) log(1 - rho²), i.e. 1 - rho² = exp(-2m/d); compared
			// directly, since log(1 - rho²) amplifies the rounding of rho²
			// when rho is near 1 (d = 1, m = 10 gives rho = 1 - 1e-9).
			rho := Rho(d, m)
			if got, want := 1-rho*rho, math.Exp(-2*m/float64(d)); !scalar.EqualWithinAbs(got, want, 4e-16) {
				t.Errorf("d %d m %v: 1 - rho² = %v, want %v", d, m, got, want)
			}
		}
	}
}

// column returns column j of a matrix.
func column(m *mat.Dense, j int) []float64 { return mat.Col(nil, j, m) }

// TestCorrelations checks each kind's Pearson correlations on 20000 rows,
// where the standard error of a zero correlation is 1/√20000 ≈ 0.007.
func TestCorrelations(t *testing.T) {
	const n = 20000
	const zeroTol = 0.03 // more than 4 standard errors
	for _, c := range []struct {
		kind Kind
		want float64 // correlation of X_0 with Y_0
	}{
		{Gaussian, Rho(4, 2)},
		{Independent, 0},
		{Sine, 0},
		{Circle, 0},
		{StudentT, 0},
		{Discrete, 0},
		{MixedWidths, 0},
		{Square, 0},
	} {
		x, y, err := Generate(Spec{Kind: c.kind, Dim: 4, MI: 2, Noise: 0.1, Seed: 3}, n)
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 4; j++ {
			r := stat.Correlation(column(x, j), column(y, j), nil)
			if math.Abs(r-c.want) > zeroTol {
				t.Errorf("%v column %d: correlation %.4f, want %.4f", c.kind, j, r, c.want)
			}
		}
		// Columns of different coordinates are independent in every kind.
		if r := stat.Correlation(column(x, 0), column(y, 1), nil); math.Abs(r) > zeroTol {
			t.Errorf("%v: cross-coordinate correlation %.4f", c.kind, r)
		}
	}
	// The nonlinear kinds are dependent: Y is close to a function of X.
	x, y, _ := Generate(Spec{Kind: Sine, Dim: 1, Noise: 0.1, Seed: 4}, 1000)
	for i := 0; i < 1000; i++ {
		if d := y.At(i, 0) - math.Cos(2*x.At(i, 0)); math.Abs(d) > 0.6 { // 6 noise sd
			t.Fatalf("sine row %d: y - cos 2x = %v", i, d)
		}
	}
	x, y, _ = Generate(Spec{Kind: Circle, Dim: 1, Noise: 0.01, Seed: 5}, 1000)
	for i := 0; i < 1000; i++ {
		if r := math.Hypot(x.At(i, 0), y.At(i, 0)); math.Abs(r-1) > 0.1 {
			t.Fatalf("circle row %d: radius %v", i, r)
		}
	}
}

// TestStreamBlocks checks that filling in blocks of any size gives the same
// rows as filling at once, and that the seed alone decides the rows.
func TestStreamBlocks(t *testing.T) {
	spec := Spec{Kind: Circle, Dim: 3, Noise: 0.2, Seed: 9}
	x, y, _ := Generate(spec, 100)
	s, _ := NewStream(spec)
	var gx, gy []float64
	for _, rows := range []int{1, 7, 30, 62} {
		bx, by := make([]float64, rows*3), make([]float64, rows*3)
		if got := s.Fill(bx, by); got != rows {
			t.Fatalf("Fill wrote %d rows, want %d", got, rows)
		}
		gx, gy = append(gx, bx...), append(gy, by...)
	}
	if !slices.Equal(gx, x.RawMatrix().Data) || !slices.Equal(gy, y.RawMatrix().Data) {
		t.Error("blocks differ from one fill")
	}
	spec.Seed = 10
	x2, _, _ := Generate(spec, 100)
	if mat.Equal(x, x2) {
		t.Error("seeds 9 and 10 give the same data")
	}
}

func TestInvalidSpec(t *testing.T) {
	for _, s := range []Spec{
		{Kind: Kind(len(Kinds)), Dim: 1},
		{Dim: 0},
		{Dim: 2, MI: -1},
		{Dim: 2, MI: math.NaN()},
		{Dim: 2, MI: math.Inf(1)},
		{Kind: Sine, Dim: 2, Noise: -0.1},
	} {
		if _, err := NewStream(s); !errors.Is(err, ErrInvalidSpec) {
			t.Errorf("%+v: error %v", s, err)
		}
	}
	if _, _, err := Generate(Spec{Dim: 1}, 0); !errors.Is(err, ErrInvalidSpec) {
		t.Errorf("0 rows: %v", err)
	}
	if _, err := ParseKind("spiral"); err == nil {
		t.Error("unknown kind accepted")
	}
	for _, k := range Kinds {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, err)
		}
	}
}

// TestNullMarginals checks the marginal distributions of the kinds added for
// calibration studies on 20000 rows, with tolerances of about 5 standard
// errors of each statistic.
func TestNullMarginals(t *testing.T) {
	const n = 20000
	gen := func(k Kind, d int) (x, y *mat.Dense) {
		x, y, err := Generate(Spec{Kind: k, Dim: d, Noise: 0.5, Seed: 11}, n)
		if err != nil {
			t.Fatal(err)
		}
		return x, y
	}
	// Student-t(3): P(|T| > 3.182) = 0.05 (the two-sided 5% critical value,
	// 3.18245), standard error √(0.05·0.95/n) = 0.0015; variance 3 is not a
	// usable check (infinite fourth moment), a tail share is.
	tail := func(v []float64) float64 {
		c := 0
		for _, a := range v {
			if math.Abs(a) > 3.18245 {
				c++
			}
		}
		return float64(c) / float64(len(v))
	}
	x, y := gen(StudentT, 2)
	for j := 0; j < 2; j++ {
		for _, v := range [][]float64{column(x, j), column(y, j)} {
			if got := tail(v); math.Abs(got-0.05) > 0.0075 {
				t.Errorf("student-t column %d: P(|T| > 3.182) = %.4f, want 0.05", j, got)
			}
		}
	}
	// Discrete: X Student-t(3), Y uniform on 0..4 (each level 0.2 ± 0.0028
	// standard error).
	x, y = gen(Discrete, 2)
	if got := tail(column(x, 0)); math.Abs(got-0.05) > 0.0075 {
		t.Errorf("discrete X: P(|T| > 3.182) = %.4f, want 0.05", got)
	}
	var counts [5]int
	for _, v := range y.RawMatrix().Data {
		if v != math.Trunc(v) || v < 0 || v > 4 {
			t.Fatalf("discrete Y value %v, want an integer in 0..4", v)
		}
		counts[int(v)]++
	}
	for l, c := range counts {
		if share := float64(c) / (2 * n); math.Abs(share-0.2) > 0.01 {
			t.Errorf("discrete Y level %d: share %.4f, want 0.2", l, share)
		}
	}
	// Mixed widths: column k has standard deviation 10^((k mod 5) − 2); the
	// relative standard error of a sample standard deviation is 1/√(2n) = 0.5%.
	x, y = gen(MixedWidths, 7)
	for j, want := range []float64{0.01, 0.1, 1, 10, 100, 0.01, 0.1} {
		for _, m := range []*mat.Dense{x, y} {
			if got := stat.StdDev(column(m, j), nil); math.Abs(got/want-1) > 0.025 {
				t.Errorf("mixed widths column %d: sd %.4g, want %.4g", j, got, want)
			}
		}
	}
	// Square: Y = X² + noise exactly, up to 6 noise standard deviations.
	x, y = gen(Square, 2)
	for i := 0; i < n; i++ {
		a := x.At(i, 1)
		if d := y.At(i, 1) - a*a; math.Abs(d) > 3 {
			t.Fatalf("square row %d: y - x² = %v", i, d)
		}
	}
	// Units: an age (mean 49), money (median 50,000), a count (integers,
	// median e = 2.7 rounded down or up) and a measurement (median 0.002),
	// each within 5 standard errors at 100,000 values or more.
	x, y = gen(UnitsNull, 4)
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	if m := stat.Mean(column(x, 0), nil); math.Abs(m-49) > 0.2 {
		t.Errorf("units age: mean %v, want 49", m)
	}
	if m := med(column(x, 1)); math.Abs(m/50000-1) > 0.02 {
		t.Errorf("units money: median %v, want 50000", m)
	}
	for _, v := range column(x, 2) {
		if v != math.Trunc(v) || v < 0 {
			t.Fatalf("units count %v", v)
		}
	}
	if m := med(column(x, 3)); math.Abs(m/0.002-1) > 0.01 {
		t.Errorf("units measurement: median %v, want 0.002", m)
	}
	if m := med(column(y, 0)); math.Abs(m/50000-1) > 0.02 {
		t.Errorf("units Y column 0 (money): median %v, want 50000", m)
	}
	for _, k := range Kinds {
		want := k == Independent || k == StudentT || k == Discrete || k == MixedWidths || k == UnitsNull
		if k.Null() != want {
			t.Errorf("%v.Null() = %v", k, k.Null())
		}
	}
}
