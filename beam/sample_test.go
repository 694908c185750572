package dimebeam

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
)

// sampleFiles draws the sample of each of several files of random rows,
// offered in blocks of random sizes, and returns the samples and every row
// with its key.
func sampleFiles(t *testing.T, k int, seed uint64, sizes []int) (samples []Sample, all [][3]uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 99))
	for f, n := range sizes {
		path := fmt.Sprintf("data/part-%d.parquet", f)
		x, y := make([]float64, 2*n), make([]float64, n)
		for i := range n {
			x[2*i], x[2*i+1], y[i] = float64(f), float64(i), float64(1000*f+i)
		}
		rows := newSampleRows(k, 2, 1, seed, path)
		for first := 0; first < n; {
			b := min(n-first, 1+r.IntN(40))
			rows.add(x[2*first:2*(first+b)], y[first:first+b], b, int64(first))
			first += b
		}
		samples = append(samples, rows.sample())
		for i := range n { // the keys again, the slow way
			row := uint64(i)
			all = append(all, [3]uint64{mix(rows.base1 + row*0x9e3779b97f4a7c15), mix(rows.base2 ^ row), uint64(1000*f + i)})
		}
	}
	return samples, all
}

// TestSampleMergesInAnyOrder checks that the samples of files merge, in any
// order and grouping, into the rows of the K smallest keys of all rows.
func TestSampleMergesInAnyOrder(t *testing.T) {
	const k = 50
	samples, all := sampleFiles(t, k, 5, []int{130, 7, 0, 260, 45, 51})
	slices.SortFunc(all, func(a, b [3]uint64) int { return cmpKey(a[0], a[1], b[0], b[1]) })
	var want []float64
	for _, a := range all[:k] {
		want = append(want, float64(a[2]))
	}
	r := rand.New(rand.NewPCG(1, 2))
	var first Sample
	for trial := range 20 {
		parts := make([]Sample, 1+r.IntN(3))
		for _, i := range r.Perm(len(samples)) {
			var err error
			j := r.IntN(len(parts))
			if parts[j], err = parts[j].merge(samples[i]); err != nil {
				t.Fatal(err)
			}
		}
		var total Sample
		for _, i := range r.Perm(len(parts)) {
			total, _ = total.merge(parts[i])
		}
		if trial == 0 {
			first = total
			if !slices.Equal(total.Y, want) || total.Seen != 493 || len(total.X) != 2*k {
				t.Fatalf("sample %v (of %d rows), want the rows of the %d smallest keys %v", total.Y, total.Seen, k, want)
			}
			continue
		}
		if !reflect.DeepEqual(total, first) {
			t.Fatalf("trial %d: another order gives another sample", trial)
		}
	}
	if _, err := first.merge(Sample{K: k, DimX: 3, DimY: 1}); err == nil {
		t.Error("samples of other widths merged")
	}
}

// TestSampleUniform checks that every row is drawn with probability K/N:
// over 2000 seeds, 20 of 200 rows (4 files of 50), each row's count is
// Binomial(2000, 0.1): mean 200, standard deviation 13.4. The test allows
// 6 standard deviations (a false alarm has probability 2e-7 over the 200
// rows) and checks the spread of the counts as a whole.
func TestSampleUniform(t *testing.T) {
	const seeds, k, n = 2000, 20, 200
	counts := make([]int, n)
	for seed := range uint64(seeds) {
		samples, _ := sampleFiles(t, k, seed, []int{50, 50, 50, 50})
		var total Sample
		for _, s := range samples {
			total, _ = total.merge(s)
		}
		for _, v := range total.Y {
			f, i := int(v)/1000, int(v)%1000
			counts[50*f+i]++
		}
	}
	mean, sd := float64(seeds*k)/n, math.Sqrt(float64(seeds)*0.1*0.9)
	var chi2 float64
	for i, c := range counts {
		if math.Abs(float64(c)-mean) > 6*sd {
			t.Errorf("row %d drawn %d times, want %.0f ± %.1f", i, c, mean, sd)
		}
		chi2 += (float64(c) - mean) * (float64(c) - mean) / (sd * sd)
	}
	// Σ z² over 200 rows is about χ²(199) (the counts sum to a constant):
	// mean 199, sd 20; 6 sd either way.
	if chi2 < 199-6*20 || chi2 > 199+6*20 {
		t.Errorf("χ² of the counts %.1f, want 199 ± 120", chi2)
	}
}
