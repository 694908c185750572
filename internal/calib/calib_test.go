package calib

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/synth"
)

// TestBinomialBand99 checks the bands against the binomial distribution
// itself: less than 0.5% of the mass below lo and at most 0.5% above hi,
// and neither could be tightened.
func TestBinomialBand99(t *testing.T) {
	for _, c := range []struct {
		n      int
		p      float64
		lo, hi int
	}{{400, 0.05, 10, 32}, {400, 0.01, 0, 10}, {200, 0.05, 3, 19}} {
		lo, hi := BinomialBand99(c.n, c.p)
		if lo != c.lo || hi != c.hi {
			t.Errorf("Binomial(%d, %v): band %d–%d, want %d–%d", c.n, c.p, lo, hi, c.lo, c.hi)
		}
		b := distuv.Binomial{N: float64(c.n), P: c.p}
		if lo > 0 && !(b.CDF(float64(lo-1)) < 0.005 && b.CDF(float64(lo)) >= 0.005) {
			t.Errorf("lo %d: P(X < lo) = %v, P(X ≤ lo) = %v", lo, b.CDF(float64(lo-1)), b.CDF(float64(lo)))
		}
		if !(1-b.CDF(float64(hi)) <= 0.005 && 1-b.CDF(float64(hi-1)) > 0.005) {
			t.Errorf("hi %d: P(X > hi) = %v", hi, 1-b.CDF(float64(hi)))
		}
	}
}

func TestSummarize(t *testing.T) {
	var rs []Record
	for i, p := range []float64{0.001, 0.03, 0.2, 0.5, 0.9} {
		rs = append(rs, Record{Index: i, Outcome: Outcome{DiME: float64(i) - 2, PValue: p, Normalized: math.NaN()}})
	}
	s := Summarize(rs)
	// DiME -2..2: mean 0, sd √2.5, s.e. √2.5/√5.
	if s.Datasets != 5 || s.MeanDiME != 0 || math.Abs(s.StdErrDiME-math.Sqrt(0.5)) > 1e-15 ||
		s.Below05 != 2 || s.Below01 != 1 || s.MaxP != 0.9 || !math.IsNaN(s.MeanNormalized) ||
		math.Abs(s.MeanP-0.3262) > 1e-12 {
		t.Errorf("%+v", s)
	}
	// Bands for 5 datasets: 0–2 at 0.05 and 0–1 at 0.01; mean 0 is within
	// 2 standard errors.
	if s.Band05 != [2]int{0, 2} || s.Band01 != [2]int{0, 1} || !s.Calibrated() {
		t.Errorf("bands %v %v, calibrated %v", s.Band05, s.Band01, s.Calibrated())
	}
	rs[2].PValue = 0.04 // 3 of 5 at 0.05: outside its band
	if Summarize(rs).Calibrated() {
		t.Error("3 of 5 p-values ≤ 0.05 called calibrated")
	}
	rs[2].PValue = 0.2
	for i := range rs {
		rs[i].DiME += 3 // mean 3, s.e. √0.5
	}
	if Summarize(rs).Calibrated() {
		t.Error("a mean DiME 4 standard errors from 0 called calibrated")
	}
}

// TestRun runs one small study through the dime command and checks that the
// reports are read back, with the seeds and cases dealt as documented.
func TestRun(t *testing.T) {
	s := Study{
		Cases:     []Case{{Kind: synth.Independent, Dim: 1, Rows: 300}, {Kind: synth.Square, Dim: 1, Noise: 0.5, Rows: 300}},
		Datasets:  3,
		FirstSeed: 41,
		Command:   "exact",
		Args:      []string{"--sample", "150"},
	}
	rs, err := s.Run(nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Seed != uint64(41+i) || r.Case != s.Cases[i%2] || r.Rows != 150 || r.PValueTest != "hsic" ||
			!(r.PValue > 0 && r.PValue <= 1) || math.IsNaN(r.DiME) {
			t.Errorf("dataset %d: %+v", i, r)
		}
	}
	if !(rs[1].PValue < 1e-6) {
		t.Errorf("y = x² + noise: p = %v", rs[1].PValue)
	}
	if _, err := Run(Case{Kind: synth.Independent, Dim: 1, Rows: 1}, 1, "exact"); err == nil {
		t.Error("a one-row dataset gave no error")
	}
}
