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
		{Kind: 7, Dim: 1},
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
	for _, k := range []Kind{Gaussian, Sine, Circle, Independent} {
		if got, err := ParseKind(k.String()); err != nil || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, err)
		}
	}
}
