package decode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/internal/ioerr"
	"github.com/dime-project/dime/internal/randstream"
)

// PilotMethod says how the rows of a pilot were chosen.
type PilotMethod uint8

const (
	// PilotPrefix is the first rows of the dataset in its order (files
	// sorted by path, rows in file order): the pilot of inputs whose
	// number of rows is not known without reading them (CSV, Arrow IPC)
	// and of streams, which cannot be read twice.
	PilotPrefix PilotMethod = iota
	// PilotSample is a seeded uniform sample of the dataset's rows: the
	// pilot of Parquet datasets, whose footers give the rows of every row
	// group.
	PilotSample
)

// String returns "prefix" or "sample", the word the reports use.
func (m PilotMethod) String() string {
	if m == PilotSample {
		return "sample"
	}
	return "prefix"
}

// Pilot is the pilot sample of a dataset: the rows on which the settings
// that look at the data (the columns' scales, the median and auto
// bandwidths) are chosen.
type Pilot struct {
	// X and Y hold Rows×DimX and Rows×DimY values, row-major. The rows of
	// a sample come in a seeded random order, so that its first rows are a
	// uniform sample too (the auto bandwidth looks at the first 512).
	X, Y       []float64
	Rows       int
	DimX, DimY int
	// Method says how the rows were chosen.
	Method PilotMethod
	// Deferred is true for a stream (stdin), which cannot be read twice:
	// nothing was read, and the pilot is the first rows of the one reading
	// (a streaming estimator holds them back itself).
	Deferred bool
	// Columns are the columns of the views, patterns expanded (not set
	// when Deferred).
	Columns columns.Selection
	// Population is the number of rows a sample was drawn from (the
	// dataset's, at most Options.Limit), or -1 for a prefix.
	Population int64
}

// ReadPilot chooses and reads the pilot sample of at most rows rows of the
// resolved dataset d (see dataset.Resolve), for the columns that opts
// selects. It is the one definition of the pilot for every command:
//
//   - A Parquet dataset (its footers give the rows of every row group) gets
//     a seeded uniform sample of min(rows, N) of its N rows (at most
//     opts.Limit), rows numbered in the dataset's order: files sorted by
//     path, rows in file order. The sample depends only on N, rows and
//     seed (through its own random stream, randstream.Pilot), so that the
//     same rows are chosen whatever the files they are cut into, the order
//     of the arguments or the spelling of the paths. Only the row groups
//     that hold chosen rows are read. A chosen row with an invalid value
//     (null, NaN, out of range) is left out, so the pilot may have fewer
//     rows: with Values.SkipInvalid the full reading drops it too, and
//     without it the full reading stops on it.
//   - Other files (CSV, Arrow IPC) get their first rows: their number of
//     rows is not known without reading them all.
//   - A stream (stdin) is not read: the result is Deferred.
//
// opts.Limit, Values and Columns matter as for OpenDataset; the reading
// uses one goroutine. Errors are those of OpenDataset.
func ReadPilot(ctx context.Context, d *dataset.Dataset, opts Options, rows int, seed uint64) (Pilot, error) {
	if rows < 1 {
		return Pilot{}, fmt.Errorf("dimeio: a pilot of %d rows: want at least 1", rows)
	}
	if len(d.Inputs) == 0 {
		return Pilot{}, ioerr.New(ErrDataset, "dataset", nil, "no input")
	}
	if d.Inputs[0].Path == "-" || d.Size() < 0 {
		return Pilot{Method: PilotPrefix, Deferred: true, Population: -1}, nil
	}
	opts.Prefetch, opts.Workers, opts.headRows = false, 1, 0
	if err := d.ReadFooters(ctx, opts.Files); err != nil {
		return Pilot{}, err
	}
	if d.Inputs[0].Format != dataset.Parquet || d.Rows() < 0 {
		return readPrefix(ctx, d, opts, rows)
	}
	return readSample(ctx, d, opts, rows, seed)
}

