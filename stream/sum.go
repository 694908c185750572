package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/internal/framed"
)

// Sum is the exact, order-independent merge of estimators: the merge a
// distributed runner needs, which combines shards in whatever order and
// grouping its workers finish.
//
// Estimator.Merge adds float64 accumulators, so that merging shards a, b and
// c as (a+b)+c or a+(b+c) can differ in the last bits of the sums and of the
// entropies. A Sum keeps every float64 sum of the state exactly: each
// accumulator (per group X, Y and joint, the normalized score's copies and
// self joints, the permuted joints) as a covariance.ExactSum and each group's
// first moments (X, Y and joint) as a covariance.ExactMean, in 128-bit fixed
// point (multiples of 2⁻⁷²), and the row, skipped-row and chunk counts as
// integers: any order of Add and Merge gives the same Sum, bit for bit, and
// Estimator rounds it back to float64 once. Compared with a float64 merge,
// only round-off differs (each shard's sums are rounded once to the 2⁻⁷²
// grid).
//
// The zero value is an empty Sum. Add takes an estimator over; Merge adds
// another Sum. Both refuse, with an error matching ErrIncompatible and
// without changing the receiver, what Estimator.Merge refuses: other
// settings, bandwidths or columns. A Sum holds the settings of an estimator
// and its exact sums as it ships them, in their compact encoding
// (covariance.ExactSum): about what MarshalBinary writes, about half an
// estimator's memory with float32 products (27.1 MB for 50,000 rows against
// 51.4 MB at D = 256 and the defaults) and close to it with float64
// products; the means, 16 bytes an entry, are small. It is not safe for
// concurrent use.
//
// WriteSum, MergeSums and EstimatorOfSums do what Add, Merge and Estimator
// do on encoded Sums, one accumulator at a time, without holding whole Sums:
// what a distributed combine that keeps its sums in files needs.
type Sum struct {
	est           *Estimator // settings, bandwidths, chunk count and shard ids; no rows, empty accumulators and means
	sums          []covariance.ExactSum
	means         []covariance.ExactMean
	rows, skipped int64
	// lags are the lag-1 statistics of the views' rows in their order of
	// arrival, kept while the Sum holds one estimator's rows (a union of
	// estimators' rows has no order, as in Estimator.Merge); nil otherwise.
	lags *viewLags
}

// Add adds the rows of e, flushing its shuffle buffer first. The Sum takes e
// over: e's accumulators are released and e must not be used afterwards.
func (s *Sum) Add(e *Estimator) error {
	t, accs, err := takeOver(e)
	if err != nil {
		return err
	}
	t.sums = make([]covariance.ExactSum, len(accs))
	for i, a := range accs {
		if err := t.sums[i].Add(a); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
		accs[i] = nil // let the collector have it
	}
	if s.est == nil {
		*s = *t
		return nil
	}
	return s.Merge(t)
}

