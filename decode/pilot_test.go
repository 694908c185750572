//go:build !dimefuzz

package decode_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/internal/randstream"
	"github.com/dime-project/dime/tablewriter"
)

// pilotMatrix returns rows×dsCols values whose column c0 is the row's
// number, so that a pilot row says which row it is.
func pilotMatrix(rows int) []float64 {
	r := rand.New(rand.NewPCG(2101, 1))
	m := make([]float64, rows*dsCols)
	for i := range rows {
		m[i*dsCols] = float64(i)
		for j := 1; j < dsCols; j++ {
			m[i*dsCols+j] = r.NormFloat64()
		}
	}
	return m
}

// writePilotFiles writes the rows of m cut into files of the given row
// counts (in order, named so that they sort in that order) and returns
// the directory.
func writePilotFiles(t *testing.T, dir, ext string, m []float64, files []int, wo tablewriter.Options) string {
	t.Helper()
	lo := 0
	for k, n := range files {
		writeMatrixFile(t, filepath.Join(dir, fmt.Sprintf("part-%03d%s", k, ext)), m[lo*dsCols:(lo+n)*dsCols], wo)
		lo += n
	}
	return dir
}

func readPilot(t *testing.T, args []string, opts decode.Options, rows int, seed uint64) (decode.Pilot, error) {
	t.Helper()
	d, err := dataset.Resolve(context.Background(), args, opts.Files)
	if err != nil {
		return decode.Pilot{}, err
	}
	return decode.ReadPilot(context.Background(), d, opts, rows, seed)
}

// pilotRowNumbers returns the row numbers (column c0) of a pilot's rows.
func pilotRowNumbers(p decode.Pilot) []int64 {
	out := make([]int64, p.Rows)
	for i := range out {
		out[i] = int64(p.X[i*p.DimX])
	}
	return out
}

// A Parquet dataset's pilot is the seeded sample PilotIndices draws, the
// same rows in the same order whatever the files the rows are cut into
// (one file, 5 uneven files, 40 files, row groups of other sizes), the
// order of the arguments and the spelling of the paths; each row is the
// row of that number, bit for bit; --limit samples from the first rows; a
// chosen row with an invalid value is left out.
func TestReadPilotSample(t *testing.T) {
	const total = 25000
	m := pilotMatrix(total)
	dir := t.TempDir()
	one := writePilotFiles(t, filepath.Join(dir, "one"), ".parquet", m, []int{total}, tablewriter.Options{RowGroupRows: 4000})
	five := writePilotFiles(t, filepath.Join(dir, "five"), ".parquet", m, []int{7000, 1, 12345, 3000, 2654}, tablewriter.Options{RowGroupRows: 1500, BatchRows: 1000})
	forty := make([]int, 40)
	for i := range forty {
		forty[i] = total / 40
	}
	fortyDir := writePilotFiles(t, filepath.Join(dir, "forty"), ".parquet", m, forty, tablewriter.Options{RowGroupRows: 100})
	var fortyFiles []string
	for k := 39; k >= 0; k-- { // reversed on the command line
		fortyFiles = append(fortyFiles, filepath.Join(fortyDir, fmt.Sprintf("part-%03d.parquet", k)))
	}
	opts := decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}}
	const rows, seed = 1000, 77
	want, err := readPilot(t, []string{one}, opts, rows, seed)
	if err != nil {
		t.Fatal(err)
	}
	if want.Method != decode.PilotSample || want.Method.String() != "sample" || want.Rows != rows || want.Population != total || want.Deferred {
		t.Fatalf("pilot: method %v, %d rows of %d, deferred %v", want.Method, want.Rows, want.Population, want.Deferred)
	}
	// The rows are PilotIndices' draw, in a shuffled order.
	rng := rand.New(rand.NewPCG(seed, randstream.Pilot))
	idx := PilotIndicesOf(rng, total, rows)
	got := pilotRowNumbers(want)
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, idx) {
		t.Fatalf("pilot rows %v…, want PilotIndices' %v…", sorted[:5], idx[:5])
	}
	if slices.IsSorted(got) {
		t.Error("the pilot's rows are in increasing order, want a shuffled order")
	}
	for i, r := range got {
		if !slices.Equal(want.X[i*3:(i+1)*3], m[r*dsCols:r*dsCols+3]) || !slices.Equal(want.Y[i*3:(i+1)*3], m[r*dsCols+3:(r+1)*dsCols]) {
			t.Fatalf("pilot row %d is not row %d of the data", i, r)
		}
	}
	// The first rows of the pilot spread over the dataset, not its start.
	if lo := slices.Max(got[:100]); lo < total/2 {
		t.Errorf("the first 100 pilot rows all lie in the first half (up to row %d)", lo)
	}
	rel, err := filepath.Rel(mustWd(t), five)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"5 uneven files", []string{five}},
		{"5 files, relative path", []string{rel}},
		{"40 files named in reverse", fortyFiles},
		{"a glob of 40 files", []string{filepath.Join(fortyDir, "*.parquet")}},
	} {
		p, err := readPilot(t, c.args, opts, rows, seed)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(p.X, want.X) || !slices.Equal(p.Y, want.Y) || p.Population != total {
			t.Errorf("%s: another pilot than the one file's", c.name)
		}
	}
	// Another seed, another sample.
	other, err := readPilot(t, []string{one}, opts, rows, seed+1)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Equal(pilotRowNumbers(other), got) {
		t.Error("seeds 77 and 78 chose the same rows")
	}
	// --limit: a sample of the first rows.
	lim := opts
	lim.Limit = 3000
	p, err := readPilot(t, []string{five}, lim, rows, seed)
	if err != nil {
		t.Fatal(err)
	}
	if p.Population != 3000 || p.Rows != rows || slices.Max(pilotRowNumbers(p)) >= 3000 {
		t.Errorf("--limit 3000: %d rows of %d, up to row %d", p.Rows, p.Population, slices.Max(pilotRowNumbers(p)))
	}
	// More pilot rows than the dataset has: every row, once.
	small, err := readPilot(t, []string{five}, lim, 5000, seed)
	if err != nil {
		t.Fatal(err)
	}
	if all := slices.Sorted(slices.Values(pilotRowNumbers(small))); small.Rows != 3000 || all[0] != 0 || all[2999] != 2999 || len(slices.Compact(all)) != 3000 {
		t.Errorf("a pilot of 5000 rows of 3000: %d rows", small.Rows)
	}
	// Invalid values in chosen rows: left out, never read as values.
	bad := slices.Clone(m)
	nan := map[int64]bool{}
	for _, r := range idx[:10] {
		bad[r*dsCols+4] = math.NaN()
		nan[r] = true
	}
	badDir := writePilotFiles(t, filepath.Join(dir, "bad"), ".parquet", bad, []int{total}, tablewriter.Options{RowGroupRows: 4000})
	for _, skip := range []bool{false, true} {
		o := opts
		o.Values.SkipInvalid = skip
		p, err := readPilot(t, []string{badDir}, o, rows, seed)
		if err != nil {
			t.Fatalf("skip %v: %v", skip, err)
		}
		if p.Rows != rows-10 {
			t.Errorf("skip %v: %d rows, want %d (10 chosen rows hold a NaN)", skip, p.Rows, rows-10)
		}
		for _, r := range pilotRowNumbers(p) {
			if nan[r] {
				t.Errorf("skip %v: row %d with a NaN is in the pilot", skip, r)
			}
		}
		for _, v := range p.Y {
			if math.IsNaN(v) {
				t.Fatalf("skip %v: a NaN in the pilot", skip)
			}
		}
	}
}

