package dimebeam

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/register"

	"github.com/dime-project/dime/rank"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

func init() {
	register.DoFn3x2[context.Context, int, func(*Partial) bool, Partial, error](&shardFn{})
	register.Combiner3[Merged, Partial, Merged](&collectFn{})
	register.Iter1[Partial]()
}

// The combine of the splits' sums is a tree of two levels, so that no
// worker receives more than a bounded number of sums:
//
//  1. the splits' sums are keyed by their split's shard (Split.Shard, given
//     by assignShards), grouped per key and added (shardFn: stream.MergeSums)
//     into one exact sum per shard;
//  2. the shards' sums are collected by a global combine into a Merged,
//     which the last stage adds (stream.EstimatorOfSums) into the merged
//     estimator (a global combine emits one Merged even without splits).
//
// With n splits there are s = ⌈√n⌉ shards of at most ⌈n/s⌉ ≤ s splits each,
// so a worker of either level receives at most ⌈√n⌉ sums (31 for the 954
// splits of 10⁹ rows at the default split size) where a single combine
// would receive n, whether or not the runner lifts combiners (the portable
// Flink and Spark runners do not). Both levels add exactly, one accumulator
// at a time, so the merged state is the same bit for bit whatever the
// grouping, and a worker holds one accumulator of each sum it adds rather
// than the sums.
//
// The sums themselves (stream.Sum's encoding, about 30 MB at D = 256, or a
// ranking's rank.Sum) are written to files in Config.TempDir, and only
// their names travel through the runner (Partial); without a TempDir they
// travel as elements.

// sumKind says which exact sums a pipeline adds: a pair's (stream.Sum: Sums)
// or a ranking's (rank.Sum: RankSums). Both levels of the tree and the last
// stages are the same for both; only the functions that add the encoded
// sums differ.
type sumKind int

const (
	pairSums sumKind = iota
	rankSums
)

// merge writes the total of the encoded sums rs to w (stream.MergeSums or
// rank.MergeSums).
func (k sumKind) merge(w io.Writer, rs []io.Reader) error {
	if k == rankSums {
		return rank.MergeSums(w, rs...)
	}
	return stream.MergeSums(w, rs...)
}

// Partial is an exact sum (stream.Sum's encoding) on its way through a
// pipeline: in a file of Config.TempDir (Path, with its size and CRC-32C,
// checked when it is read), or its bytes (Data) when the pipeline has no
// TempDir.
type Partial struct {
	Path string
	Size int64
	CRC  uint32
	Data []byte
	// Splits are the files of the splits' sums that a shard's sum adds,
	// removed once the merged sum is read.
	Splits []string
}

// Merged is the exact sum of every split of a pipeline: the sums of its
// shards, which Results, States, RankStates, WriteState and
// RankAccumulator add.
type Merged struct {
	Kind   sumKind
	Shards []Partial
}

// assignShards gives each of the n splits its shard: the splits are dealt
// in turn to ⌈√n⌉ shards.
func assignShards(splits []Split) []Split {
	shards := shardCount(len(splits))
	for i := range splits {
		splits[i].Shard = i % shards
	}
	return splits
}

// shardCount returns the number of shards of n splits: ⌈√n⌉ (at least 1).
func shardCount(n int) int {
	s := max(int(math.Sqrt(float64(n))), 1)
	for s*s < n {
		s++
	}
	return s
}

// mergeSums adds sums of kind k, a PCollection of KV<int, Partial> (a
// split's shard and its sum), into a PCollection of one Merged.
func mergeSums(s beam.Scope, sums beam.PCollection, cfg Config, k sumKind) beam.PCollection {
	return beam.Combine(s, &collectFn{Kind: k}, shardSums(s, sums, cfg, k))
}

// shardSums returns the sum of the splits' sums of each shard.
func shardSums(s beam.Scope, sums beam.PCollection, cfg Config, k sumKind) beam.PCollection {
	return beam.ParDo(s, &shardFn{Cfg: cfg, Kind: k}, beam.GroupByKey(s, sums))
}

// shardFn adds the sums of a shard's splits, of kind Kind.
type shardFn struct {
	Cfg  Config
	Kind sumKind
}

