package dimebeam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/semaphore"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

func init() {
	register.DoFn4x1[context.Context, int, func(*string) bool, func(dataset.Input), error](&resolveFn{})
	register.DoFn2x2[context.Context, dataset.Input, dataset.Input, error](&footerFn{})
	register.DoFn4x1[context.Context, int, func(*dataset.Input) bool, func(Split), error](&planFn{})
	register.Iter1[dataset.Input]()
	register.DoFn2x2[context.Context, Split, Sample, error](&sampleFn{})
	register.DoFn2x2[context.Context, Sample, Bandwidths, error](&chooseFn{})
	register.DoFn2x3[context.Context, Split, int, Partial, error](&scoreFn{})
	register.Function2x1(withBandwidths)
	register.DoFn2x2[context.Context, Merged, stream.Result, error](&resultFn{})
	register.DoFn2x2[context.Context, Merged, []byte, error](&stateFn{})
	register.Iter1[string]()
	register.Emitter1[dataset.Input]()
	register.Emitter1[Split]()
	register.Combiner3[Sample, Sample, Sample](&sampleCombineFn{})
	beam.RegisterCoder(reflect.TypeOf(stream.Result{}), encodeResult, decodeResult)
}

// ScoreFiles scores the dataset that files name and returns a PCollection
// of one stream.Result: the RFF entropies, mutual information and DiME of
// every row, as one streaming estimator over the same files would give them
// (see Sums for how).
func ScoreFiles(s beam.Scope, files beam.PCollection, cfg Config) beam.PCollection {
	s = s.Scope("dimebeam.ScoreFiles")
	return Results(s, Sums(s, files, cfg), cfg)
}

// Results returns the stream.Result of the merged sum of sums (the output
// of Sums, one Merged), reporting the bandwidth rules of cfg. It removes
// the splits' files of Config.TempDir once it has read the sum.
func Results(s beam.Scope, sums beam.PCollection, cfg Config) beam.PCollection {
	return beam.ParDo(s.Scope("dimebeam.Results"), &resultFn{Cfg: cfg}, sums)
}

// States scores the dataset that files name and returns a PCollection of
// one []byte: the state of the estimator of every row (stream.WriteState),
// which stream.ReadState and dime merge read. The state is one element of
// 7K + P accumulators (51.6 MB at D = 256 with the defaults), which a
// runner such as Prism copies several times: to write it to a file, give
// Sums to WriteState instead.
func States(s beam.Scope, files beam.PCollection, cfg Config) beam.PCollection {
	s = s.Scope("dimebeam.States")
	return beam.ParDo(s, &stateFn{}, Sums(s, files, cfg))
}

// Sums scores the dataset that files name and returns a PCollection of one
// Merged: the exact sum of the estimators of every split, which Results,
// WriteState and States add into the estimator of every row.
//
// The elements of files are what dime score takes as arguments: data files,
// directories, quoted glob patterns and object-storage URLs (s3://, gs://,
// azblob://), resolved together by package dataset on a worker
// (sorted, each file once, Config.Read's Files.Where applied). The Parquet footers are
// read on the workers, and the dataset is cut into splits in its order:
// consecutive files and row groups packed into splits of at most
// Config.SplitRows rows (planSplits); the files and then the splits are
// redistributed over the workers (rows are never shuffled: only the
// descriptions of the splits are).
// Every split is read by package decode into a stream.Estimator of its own,
// and the estimators are added exactly (stream.Sum) in a tree of two
// levels (see mergeSums), so that the result is the same, bit for bit,
// whatever the order in which the runner adds them, and whatever the
// bundles. With Config.TempDir the sums are written to files there and only
// their names travel through the runner. When a bandwidth rule looks at the data (median, auto), a first
// stage draws a seeded uniform sample of Config.SampleRows rows from the
// whole dataset and chooses the bandwidths on it; they are attached to
// every split through a side input, so that all splits share one feature
// map. An invalid
// configuration panics (check it with Config.Validate first); input errors
// fail the pipeline with an error naming the file. Every stage returns its
// errors through TagJobError, so that the launcher tells an error of the
// input from a failure of the machine with ReadJobError.
func Sums(s beam.Scope, files beam.PCollection, cfg Config) beam.PCollection {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	s = s.Scope("dimebeam.Sums")
	splits := planStage(s, files, cfg)
	if cfg.needsSample() {
		// The bandwidths reach the splits through a stage of their own:
		// Prism (v2.77.0) polls a stage that reads a side input for as
		// long as one of its bundles runs, which cost a core for the whole
		// of the scoring when the side input was read there.
		bw := ChooseBandwidths(s, splits, cfg)
		splits = beam.Reshuffle(s, beam.ParDo(s, withBandwidths, splits, beam.SideInput{Input: bw}))
	}
	return mergeSums(s, beam.ParDo(s, &scoreFn{Cfg: cfg}, splits), cfg, pairSums)
}

