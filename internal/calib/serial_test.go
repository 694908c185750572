package calib

import (
	"math"
	"testing"
)

// TestSerialKinds checks the series of the serial studies: unit variance
// and the lag-1 autocorrelation of each kind (0, φ, and 1.6/2.2 for the
// moving average), within 4 standard errors over 4 columns of 20,000
// rows; X's and Y's columns uncorrelated.
func TestSerialKinds(t *testing.T) {
	const rows, d = 20000, 2
	want := []float64{0, 0.5, 0.9, 1.6 / 2.2}
	for i, k := range SerialKinds() {
		tab := k.Table(21, rows, d)
		var v, c1, cxy float64
		for col := range 2 * d {
			for r := range rows {
				x := tab[r*2*d+col]
				v += x * x
				if r > 0 {
					c1 += x * tab[(r-1)*2*d+col]
				}
			}
		}
		for r := range rows {
			cxy += tab[r*2*d] * tab[r*2*d+d]
		}
		v /= 2 * d * rows
		rho := c1 / (2 * d * (rows - 1)) / v
		// The variance of a lag-1 autocorrelation estimate is about
		// (1 + ρ²)/(1 − ρ²)/n per column (Bartlett), at most 19/n here.
		se := math.Sqrt((1 + want[i]*want[i]) / (1 - want[i]*want[i]) / float64(2*d*rows))
		if math.Abs(rho-want[i]) > 4*se || math.Abs(v-1) > 0.1 {
			t.Errorf("%s: variance %.3f, lag-1 autocorrelation %.4f, want 1 and %.4f ± %.4f", k.Name, v, rho, want[i], 4*se)
		}
		if r := cxy / rows; math.Abs(r) > 4*math.Sqrt(float64(2*rows))/rows*math.Sqrt((1+want[i]*want[i])/(1-want[i]*want[i])) {
			t.Errorf("%s: x0 and y0 correlated, %.4f", k.Name, r)
		}
	}
}

// TestSerialRuns runs dime score --rows serial and dime monitor on a short
// series, and dime compare on a small dependent dataset: the outcomes
// arrive (one per window; exact and three RFF estimates per D).
func TestSerialRuns(t *testing.T) {
	k := SerialKinds()[2]
	o, err := k.Score(22, 2000, 2, "--rows", "serial", "--features", "16")
	if err != nil {
		t.Fatal(err)
	}
	if !(o.PValue >= 0 && o.PValue <= 1) || !(o.PValueIID >= 0 && o.PValueIID <= 1) || !(o.StdErr > 0) {
		t.Errorf("score: %+v", o)
	}
	ws, err := k.Monitor(23, 3, 1000, 2, "--features", "16")
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 3 || !(ws[2].PValue >= 0 && ws[2].PValue <= 1) || math.IsNaN(ws[2].PValueIID) || math.IsNaN(ws[2].DiME) {
		t.Errorf("monitor: %d windows, last %+v", len(ws), ws[len(ws)-1])
	}
	c := ParityCases()[0]
	c.Rows = 300
	p, err := Compare(c, 24, []int{16, 32})
	if err != nil {
		t.Fatal(err)
	}
	if p.Rows != 300 || !(p.Exact > 0) || len(p.Default) != 2 || p.Features[1] != 32 || math.IsNaN(p.Default[1]+p.Permutations[1]+p.PlugIn[1]) {
		t.Errorf("compare: %+v", p)
	}
}
