package monitor

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/dime-project/dime/stream"
)

// TestSerialShortWindowsStudy prints, when DIME_SERIAL_SHORT is the number
// of windows per kind, the share of p ≤ 0.05 of the monitor's serial test
// on tumbling windows of DIME_SERIAL_ROWS rows (default 2000) of
// independent series (iid, AR(1) φ = 0.5 and 0.9, a moving average of 6),
// with DIME_SERIAL_GROUPS groups (default: the default) and
// DIME_SERIAL_FEATURES D (default 256), seeds from DIME_SERIAL_SEED.
func TestSerialShortWindowsStudy(t *testing.T) {
	v := os.Getenv("DIME_SERIAL_SHORT")
	if v == "" {
		t.Skip("set DIME_SERIAL_SHORT to the number of windows per kind")
	}
	windows, _ := strconv.Atoi(v)
	geti := func(name string, def int) int {
		if s := os.Getenv(name); s != "" {
			n, _ := strconv.Atoi(s)
			return n
		}
		return def
	}
	rows, groups, features := geti("DIME_SERIAL_ROWS", 2000), geti("DIME_SERIAL_GROUPS", 0), geti("DIME_SERIAL_FEATURES", 256)
	seed := uint64(geti("DIME_SERIAL_SEED", 22500000))
	for i, c := range []struct {
		name string
		phi  float64
		ma   int
	}{{"iid", 0, 0}, {"ar1-0.5", 0.5, 0}, {"ar1-0.9", 0.9, 0}, {"ma5", 0, 5}} {
		s := seed + uint64(i)
		rng := rand.New(rand.NewPCG(s, 0x3a1))
		N := windows * rows
		x, y := ar1(rng, c.phi, c.ma, N, 2), ar1(rng, c.phi, c.ma, N, 2)
		cfg := stream.DefaultConfig()
		cfg.Features, cfg.SkipNormalized, cfg.Seed, cfg.RowModel, cfg.Workers = features, true, s, stream.SerialRows, 1
		if groups > 0 {
			cfg.Groups = groups
		}
		var serial, iid, n, cover int
		m, err := New(2, 2, Config{Stream: cfg, WindowRows: int64(rows)}, func(w Window) error {
			n++
			if w.Result.PValue <= 0.05 {
				serial++
			}
			if w.Result.PValueIID <= 0.05 {
				iid++
			}
			if w.Result.DiMELow <= 0 && 0 <= w.Result.DiMEHigh {
				cover++
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
		lo, hi := band99(n)
		fmt.Printf("| %s | %d rows | K=%d D=%d | %d | %d (%d–%d) | %d | ci covers 0: %d |\n", c.name, rows, cfg.Groups, features, n, serial, lo, hi, iid, cover)
	}
}
