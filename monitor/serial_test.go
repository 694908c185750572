package monitor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// ar1 returns n rows of d independent AR(1) series of coefficient phi (or,
// with ma > 0, moving averages of ma+1 innovations), row-major.
func ar1(rng *rand.Rand, phi float64, ma, n, d int) []float64 {
	out := make([]float64, n*d)
	for c := range d {
		x := rng.NormFloat64()
		buf := make([]float64, ma+1)
		for t := range n {
			if ma > 0 {
				buf[t%(ma+1)] = rng.NormFloat64()
				var s float64
				for _, v := range buf {
					s += v
				}
				out[t*d+c] = s / math.Sqrt(float64(ma+1))
				continue
			}
			x = phi*x + math.Sqrt(1-phi*phi)*rng.NormFloat64()
			out[t*d+c] = x
		}
	}
	return out
}

// serialWindows runs tumbling windows of rows rows over one long pair of
// independent series and returns how many windows had p ≤ 0.05 with the
// serial test and with the iid one.
func serialWindows(t testing.TB, phi float64, ma, windows, rows, features int, seed uint64) (serial, iid, n int) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x3a1))
	N := windows * rows
	x, y := ar1(rng, phi, ma, N, 2), ar1(rng, phi, ma, N, 2)
	cfg := stream.DefaultConfig()
	cfg.Features, cfg.SkipNormalized, cfg.Seed, cfg.RowModel, cfg.Workers = features, true, seed, vocab.SerialRows, 1
	m, err := New(2, 2, Config{Stream: cfg, WindowRows: int64(rows)}, func(w Window) error {
		n++
		if w.Result.PValue <= 0.05 {
			serial++
		}
		if w.Result.PValueIID <= 0.05 {
			iid++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := feedBlocks(t, m, x, y, nil, 1000); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	return serial, iid, n
}

func band99(n int) (lo, hi int) {
	b := distuv.Binomial{N: float64(n), P: 0.05}
	for lo = 0; b.CDF(float64(lo)) < 0.005; lo++ {
	}
	for hi = n; hi > 0 && b.CDF(float64(hi-1)) >= 0.995; hi-- {
	}
	return lo, hi
}

// TestSerialWindowsCalibrated: tumbling windows of 5000 rows of serial rows
// over independent AR(1) (φ = 0.9) and moving-average series: the share of
// windows at p ≤ 0.05 lies in the binomial 99% band (100 windows each,
// D = 32; seeds 9300001 and 9300002, used nowhere else).
func TestSerialWindowsCalibrated(t *testing.T) {
	if testing.Short() {
		t.Skip("200 windows of 5000 rows")
	}
	for i, c := range []struct {
		phi float64
		ma  int
	}{{0.9, 0}, {0, 5}} {
		serial, iid, n := serialWindows(t, c.phi, c.ma, 100, 5000, 32, 9300001+uint64(i))
		lo, hi := band99(n)
		t.Logf("phi %v ma %d: %d of %d windows at p <= 0.05 (band %d-%d); iid test %d", c.phi, c.ma, serial, n, lo, hi, iid)
		if n != 100 || serial < lo || serial > hi {
			t.Errorf("phi %v ma %d: %d of %d windows at p <= 0.05, outside %d-%d", c.phi, c.ma, serial, n, lo, hi)
		}
	}
}

// TestSerialWindowsStudy prints the monitor's held-out study when
// DIME_MONITOR_STUDY is the number of windows per kind (D = 256, windows of
// 5000 rows, seeds 4400000001 on).
func TestSerialWindowsStudy(t *testing.T) {
	v := os.Getenv("DIME_MONITOR_STUDY")
	if v == "" {
		t.Skip("set DIME_MONITOR_STUDY to the number of windows per kind")
	}
	windows, _ := strconv.Atoi(v)
	for i, c := range []struct {
		name string
		phi  float64
		ma   int
	}{{"iid", 0, 0}, {"ar1-0.5", 0.5, 0}, {"ar1-0.9", 0.9, 0}, {"ma5", 0, 5}} {
		serial, iid, n := serialWindows(t, c.phi, c.ma, windows, 5000, 256, 4400000001+uint64(i))
		lo, hi := band99(n)
		fmt.Printf("| %s | %d | %d (%d–%d) | %d |\n", c.name, n, serial, lo, hi, iid)
	}
}
