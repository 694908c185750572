package stream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/synth"
	"gonum.org/v1/gonum/mat"
)

// pluginRecord is one dataset of TestGroupPluginsStudy: the plug-in DiME
// without each listed set of groups (bit masks; 0 is every row) and the
// groups' weights.
type pluginRecord struct {
	Family  string    `json:"family"`
	Rows    int       `json:"rows"`
	Seed    uint64    `json:"seed"`
	Groups  []float64 `json:"groups"`
	Masks   []uint64  `json:"masks"`
	Plugins []float64 `json:"plugins"`
}

// pluginRecordOf returns the record of e's plug-in DiMEs without each of
// the sets of groups masks (e flushed).
func pluginRecordOf(t *testing.T, e *Estimator, family string, rows int, seed uint64, masks []uint64) pluginRecord {
	t.Helper()
	var fills []func(*mat.SymDense) error
	for _, m := range masks {
		f := e.dimeFills(m, mainPair)
		if f == nil {
			t.Fatalf("mask %b: no rows", m)
		}
		fills = append(fills, f...)
	}
	ent, err := exact.MatrixEntropiesOf(2*e.cfg.Features, e.cfg.Alpha, fills...)
	if err != nil {
		t.Fatal(err)
	}
	rec := pluginRecord{Family: family, Rows: rows, Seed: seed, Masks: masks}
	for g := range e.groups {
		rec.Groups = append(rec.Groups, e.groups[g].xy.Weight())
	}
	for j := range masks {
		rec.Plugins = append(rec.Plugins, ent[2*j+1]-ent[2*j])
	}
	return rec
}

// studyMasks returns every set of at most maxDel of K groups (0 first).
func studyMasks(K, maxDel int) []uint64 {
	var out []uint64
	for m := uint64(0); m < 1<<K; m++ {
		if bits.OnesCount64(m) <= maxDel {
			out = append(out, m)
		}
	}
	return out
}

// unitsNullKind is synth's units-null table (ages, money, counts,
// measurements; independent views) as a nullKind.
func unitsNullKind(d int) nullKind {
	return nullKind{name: fmt.Sprintf("units-null d=%d", d), dimX: d, dimY: d}
}

// TestGroupPluginsStudy writes, when DIME_PLUGINS_STUDY is the number of
// datasets per family, one JSON line per dataset (to DIME_PLUGINS_OUT) with
// the plug-in DiME on every row and without every set of at most
// DIME_PLUGINS_DEL (default 3) of DIME_PLUGINS_GROUPS (default 8) groups,
// for offline study of the jackknifes (DIME_PLUGINS_ROWS rows, default
// 5000; DIME_PLUGINS_SEED the first seed; DIME_PLUGINS_ONLY families).
func TestGroupPluginsStudy(t *testing.T) {
	v := os.Getenv("DIME_PLUGINS_STUDY")
	if v == "" {
		t.Skip("set DIME_PLUGINS_STUDY to the number of datasets per family")
	}
	datasets, _ := strconv.Atoi(v)
	geti := func(name string, def int) int {
		if s := os.Getenv(name); s != "" {
			n, _ := strconv.Atoi(s)
			return n
		}
		return def
	}
	N, K, maxDel := geti("DIME_PLUGINS_ROWS", 5000), geti("DIME_PLUGINS_GROUPS", 8), geti("DIME_PLUGINS_DEL", 3)
	seed := uint64(geti("DIME_PLUGINS_SEED", 22000000))
	out, err := os.OpenFile(os.Getenv("DIME_PLUGINS_OUT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	defer w.Flush()
	families := append(append([]nullKind(nil), heldOutNulls...), unitsNullKind(2), unitsNullKind(3))
	masks := studyMasks(K, maxDel)
	if os.Getenv("DIME_PLUGINS_DESIGN") == "fano" && K == 7 {
		var keep []uint64
		for _, m := range masks {
			if bits.OnesCount64(m) < 3 || slices.Contains(fanoTriples(), m) {
				keep = append(keep, m)
			}
		}
		masks = keep
	}
	for fi, k := range families {
		if only := os.Getenv("DIME_PLUGINS_ONLY"); only != "" && !strings.Contains(only, k.name) {
			continue
		}
		for i := range datasets {
			s := seed + uint64(fi*100000+i)
			var x, y []float64
			if k.draw == nil {
				xm, ym, err := synth.Generate(synth.Spec{Kind: synth.UnitsNull, Dim: k.dimX, Seed: s}, N)
				if err != nil {
					t.Fatal(err)
				}
				x, y = xm.RawMatrix().Data, ym.RawMatrix().Data
			} else {
				x, y = k.generate(N, s)
			}
			cfg := DefaultConfig()
			cfg.SkipNormalized, cfg.Seed, cfg.Groups = true, s, K
			cfg.Features = geti("DIME_PLUGINS_FEATURES", 256)
			e, err := New(k.dimX, k.dimY, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Add(x, y, N); err != nil {
				t.Fatal(err)
			}
			if err := e.Flush(); err != nil {
				t.Fatal(err)
			}
			rec := pluginRecordOf(t, e, k.name, N, s, masks)
			b, _ := json.Marshal(rec)
			w.Write(append(b, '\n'))
			w.Flush()
		}
	}
}

// fanoTriples are the 7 lines of the Fano plane on groups 0 … 6, {k, k+1,
// k+3} mod 7: every pair of groups lies on exactly one line.
func fanoTriples() []uint64 {
	var out []uint64
	for k := range 7 {
		out = append(out, 1<<k|1<<((k+1)%7)|1<<((k+3)%7))
	}
	return out
}
