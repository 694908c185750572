package stream

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
)

// seriesKind is a family of stationary series for the serial-rows tests:
// every column of X and of Y is its own series, X and Y independent.
type seriesKind struct {
	name string
	phi  float64 // AR(1) coefficient; 0 with ma > 0
	ma   int     // moving average of ma+1 innovations (equal weights)
}

func (k seriesKind) String() string { return k.name }

var (
	iidSeries = seriesKind{name: "iid"}
	ar05      = seriesKind{name: "ar1-0.5", phi: 0.5}
	ar09      = seriesKind{name: "ar1-0.9", phi: 0.9}
	ma5       = seriesKind{name: "ma5", ma: 5}
)

// series returns n rows of d independent unit-variance series of kind k,
// row-major.
func series(rng *rand.Rand, k seriesKind, n, d int) []float64 {
	out := make([]float64, n*d)
	for c := range d {
		switch {
		case k.ma > 0:
			buf := make([]float64, k.ma+1)
			for i := range buf {
				buf[i] = rng.NormFloat64()
			}
			f := 1 / math.Sqrt(float64(k.ma+1))
			for t := range n {
				buf[t%(k.ma+1)] = rng.NormFloat64()
				var s float64
				for _, v := range buf {
					s += v
				}
				out[t*d+c] = f * s
			}
		default:
			x := rng.NormFloat64()
			e := math.Sqrt(1 - k.phi*k.phi)
			for t := range n {
				x = k.phi*x + e*rng.NormFloat64()
				out[t*d+c] = x
			}
		}
	}
	return out
}

// serialRun returns the Result of one dataset: X and Y independent series
// of kind k with d columns each, n rows; with dep > 0, Y's first column
// gets dep·x₀² added (an alternative Pearson correlation cannot see).
func serialRun(t testing.TB, k seriesKind, d, n int, dep float64, seed uint64, model RowModel, features int) Result {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5e1a1))
	x := series(rng, k, n, d)
	y := series(rng, k, n, d)
	if dep > 0 {
		for i := range n {
			y[i*d] += dep * (x[i*d]*x[i*d] - 1)
		}
	}
	cfg := DefaultConfig()
	cfg.Features, cfg.RowModel, cfg.SkipNormalized, cfg.Workers = features, model, true, 1
	cfg.Seed = seed
	e, err := New(d, d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Blocks of 1000 rows, as a reader gives them.
	for lo := 0; lo < n; lo += 1000 {
		hi := min(n, lo+1000)
		if err := e.Add(x[lo*d:hi*d], y[lo*d:hi*d], hi-lo); err != nil {
			t.Fatal(err)
		}
	}
	r, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// serialSummary is the outcome of a null study of one kind.
type serialSummary struct {
	datasets, rejectSerial, rejectIID, covered, warned int
	meanDiME, seDiME                                   float64
}

func serialNulls(t testing.TB, k seriesKind, d, n, datasets int, firstSeed uint64, features int) serialSummary {
	var s serialSummary
	var sum, sum2 float64
	for i := range datasets {
		r := serialRun(t, k, d, n, 0, firstSeed+uint64(i), SerialRows, features)
		s.datasets++
		if r.PValue <= 0.05 {
			s.rejectSerial++
		}
		if r.PValueIID <= 0.05 {
			s.rejectIID++
		}
		if r.DiMELow <= 0 && 0 <= r.DiMEHigh {
			s.covered++
		}
		if r.Lag1X*r.Lag1Y > SerialThreshold {
			s.warned++
		}
		sum += r.DiME
		sum2 += r.DiME * r.DiME
	}
	m := sum / float64(datasets)
	s.meanDiME = m
	s.seDiME = math.Sqrt((sum2/float64(datasets) - m*m) / float64(datasets-1))
	return s
}

// TestSerialRowsCalibrated: with serial rows, the test's share of p ≤ 0.05
// on independent AR(1) and moving-average series lies in the binomial 99%
// band, where the iid test's does not on AR(1) φ = 0.9; iid rows stay in
// band. Seeds 9100000 and up (none used elsewhere); D = 32, 5000 rows of
// 2 columns per view (at 2000 rows, AR(1) φ = 0.9 gave 17 of 120 while
// this test was written: the groups then hold 2 blocks of 250 rows each,
// too few against the series' range).
func TestSerialRowsCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("400 datasets of 5000 rows")
	}
	const datasets = 100
	lo, hi := binomialBand(datasets, 0.05)
	for i, k := range []seriesKind{iidSeries, ar05, ar09, ma5} {
		s := serialNulls(t, k, 2, 5000, datasets, 9100000+uint64(i)*1000, 32)
		t.Logf("%v: serial test %d/%d at p <= 0.05 (band %d-%d), iid test %d; interval covers 0 in %d; lag warning %d; mean DiME %.2e ± %.1e",
			k, s.rejectSerial, datasets, lo, hi, s.rejectIID, s.covered, s.warned, s.meanDiME, s.seDiME)
		if s.rejectSerial < lo || s.rejectSerial > hi {
			t.Errorf("%v: %d of %d serial p-values at or below 0.05, outside the 99%% band %d-%d", k, s.rejectSerial, datasets, lo, hi)
		}
		if k == ar09 && s.rejectIID <= hi {
			t.Errorf("%v: the iid test rejects %d of %d: this test no longer shows what the serial one fixes", k, s.rejectIID, datasets)
		}
		if wantWarn := k.phi >= 0.5 || k.ma > 0; wantWarn != (s.warned > datasets/2) {
			t.Errorf("%v: the serial warning fires on %d of %d", k, s.warned, datasets)
		}
	}
}

