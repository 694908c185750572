package rank

import (
	"bytes"
	"errors"
	"math"
	"testing"

	"github.com/dime-project/dime/covariance"
)

// TestMergeOfPartsIsOneRun: a ranking over every row equals the merge of
// the rankings of its parts (the first part's settings, bandwidths and
// scales given to the others, as dime rank --like does), merged in any
// order, through saved states, in every quantity that does not depend on
// how rows are grouped into scopes: rows, entropies of the sums, plug-in
// DiME, the test; and the merge is refused twice.
func TestMergeOfPartsIsOneRun(t *testing.T) {
	const n, c = 9000, 4
	W := c + 1
	data := table(n, c, 2, 21)
	for _, prec := range []covariance.Precision{covariance.Float64, covariance.Float32} {
		cfg := testConfig(16)
		cfg.Precision = prec
		whole, err := New(rankPlan(c), Config{Stream: cfg})
		if err != nil {
			t.Fatal(err)
		}
		feed(t, data, W, 2000, whole.Add)
		want, err := whole.Results()
		if err != nil {
			t.Fatal(err)
		}
		// Three "files" of 3000 rows; the first chooses the scales.
		var states [][]byte
		var like Config
		for f := range 3 {
			c := Config{Stream: cfg}
			if f > 0 {
				c = like
			}
			part, err := New(rankPlan(c_(c)), c)
			if err != nil {
				t.Fatal(err)
			}
			feed(t, data[f*3000*W:(f+1)*3000*W], W, 2000, part.Add)
			var buf bytes.Buffer
			if err := part.WriteState(&buf); err != nil {
				t.Fatal(err)
			}
			if f == 0 {
				like = part.Config()
			}
			states = append(states, buf.Bytes())
		}
		for _, order := range [][]int{{0, 1, 2}, {2, 0, 1}} {
			var total *Accumulator
			for _, i := range order {
				s, err := ReadState(bytes.NewReader(states[i]))
				if err != nil {
					t.Fatal(err)
				}
				if total == nil {
					total = s
				} else if err := total.Merge(s); err != nil {
					t.Fatal(err)
				}
			}
			got, err := total.Results()
			if err != nil {
				t.Fatal(err)
			}
			// Measured: at most 1e-14 (nats, or relative for the test)
			// with float64 products; 1.1e-7 with float32, whose chunk
			// sums depend on which rows share a chunk.
			tol := 1e-12
			if prec == covariance.Float32 {
				tol = 1e-6
			}
			var worst float64
			var names = []string{"entropy_joint", "dime_analytic", "p_value", "entropy_x", "test_statistic"}
			each := make([]float64, len(names))
			for j := range want {
				if got[j].Rows != want[j].Rows {
					t.Fatalf("rows %d, want %d", got[j].Rows, want[j].Rows)
				}
				for i, f := range [][2]float64{{got[j].EntropyJoint, want[j].EntropyJoint}, {got[j].DiMEAnalytic, want[j].DiMEAnalytic},
					{got[j].PValue, want[j].PValue}, {got[j].EntropyX, want[j].EntropyX}, {got[j].TestStatistic, want[j].TestStatistic}} {
					// Entropies and DiME in nats: absolute; the test's
					// p-value and statistic: relative.
					d := math.Abs(f[0] - f[1])
					if i == 2 || i == 4 {
						d = relDiff(f[0], f[1])
					}
					each[i] = max(each[i], d)
					worst = max(worst, d)
				}
			}
			t.Logf("%v, order %v: largest difference %.2g %v %.2g", prec, order, worst, names, each)
			if worst > tol {
				t.Errorf("%v, order %v: merge differs from one run by %.2g relative", prec, order, worst)
			}
			again, _ := ReadState(bytes.NewReader(states[order[0]]))
			if err := total.Merge(again); !errors.Is(err, ErrIncompatible) {
				t.Errorf("merging a part twice: %v", err)
			}
		}
	}
}

// c_ returns the number of candidates of rankPlan (4 here).
func c_(Config) int { return 4 }

// TestStateRefusesDamage: truncated, corrupted and foreign bytes are
// errors matching ErrState, and a state of other scales does not merge.
func TestStateRefusesDamage(t *testing.T) {
	data := table(3000, 3, 1, 5)
	acc, err := New(rankPlan(3), Config{Stream: testConfig(8)})
	if err != nil {
		t.Fatal(err)
	}
	feed(t, data, 4, 1000, acc.Add)
	var buf bytes.Buffer
	if err := acc.WriteState(&buf); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	for name, bad := range map[string][]byte{
		"truncated": b[:len(b)-9], "empty": nil, "foreign": []byte("dimeST\x04\x00 and more bytes"),
		"flipped":  append(append([]byte{}, b[:len(b)/2]...), append([]byte{b[len(b)/2] ^ 1}, b[len(b)/2+1:]...)...),
		"trailing": append(append([]byte{}, b...), 0),
	} {
		if _, err := ReadState(bytes.NewReader(bad)); !errors.Is(err, ErrState) {
			t.Errorf("%s: %v", name, err)
		}
	}
	other, _ := New(rankPlan(3), Config{Stream: testConfig(8)})
	feed(t, table(3000, 3, 1, 6), 4, 1000, other.Add)
	if err := acc.Merge(other); !errors.Is(err, ErrIncompatible) {
		t.Errorf("merge of other scales: %v", err)
	}
}