// readPrefix reads the first rows of d.
func readPrefix(ctx context.Context, d *dataset.Dataset, opts Options, rows int) (Pilot, error) {
	if opts.Limit <= 0 || opts.Limit > int64(rows) {
		opts.Limit = int64(rows)
	}
	r, err := NewDatasetReader(ctx, d, nil, opts)
	if err != nil {
		return Pilot{}, err
	}
	defer r.Close()
	p := Pilot{DimX: r.DimX(), DimY: r.DimY(), Method: PilotPrefix, Columns: r.Columns(), Population: -1}
	for r.Next() {
		p.X, p.Y = append(p.X, r.X()...), append(p.Y, r.Y()...)
		p.Rows += r.Rows()
	}
	if err := r.Err(); err != nil {
		return Pilot{}, err
	}
	return p, nil
}

// PilotIndices returns a seeded uniform sample of k distinct row numbers
// of [0, n) in increasing order, drawn from rng: every k-subset has the
// same chance. k must be in [0, n].
func PilotIndices(rng *rand.Rand, n, k int64) []int64 {
	if k <= 0 || n <= 0 {
		return nil
	}
	if k >= n {
		all := make([]int64, n)
		for i := range all {
			all[i] = int64(i)
		}
		return all
	}
	if 16*k >= n {
		// Selection sampling (Knuth's Algorithm S): one pass over the n
		// row numbers, each kept with probability (needed)/(left).
		out := make([]int64, 0, k)
		for i := int64(0); i < n && int64(len(out)) < k; i++ {
			if rng.Int64N(n-i) < k-int64(len(out)) {
				out = append(out, i)
			}
		}
		return out
	}
	// k ≤ n/16: draw with replacement, drop the repeats and draw the
	// missing ones again. The procedure treats every row number alike, so
	// the set it ends with is a uniform k-subset; a round repeats a number
	// with probability below k/n ≤ 1/16.
	out := make([]int64, 0, k)
	for int64(len(out)) < k {
		for m := k - int64(len(out)); m > 0; m-- {
			out = append(out, rng.Int64N(n))
		}
		slices.Sort(out)
		out = slices.Compact(out)
	}
	return out
}

// span is a range of row groups of one input and the pilot rows in it.
type pilotSpan struct {
	input       int
	first, last int     // row groups [first, last]
	rows        []int64 // the rows wanted, numbered in the input, increasing
	slots       []int   // where each goes in the pilot
}

// readSample reads a seeded uniform sample of the rows of a Parquet
// dataset whose row groups are known.
func readSample(ctx context.Context, d *dataset.Dataset, opts Options, rows int, seed uint64) (Pilot, error) {
	n := d.Rows()
	if opts.Limit > 0 {
		n = min(n, opts.Limit)
	}
	rng := rand.New(rand.NewPCG(seed, randstream.Pilot))
	idx := PilotIndices(rng, n, min(int64(rows), n))
	// The rows go to the pilot in a seeded random order.
	slot := make([]int, len(idx))
	for i := range slot {
		slot[i] = i
	}
	rng.Shuffle(len(slot), func(i, j int) { slot[i], slot[j] = slot[j], slot[i] })
	spans := planPilot(d, idx, slot)

	// The views are selected on the first file, as a DatasetReader selects
	// them, and every file read must agree with it.
	first, err := openInput(ctx, nil, d.Inputs[0], nil, opts, nil, opts.Selected)
	if err != nil {
		return Pilot{}, err
	}
	p := Pilot{DimX: first.DimX(), DimY: first.DimY(), Method: PilotSample, Columns: first.Columns(), Population: n}
	refSource, ref := first.source, first.ext.signature()
	first.Close()
	dx, dy := p.DimX, p.DimY
	x, y := make([]float64, len(idx)*dx), make([]float64, len(idx)*dy)
	got := make([]bool, len(idx))
	ropts := opts
	ropts.Values.SkipInvalid = true // a chosen invalid row is left out (see ReadPilot)
	// Each input's columns are selected once, by its first span.
	sels := map[int]*columns.Selection{0: &p.Columns}
	var b Block
	for _, s := range spans {
		rd, err := openInput(ctx, nil, d.Inputs[s.input], nil, ropts, &groupRange{first: s.first, count: s.last - s.first + 1}, sels[s.input])
		if err != nil {
			return Pilot{}, err
		}
		if sels[s.input] == nil {
			sel := rd.Columns()
			sels[s.input] = &sel
		}
		if err := checkSignature(rd, refSource, ref); err != nil {
			rd.Close()
			return Pilot{}, err
		}
		// A read of the storage that failed (a stalled endpoint, an object
		// gone) is the error, not the decoder's account of it.
		err = storageWins(rd.input, pickRows(ctx, rd, &b, s, x, y, got, dx, dy))
		rd.Close()
		if err != nil {
			return Pilot{}, err
		}
	}
	for i, ok := range got {
		if !ok {
			continue
		}
		p.X, p.Y = append(p.X, x[i*dx:(i+1)*dx]...), append(p.Y, y[i*dy:(i+1)*dy]...)
		p.Rows++
	}
	return p, nil
}