// planStage resolves the names of files into the dataset's data files,
// reads their footers and cuts the dataset into splits (the steps of Sums
// and RankSums before the scoring), redistributed over the workers.
func planStage(s beam.Scope, files beam.PCollection, cfg Config) beam.PCollection {
	names := beam.GroupByKey(s, beam.AddFixedKey(s, files))
	inputs := beam.Reshuffle(s, beam.ParDo(s, &resolveFn{Cfg: cfg}, names))
	footers := beam.GroupByKey(s, beam.AddFixedKey(s, beam.ParDo(s, &footerFn{Cfg: cfg}, inputs)))
	return beam.Reshuffle(s, beam.ParDo(s, &planFn{Cfg: cfg}, footers))
}

// withBandwidths gives a split the bandwidths chosen on the sample.
func withBandwidths(sp Split, bw Bandwidths) Split {
	sp.Bandwidths = bw
	return sp
}

// ChooseBandwidths returns a PCollection of one Bandwidths: the σ that the
// data-dependent rules of cfg (median, auto) choose on a seeded uniform
// sample of Config.SampleRows rows of the splits.
func ChooseBandwidths(s beam.Scope, splits beam.PCollection, cfg Config) beam.PCollection {
	s = s.Scope("dimebeam.ChooseBandwidths")
	samples := beam.ParDo(s, &sampleFn{Cfg: cfg}, splits)
	return beam.ParDo(s, &chooseFn{Cfg: cfg}, beam.Combine(s, &sampleCombineFn{}, samples))
}

// resolveFn resolves all the names given into the dataset's data files, as
// dime score resolves its arguments (sorted, each file once, --where).
type resolveFn struct{ Cfg Config }

func (f *resolveFn) ProcessElement(ctx context.Context, _ int, names func(*string) bool, emit func(dataset.Input)) error {
	var all []string
	var n string
	for names(&n) {
		all = append(all, n)
	}
	slices.Sort(all)
	inputs, err := resolve(ctx, all, f.Cfg)
	if err != nil {
		return TagJobError(err)
	}
	for _, in := range inputs {
		emit(in)
	}
	return nil
}

// footerFn reads the footer of a Parquet file (its row groups), so that
// the footers of a dataset of many files are read by many workers.
type footerFn struct{ Cfg Config }

func (f *footerFn) ProcessElement(ctx context.Context, in dataset.Input) (dataset.Input, error) {
	in, err := readFooter(ctx, in, f.Cfg)
	return in, TagJobError(err)
}

// planFn cuts the dataset, all its inputs with their footers, into splits
// (planSplits), in the dataset's order whatever the order in which the
// footers arrive.
type planFn struct{ Cfg Config }

func (f *planFn) ProcessElement(_ context.Context, _ int, footers func(*dataset.Input) bool, emit func(Split)) error {
	var inputs []dataset.Input
	var in dataset.Input
	for footers(&in) {
		inputs = append(inputs, in)
		in = dataset.Input{}
	}
	slices.SortFunc(inputs, func(a, b dataset.Input) int { return strings.Compare(a.Path, b.Path) })
	for _, sp := range assignShards(planSplits(inputs, f.Cfg)) {
		emit(sp)
	}
	return nil
}

