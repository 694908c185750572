package calib

import (
	"math"
	"testing"
)

// TestNullFamilies checks the generators of the null families: the same
// seed gives the same table, another seed another; every value is finite;
// the outliers family has ±50 in 5% of its values (within the binomial 99%
// band of 4,000 values) and the discrete family's Y takes few values.
func TestNullFamilies(t *testing.T) {
	const rows = 1000
	for _, f := range NullFamilies() {
		a, b, c := f.Table(11, rows), f.Table(11, rows), f.Table(12, rows)
		if len(a) != rows*2*f.Dim {
			t.Fatalf("%s: %d values, want %d", f.Name, len(a), rows*2*f.Dim)
		}
		same := 0
		for i := range a {
			if math.IsNaN(a[i]) || math.IsInf(a[i], 0) {
				t.Fatalf("%s: value %d is %v", f.Name, i, a[i])
			}
			if a[i] != b[i] {
				t.Fatalf("%s: seed 11 gave two tables", f.Name)
			}
			if a[i] == c[i] {
				same++
			}
		}
		if same > len(a)/2 {
			t.Errorf("%s: seeds 11 and 12 share %d of %d values", f.Name, same, len(a))
		}
	}
	out, err := FamilyByName("outliers")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, v := range out.Table(13, rows) {
		if math.Abs(v) == 50 {
			n++
		}
	}
	if lo, hi := BinomialBand99(4*rows, 0.05); n < lo || n > hi {
		t.Errorf("outliers: %d of %d values at ±50, want %d–%d", n, 4*rows, lo, hi)
	}
	disc, _ := FamilyByName("discrete")
	levels := map[float64]bool{}
	for i, v := range disc.Table(14, rows) {
		if i%4 >= 2 {
			levels[v] = true
		}
	}
	if len(levels) > 20 {
		t.Errorf("discrete: Y takes %d values", len(levels))
	}
	if _, err := FamilyByName("cauchy"); err == nil {
		t.Error("FamilyByName(cauchy): no error")
	}
}

// TestFamilyRun runs dime score on one null of 2,000 rows: the report's
// fields arrive in the Outcome, and 0 is inside dime_ci95 around dime.
func TestFamilyRun(t *testing.T) {
	f, _ := FamilyByName("gaussian d=1")
	o, err := f.Run(15, 2000, "score", "--features", "32")
	if err != nil {
		t.Fatal(err)
	}
	if o.Rows != 2000 || !(o.StdErr > 0) || !(o.Low < o.DiME && o.DiME < o.High) || !(o.PValue > 0 && o.PValue <= 1) || math.IsNaN(o.Analytic) {
		t.Errorf("%+v", o)
	}
}
