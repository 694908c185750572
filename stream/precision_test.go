package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

// precisionBounds bound how far float32 products move DiME, its standard
// error, the joint entropy, the plug-in MI (nats) and the p-value, at the
// defaults, against float64 products. Measured by TestPrecisionEffect on its
// 17 datasets (seeds 7100 on, used nowhere else; 20 000 rows, D = 64;
// AVX-512 kernels):
//
//   - d = 10 columns per view: at most 2.3e-9 on DiME, 5.4e-10 on its
//     standard error, 1.9e-9 on S_XY, 7.4e-9 on the MI, 9.3e-9 on the
//     p-value;
//   - d = 1 and 2, where the features' covariances are nearly low-rank and
//     their small eigenvalues carry the round-off: at most 1.1e-6 on DiME
//     (mixed widths), 2.2e-8 on its standard error, 1.3e-6 on S_XY, 7.3e-6
//     on the MI (discrete), 2.6e-6 on the p-value.
//
// The bounds leave a factor of about 5 over the largest (other CPUs'
// kernels sum in another order).
var precisionBounds = map[bool][5]float64{
	false: {5e-8, 5e-8, 5e-8, 5e-8, 5e-8},   // d = 10
	true:  {6e-6, 2e-7, 7e-6, 4e-5, 1.5e-5}, // d ≤ 2
}

// precisionCases are TestPrecisionEffect's datasets: every kind of synth
// at d = 10 columns per view, and at d = 2 and 1 (where the features'
// covariance is nearly low-rank and its small eigenvalues carry more of the
// round-off).
var precisionCases = func() (cases []struct {
	kind synth.Kind
	dim  int
}) {
	for _, d := range []int{10, 2} {
		for _, k := range synth.Kinds {
			cases = append(cases, struct {
				kind synth.Kind
				dim  int
			}{k, d})
		}
	}
	return append(cases, struct {
		kind synth.Kind
		dim  int
	}{synth.Sine, 1})
}()

// TestPrecisionEffect measures how much the float32 products of the
// default configuration move the estimates, against float64 products, on
// every kind of synth's data (dependent and independent), and checks that
// DiME, its standard error, the joint entropy, the MI and the p-value move
// by less than precisionBounds.
func TestPrecisionEffect(t *testing.T) {
	if testing.Short() {
		t.Skip("16 estimates")
	}
	const n, D = 20000, 64
	if DefaultConfig().Precision != vocab.Float32 {
		t.Fatalf("DefaultConfig().Precision = %v, want float32", DefaultConfig().Precision)
	}
	var worst [5]float64
	for i, ks := range precisionCases {
		kind := ks.kind
		spec := synth.Spec{Kind: kind, Dim: ks.dim, MI: 1, Noise: 0.2, Seed: uint64(7100 + i)}
		x, y, err := synth.Generate(spec, n)
		if err != nil {
			t.Fatal(err)
		}
		var r [2]Result
		for j, prec := range []vocab.Precision{vocab.Float32, vocab.Float64} {
			cfg := DefaultConfig()
			cfg.Features, cfg.Precision = D, prec
			if r[j], err = EstimateMatrices(x, y, cfg); err != nil {
				t.Fatal(err)
			}
		}
		d := [5]float64{
			math.Abs(r[0].DiME - r[1].DiME),
			math.Abs(r[0].DiMEStdErr - r[1].DiMEStdErr),
			math.Abs(r[0].EntropyJoint - r[1].EntropyJoint),
			math.Abs(r[0].MutualInformation - r[1].MutualInformation),
			math.Abs(r[0].PValue - r[1].PValue),
		}
		t.Logf("%-13v d=%-2d DiME %.6f: |ΔDiME| %.1e |Δse| %.1e |ΔS_XY| %.1e |ΔMI| %.1e |Δp| %.1e (p %.3g)",
			kind, ks.dim, r[1].DiME, d[0], d[1], d[2], d[3], d[4], r[1].PValue)
		for q := range d {
			worst[q] = math.Max(worst[q], d[q])
		}
		bound := precisionBounds[ks.dim <= 2]
		for q, name := range []string{"DiME", "standard error", "joint entropy", "MI", "p-value"} {
			if !(d[q] <= bound[q]) {
				t.Errorf("%v, d = %d: float32 products move the %s by %.2e, above %.0e", kind, ks.dim, name, d[q], bound[q])
			}
		}
	}
	t.Logf("worst: %s", fmt.Sprint(worst))
}

// TestPrecisionInState checks that a saved state records the precision of
// its products (an estimator resumed from it goes on with the same one), that
// states of different precisions merge, and that an unknown precision is
// refused.
func TestPrecisionInState(t *testing.T) {
	x, y, err := synth.Generate(synth.Spec{Kind: synth.Gaussian, Dim: 3, MI: 1, Seed: 7200}, 600)
	if err != nil {
		t.Fatal(err)
	}
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	var states [2][]byte
	var ests [2]*Estimator
	for i, prec := range []vocab.Precision{vocab.Float32, vocab.Float64} {
		cfg := DefaultConfig()
		cfg.Features, cfg.Precision = 16, prec
		cfg.Standardize = false // shards of their own scales would not merge
		e, err := New(3, 3, cfg)
		if err != nil {
			t.Fatal(err)
		}
		half := 300 * (i + 1) // disjoint rows: the first 300 and the last 300
		if err := e.Add(xd[(half-300)*3:half*3], yd[(half-300)*3:half*3], 300); err != nil {
			t.Fatal(err)
		}
		if states[i], err = e.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
		back, err := ReadState(bytes.NewReader(states[i]))
		if err != nil {
			t.Fatal(err)
		}
		if got := back.Config().Precision; got != prec {
			t.Errorf("state of a %v estimator reads back as %v", prec, got)
		}
		for _, a := range back.accumulators() {
			if a.Precision() != prec {
				t.Fatalf("restored accumulator %v has precision %v, want %v", a.Description().Part, a.Precision(), prec)
			}
		}
		ests[i] = back
	}
	if err := ests[0].Merge(ests[1]); err != nil {
		t.Errorf("float32 and float64 states do not merge: %v", err)
	}
	// The precision is the byte after the jackknife's (offset 15); the
	// checksum is recomputed so that only the precision is wrong.
	if states[0][15] != 1 || states[1][15] != 0 {
		t.Fatalf("precision bytes %d and %d, want 1 (float32) and 0 (float64)", states[0][15], states[1][15])
	}
	bad := append([]byte(nil), states[0]...)
	bad[15] = 7
	body := bad[:len(bad)-4]
	binary.LittleEndian.PutUint32(bad[len(body):], crc32.Checksum(body, crc32.MakeTable(crc32.Castagnoli)))
	_, err = ReadState(bytes.NewReader(bad))
	if err == nil || !strings.Contains(err.Error(), "precision") {
		t.Errorf("a state with precision 7: error %v, want one naming the precision", err)
	}
}