// TestSerialRowsPower: on iid rows with y₀ = y₀′ + 0.5·(x₀² − 1) (Pearson
// correlation 0), the serial test rejects within 3 datasets of the iid
// test, 30 datasets of 2000 rows.
func TestSerialRowsPower(t *testing.T) {
	const datasets = 30
	var serial, iid int
	for i := range datasets {
		r := serialRun(t, iidSeries, 1, 2000, 0.5, 9200000+uint64(i), SerialRows, 32)
		if r.PValue < 0.05 {
			serial++
		}
		if r.PValueIID < 0.05 {
			iid++
		}
	}
	t.Logf("power at 0.05: serial %d/%d, iid %d/%d", serial, datasets, iid, datasets)
	if serial < iid-3 {
		t.Errorf("serial test rejects %d of %d where the iid one rejects %d", serial, datasets, iid)
	}
}

// TestSerialStudy prints the null study of serial rows for CALIBRATION.md
// when DIME_SERIAL_STUDY is the number of datasets per kind (seeds from
// DIME_SERIAL_SEED, default 4200000000).
func TestSerialStudy(t *testing.T) {
	v := os.Getenv("DIME_SERIAL_STUDY")
	if v == "" {
		t.Skip("set DIME_SERIAL_STUDY to the number of datasets per kind")
	}
	datasets, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	first := uint64(4200000000)
	if s := os.Getenv("DIME_SERIAL_SEED"); s != "" {
		if first, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	features := 256
	lo, hi := binomialBand(datasets, 0.05)
	fmt.Printf("| kind | d | rows | datasets | serial p ≤ 0.05 (band %d–%d) | iid p ≤ 0.05 | 95%% interval covers 0 | mean DiME ± s.e. |\n|---|---|---|---|---|---|---|---|\n", lo, hi)
	for i, k := range []seriesKind{iidSeries, ar05, ar09, ma5} {
		for j, d := range []int{1, 3} {
			s := serialNulls(t, k, d, 5000, datasets, first+uint64(i*2+j)*10000, features)
			fmt.Printf("| %v | %d | 5000 | %d | %d | %d | %d (%.1f%%) | %.5f ± %.5f |\n", k, d, datasets, s.rejectSerial, s.rejectIID,
				s.covered, 100*float64(s.covered)/float64(datasets), s.meanDiME, s.seDiME)
		}
	}
}

// TestLagStats: the lag-1 autocorrelation of AR(1) columns is φ within
// 3/√n, a constant column is left out, rows given in any blocks give the
// same sums, and a merge forgets them (a union of shards has no order).
func TestLagStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9400000, 1))
	const n = 20000
	x := series(rng, ar09, n, 2)
	for i := range n {
		x[2*i+1] = 3 // a constant column
	}
	var one, blocks lagStats
	one.add(x, n, 2)
	for lo := 0; lo < n; lo += 777 {
		hi := min(n, lo+777)
		blocks.add(x[2*lo:2*hi], hi-lo, 2)
	}
	if r := one.largest(); math.Abs(r-0.9) > 3/math.Sqrt(n) {
		t.Errorf("AR(1) 0.9: lag-1 autocorrelation %v", r)
	}
	if one.largest() != blocks.largest() {
		t.Errorf("blocks change the autocorrelation: %v vs %v", one.largest(), blocks.largest())
	}
	var short lagStats
	short.add(x[:4], 2, 2)
	if !math.IsNaN(short.largest()) {
		t.Errorf("2 rows: %v, want NaN", short.largest())
	}

	cfg := DefaultConfig()
	// Raw columns: the second column of x is constant on purpose, which
	// standardization refuses.
	cfg.Features, cfg.SkipNormalized, cfg.Standardize = 8, true, false
	y := series(rng, ar09, n, 1)
	a, _ := New(2, 1, cfg)
	b, _ := New(2, 1, cfg)
	if err := a.Add(x[:n], y[:n/2], n/2); err != nil {
		t.Fatal(err)
	}
	if err := b.Add(x[n:], y[n/2:], n/2); err != nil {
		t.Fatal(err)
	}
	ra, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !ra.LooksSerial() || ra.Lag1X < 0.85 || ra.Lag1Y < 0.85 {
		t.Errorf("AR(1) 0.9 rows: Lag1X %v Lag1Y %v LooksSerial %v", ra.Lag1X, ra.Lag1Y, ra.LooksSerial())
	}
	if err := a.Merge(b); err != nil {
		t.Fatal(err)
	}
	rm, err := a.Result()
	if err != nil {
		t.Fatal(err)
	}
	if !math.IsNaN(rm.Lag1X) || rm.LooksSerial() {
		t.Errorf("after a merge: Lag1X %v, LooksSerial %v", rm.Lag1X, rm.LooksSerial())
	}
}