// PilotIndicesOf is decode.PilotIndices on int64 counts.
func PilotIndicesOf(rng *rand.Rand, n, k int) []int64 {
	return decode.PilotIndices(rng, int64(n), int64(k))
}

// PilotIndices draws k distinct row numbers of [0, n) in increasing order,
// the same for the same generator, every row with the same chance k/n in
// both of its methods (selection sampling when k ≥ n/16, draws with
// repeats dropped below): the count of each row over 20,000 draws is
// within 5 standard deviations of its expectation.
func TestPilotIndices(t *testing.T) {
	for _, c := range []struct{ n, k int64 }{{20, 3}, {20, 20}, {1000, 10}, {1000, 62}, {1000, 63}, {1 << 40, 1000}} {
		a := decode.PilotIndices(rand.New(rand.NewPCG(1, 2)), c.n, c.k)
		b := decode.PilotIndices(rand.New(rand.NewPCG(1, 2)), c.n, c.k)
		if !slices.Equal(a, b) {
			t.Errorf("n %d, k %d: two draws of the same seed differ", c.n, c.k)
		}
		if int64(len(a)) != c.k || a[0] < 0 || a[len(a)-1] >= c.n {
			t.Errorf("n %d, k %d: %d numbers from %d to %d", c.n, c.k, len(a), a[0], a[len(a)-1])
		}
		for i := 1; i < len(a); i++ {
			if a[i] <= a[i-1] {
				t.Fatalf("n %d, k %d: not increasing and distinct at %d", c.n, c.k, i)
			}
		}
	}
	if got := decode.PilotIndices(rand.New(rand.NewPCG(1, 2)), 10, 0); got != nil {
		t.Errorf("k 0: %v", got)
	}
	if got := decode.PilotIndices(rand.New(rand.NewPCG(1, 2)), 0, 5); got != nil {
		t.Errorf("n 0: %v", got)
	}
	const draws = 20000
	for _, c := range []struct{ n, k int64 }{{20, 3}, {200, 5}} {
		rng := rand.New(rand.NewPCG(3, 4))
		count := make([]int, c.n)
		for range draws {
			for _, i := range decode.PilotIndices(rng, c.n, c.k) {
				count[i]++
			}
		}
		p := float64(c.k) / float64(c.n)
		mean, sd := draws*p, math.Sqrt(draws*p*(1-p))
		for i, v := range count {
			if math.Abs(float64(v)-mean) > 5*sd {
				t.Errorf("n %d, k %d: row %d drawn %d times, want %.0f ± %.0f", c.n, c.k, i, v, mean, sd)
			}
		}
	}
}