// readSplit reads every block of every part of a split, calling add with
// each block, its part and the index in the part's file of its first row,
// and returns the views' widths and the rows skipped.
func readSplit(ctx context.Context, sp Split, cfg Config, add func(p Part, x, y []float64, rows int, first int64) error) (dimX, dimY int, skipped int64, err error) {
	for i, p := range sp.Parts {
		dx, dy, sk, err := readPart(ctx, p, cfg, add)
		if err != nil {
			return 0, 0, 0, err
		}
		if i > 0 && (dx != dimX || dy != dimY) {
			return 0, 0, 0, vocab.Errorf("dimebeam: %s: views of %d and %d values, but %s has %d and %d", p, dx, dy, sp.Parts[0], dimX, dimY)
		}
		dimX, dimY, skipped = dx, dy, skipped+sk
	}
	return dimX, dimY, skipped, nil
}

// readPart reads the blocks of one part of a split.
func readPart(ctx context.Context, p Part, cfg Config, add func(p Part, x, y []float64, rows int, first int64) error) (dimX, dimY int, skipped int64, err error) {
	r, err := openPart(ctx, p, cfg.Read.opts)
	if err != nil {
		return 0, 0, 0, err
	}
	defer r.Close()
	first := p.FirstRow
	for r.Next() {
		if err := add(p, r.X(), r.Y(), r.Rows(), first); err != nil {
			return 0, 0, 0, fmt.Errorf("dimebeam: %s: %w", p, err)
		}
		first += int64(r.Rows())
	}
	if err := r.Err(); err != nil {
		return 0, 0, 0, err
	}
	return r.DimX(), r.DimY(), r.Skipped(), nil
}

// sampleFn draws the sample of a split.
type sampleFn struct{ Cfg Config }

func (f *sampleFn) ProcessElement(ctx context.Context, sp Split) (Sample, error) {
	var (
		all  Sample
		rows *sampleRows // of the file being read
		path string
	)
	done := func() (err error) {
		if rows != nil {
			all, err = all.merge(rows.sample())
		}
		rows = nil
		return err
	}
	_, _, _, err := readSplit(ctx, sp, f.Cfg, func(p Part, x, y []float64, n int, first int64) error {
		if rows != nil && p.Input.Path != path {
			if err := done(); err != nil {
				return err
			}
		}
		if rows == nil {
			rows, path = newSampleRows(f.Cfg.sampleRows(), len(x)/max(n, 1), len(y)/max(n, 1), f.Cfg.Stream.Seed, p.Input.Path), p.Input.Path
		}
		rows.add(x, y, n, first)
		return nil
	})
	if err != nil {
		return Sample{}, TagJobError(err)
	}
	if err := done(); err != nil {
		return Sample{}, TagJobError(fmt.Errorf("dimebeam: %s: %w", sp, err))
	}
	return all, nil
}

// sampleCombineFn merges samples.
type sampleCombineFn struct{}

func (sampleCombineFn) CreateAccumulator() Sample { return Sample{} }

func (sampleCombineFn) AddInput(a, s Sample) (Sample, error) {
	u, err := a.merge(s)
	return u, TagJobError(err)
}

func (sampleCombineFn) MergeAccumulators(a, b Sample) (Sample, error) {
	u, err := a.merge(b)
	return u, TagJobError(err)
}

func (sampleCombineFn) ExtractOutput(a Sample) Sample { return a }

// chooseFn chooses the bandwidths on the dataset's sample.
type chooseFn struct{ Cfg Config }

func (f *chooseFn) ProcessElement(ctx context.Context, s Sample) (Bandwidths, error) {
	b, err := choose(f.Cfg, s)
	if err != nil {
		return b, TagJobError(err)
	}
	log.Infof(ctx, "dimebeam: bandwidths chosen on a uniform sample of %d of %d rows: %s", b.SampleRows, b.SeenRows, b.describe(f.Cfg))
	return b, nil
}