// TestSerialState: a saved state keeps the row model, a restored serial
// estimator gives the same Result, and iid and serial estimators do not
// merge; serial rows with permutations or one group are invalid.
func TestSerialState(t *testing.T) {
	rng := rand.New(rand.NewPCG(9400001, 1))
	x, y := series(rng, ar05, 3000, 2), series(rng, ar05, 3000, 2)
	cfg := DefaultConfig()
	cfg.Features, cfg.SkipNormalized, cfg.RowModel = 16, true, SerialRows
	e, err := New(2, 2, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Add(x, y, 3000); err != nil {
		t.Fatal(err)
	}
	want, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := e.WriteState(&buf); err != nil {
		t.Fatal(err)
	}
	r, err := ReadState(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Result()
	if err != nil {
		t.Fatal(err)
	}
	if r.Config().RowModel != SerialRows || got.RowModel != SerialRows || got.PValue != want.PValue || got.DiME != want.DiME {
		t.Errorf("restored: row model %v, p %v DiME %v; want serial, %v, %v", got.RowModel, got.PValue, got.DiME, want.PValue, want.DiME)
	}
	cfg.RowModel = IIDRows
	iid, _ := New(2, 2, cfg)
	if err := iid.Add(x, y, 3000); err != nil {
		t.Fatal(err)
	}
	if err := r.Merge(iid); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merging serial and iid: %v", err)
	}
	for _, c := range []Config{{RowModel: SerialRows, Permutations: 2}, {RowModel: SerialRows, Groups: 1}, {RowModel: 7}} {
		bad := DefaultConfig()
		bad.RowModel, bad.Permutations, bad.Groups = c.RowModel, c.Permutations, c.Groups
		if err := bad.Validate(); !errors.Is(err, ErrInvalidInput) {
			t.Errorf("%+v: %v", c, err)
		}
	}
}
