package dimebeam

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/vocab"
)

// Sample is a seeded uniform sample without replacement of the rows of a
// dataset, mergeable in any order: every row gets a pseudo-random 128-bit
// key from the seed, its file's path and its index in the file, and a
// sample keeps the K rows of smallest keys (bottom-K sampling). The K
// smallest keys of a union are the K smallest of the parts' K smallest, so
// samples of splits merge, in any order and grouping, into exactly the
// sample of the whole dataset, and every set of K rows is equally likely.
type Sample struct {
	K          int
	DimX, DimY int
	Keys       []uint64  // two words per row, most significant first, ascending
	X, Y       []float64 // the rows, row-major, in the order of their keys
	Seen       int64     // rows the sample was drawn from
}

// sampleRows is the state of sampling one split: candidates are buffered
// and pruned to the K smallest keys whenever 2K have gathered.
type sampleRows struct {
	s          Sample
	base1      uint64
	base2      uint64
	threshold1 uint64 // key of the K-th row after the last pruning
	threshold2 uint64
	full       bool
}

func newSampleRows(k, dimX, dimY int, seed uint64, path string) *sampleRows {
	h := fnv.New64a()
	h.Write([]byte(path))
	p := h.Sum64()
	return &sampleRows{
		s:     Sample{K: k, DimX: dimX, DimY: dimY},
		base1: mix(seed ^ mix(p)), base2: mix(p ^ mix(seed+0x632be59bd9b4e019)),
	}
}

// add offers the rows of a block whose first row has index first in the file.
func (r *sampleRows) add(x, y []float64, rows int, first int64) {
	s := &r.s
	for i := range rows {
		row := uint64(first) + uint64(i)
		k1, k2 := mix(r.base1+row*0x9e3779b97f4a7c15), mix(r.base2^row)
		if r.full && cmpKey(k1, k2, r.threshold1, r.threshold2) >= 0 {
			continue
		}
		s.Keys = append(s.Keys, k1, k2)
		s.X = append(s.X, x[i*s.DimX:(i+1)*s.DimX]...)
		s.Y = append(s.Y, y[i*s.DimY:(i+1)*s.DimY]...)
		if len(s.Keys) >= 4*s.K {
			r.prune()
		}
	}
	s.Seen += int64(rows)
}

// prune keeps the K rows of smallest keys, in key order.
func (r *sampleRows) prune() {
	r.s = r.s.smallest(r.s.K)
	if n := len(r.s.Keys) / 2; n == r.s.K {
		r.full = true
		r.threshold1, r.threshold2 = r.s.Keys[2*n-2], r.s.Keys[2*n-1]
	}
}

// sample returns the split's sample.
func (r *sampleRows) sample() Sample {
	r.prune()
	return r.s
}

// smallest returns the sample of the k rows of smallest keys, sorted.
func (s Sample) smallest(k int) Sample {
	n := len(s.Keys) / 2
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmpKey(s.Keys[2*a], s.Keys[2*a+1], s.Keys[2*b], s.Keys[2*b+1]) })
	idx = idx[:min(n, k)]
	out := Sample{K: s.K, DimX: s.DimX, DimY: s.DimY, Seen: s.Seen,
		Keys: make([]uint64, 0, 2*len(idx)), X: make([]float64, 0, len(idx)*s.DimX), Y: make([]float64, 0, len(idx)*s.DimY)}
	for _, i := range idx {
		out.Keys = append(out.Keys, s.Keys[2*i], s.Keys[2*i+1])
		out.X = append(out.X, s.X[i*s.DimX:(i+1)*s.DimX]...)
		out.Y = append(out.Y, s.Y[i*s.DimY:(i+1)*s.DimY]...)
	}
	return out
}

// merge returns the sample of the union of the rows of s and o.
func (s Sample) merge(o Sample) (Sample, error) {
	switch {
	case s.K == 0:
		return o, nil
	case o.K == 0:
		return s, nil
	case s.K != o.K || s.DimX != o.DimX || s.DimY != o.DimY:
		return Sample{}, vocab.Errorf("dimebeam: samples of %d rows of %d+%d values and %d rows of %d+%d values do not merge (do the files have the same columns?)",
			s.K, s.DimX, s.DimY, o.K, o.DimX, o.DimY)
	}
	u := Sample{K: s.K, DimX: s.DimX, DimY: s.DimY, Seen: s.Seen + o.Seen,
		Keys: slices.Concat(s.Keys, o.Keys), X: slices.Concat(s.X, o.X), Y: slices.Concat(s.Y, o.Y)}
	return u.smallest(s.K), nil
}

func cmpKey(a1, a2, b1, b2 uint64) int {
	if c := cmp.Compare(a1, b1); c != 0 {
		return c
	}
	return cmp.Compare(a2, b2)
}

// mix is the SplitMix64 finalizer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// Bandwidths are the bandwidths that the data-dependent rules chose on a
// sample, attached to every split through a side input. A zero value leaves the
// view's rule to each split's estimator (fixed or explicit rules, which do
// not look at the data).
type Bandwidths struct {
	SigmaX, SigmaY float64
	// SampleRows and SeenRows say how many rows the sample has and how
	// many it was drawn from.
	SampleRows int
	SeenRows   int64
}

// choose resolves the data-dependent bandwidth rules of cfg on a sample, as
// a streaming estimator resolves them on its pilot rows.
func choose(cfg Config, s Sample) (Bandwidths, error) {
	n := len(s.Keys) / 2
	if n < 2 {
		return Bandwidths{}, vocab.Errorf("dimebeam: %d rows to choose the bandwidths from, want at least 2", n)
	}
	c := cfg.Stream
	ecfg := exact.Config{Kernel: c.Kernel, Alpha: c.Alpha, SigmaX: c.BandwidthX, SigmaY: c.BandwidthY,
		Permutations: c.Permutations, Seed: c.Seed}
	sx, sy, err := exact.ResolveBandwidths(mat.NewDense(n, s.DimX, s.X), mat.NewDense(n, s.DimY, s.Y), ecfg)
	if err != nil {
		return Bandwidths{}, fmt.Errorf("dimebeam: choosing the bandwidths on a sample of %d rows: %w", n, err)
	}
	b := Bandwidths{SampleRows: n, SeenRows: s.Seen}
	if c.BandwidthX.NeedsData() {
		b.SigmaX = sx
	}
	if c.BandwidthY.NeedsData() {
		b.SigmaY = sy
	}
	return b, nil
}