// describe says which bandwidths were chosen, by which rules.
func (b Bandwidths) describe(cfg Config) string {
	var out []byte
	for _, v := range []struct {
		name  string
		rule  vocab.Bandwidth
		sigma float64
	}{{"sigma_x", cfg.Stream.BandwidthX, b.SigmaX}, {"sigma_y", cfg.Stream.BandwidthY, b.SigmaY}} {
		if !v.rule.NeedsData() {
			continue
		}
		if len(out) > 0 {
			out = append(out, ", "...)
		}
		out = fmt.Appendf(out, "%s %.9g (%s)", v.name, v.sigma, v.rule)
	}
	return string(out)
}

// splitConfig returns the estimator settings of every split: the chosen
// bandwidths in place of data-dependent rules.
func (b Bandwidths) splitConfig(cfg Config) stream.Config {
	c := cfg.Stream
	if c.BandwidthX.NeedsData() {
		c.BandwidthX = vocab.Sigma(b.SigmaX)
	}
	if c.BandwidthY.NeedsData() {
		c.BandwidthY = vocab.Sigma(b.SigmaY)
	}
	c.PilotRows, c.HalfLife, c.Workers = 0, 0, 0
	return c
}

// scoreFn reads a split into an estimator of its own and emits its exact
// sum (stream.WriteSum: about 27 MB at D = 256 where the estimator and its
// float64 state take 51 MB each), written to a file of Config.TempDir or
// held in the element, keyed by the split's shard.
type scoreFn struct{ Cfg Config }

func (f *scoreFn) ProcessElement(ctx context.Context, sp Split) (int, Partial, error) {
	sum, err := f.score(ctx, sp)
	return sp.Shard, sum, TagJobError(err)
}

func (f *scoreFn) score(ctx context.Context, sp Split) (Partial, error) {
	cfg := sp.Bandwidths.splitConfig(f.Cfg)
	if err := cfg.Validate(); err != nil {
		return Partial{}, fmt.Errorf("dimebeam: %s: %w", sp, err)
	}
	w := splitWeight(cfg, runtime.GOMAXPROCS(0))
	if err := splitSlots().Acquire(ctx, w); err != nil {
		return Partial{}, err
	}
	defer splitSlots().Release(w)
	var est *stream.Estimator
	dimX, dimY, skipped, err := readBlocks(ctx, sp, f.Cfg, func(x, y []float64, n int) error {
		if est == nil {
			e, err := stream.New(len(x)/max(n, 1), len(y)/max(n, 1), cfg)
			if err != nil {
				return err
			}
			est = e
		}
		return est.Add(x, y, n)
	})
	if err != nil {
		return Partial{}, err
	}
	if est == nil { // no rows: the state of an empty estimator counts the skipped ones
		if est, err = stream.New(max(dimX, 1), max(dimY, 1), cfg); err != nil {
			return Partial{}, fmt.Errorf("dimebeam: %s: %w", sp, err)
		}
	}
	est.Skip(skipped)
	// The sum is written one accumulator at a time, each let go of once
	// written: the split holds its estimator, not also its sum.
	sum, err := writePartial(ctx, f.Cfg.TempDir, fmt.Sprintf("split-%d", sp.Shard), func(w io.Writer) error {
		return stream.WriteSum(w, est)
	})
	if err != nil { // the machine's failure, whatever the cause says
		return Partial{}, fmt.Errorf("dimebeam: %s: writing its sum: %v", sp, err)
	}
	return sum, nil
}

