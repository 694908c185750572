package stream

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
)

// Estimator is the streaming RFF estimator of the entropies, mutual
// information and DiME of two views. Feed it row-major blocks with Add and
// read a Result at any moment; its memory is O(D²) whatever the number of
// rows. An Estimator is not safe for concurrent use.
type Estimator struct {
	cfg        Config
	dimX, dimY int
	pair       *rff.Pair
	x, y, xy   *covariance.Accumulator
	perm       []*covariance.Accumulator
	shuffle    *rand.Rand
	rows       int64 // rows added, including rows still pending
	skipped    int64 // rows dropped upstream, reported in Result
	rowsBefore int64 // rows of earlier Add calls, for error messages

	// Rows waiting for their shuffle scope to fill.
	pendX, pendY []float64
	pending      int

	// Scratch, reused: the scope's random order, the chunk's gathered rows
	// and features, and the Y features of the first positions of the scope
	// (for the cyclic wrap of the shifted pairs).
	order         []int
	gx, gy        []float64
	px, py, joint []float64
	head          []float64
	lastY         []float64 // Y features of the last row of the previous scope
	haveLastY     bool
	shifts        []int
}

// New returns an estimator for views of dimX and dimY columns.
func New(dimX, dimY int, cfg Config) (*Estimator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if dimX < 1 || dimY < 1 {
		return nil, invalidf("views need at least one column, got %d and %d", dimX, dimY)
	}
	spec := cfg.pairSpec(dimX, dimY)
	pair, err := rff.NewPair(spec)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	e := &Estimator{cfg: cfg, dimX: dimX, dimY: dimY, pair: pair, shuffle: exact.NewPermutationRand(cfg.Seed)}
	if e.x, err = covariance.New(covariance.Description{Map: spec, Part: covariance.PartX}); err != nil {
		return nil, err
	}
	e.y, _ = covariance.New(covariance.Description{Map: spec, Part: covariance.PartY})
	e.xy, _ = covariance.New(covariance.Description{Map: spec, Part: covariance.PartJoint})
	e.perm = make([]*covariance.Accumulator, cfg.Permutations)
	for k := range e.perm {
		e.perm[k], _ = covariance.New(covariance.Description{Map: spec, Part: covariance.PartPermuted, Index: k})
	}
	p, P := 2*cfg.Features, cfg.Permutations
	e.gx = make([]float64, chunkRows*dimX)
	e.gy = make([]float64, (chunkRows+P)*dimY)
	e.px = make([]float64, chunkRows*p)
	e.py = make([]float64, (chunkRows+P)*p)
	e.joint = make([]float64, chunkRows*p)
	e.head = make([]float64, P*p)
	e.lastY = make([]float64, p)
	e.shifts = make([]int, P)
	return e, nil
}

// Config returns the estimator's configuration.
func (e *Estimator) Config() Config { return e.cfg }

// Dims returns the widths of the views.
func (e *Estimator) Dims() (dimX, dimY int) { return e.dimX, e.dimY }

// Rows returns the number of rows added.
func (e *Estimator) Rows() int64 { return e.rows }