func (f *shardFn) ProcessElement(ctx context.Context, shard int, parts func(*Partial) bool) (Partial, error) {
	p, err := f.add(ctx, shard, parts)
	return p, TagJobError(err)
}

func (f *shardFn) add(ctx context.Context, shard int, parts func(*Partial) bool) (Partial, error) {
	var in []Partial
	var p Partial
	for parts(&p) {
		in = append(in, p)
		p = Partial{}
	}
	if len(in) == 1 {
		return in[0], nil // one split: its sum is the shard's
	}
	out, err := writePartial(ctx, f.Cfg.TempDir, fmt.Sprintf("shard-%d", shard), func(w io.Writer) error {
		return withReaders(ctx, in, func(rs []io.Reader) error { return f.Kind.merge(w, rs) })
	})
	if err != nil {
		return Partial{}, fmt.Errorf("dimebeam: adding the sums of shard %d: %w", shard, err)
	}
	for _, p := range in {
		if p.Path != "" {
			out.Splits = append(out.Splits, p.Path)
		}
	}
	return out, nil
}

// collectFn gathers the shards' sums (of kind Kind) into a Merged, in the
// order of their names (the total does not depend on it).
type collectFn struct{ Kind sumKind }

func (f collectFn) CreateAccumulator() Merged { return Merged{Kind: f.Kind} }

func (collectFn) AddInput(m Merged, p Partial) Merged {
	m.Shards = append(m.Shards, p)
	return m
}

func (collectFn) MergeAccumulators(a, b Merged) Merged {
	a.Shards = append(a.Shards, b.Shards...)
	return a
}

func (f collectFn) ExtractOutput(m Merged) Merged {
	m.Kind = f.Kind
	slices.SortFunc(m.Shards, func(a, b Partial) int {
		return cmp.Or(strings.Compare(a.Path, b.Path), bytes.Compare(a.Data, b.Data))
	})
	return m
}

