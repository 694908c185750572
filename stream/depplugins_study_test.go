package stream

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
)

// depPluginRecord is one dependent dataset of TestDependentPluginsStudy:
// the plug-ins without every set of at most 4 of its 7 groups, what the
// estimator reported, and its target (the default DiME at the same
// settings on many more rows).
type depPluginRecord struct {
	pluginRecord
	DiME, StdErr, Low, High float64
	Target, TargetSE        float64
}

// TestDependentPluginsStudy writes, when DIME_DEPPLUG_STUDY is the number
// of datasets per kind, one JSON line per dependent dataset of 5000 rows
// (to DIME_DEPPLUG_OUT): see depPluginRecord. For offline study of the
// standard error of the jackknifed DiME under dependence. Seeds from
// DIME_DEPPLUG_SEED, DIME_DEPPLUG_TRUTH rows for the target (default
// 50 000), DIME_DEPPLUG_ONLY one kind ("sine2").
func TestDependentPluginsStudy(t *testing.T) {
	v := os.Getenv("DIME_DEPPLUG_STUDY")
	if v == "" {
		t.Skip("set DIME_DEPPLUG_STUDY to the number of datasets per kind")
	}
	datasets, _ := strconv.Atoi(v)
	truthRows := 50000
	if s := os.Getenv("DIME_DEPPLUG_TRUTH"); s != "" {
		truthRows, _ = strconv.Atoi(s)
	}
	seed, _ := strconv.ParseUint(os.Getenv("DIME_DEPPLUG_SEED"), 10, 64)
	out, err := os.OpenFile(os.Getenv("DIME_DEPPLUG_OUT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w := bufio.NewWriter(out)
	defer w.Flush()
	const K, N = 7, 5000
	masks := studyMasks(K, 4)
	for ki, spec := range []synth.Spec{
		{Kind: synth.Gaussian, Dim: 2, MI: 0.5},
		{Kind: synth.Sine, Dim: 2, Noise: 0.5},
		{Kind: synth.Gaussian, Dim: 10, MI: 2},
	} {
		name := spec.Kind.String() + strconv.Itoa(spec.Dim)
		if only := os.Getenv("DIME_DEPPLUG_ONLY"); only != "" && only != name {
			continue
		}
		for i := range datasets {
			spec.Seed = seed + uint64(ki)*100000 + uint64(i)
			cfg := DefaultConfig()
			cfg.SkipNormalized = true
			e, err := New(spec.Dim, spec.Dim, cfg)
			if err != nil {
				t.Fatal(err)
			}
			feedSynth(t, e, spec, N)
			r, err := e.Result()
			if err != nil {
				t.Fatal(err)
			}
			rec := depPluginRecord{pluginRecord: pluginRecordOf(t, e, name, N, spec.Seed, masks),
				DiME: r.DiME, StdErr: r.DiMEStdErr, Low: r.DiMELow, High: r.DiMEHigh}
			tcfg := cfg
			tcfg.Scaling = e.Scaling()
			te, err := New(spec.Dim, spec.Dim, tcfg)
			if err != nil {
				t.Fatal(err)
			}
			ts := spec
			ts.Seed += 50000
			feedSynth(t, te, ts, truthRows)
			tr, err := te.Result()
			if err != nil {
				t.Fatal(err)
			}
			rec.Target, rec.TargetSE = tr.DiME, tr.DiMEStdErr
			b, _ := json.Marshal(rec)
			w.Write(append(b, '\n'))
			w.Flush()
		}
	}
}

// TestDependentStdErrStudy reads the records of TestDependentPluginsStudy
// (the files DIME_DEPPLUG_RECORDS names, comma-separated) and prints, per
// kind, the coverage of each dataset's target by the reported interval and
// by one whose standard error is the delete-a-group jackknife of the
// third-order estimate itself (on each 6 groups, with every triple), with
// the root mean square of each standard error and the spread of the
// error: whether the reported standard error misses the noise of the
// correction.
func TestDependentStdErrStudy(t *testing.T) {
	files := os.Getenv("DIME_DEPPLUG_RECORDS")
	if files == "" {
		t.Skip("set DIME_DEPPLUG_RECORDS to the files of TestDependentPluginsStudy")
	}
	type acc struct {
		n, cover, coverB    int
		errs                []float64
		se2, seB2, targetSE float64
	}
	byKind := map[string]*acc{}
	var kinds []string
	basis := []func(float64) float64{invX, logInvX, invX2}
	for _, f := range strings.Split(files, ",") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var rec depPluginRecord
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			plug := map[uint64]float64{}
			for i, m := range rec.Masks {
				plug[m] = rec.Plugins[i]
			}
			n := rec.Groups
			K := len(n)
			// third returns the third-order estimate on the groups not in
			// out, with the given triples of the rest.
			third := func(out uint64, triples [][3]int) float64 {
				var rest []int
				var N float64
				for k := range K {
					if out&(1<<k) == 0 {
						rest = append(rest, k)
						N += n[k]
					}
				}
				var levels [3]jackLevel
				add := func(l int, gs ...int) {
					m, rm := out, 0.0
					for _, g := range gs {
						m |= 1 << g
						rm += n[g]
					}
					levels[l].vals = append(levels[l].vals, plug[m])
					levels[l].removed = append(levels[l].removed, rm)
				}
				for i, a := range rest {
					add(0, a)
					for _, b := range rest[i+1:] {
						add(1, a, b)
					}
				}
				for _, tr := range triples {
					add(2, rest[tr[0]], rest[tr[1]], rest[tr[2]])
				}
				var sub []float64
				for _, k := range rest {
					sub = append(sub, n[k])
				}
				est, ok := extrapolate(plug[out], sub, levels[:], basis)
				if !ok {
					t.Fatalf("seed %d: extrapolation failed", rec.Seed)
				}
				return est
			}
			est := third(0, leaveTriples(K))
			if math.Abs(est-rec.DiME) > 1e-9 {
				t.Fatalf("seed %d: recomputed %v, reported %v", rec.Seed, est, rec.DiME)
			}
			loo := make([]float64, K)
			for k := range K {
				loo[k] = third(1<<k, leaveTriples(K-1))
			}
			_, seB := jackknife(est, loo, n)
			a := byKind[rec.Family]
			if a == nil {
				a = &acc{}
				byKind[rec.Family] = a
				kinds = append(kinds, rec.Family)
			}
			tq := (rec.High - rec.DiME) / rec.StdErr
			e := rec.DiME - rec.Target
			a.n++
			a.errs = append(a.errs, e)
			a.se2, a.seB2, a.targetSE = a.se2+rec.StdErr*rec.StdErr, a.seB2+seB*seB, a.targetSE+rec.TargetSE*rec.TargetSE
			if math.Abs(e) <= tq*rec.StdErr {
				a.cover++
			}
			if math.Abs(e) <= tq*seB {
				a.coverB++
			}
		}
	}
	fmt.Println("| kind | datasets | reported interval covers | with the jackknife of the estimate covers | rms dime_stderr | rms jackknife of the estimate | sd of error | rms target s.e. |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, k := range kinds {
		a := byKind[k]
		n := float64(a.n)
		_, sd := meanSD(a.errs)
		fmt.Printf("| %s | %d | %d | %d | %.5f | %.5f | %.5f | %.5f |\n", k, a.n, a.cover, a.coverB, math.Sqrt(a.se2/n), math.Sqrt(a.seB2/n), sd, math.Sqrt(a.targetSE/n))
	}
}