// takeOver returns the Sum of e without its exact sums (its template, row
// counts and means) and e's accumulators, which e no longer holds: e must
// not be used afterwards.
func takeOver(e *Estimator) (*Sum, []*covariance.Accumulator, error) {
	if err := e.Flush(); err != nil {
		return nil, nil, err
	}
	if !e.Started() {
		return nil, nil, fmt.Errorf("%w: an estimator has no rows", ErrIncompatible)
	}
	t := &Sum{means: make([]covariance.ExactMean, len(e.means))}
	for i, m := range e.means {
		if err := t.means[i].Add(m); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	// The Y features kept to pair a lone row with the previous scope's
	// last row belong to no shard in particular: forget them, so that the
	// sum does not depend on which estimator came first.
	e.haveLastY = false
	clear(e.lastY)
	t.rows, t.skipped, e.rows, e.skipped = e.rows, e.skipped, 0, 0
	if e.lagX.n > 0 || e.lagY.n > 0 {
		t.lags = &viewLags{e.lagX, e.lagY}
	}
	e.lagX, e.lagY = lagStats{}, lagStats{}
	// The template is a copy of e's settings without accumulators, so that
	// the Sum holds none of e's memory.
	accs := e.accs
	e.releaseAccumulators()
	tmpl, err := e.clone()
	if err != nil {
		return nil, nil, err
	}
	t.est = tmpl
	return t, accs, nil
}

// Merge adds other's rows to s. A nil or empty other is a no-op; an empty s
// becomes a copy of other.
func (s *Sum) Merge(other *Sum) error {
	if other == nil || other.est == nil {
		return nil
	}
	if s.est == nil {
		var c Sum
		if err := c.mergeHead(other); err != nil {
			return err
		}
		c.sums = make([]covariance.ExactSum, len(other.sums))
		for i := range c.sums {
			c.sums[i].Merge(&other.sums[i]) // into an empty sum: a copy
		}
		c.means = make([]covariance.ExactMean, len(other.means))
		for i := range c.means {
			c.means[i].Merge(&other.means[i])
		}
		*s = c
		return nil
	}
	if len(s.sums) == len(other.sums) {
		for i := range s.sums {
			if s.sums[i].Budget()+other.sums[i].Budget() > covariance.MaxExactBudget {
				return errTooManyRows
			}
			if s.sums[i].Description() != other.sums[i].Description() {
				return errMapsDiffer
			}
		}
	}
	if len(s.means) == len(other.means) {
		for i := range s.means {
			if s.means[i].Budget()+other.means[i].Budget() > covariance.MaxExactBudget {
				return errTooManyRows
			}
		}
	}
	if err := s.mergeHead(other); err != nil {
		return err
	}
	for i := range s.sums {
		if err := s.sums[i].Merge(&other.sums[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err) // checked above: not reached
		}
	}
	for i := range s.means {
		if err := s.means[i].Merge(&other.means[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err) // checked above: not reached
		}
	}
	return nil
}

var (
	errTooManyRows = fmt.Errorf("%w: more rows than an exact sum holds", ErrIncompatible)
	errMapsDiffer  = fmt.Errorf("%w: feature maps differ (kernel, variant, features or seed)", ErrIncompatible)
)

// mergeHead adds the template and row counts of other to s's (an empty s
// takes a copy of other's template); it leaves the exact sums alone. The
// templates have no rows, no accumulators and zero means: their Merge
// checks every setting and the shard ids (so that the layouts match), adds
// the chunk counts and leaves the rest so.
func (s *Sum) mergeHead(other *Sum) error {
	if s.est == nil {
		c, err := other.est.clone()
		if err != nil {
			return err
		}
		s.est, s.rows, s.skipped, s.lags = c, other.rows, other.skipped, other.lags.clone()
		return nil
	}
	if s.rows > math.MaxInt64-other.rows || s.skipped > math.MaxInt64-other.skipped {
		return fmt.Errorf("%w: row counts overflow (%d + %d rows, %d + %d skipped)", ErrIncompatible, s.rows, other.rows, s.skipped, other.skipped)
	}
	if err := s.est.Merge(other.est); err != nil {
		return err
	}
	s.rows += other.rows
	s.skipped += other.skipped
	s.lags = nil
	return nil
}

// Rows returns the number of rows added.
func (s *Sum) Rows() int64 { return s.rows }

// Empty reports whether nothing was added yet.
func (s *Sum) Empty() bool { return s.est == nil }

// Estimator returns a new estimator of every row added: each accumulator and
// mean is the exact sum rounded once to float64. Its Result and its state
// (WriteState) are thus the same whatever the order of the merges. An
// empty Sum gives an error matching ErrInvalidInput.
func (s *Sum) Estimator() (*Estimator, error) {
	if s.est == nil {
		return nil, invalidf("no rows to sum")
	}
	return s.assemble(func(i int) (*covariance.Accumulator, error) { return s.sums[i].Accumulator() })
}

// assemble returns the estimator of the template and counts of s, with the
// accumulators that acc returns (in the order of layout) and s's means.
func (s *Sum) assemble(acc func(i int) (*covariance.Accumulator, error)) (*Estimator, error) {
	e, err := s.est.clone()
	if err != nil {
		return nil, err
	}
	accs := make([]*covariance.Accumulator, len(e.accs))
	for i := range accs {
		if accs[i], err = acc(i); err != nil {
			return nil, err
		}
	}
	e.setAccumulators(e.spec, e.sigmaX, e.sigmaY, accs, e.means)
	for i, m := range e.means {
		total, err := s.means[i].Mean()
		if err != nil {
			return nil, err
		}
		if err := m.Merge(total); err != nil { // into zeros: a copy
			return nil, err
		}
	}
	e.rows, e.skipped = s.rows, s.skipped
	if l := s.lags.clone(); l != nil {
		e.lagX, e.lagY = l[0], l[1]
	}
	return e, nil
}

// clone returns a template, a copy of the settings of an estimator without
// rows (its accumulators zero values, its means zero), through its
// settings-only state.
func (e *Estimator) clone() (*Estimator, error) {
	b, err := e.appendState(nil, true)
	if err != nil {
		return nil, err
	}
	return decodeState(bytes.NewReader(b), true)
}

// The encoding of a Sum, version 4, little-endian: magic "dimeSM", version,
// then either 0 (an empty Sum) or 1 followed by the row and skipped-row
// counts (8 bytes each), the settings-only state of the estimator that holds
// the settings, chunk count and shard ids (WriteState's format without the
// accumulators and means, flag bit 1) and the lag-1 statistics (lagStats'
// encoding, empty when the Sum holds several estimators' rows), each with
// its length (4 bytes), the exact sums of the accumulators
// in their compact encoding (covariance.ExactSum.AppendCompact, one per
// accumulator of the state, in its order: 7K + P, or 3K + P without the
// normalized score) and of the means (ExactMean, 3K), each with its length
// (4 bytes), and a CRC-32C of every byte before it. A Sum is a format
// internal to one pipeline, written and read by the same build: only this
// version is read.
//
// At D = 256 with the default settings (7 groups, float32 products), a
// split of 50,000 rows ships 27.1 MB, where its float64 state takes 51.6 MB
// (TestSumCompactSize).
const (
	sumMagic   = "dimeSM"
	sumVersion = 4
)

// MarshalBinary implements encoding.BinaryMarshaler.
func (s *Sum) MarshalBinary() ([]byte, error) {
	// One allocation: the exact sums make nearly all of it.
	size := len(sumMagic) + 2 + 16 + 4 + 4096 + 4
	for i := range s.sums {
		size += 4 + s.sums[i].CompactSize()
	}
	for i := range s.means {
		b, _ := s.means[i].AppendBinary(nil) // small: 2D entries
		size += 4 + len(b)
	}
	var buf bytes.Buffer
	buf.Grow(size)
	w := newSumWriter(&buf)
	w.head(s)
	for i := range s.sums {
		w.Piece(s.sums[i].AppendCompact)
	}
	for i := range s.means {
		w.Piece(s.means[i].AppendBinary)
	}
	if err := w.End(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. Bytes that are not
// a Sum's encoding give an error matching ErrState, and s is left unchanged.
func (s *Sum) UnmarshalBinary(data []byte) error {
	r := newSumReader(bytes.NewReader(data))
	t, err := r.head()
	if err != nil {
		return err
	}
	if t.est != nil {
		accs, means := layout(t.est.cfg, t.est.spec)
		t.sums = make([]covariance.ExactSum, len(accs))
		for i, d := range accs {
			if err := r.exact(i, d, &t.sums[i]); err != nil {
				return err
			}
		}
		t.means = make([]covariance.ExactMean, len(means))
		for i, d := range means {
			if err := r.mean(i, d, &t.means[i]); err != nil {
				return err
			}
		}
	}
	if err := r.End(); err != nil {
		return err
	}
	*s = *t
	return nil
}

// WriteSum writes the encoding of the Sum of e (what Add then MarshalBinary
// give, byte for byte) to w, one accumulator at a time: it holds the exact
// sum of one accumulator at once, and lets go of each of e's accumulators
// once written. e is flushed first and must not be used afterwards.
func WriteSum(w io.Writer, e *Estimator) error {
	t, accs, err := takeOver(e)
	if err != nil {
		return err
	}
	sw := newSumWriter(w)
	sw.head(t)
	for i, a := range accs {
		var x covariance.ExactSum
		if err := x.Add(a); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
		accs[i] = nil
		sw.Piece(x.AppendCompact)
	}
	for i := range t.means {
		sw.Piece(t.means[i].AppendBinary)
	}
	return sw.End()
}

// MergeSums reads the encodings of Sums from sums and writes the encoding of
// their total to w: the bytes that decoding them, merging them in any order
// and encoding the total would give. It reads and writes one accumulator at
// a time, holding the exact sums of that accumulator from every input and
// their total, not whole Sums. An input that is not a Sum's encoding, or
// that does not merge with the others, gives an error matching ErrState or
// ErrIncompatible; what was written to w is then to be discarded.
func MergeSums(w io.Writer, sums ...io.Reader) error {
	head, rs, err := readHeads(sums)
	if err != nil {
		return err
	}
	sw := newSumWriter(w)
	sw.head(head)
	err = eachTotal(head, rs, func(i int, x *covariance.ExactSum) error {
		sw.Piece(x.AppendCompact)
		return nil
	})
	if err != nil {
		return err
	}
	for i := range head.means {
		sw.Piece(head.means[i].AppendBinary)
	}
	return sw.End()
}

// EstimatorOfSums reads the encodings of Sums from sums and returns the
// estimator of their total, as Estimator of their merged Sum would give it.
// It reads one accumulator at a time: it holds the estimator and the exact
// sums of one accumulator, not whole Sums. No input but empty Sums gives an
// error matching ErrInvalidInput.
func EstimatorOfSums(sums ...io.Reader) (*Estimator, error) {
	head, rs, err := readHeads(sums)
	if err != nil {
		return nil, err
	}
	if head.est == nil {
		return nil, invalidf("no rows to sum")
	}
	accs := make([]*covariance.Accumulator, len(head.sums))
	err = eachTotal(head, rs, func(i int, x *covariance.ExactSum) error {
		var err error
		accs[i], err = x.Accumulator()
		return err
	})
	if err != nil {
		return nil, err
	}
	return head.assemble(func(i int) (*covariance.Accumulator, error) { return accs[i], nil })
}

// readHeads reads what the encodings of Sums hold before their exact sums
// and returns the Sum of their templates and row counts, with a zero
// ExactSum per accumulator and the total of the means (small: 3K vectors of
// 2D), and the readers of the nonempty inputs, positioned at their first
// exact sum. Empty inputs are read to their end.
func readHeads(sums []io.Reader) (*Sum, []*sumReader, error) {
	var total Sum
	var rs []*sumReader
	for _, in := range sums {
		r := newSumReader(in)
		h, err := r.head()
		if err != nil {
			return nil, nil, err
		}
		if h.est == nil {
			if err := r.End(); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := total.mergeHead(h); err != nil {
			return nil, nil, err
		}
		rs = append(rs, r)
	}
	if total.est == nil {
		return &total, nil, nil
	}
	accs, means := layout(total.est.cfg, total.est.spec)
	total.sums = make([]covariance.ExactSum, len(accs))
	total.means = make([]covariance.ExactMean, len(means))
	return &total, rs, nil
}

// eachTotal reads the exact sums of every accumulator from rs, in the order
// of the layout, and calls fn with their total, then reads and adds the
// means into head's and checks the end of every input.
func eachTotal(head *Sum, rs []*sumReader, fn func(i int, x *covariance.ExactSum) error) error {
	if head.est == nil {
		return nil
	}
	accs, means := layout(head.est.cfg, head.est.spec)
	xs := make([]covariance.ExactSum, len(rs))
	ptrs := make([]*covariance.ExactSum, len(rs))
	for i, d := range accs {
		for j, r := range rs {
			if err := r.exact(i, d, &xs[j]); err != nil {
				return err
			}
			ptrs[j] = &xs[j]
		}
		var total covariance.ExactSum
		if err := total.Merge(ptrs...); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
		clear(xs)
		if err := fn(i, &total); err != nil {
			return err
		}
	}
	for i, d := range means {
		for _, r := range rs {
			var m covariance.ExactMean
			if err := r.mean(i, d, &m); err != nil {
				return err
			}
			if err := head.means[i].Merge(&m); err != nil {
				return fmt.Errorf("%w: %v", ErrIncompatible, err)
			}
		}
	}
	for _, r := range rs {
		if err := r.End(); err != nil {
			return err
		}
	}
	return nil
}

// sumWriter writes the encoding of a Sum piece by piece (framed.Writer).
type sumWriter struct{ *framed.Writer }

func newSumWriter(w io.Writer) *sumWriter { return &sumWriter{framed.NewWriter(w)} }

// head writes what precedes the exact sums: the magic, version, flag, row
// counts and template of s.
func (w *sumWriter) head(s *Sum) {
	le := binary.LittleEndian
	b := append([]byte(sumMagic), sumVersion, boolByte(s.est != nil))
	if s.est != nil {
		b = le.AppendUint64(b, uint64(s.rows))
		b = le.AppendUint64(b, uint64(s.skipped))
		st, err := s.est.appendState(nil, true)
		w.Fail(err)
		b = appendBytes(b, st)
		b = appendBytes(b, s.lags.appendBinary(nil))
	}
	w.Write(b)
}

// sumReader reads the encoding of a Sum piece by piece (framed.Reader).
type sumReader struct{ *framed.Reader }

func newSumReader(r io.Reader) *sumReader { return &sumReader{framed.NewReader(r, ErrState)} }

// head reads what precedes the exact sums: a Sum with its template and row
// counts (none for an empty Sum), and no exact sums.
func (r *sumReader) head() (*Sum, error) {
	le := binary.LittleEndian
	b, err := r.Read(uint64(len(sumMagic))+2, "the header")
	if err != nil || string(b[:len(sumMagic)]) != sumMagic {
		return nil, r.Bad("not a dime sum (bad magic)")
	}
	if v := b[len(sumMagic)]; v != sumVersion {
		return nil, r.Bad("version %d, this build reads version %d (a sum is written and read by the same build)", v, sumVersion)
	}
	switch b[len(sumMagic)+1] {
	case 0:
		return &Sum{}, nil
	case 1:
	default:
		return nil, r.Bad("flag %d", b[len(sumMagic)+1])
	}
	if b, err = r.Read(16, "the row counts"); err != nil {
		return nil, err
	}
	rows, skipped := le.Uint64(b), le.Uint64(b[8:])
	if rows > math.MaxInt64 || skipped > math.MaxInt64 {
		return nil, r.Bad("row counts %d and %d out of range", rows, skipped)
	}
	st, err := r.Sized("the settings")
	if err != nil {
		return nil, err
	}
	e, err := decodeState(bytes.NewReader(st), true)
	if err != nil {
		return nil, err
	}
	if e.rows != 0 || e.skipped != 0 {
		return nil, r.Bad("the settings hold rows")
	}
	enc, err := r.Sized("the lag-1 statistics")
	if err != nil {
		return nil, err
	}
	lags, err := parseLags(enc, e.dimX, e.dimY)
	if err != nil {
		return nil, r.Bad("%v", err)
	}
	return &Sum{est: e, rows: int64(rows), skipped: int64(skipped), lags: lags}, nil
}

// viewLags are the lag-1 statistics of views X and Y.
type viewLags [2]lagStats

// clone returns a copy of l (nil for nil).
func (l *viewLags) clone() *viewLags {
	if l == nil {
		return nil
	}
	c := *l
	for i := range c {
		v := &c[i]
		v.shift, v.last, v.s, v.ss, v.sl = slices.Clone(v.shift), slices.Clone(v.last), slices.Clone(v.s), slices.Clone(v.ss), slices.Clone(v.sl)
	}
	return &c
}

// appendBinary appends the encoding of l (nothing for nil): for each view,
// the rows (8 bytes) and, when there are any, the columns (4 bytes) and the
// shift, last, s, ss and sl of each column (8 bytes each, in that order).
func (l *viewLags) appendBinary(b []byte) []byte {
	if l == nil {
		return b
	}
	le := binary.LittleEndian
	for _, v := range l {
		b = le.AppendUint64(b, uint64(v.n))
		if v.n == 0 {
			continue
		}
		b = le.AppendUint32(b, uint32(len(v.s)))
		for _, f := range [][]float64{v.shift, v.last, v.s, v.ss, v.sl} {
			for _, x := range f {
				b = le.AppendUint64(b, math.Float64bits(x))
			}
		}
	}
	return b
}

// parseLags decodes what appendBinary wrote, for views of dimX and dimY
// columns.
func parseLags(b []byte, dimX, dimY int) (*viewLags, error) {
	if len(b) == 0 {
		return nil, nil
	}
	le := binary.LittleEndian
	var l viewLags
	for i, d := range []int{dimX, dimY} {
		if len(b) < 8 {
			return nil, fmt.Errorf("truncated lag-1 statistics")
		}
		n := le.Uint64(b)
		b = b[8:]
		if n > math.MaxInt64 {
			return nil, fmt.Errorf("lag-1 statistics of %d rows", n)
		}
		if n == 0 {
			continue
		}
		if len(b) < 4 || le.Uint32(b) != uint32(d) || uint64(len(b)-4) < 5*8*uint64(d) {
			return nil, fmt.Errorf("lag-1 statistics of another width, or truncated")
		}
		b = b[4:]
		v := lagStats{n: int64(n), haveValues: true}
		for _, f := range []*[]float64{&v.shift, &v.last, &v.s, &v.ss, &v.sl} {
			*f = make([]float64, d)
			for c := range *f {
				(*f)[c] = math.Float64frombits(le.Uint64(b))
				b = b[8:]
			}
		}
		l[i] = v
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%d bytes after the lag-1 statistics", len(b))
	}
	return &l, nil
}

// exact reads the exact sum of accumulator i, which must have description d.
func (r *sumReader) exact(i int, d covariance.Description, x *covariance.ExactSum) error {
	return r.field(fmt.Sprintf("exact sum %d", i), d, x.UnmarshalCompact, x.Description)
}

// mean reads the exact mean i, which must have description d.
func (r *sumReader) mean(i int, d covariance.Description, m *covariance.ExactMean) error {
	return r.field(fmt.Sprintf("exact mean %d", i), d, m.UnmarshalBinary, m.Description)
}

// field reads a sized field (what) with decode and checks that what it
// decoded has description d.
func (r *sumReader) field(what string, d covariance.Description, decode func([]byte) error, desc func() covariance.Description) error {
	enc, err := r.Sized(what)
	if err != nil {
		return err
	}
	if err := decode(enc); err != nil {
		return r.Bad("%v", err)
	}
	if desc() != d {
		return r.Bad("%s does not belong to these settings", what)
	}
	return nil
}
