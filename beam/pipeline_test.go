package dimebeam

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/passert"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/testing/ptest"

	"github.com/dime-project/dime/beam/internal/statetest"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
	"github.com/dime-project/dime/vocab"
)

func TestMain(m *testing.M) { ptest.Main(m) }

func init() {
	register.DoFn1x1[stream.Result, float64](&relErrFn{})
	register.Function1x1(describeBandwidths)
	register.Function1x1(withoutShards)
}

const testDim = 2

var (
	testX = tablewriter.ColumnNames("x", testDim)
	testY = tablewriter.ColumnNames("y", testDim)
)

// testConfig returns small settings (D = 32, P = 3) for the views of
// writeDataset.
func testConfig() Config {
	c := stream.DefaultConfig()
	c.Features, c.Permutations, c.Seed = 32, 3, 7
	c.Standardize = false // the pipeline's mechanics; ChoosePilot has tests of its own
	c.BandwidthX, c.BandwidthY = vocab.Sigma(1.2), vocab.Sigma(0.9)
	c.XColumns, c.YColumns = testX, testY
	// Float64 products: the tests compare a pipeline with one estimator to
	// 1e-9, and float32 products (the default) depend on which rows share
	// a chunk of 256, which files and splits move (entropies and MI by up
	// to about 2e-7 relative at D = 32 and d = 2: stream's documentation).
	c.Precision = vocab.Float64
	read := decode.Options{Columns: columns.Spec{X: testX, Y: testY}, Values: decode.Values{MaxAbs: vocab.MaxAbsValue}}
	return Config{Stream: c, Read: NewReadOptions(read)}
}

// writeDataset writes one Parquet file per entry of rows (that many rows of
// dependent data each, a different seed per file) in a new directory and
// returns it.
func writeDataset(t *testing.T, rows ...int) string {
	t.Helper()
	return writeGroups(t, 0, rows...)
}