// planPilot groups the chosen dataset rows idx (increasing; slot[i] is
// where idx[i] goes in the pilot) by input into spans of consecutive row
// groups that hold chosen rows.
func planPilot(d *dataset.Dataset, idx []int64, slot []int) []pilotSpan {
	var spans []pilotSpan
	var start int64 // the input's first row in the dataset
	k := 0
	for i, in := range d.Inputs {
		var at int64 // the row group's first row in the input
		for g, rows := range in.RowGroups {
			hit := false
			for k < len(idx) && idx[k] < start+at+rows {
				if !hit {
					hit = true
					if m := len(spans); m == 0 || spans[m-1].input != i || spans[m-1].last != g-1 {
						spans = append(spans, pilotSpan{input: i, first: g})
					}
					spans[len(spans)-1].last = g
				}
				s := &spans[len(spans)-1]
				s.rows, s.slots = append(s.rows, idx[k]-start), append(s.slots, slot[k])
				k++
			}
			at += rows
		}
		start += in.Rows
	}
	return spans
}

// checkSignature compares the selected columns of a reader with the first
// file's, as a DatasetReader does.
func checkSignature(rd *Reader, refSource string, ref []colSig) error {
	sig := rd.ext.signature()
	for i, c := range ref {
		if i >= len(sig) || sig[i] != c {
			got := "missing"
			if i < len(sig) {
				got = sig[i].typ
			}
			return ioerr.New(ErrDataset, rd.source, nil, "column %q is %s here but %s in %s: the files of a dataset must agree on the selected columns",
				c.name, got, c.typ, refSource)
		}
	}
	return nil
}

// pickRows reads the record batches of a span's row groups and copies the
// chosen rows that are valid to their slots of x and y.
func pickRows(ctx context.Context, rd *Reader, b *Block, s pilotSpan, x, y []float64, got []bool, dx, dy int) error {
	k := 0
	for k < len(s.rows) {
		if err := ctx.Err(); err != nil {
			return err
		}
		if !rd.src.Next() {
			if err := rd.src.Err(); err != nil {
				return ioerr.New(ErrFormat, rd.source, err, "reading the record batch at row %d", rd.ext.RowsRead())
			}
			return ioerr.New(ErrFormat, rd.source, nil, "ends at row %d, before the row %d its footer promises", rd.ext.RowsRead(), s.rows[k])
		}
		from := rd.ext.RowsRead() // the batch's first row in the input
		if err := rd.ext.Extract(b, rd.src.Record()); err != nil {
			return err
		}
		n := rd.ext.RowsRead() - from
		kept := 0 // the batch's kept rows before row i
		i := int64(0)
		for ; k < len(s.rows) && s.rows[k] < from+n; k++ {
			r := s.rows[k] - from
			for ; i < r; i++ {
				if !rd.ext.anyBad || !rd.ext.bad[i] {
					kept++
				}
			}
			if rd.ext.anyBad && rd.ext.bad[r] {
				continue
			}
			j := s.slots[k]
			copy(x[j*dx:(j+1)*dx], b.X[kept*dx:(kept+1)*dx])
			copy(y[j*dy:(j+1)*dy], b.Y[kept*dy:(kept+1)*dy])
			got[j] = true
		}
	}
	return nil
}