// Add adds rows paired rows: x holds rows×dimX values and y rows×dimY,
// row-major. Values must be finite: a NaN or Inf is refused with an error
// naming the view, the row (counted from the first row ever added, from 0)
// and the column, and nothing of the block is added.
func (e *Estimator) Add(x, y []float64, rows int) error {
	if rows < 0 || len(x) != rows*e.dimX || len(y) != rows*e.dimY {
		return invalidf("block of %d rows has %d X values (want %d) and %d Y values (want %d)",
			rows, len(x), rows*e.dimX, len(y), rows*e.dimY)
	}
	if err := checkFinite("X", x, e.dimX, e.rowsBefore); err != nil {
		return err
	}
	if err := checkFinite("Y", y, e.dimY, e.rowsBefore); err != nil {
		return err
	}
	e.rowsBefore += int64(rows)
	e.rows += int64(rows)
	scope := e.cfg.ShuffleRows
	if scope == 0 {
		// Each block is its own scope, unless it is small: then blocks are
		// pooled until DefaultMinScopeRows rows are pending.
		if e.pending == 0 && rows >= DefaultMinScopeRows {
			return e.processScope(x, y, rows)
		}
		scope = DefaultMinScopeRows
	}
	for rows > 0 {
		take := min(rows, scope-e.pending)
		e.pendX = append(e.pendX, x[:take*e.dimX]...)
		e.pendY = append(e.pendY, y[:take*e.dimY]...)
		e.pending += take
		x, y, rows = x[take*e.dimX:], y[take*e.dimY:], rows-take
		if e.pending == scope {
			if err := e.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkFinite returns an error naming the first NaN or Inf of a block.
func checkFinite(view string, v []float64, d int, offset int64) error {
	for i, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return invalidf("%s row %d, column %d: value %v is not finite", view, offset+int64(i/d), i%d, x)
		}
	}
	return nil
}

// Flush pairs the rows waiting in the shuffle buffer now, as a scope of their
// own. Result calls it; a caller that ends a window calls it too.
func (e *Estimator) Flush() error {
	if e.pending == 0 {
		return nil
	}
	err := e.processScope(e.pendX, e.pendY, e.pending)
	e.pendX, e.pendY, e.pending = e.pendX[:0], e.pendY[:0], 0
	return err
}

// processScope adds the n rows of one shuffle scope to every accumulator.
//
// The rows are put in a random order o; the X part, the Y part and the joint
// take every row once. Permuted accumulator k pairs X at position i with Y at
// position i + s_k (cyclically), s_k = 1 + (k−1) mod (n−1): a random
// derangement, no row paired with itself. Rows are mapped in chunks, and the
// Y features of the S = max s_k positions after a chunk are kept for the next
// chunk (and those of the first S positions for the wrap), so that each row's
// features are computed once.
func (e *Estimator) processScope(x, y []float64, n int) error {
	if cap(e.order) < n {
		e.order = make([]int, n)
	}
	order := e.order[:n]
	for i := range order {
		order[i] = i
	}
	e.shuffle.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })

	p := 2 * e.cfg.Features
	dx, dy := e.dimX, e.dimY
	S := 0
	if n > 1 {
		for k := range e.shifts {
			e.shifts[k] = 1 + k%(n-1)
			S = max(S, e.shifts[k])
		}
	}
	// computed is the number of positions whose Y features are in py.
	computed := 0
	for c := 0; c < n; c += chunkRows {
		b := min(chunkRows, n-c)
		// Y features of positions c .. c+b+S−1: the first `have` rows are
		// carried over from the previous chunk.
		have := computed - c
		need := b + S
		for q := have; q < need; {
			// Map a run of new positions, stopping at the wrap.
			pos := c + q
			if pos >= n {
				copy(e.py[q*p:(q+1)*p], e.head[(pos-n)*p:(pos-n+1)*p])
				q++
				continue
			}
			run := min(need-q, n-pos)
			for r := 0; r < run; r++ {
				copy(e.gy[r*dy:(r+1)*dy], y[order[pos+r]*dy:(order[pos+r]+1)*dy])
			}
			if _, err := e.pair.Y.Transform(e.py[q*p:(q+run)*p], e.gy[:run*dy], run); err != nil {
				return err
			}
			if pos == 0 {
				// The first run of a scope covers positions 0 .. S−1 (its
				// length b+S ≥ S and n > S): keep them for the wrap.
				copy(e.head[:S*p], e.py[q*p:(q+S)*p])
			}
			q += run
		}
		computed = c + need
		for r := 0; r < b; r++ {
			copy(e.gx[r*dx:(r+1)*dx], x[order[c+r]*dx:(order[c+r]+1)*dx])
		}
		px, err := e.pair.X.Transform(e.px[:b*p], e.gx[:b*dx], b)
		if err != nil {
			return err
		}
		py := e.py[:b*p]
		if err := e.x.Add(px, b); err != nil {
			return err
		}
		if err := e.y.Add(py, b); err != nil {
			return err
		}
		if err := e.addJoint(e.xy, px, e.py[:b*p], b); err != nil {
			return err
		}
		for k, s := range e.shifts {
			if n == 1 {
				break
			}
			if err := e.addJoint(e.perm[k], px, e.py[s*p:(s+b)*p], b); err != nil {
				return err
			}
		}
		if n == 1 && e.haveLastY {
			// A lone row is paired with the last row of the previous scope.
			for k := range e.perm {
				if err := e.addJoint(e.perm[k], px, e.lastY, 1); err != nil {
					return err
				}
			}
		}
		if c+b == n {
			copy(e.lastY, e.py[(b-1)*p:b*p])
			e.haveLastY = true
		}
		// Carry the Y features of positions c+b .. c+b+S−1 to the front.
		copy(e.py[:S*p], e.py[b*p:(b+S)*p])
	}
	return nil
}

// addJoint adds the joint features of px and py (row i with row i) to acc.
func (e *Estimator) addJoint(acc *covariance.Accumulator, px, py []float64, rows int) error {
	joint, err := rff.Joint(e.joint[:rows*2*e.cfg.Features], px, py, rows, e.cfg.Features, nil)
	if err != nil {
		return err
	}
	return acc.Add(joint, rows)
}
