package calib

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/tablewriter"
)

// Family is a null family of the held-out study of the default DiME under
// independence: X and Y are independent, each row is independent of the
// others, and any DiME measured on it is estimation error. Its generators
// are written for this study (package synth's kinds and the stream
// package's tuning and earlier held-out generators are not used), so a
// study of them tests the estimator on data it was not tuned on.
type Family struct {
	Name string
	Dim  int // columns per view
	// draw fills one row: x and y have Dim entries each.
	draw func(r *rand.Rand, x, y []float64)
}

// familyStream is the PCG stream of the families' generators ("dimenull"),
// distinct from the library's streams (internal/randstream).
const familyStream = 0x64696d656e756c6c

// NullFamilies returns the families of the null study, as the done-when of
// the honest-estimates work lists them: log-normal; Gaussian with 5% of the
// values replaced by ±50 (outliers at 50σ); Student-t(3); discrete Y (a
// count and a category, with t(3) X); Gaussian with 1, 2 and 10 columns
// per view; and a table in real units. Two columns per view unless said.
func NullFamilies() []Family {
	return []Family{
		{"log-normal d=2", 2, func(r *rand.Rand, x, y []float64) {
			fill(x, func() float64 { return math.Exp(r.NormFloat64()) })
			fill(y, func() float64 { return 20 * math.Exp(0.5*r.NormFloat64()) })
		}},
		{"outliers d=2", 2, func(r *rand.Rand, x, y []float64) {
			out := func() float64 {
				if r.Float64() < 0.05 {
					return float64(50 * (2*r.IntN(2) - 1))
				}
				return r.NormFloat64()
			}
			fill(x, out)
			fill(y, out)
		}},
		{"student-t(3) d=2", 2, func(r *rand.Rand, x, y []float64) {
			t3 := func() float64 { return studentT(r, 3) }
			fill(x, t3)
			fill(y, t3)
		}},
		{"discrete d=2", 2, func(r *rand.Rand, x, y []float64) {
			fill(x, func() float64 { return studentT(r, 3) })
			y[0] = float64(poissonCount(r, 2))
			y[1] = float64(category(r, []float64{0.4, 0.25, 0.15, 0.12, 0.08}))
		}},
		{"gaussian d=1", 1, normalRow},
		{"gaussian d=2", 2, normalRow},
		{"gaussian d=10", 10, normalRow},
		{"real units d=2", 2, func(r *rand.Rand, x, y []float64) {
			x[0] = math.Round(100*(1.70+0.09*r.NormFloat64())) / 100         // height in metres, to the cm
			x[1] = math.Round(100*38000*math.Exp(0.7*r.NormFloat64())) / 100 // yearly income, to the cent
			y[0] = float64(poissonCount(r, 4*r.ExpFloat64()))                // visits, overdispersed
			y[1] = math.Pow(10, -3+8*r.Float64())                            // a duration in seconds, 1e-3 … 1e5
		}},
	}
}

// FamilyByName returns the family whose name starts with name (so
// "gaussian d=2" or "student-t"), or an error naming the families.
func FamilyByName(name string) (Family, error) {
	var names []string
	for _, f := range NullFamilies() {
		if strings.HasPrefix(f.Name, name) {
			return f, nil
		}
		names = append(names, f.Name)
	}
	return Family{}, fmt.Errorf("calib: no family %q (want one of %s)", name, strings.Join(names, ", "))
}

func fill(v []float64, draw func() float64) {
	for i := range v {
		v[i] = draw()
	}
}

func normalRow(r *rand.Rand, x, y []float64) {
	fill(x, r.NormFloat64)
	fill(y, r.NormFloat64)
}

// studentT draws Student's t with nu degrees of freedom as Z/√(V/nu), V a
// sum of nu squared normals.
func studentT(r *rand.Rand, nu int) float64 {
	var v float64
	for range nu {
		e := r.NormFloat64()
		v += e * e
	}
	return r.NormFloat64() / math.Sqrt(v/float64(nu))
}

// poissonCount draws Poisson(lambda) by counting exponential arrivals.
func poissonCount(r *rand.Rand, lambda float64) int {
	n := 0
	for t := r.ExpFloat64(); t < lambda; t += r.ExpFloat64() {
		n++
	}
	return n
}

// category draws k with probability p[k] (the p sum to 1).
func category(r *rand.Rand, p []float64) int {
	u := r.Float64()
	for k, pk := range p {
		if u < pk {
			return k
		}
		u -= pk
	}
	return len(p) - 1
}

// Table returns rows rows of the family drawn from seed, row-major with
// 2·Dim columns (X's, then Y's).
func (f Family) Table(seed uint64, rows int) []float64 {
	r := rand.New(rand.NewPCG(seed, familyStream))
	w := 2 * f.Dim
	table := make([]float64, rows*w)
	for i := range rows {
		row := table[i*w : (i+1)*w]
		f.draw(r, row[:f.Dim], row[f.Dim:])
	}
	return table
}

// Run generates rows rows of the family from seed and runs dime command on
// them (an Arrow IPC stream on stdin, columns x0… and y0…), in process,
// with the extra arguments: the command's defaults, as a user runs it.
func (f Family) Run(seed uint64, rows int, command string, extra ...string) (Outcome, error) {
	data, err := ipcTable(f.Table(seed, rows), rows, f.Dim)
	if err != nil {
		return Outcome{}, err
	}
	return Case{Dim: f.Dim, Rows: rows}.estimate(command, data, extra...)
}

// ipcTable writes a row-major table of rows rows and d + d columns (x0…,
// y0…) as an Arrow IPC stream.
func ipcTable(table []float64, rows, d int) (*bytes.Buffer, error) {
	var data bytes.Buffer
	w, err := tablewriter.New(&data, dataset.IPCStream, append(tablewriter.ColumnNames("x", d), tablewriter.ColumnNames("y", d)...), tablewriter.Options{})
	if err != nil {
		return nil, err
	}
	if err := w.Write(table, rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return &data, nil
}