// Files whose rows are not known without reading them (CSV, Arrow IPC)
// give their first rows; stdin is not read (the pilot is deferred to the
// one reading).
func TestReadPilotPrefix(t *testing.T) {
	const total = 5000
	m := pilotMatrix(total)
	for _, ext := range []string{".csv", ".arrow"} {
		dir := writePilotFiles(t, t.TempDir(), ext, m, []int{1200, 3800}, tablewriter.Options{})
		p, err := readPilot(t, []string{dir}, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}}, 2000, 77)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		if p.Method != decode.PilotPrefix || p.Method.String() != "prefix" || p.Rows != 2000 || p.Population != -1 {
			t.Fatalf("%s: method %v, %d rows", ext, p.Method, p.Rows)
		}
		for i, r := range pilotRowNumbers(p) {
			if r != int64(i) {
				t.Fatalf("%s: pilot row %d is row %d, want the first rows", ext, i, r)
			}
		}
	}
	d, err := dataset.Resolve(context.Background(), []string{"-"}, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p, err := decode.ReadPilot(context.Background(), d, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}}, 1000, 1)
	if err != nil || !p.Deferred || p.Rows != 0 || p.Method != decode.PilotPrefix {
		t.Errorf("stdin: %+v, %v", p, err)
	}
}

// Bad input: no rows asked for, a missing column, files that disagree on
// a column's type.
func TestReadPilotInvalid(t *testing.T) {
	m := pilotMatrix(3000)
	dir := writePilotFiles(t, t.TempDir(), ".parquet", m, []int{1000, 2000}, tablewriter.Options{RowGroupRows: 500})
	opts := decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}}
	if _, err := readPilot(t, []string{dir}, opts, 0, 1); err == nil {
		t.Error("a pilot of 0 rows: no error")
	}
	o := opts
	o.Columns.Y = []string{"nope"}
	if _, err := readPilot(t, []string{dir}, o, 100, 1); !errors.Is(err, decode.ErrColumn) {
		t.Errorf("a missing column: %v, want ErrColumn", err)
	}
	// A third file whose c4 is a string.
	writeTyped(t, filepath.Join(dir, "part-999.parquet"), tablewriter.ColumnNames("c", dsCols), 0)
	_, err := readPilot(t, []string{dir}, opts, 3000, 1)
	if err == nil {
		t.Fatal("files that disagree: no error")
	}
	if !errors.Is(err, decode.ErrDataset) && !errors.Is(err, decode.ErrColumn) {
		t.Errorf("files that disagree: %v", err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte("part-999")) {
		t.Errorf("the error does not name the file: %v", err)
	}
}

func mustWd(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return wd
}

// readAllRows reads every row of a dataset with a DatasetReader.
func readAllRows(t *testing.T, args []string, opts decode.Options) (x, y []float64, sel columns.Selection) {
	t.Helper()
	r, err := decode.OpenDataset(context.Background(), args, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		x, y = append(x, r.X()...), append(y, r.Y()...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return x, y, r.Columns()
}

// A DatasetReader given the columns a pilot selected (Options.Selected)
// reads the first input on them rather than selecting again, and reads
// the same rows as one that selects them itself: across files, and across
// the units of a file's row groups.
func TestDatasetReaderSelected(t *testing.T) {
	const total = 6000
	m := pilotMatrix(total)
	dir := writePilotFiles(t, t.TempDir(), ".parquet", m, []int{2500, 3500}, tablewriter.Options{RowGroupRows: 300})
	opts := decode.Options{Columns: columns.Spec{X: []string{"c[0-2]"}, Y: dsY}, BatchSize: 100}
	p, err := readPilot(t, []string{dir}, opts, 500, 3)
	if err != nil {
		t.Fatal(err)
	}
	wantX, wantY, wantSel := readAllRows(t, []string{dir}, opts)
	given := opts
	given.Selected = &p.Columns
	x, y, sel := readAllRows(t, []string{dir}, given)
	sameViews(t, x, y, wantX, wantY)
	if !slices.Equal(sel.X.Labels(), wantSel.X.Labels()) || !slices.Equal(sel.Y.Labels(), wantSel.Y.Labels()) {
		t.Errorf("columns %v %v, want %v %v", sel.X.Labels(), sel.Y.Labels(), wantSel.X.Labels(), wantSel.Y.Labels())
	}

	// The first input is bound to the columns given, not selected again:
	// here they are the views swapped.
	file := filepath.Join(t.TempDir(), "one.csv")
	writeMatrixFile(t, file, m[:50*dsCols], tablewriter.Options{})
	swapped, err := readPilot(t, []string{file}, decode.Options{Columns: columns.Spec{X: dsY, Y: dsX}}, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, _, sel = readAllRows(t, []string{file}, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, Selected: &swapped.Columns})
	if !slices.Equal(sel.X.Labels(), dsY) || !slices.Equal(sel.Y.Labels(), dsX) {
		t.Errorf("columns %v %v, want the given %v %v", sel.X.Labels(), sel.Y.Labels(), dsY, dsX)
	}
}