// readBlocks reads a split into add in blocks of the batch size
// (cfg.Read's BatchSize, decode.DefaultBatchSize when 0) cut across its parts, as
// dime's dataset reader cuts a dataset's rows across its files
// (decode.DatasetReader): an estimator's scopes, chunks and groups follow
// the blocks, so that a split that starts the dataset is added exactly as
// the dime command adds the same rows, float32 chunk sums and jackknife
// groups included. Values are checked where the row of the part is known
// (the estimator checks again, counting rows from the split's first). It
// returns the views' widths and the rows skipped.
func readBlocks(ctx context.Context, sp Split, cfg Config, add func(x, y []float64, n int) error) (dimX, dimY int, skipped int64, err error) {
	batch := cfg.Read.opts.BatchSize
	if batch <= 0 {
		batch = decode.DefaultBatchSize
	}
	var bx, by []float64
	var bn, dx, dy int
	addBlock := func(n int) error {
		if err := add(bx[:n*dx], by[:n*dy], n); err != nil {
			return err
		}
		bx, by, bn = append(bx[:0], bx[n*dx:]...), append(by[:0], by[n*dy:]...), bn-n
		return nil
	}
	dimX, dimY, skipped, err = readSplit(ctx, sp, cfg, func(_ Part, x, y []float64, n int, first int64) error {
		if dx == 0 && dy == 0 {
			dx, dy = len(x)/max(n, 1), len(y)/max(n, 1)
		}
		if len(x) != n*dx || len(y) != n*dy {
			return vocab.Errorf("block of %d rows has %d X values (want %d) and %d Y values (want %d)", n, len(x), n*dx, len(y), n*dy)
		}
		for _, v := range []struct {
			name string
			vals []float64
			d    int
		}{{"X", x, dx}, {"Y", y, dy}} {
			if i := vocab.FirstInvalid(v.vals); i >= 0 {
				return fmt.Errorf("%w: %s row %d, column %d: %s", stream.ErrInvalidInput, v.name, first+int64(i/v.d), i%v.d, vocab.CheckValue(v.vals[i]))
			}
		}
		bx, by, bn = append(bx, x...), append(by, y...), bn+n
		for bn >= batch {
			if err := addBlock(batch); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && bn > 0 {
		err = addBlock(bn)
	}
	return dimX, dimY, skipped, err
}

// splitSlots admits into a process only as many splits at once as its
// cores keep busy: the estimator of a split already adds its rows with
// GOMAXPROCS goroutines (at most K with the analytic estimator, P + 5 with
// permutations), so that running more splits at once gains no speed and
// holds one estimator (51 MB at D = 256 with 7 groups), its buffers and
// blocks of rows per split. Its capacity is GOMAXPROCS; a split takes splitWeight.
var splitSlots = sync.OnceValue(func() *semaphore.Weighted {
	return semaphore.NewWeighted(int64(runtime.GOMAXPROCS(0)))
})

// splitWeight returns the cores that an estimator of cfg keeps busy, of
// procs: its goroutines that have work.
func splitWeight(cfg stream.Config, procs int) int64 {
	useful := cfg.Permutations + 5
	if cfg.Permutations == 0 {
		useful = cmp.Or(cfg.Groups, stream.DefaultGroups)
	}
	return int64(max(1, min(procs, useful)))
}

// resultFn computes the result of the merged sum.
type resultFn struct{ Cfg Config }

func (f *resultFn) ProcessElement(ctx context.Context, m Merged) (stream.Result, error) {
	r, err := f.result(ctx, m)
	return r, TagJobError(err)
}

func (f *resultFn) result(ctx context.Context, m Merged) (stream.Result, error) {
	e, err := estimatorOf(ctx, m)
	if errors.Is(err, stream.ErrInvalidInput) {
		return stream.Result{}, errNoRows
	}
	if err != nil {
		return stream.Result{}, err
	}
	removeSplits(ctx, m)
	if e.Rows() < 2 {
		return stream.Result{}, vocab.Errorf("dimebeam: %d rows in the input: need at least 2", e.Rows())
	}
	r, err := e.Result()
	if err != nil {
		return r, err
	}
	// The splits used the bandwidths chosen on the sample as explicit
	// values: report the rules that chose them.
	if f.Cfg.Stream.BandwidthX.NeedsData() {
		r.BandwidthX = f.Cfg.Stream.BandwidthX
	}
	if f.Cfg.Stream.BandwidthY.NeedsData() {
		r.BandwidthY = f.Cfg.Stream.BandwidthY
	}
	return r, nil
}

// stateFn returns the state of the merged sum (nil when it has no rows).
type stateFn struct{}

func (stateFn) ProcessElement(ctx context.Context, m Merged) ([]byte, error) {
	e, err := stateOf(ctx, m)
	if errors.Is(err, errNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, TagJobError(err)
	}
	b, err := e.MarshalBinary()
	return b, TagJobError(err)
}
