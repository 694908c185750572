package calib

import (
	"fmt"
	"math"

	"github.com/dime-project/dime/synth"
)

// UnitsCases returns the cases of the real-units study: tables whose
// columns are ages, amounts of money, counts and measurements of order
// 1e-3 (synth.Units; synth.UnitsNull with null), with 1, 2 and 3 columns
// per view and 2,000 or 5,000 rows; the dependent ones with noise 0.5 and
// 1 (the latent relation b = (a² − 1)/√2 + noise·E, Pearson correlation
// 0).
func UnitsCases(null bool) []Case {
	var out []Case
	for _, rows := range []int{2000, 5000} {
		for _, d := range []int{1, 2, 3} {
			if null {
				out = append(out, Case{Kind: synth.UnitsNull, Dim: d, Rows: rows})
				continue
			}
			for _, noise := range []float64{0.5, 1} {
				out = append(out, Case{Kind: synth.Units, Dim: d, Noise: noise, Rows: rows})
			}
		}
	}
	return out
}

// RunZScored runs dime command on a copy of the dataset of case c whose
// columns are z-scored (each column minus its mean, over its standard
// deviation, on every row), as a user who standardizes by hand before
// scoring would; the rows are those of Run's dataset (synth fills the
// same rows in any block size).
func RunZScored(c Case, seed uint64, command string, extra ...string) (Outcome, error) {
	spec := synth.Spec{Kind: c.Kind, Dim: c.Dim, MI: c.MI, Noise: c.Noise, Seed: seed}
	x, y, err := synth.Generate(spec, c.Rows)
	if err != nil {
		return Outcome{}, err
	}
	d := c.Dim
	table := make([]float64, c.Rows*2*d)
	for i := range c.Rows {
		for k := range d {
			table[i*2*d+k], table[i*2*d+d+k] = x.At(i, k), y.At(i, k)
		}
	}
	for j := range 2 * d {
		var mean, ss float64
		for i := range c.Rows {
			mean += table[i*2*d+j]
		}
		mean /= float64(c.Rows)
		for i := range c.Rows {
			v := table[i*2*d+j] - mean
			ss += v * v
		}
		sd := math.Sqrt(ss / float64(c.Rows-1))
		if !(sd > 0) {
			return Outcome{}, fmt.Errorf("calib: column %d of %v seed %d is constant", j, c, seed)
		}
		for i := range c.Rows {
			table[i*2*d+j] = (table[i*2*d+j] - mean) / sd
		}
	}
	data, err := ipcTable(table, c.Rows, d)
	if err != nil {
		return Outcome{}, err
	}
	return c.estimate(command, data, extra...)
}