// writeGroups is writeDataset with row groups of the given size (0: the
// writer's default).
func writeGroups(t *testing.T, groupRows int, rows ...int) string {
	t.Helper()
	dir := t.TempDir()
	cols := append(append([]string{}, testX...), testY...)
	for i, n := range rows {
		x, y, err := synth.Generate(synth.Spec{Kind: synth.Sine, Dim: testDim, Noise: 0.3, Seed: uint64(100 + i)}, max(n, 1))
		if err != nil {
			t.Fatal(err)
		}
		w, err := tablewriter.Create(filepath.Join(dir, fmt.Sprintf("part-%03d.parquet", i)), dataset.Parquet, cols, tablewriter.Options{RowGroupRows: groupRows})
		if err != nil {
			t.Fatal(err)
		}
		row := make([]float64, 2*testDim)
		for r := range n {
			copy(row, x.RawRowView(r))
			copy(row[testDim:], y.RawRowView(r))
			if err := w.Write(row, 1); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dataFiles returns the data files of dir in order.
func dataFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no data files in %s: %v", dir, err)
	}
	return files
}

// readEach calls add with every block of every file of dir, in order.
func readEach(t *testing.T, dir string, add func(file int, x, y []float64, rows int, skipped int64)) {
	t.Helper()
	for i, f := range dataFiles(t, dir) {
		r, err := decode.Open(context.Background(), f, nil, decode.Options{Columns: columns.Spec{X: testX, Y: testY}})
		if err != nil {
			t.Fatal(err)
		}
		for r.Next() {
			add(i, r.X(), r.Y(), r.Rows(), 0)
		}
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		add(i, nil, nil, 0, r.Skipped())
		r.Close()
	}
}

// oneEstimator returns one estimator over every row of dir, file after file:
// what dime score computes.
func oneEstimator(t *testing.T, dir string, cfg stream.Config) *stream.Estimator {
	t.Helper()
	e, err := stream.New(testDim, testDim, cfg)
	if err != nil {
		t.Fatal(err)
	}
	readEach(t, dir, func(_ int, x, y []float64, rows int, skipped int64) {
		if err := e.Add(x, y, rows); err != nil {
			t.Fatal(err)
		}
		e.Skip(skipped)
	})
	return e
}

// plan returns the splits of the dataset dir under cfg, as the pipeline
// plans them.
func plan(t *testing.T, dir string, cfg Config) []Split {
	t.Helper()
	ctx := context.Background()
	inputs, err := resolve(ctx, []string{dir}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range inputs {
		if inputs[i], err = readFooter(ctx, inputs[i], cfg); err != nil {
			t.Fatal(err)
		}
	}
	return planSplits(inputs, cfg)
}

// splitSum returns the state that the pipeline must produce: one estimator
// per split of cfg (runs of files and row groups), summed exactly, its
// shard ids removed (withoutShards).
func splitSum(t *testing.T, dir string, cfg Config) []byte {
	t.Helper()
	b, err := splitEstimators(t, dir, cfg).MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return withoutShards(b)
}

// splitEstimators returns the exact sum of one estimator per split of cfg,
// as an estimator.
func splitEstimators(t *testing.T, dir string, cfg Config) *stream.Estimator {
	t.Helper()
	var sum stream.Sum
	ctx := context.Background()
	for _, sp := range plan(t, dir, cfg) {
		e, err := stream.New(testDim, testDim, cfg.Stream)
		if err != nil {
			t.Fatal(err)
		}
		// The split's rows, in order, added in blocks of the batch size
		// that cross its parts, as dime score's dataset reader cuts them.
		var xs, ys []float64
		for _, part := range sp.Parts {
			r, err := openPart(ctx, part, cfg.Read.opts)
			if err != nil {
				t.Fatal(err)
			}
			for r.Next() {
				xs, ys = append(xs, r.X()...), append(ys, r.Y()...)
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			e.Skip(r.Skipped())
			r.Close()
		}
		batch := cmp.Or(cfg.Read.opts.BatchSize, decode.DefaultBatchSize)
		for n := len(xs) / testDim; n > 0; {
			b := min(n, batch)
			if err := e.Add(xs[:b*testDim], ys[:b*testDim], b); err != nil {
				t.Fatal(err)
			}
			xs, ys, n = xs[b*testDim:], ys[b*testDim:], n-b
		}
		if err := sum.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	e, err := sum.Estimator()
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// withoutShards is statetest.WithoutShards, as a function of the pipeline.
func withoutShards(state []byte) []byte { return statetest.WithoutShards(state) }

// relErrFn maps a result to the largest relative difference of its
// entropies, MI and analytic DiME from Want's.
type relErrFn struct{ Want []float64 }

func (f *relErrFn) ProcessElement(r stream.Result) float64 {
	var worst float64
	for i, v := range quantities(r) {
		worst = math.Max(worst, math.Abs(v-f.Want[i])/math.Abs(f.Want[i]))
	}
	return worst
}

// quantities returns what a pipeline must reproduce to 1e-9 relative.
func quantities(r stream.Result) []float64 {
	return []float64{r.EntropyX, r.EntropyY, r.EntropyJoint, r.MutualInformation, r.DiMEAnalytic, r.TestStatistic, r.PValue}
}

func mustResult(t *testing.T, e *stream.Estimator) stream.Result {
	t.Helper()
	r, err := e.Result()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runOn runs p on the named runner ("" for ptest's, prism by default).
func runOn(t *testing.T, runner string, p *beam.Pipeline) {
	t.Helper()
	var err error
	if runner == "" {
		err = ptest.Run(p)
	} else {
		_, err = beam.Run(context.Background(), runner, p)
	}
	if err != nil {
		t.Fatalf("pipeline on %s: %v", runner, err)
	}
}

// TestScoreFiles runs the pipeline over a directory of Parquet files of
// uneven sizes (one of a single row) on Prism and on the direct runner, in
// three splits (3000 rows; 1 + 2500 rows packed together; 4000 rows). The
// merged state must equal, byte for byte, the exact sum of one estimator per
// split computed here; the result must agree with one estimator over all the
// rows in file order (what dime score computes) to 1e-9 relative (measured:
// 1.2e-14).
func TestScoreFiles(t *testing.T) {
	dir := writeDataset(t, 3000, 1, 2500, 4000)
	cfg := testConfig()
	cfg.SplitRows = 3000
	if got, want := describeSplits(plan(t, dir, cfg)), "[0] [1 2] [3]"; got != want {
		t.Fatalf("splits %s, want %s", got, want)
	}
	want := splitSum(t, dir, cfg)
	one := mustResult(t, oneEstimator(t, dir, cfg.Stream))
	for _, runner := range []string{"", "direct"} {
		t.Run(cmp.Or(runner, "prism"), func(t *testing.T) {
			p, s := beam.NewPipelineWithRoot()
			files := beam.Create(s, dir)
			passert.Equals(s, beam.ParDo(s, withoutShards, States(s, files, cfg)), want)
			res := ScoreFiles(s, files, cfg)
			passert.Count(s, res, "results", 1)
			passert.AllWithinBounds(s, beam.ParDo(s, &relErrFn{Want: quantities(one)}, res), 0, 1e-9)
			runOn(t, runner, p)
		})
	}
}

// TestSameBytesEveryRun runs the pipeline twice on Prism, with the files
// named in several ways (directory, glob, one file twice), and compares the
// written states byte for byte, but for their shard ids, which are random
// identities (stream.ShardID) and change nothing in the estimates.
func TestSameBytesEveryRun(t *testing.T) {
	dir := writeDataset(t, 1500, 700, 2200, 900, 1300)
	cfg := testConfig()
	cfg.SplitRows = 2500 // three splits: 1500 + 700, 2200, 900 + 1300 rows
	out := t.TempDir()
	for i, inputs := range [][]string{{dir}, {filepath.Join(dir, "part-*.parquet"), filepath.Join(dir, "part-000.parquet")}} {
		p, s := beam.NewPipelineWithRoot()
		WriteFile(s, States(s, beam.CreateList(s, inputs), cfg), filepath.Join(out, fmt.Sprintf("run%d.state", i)))
		runOn(t, "", p)
	}
	a, err := os.ReadFile(filepath.Join(out, "run0.state"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, "run1.state"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(withoutShards(a), withoutShards(b)) {
		t.Fatal("two runs wrote different states (shard ids aside)")
	}
	e, err := stream.ReadState(bytes.NewReader(a))
	if err != nil {
		t.Fatal(err)
	}
	if e.Rows() != 6600 {
		t.Errorf("%d rows, want 6600 (a file named twice is read once)", e.Rows())
	}
	if left, _ := filepath.Glob(filepath.Join(out, ".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// describeBandwidths says which rules chose which bandwidths.
func describeBandwidths(r stream.Result) string {
	return fmt.Sprintf("%v %v %.17g %.17g", r.BandwidthX, r.BandwidthY, r.SigmaX, r.SigmaY)
}

// TestMedianSharedBandwidth runs the pipeline with the median rule for X and
// an explicit σ for Y: the first stage must choose σ_X on the seeded uniform
// sample of the whole dataset (recomputed here from the files), every split
// must use it (else their states would not merge), and the result must
// report the rule with the σ it chose.
func TestMedianSharedBandwidth(t *testing.T) {
	dir := writeDataset(t, 900, 1700, 400)
	cfg := testConfig()
	cfg.Stream.BandwidthX = vocab.Median()
	cfg.SampleRows = 300
	var total Sample
	for _, f := range dataFiles(t, dir) {
		r, err := decode.Open(context.Background(), f, nil, decode.Options{Columns: columns.Spec{X: testX, Y: testY}})
		if err != nil {
			t.Fatal(err)
		}
		rows := newSampleRows(300, testDim, testDim, cfg.Stream.Seed, f)
		for first := int64(0); r.Next(); first += int64(r.Rows()) {
			rows.add(r.X(), r.Y(), r.Rows(), first)
		}
		r.Close()
		if total, err = total.merge(rows.sample()); err != nil {
			t.Fatal(err)
		}
	}
	bw, err := choose(cfg, total)
	if err != nil {
		t.Fatal(err)
	}
	if bw.SampleRows != 300 || bw.SeenRows != 3000 || bw.SigmaY != 0 || !(bw.SigmaX > 0) {
		t.Fatalf("bandwidths %+v", bw)
	}
	fixed := cfg
	fixed.Stream = bw.splitConfig(cfg)
	want := splitSum(t, dir, fixed)
	p, s := beam.NewPipelineWithRoot()
	files := beam.Create(s, dir)
	sums := Sums(s, files, cfg)
	passert.Equals(s, beam.ParDo(s, withoutShards, beam.ParDo(s, &stateFn{}, sums)), want)
	passert.Equals(s, beam.ParDo(s, describeBandwidths, Results(s, sums, cfg)),
		fmt.Sprintf("median 0.9 %.17g %.17g", bw.SigmaX, 0.9))
	runOn(t, "", p)
}

// TestRowGroupSplits runs the pipeline over Parquet files of several row
// groups with a small Config.SplitRows, so that files are read as several
// splits of row groups, some of them packed with row groups of the next
// file: the state must be the exact sum of one estimator per split, and
// agree with one estimator over all rows to 1e-9 relative (measured: 1e-14).
func TestRowGroupSplits(t *testing.T) {
	dir := writeGroups(t, 500, 2600, 900, 1700)
	cfg := testConfig()
	cfg.SplitRows = 1200
	// File 0: groups of 500, 500, 500, 500, 500, 100 rows; file 1: 500,
	// 400; file 2: 500, 500, 500, 200. At most 1200 rows per split.
	if got, want := describeSplits(plan(t, dir, cfg)), "[0:0+2] [0:2+2] [0:4+2 1:0+1] [1:1+1 2:0+1] [2:1+3]"; got != want {
		t.Fatalf("splits %s, want %s", got, want)
	}
	want := splitSum(t, dir, cfg)
	one := mustResult(t, oneEstimator(t, dir, cfg.Stream))
	p, s := beam.NewPipelineWithRoot()
	cfg.TempDir = t.TempDir() // the sums in files
	sums := Sums(s, beam.Create(s, dir), cfg)
	passert.Equals(s, beam.ParDo(s, withoutShards, beam.ParDo(s, &stateFn{}, sums)), want)
	passert.AllWithinBounds(s, beam.ParDo(s, &relErrFn{Want: quantities(one)}, Results(s, sums, cfg)), 0, 1e-9)
	runOn(t, "", p)
}

// describeSplits describes splits by the indices of their files (from the
// names part-NNN.parquet of writeDataset) and, for parts of files, their row
// groups (file:first+count).
func describeSplits(splits []Split) string {
	var out []string
	for _, sp := range splits {
		var parts []string
		for _, p := range sp.Parts {
			var file int
			if _, err := fmt.Sscanf(filepath.Base(p.Input.Path), "part-%d.parquet", &file); err != nil {
				file = -1
			}
			if p.Groups == 0 {
				parts = append(parts, fmt.Sprint(file))
			} else {
				parts = append(parts, fmt.Sprintf("%d:%d+%d", file, p.FirstGroup, p.Groups))
			}
		}
		out = append(out, "["+strings.Join(parts, " ")+"]")
	}
	return strings.Join(out, " ")
}

// TestPlanSplits checks the packing of planSplits on footers alone: files
// and row groups in order, at most SplitRows rows per split unless one row
// group has more, a file of unknown rows (CSV) a split of its own, a file
// of no row groups read with its neighbours, and the same plan for the
// same inputs.
func TestPlanSplits(t *testing.T) {
	pq := func(i int, groups ...int64) dataset.Input {
		in := dataset.Input{Path: fmt.Sprintf("part-%03d.parquet", i), Format: dataset.Parquet, RowGroups: groups}
		for _, g := range groups {
			in.Rows += g
		}
		return in
	}
	csv := dataset.Input{Path: "part-004.parquet", Format: dataset.CSV, Rows: -1}
	inputs := []dataset.Input{pq(0, 10, 10), pq(1, 30), pq(2), pq(3, 5, 20, 5), csv, pq(5, 1), pq(6, 2)}
	cfg := Config{SplitRows: 25}
	want := "[0] [1 2] [3:0+2] [3:2+1] [4] [5 6]"
	if got := describeSplits(planSplits(inputs, cfg)); got != want {
		t.Errorf("splits %s, want %s", got, want)
	}
	cfg.SplitRows = 0 // the default: everything but the CSV file in one split each side of it
	if got, want := describeSplits(planSplits(inputs, cfg)), "[0 1 2 3] [4] [5 6]"; got != want {
		t.Errorf("default splits %s, want %s", got, want)
	}
	first := planSplits(inputs, Config{SplitRows: 25})[3].Parts[0]
	if first.FirstGroup != 2 || first.FirstRow != 25 {
		t.Errorf("split 3 starts at group %d, row %d: want 2, 25", first.FirstGroup, first.FirstRow)
	}
}