// estimatorOf returns the estimator of the merged sum m of a pair, added
// one accumulator at a time.
func estimatorOf(ctx context.Context, m Merged) (*stream.Estimator, error) {
	var e *stream.Estimator
	err := withReaders(ctx, m.Shards, func(rs []io.Reader) error {
		var err error
		e, err = stream.EstimatorOfSums(rs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dimebeam: adding the shards' sums: %w", err)
	}
	return e, nil
}

// accumulatorOf returns the multi-pair accumulator of the merged sum m of a
// ranking, added one accumulator at a time.
func accumulatorOf(ctx context.Context, m Merged) (*rank.Accumulator, error) {
	var a *rank.Accumulator
	err := withReaders(ctx, m.Shards, func(rs []io.Reader) error {
		var err error
		a, err = rank.AccumulatorOfSums(rs...)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("dimebeam: adding the shards' sums: %w", err)
	}
	return a, nil
}

// mergedState is the estimator of a merged sum, a pair's or a ranking's,
// whose state WriteState and States write.
type mergedState interface {
	WriteState(io.Writer) error
	MarshalBinary() ([]byte, error)
}

// errNoRows is the error of a merged sum without rows.
var errNoRows = vocab.NewSentinel("dimebeam: no rows in the input")

// stateOf returns the estimator of the merged sum m, of its kind (errNoRows
// when it has no rows).
func stateOf(ctx context.Context, m Merged) (mergedState, error) {
	if m.Kind == rankSums {
		a, err := accumulatorOf(ctx, m)
		if errors.Is(err, rank.ErrInvalidInput) {
			return nil, errNoRows
		}
		if err != nil {
			return nil, err
		}
		return a, nil
	}
	e, err := estimatorOf(ctx, m)
	if errors.Is(err, stream.ErrInvalidInput) {
		return nil, errNoRows
	}
	if err != nil {
		return nil, err
	}
	return e, nil
}

// removeSplits removes the files of the splits' sums that the shards' sums
// of m add, once these are read; a file already gone is no error (a stage
// can run twice).
func removeSplits(ctx context.Context, m Merged) {
	for _, sh := range m.Shards {
		for _, name := range sh.Splits {
			if fs, err := filesystem.New(ctx, name); err == nil {
				removeQuietly(ctx, fs, name)
				fs.Close()
			}
		}
	}
}

// writePartial writes a sum with write: to a new file of dir, named after
// what and a random suffix (so that a retried bundle writes a file of its
// own), or, without dir, to memory.
func writePartial(ctx context.Context, dir, what string, write func(io.Writer) error) (Partial, error) {
	if dir == "" {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			return Partial{}, err
		}
		return Partial{Data: b.Bytes(), Size: int64(b.Len()), CRC: crc32.Checksum(b.Bytes(), castagnoli)}, nil
	}
	name := joinPath(dir, fmt.Sprintf("%s-%016x.sum", what, rand.Uint64()))
	fs, err := filesystem.New(ctx, name)
	if err != nil {
		return Partial{}, err
	}
	defer fs.Close()
	f, err := fs.OpenWrite(ctx, name)
	if err != nil {
		return Partial{}, err
	}
	cw := &checkWriter{crc: crc32.New(castagnoli)}
	if err := writeThrough(io.MultiWriter(f, cw), f, write); err != nil {
		removeQuietly(ctx, fs, name)
		return Partial{}, err
	}
	return Partial{Path: name, Size: cw.n, CRC: cw.crc.Sum32()}, nil
}

// withReaders opens the sums of parts and calls use with a reader of each,
// which checks the size and checksum of what it read when it reaches the
// end.
func withReaders(ctx context.Context, parts []Partial, use func([]io.Reader) error) error {
	rs := make([]io.Reader, len(parts))
	for i, p := range parts {
		if p.Path == "" {
			rs[i] = &checkReader{r: bytes.NewReader(p.Data), p: p, crc: crc32.New(castagnoli)}
			continue
		}
		fs, err := filesystem.New(ctx, p.Path)
		if err != nil {
			return err
		}
		defer fs.Close()
		f, err := fs.OpenRead(ctx, p.Path)
		if err != nil {
			return fmt.Errorf("reading %s: %v", p.Path, err)
		}
		defer f.Close()
		rs[i] = &checkReader{r: bufio.NewReaderSize(f, 1<<20), p: p, crc: crc32.New(castagnoli)}
	}
	return use(rs)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// checkWriter counts and checksums what is written.
type checkWriter struct {
	n   int64
	crc hash.Hash32
}

func (w *checkWriter) Write(b []byte) (int, error) {
	w.n += int64(len(b))
	return w.crc.Write(b)
}

// checkReader reads a Partial's sum and fails at its end if its size or
// checksum is not the Partial's.
type checkReader struct {
	r   io.Reader
	p   Partial
	n   int64
	crc hash.Hash32
}

func (r *checkReader) Read(b []byte) (int, error) {
	n, err := r.r.Read(b)
	r.n += int64(n)
	r.crc.Write(b[:n])
	if errors.Is(err, io.EOF) && (r.n != r.p.Size || r.crc.Sum32() != r.p.CRC) {
		name := cmp.Or(r.p.Path, "a sum in memory")
		return n, fmt.Errorf("%s: %d bytes with checksum %08x, want %d with %08x (changed since it was written)", name, r.n, r.crc.Sum32(), r.p.Size, r.p.CRC)
	}
	return n, err
}

// joinPath joins a directory (a local path or a URL) and a file name.
func joinPath(dir, name string) string {
	if isURL(dir) {
		return strings.TrimSuffix(dir, "/") + "/" + name
	}
	return path.Join(dir, name)
}

// RemoveTemp removes a pipeline's Config.TempDir and the sums in it, once
// the job is done. A local directory is removed with what it holds; in
// object storage the objects that the pipeline wrote are (names ending in
// .sum).
func RemoveTemp(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	fs, err := filesystem.New(ctx, joinPath(dir, "x"))
	if err != nil {
		return err
	}
	defer fs.Close()
	names, err := fs.List(ctx, joinPath(dir, "*.sum"))
	if err != nil {
		return err
	}
	rm, ok := fs.(filesystem.Remover)
	if !ok {
		return fmt.Errorf("dimebeam: cannot remove files from %s", dir)
	}
	for _, n := range names {
		if err := rm.Remove(ctx, n); err != nil {
			return err
		}
	}
	if !isURL(dir) {
		return rm.Remove(ctx, dir) // the directory, now empty
	}
	return nil
}
