package stream

import (
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
)

// minLaneRows is the fewest positions of a scope that a lane takes: a scope
// of n rows is added by at most n/minLaneRows lanes. Merging a lane costs
// (P+3)·p²/2 additions (p = 2D), against about 4·(P+3)·p² flops per row of
// the lane's rank-k updates and feature maps: below 0.1% at this size.
const minLaneRows = 2 * chunkRows

// scope is the shuffle scope being added: its rows, their random order, the
// largest shift S of the permutations, and whether rows are weighted.
type scope struct {
	x, y  []float64
	n     int
	order []int
	shift int
	decay bool
}

// lane adds the positions [lo, hi) of a scope to its own accumulators with
// its own scratch buffers, so that lanes run in parallel without sharing
// anything they write. It maps the Y rows of positions lo … hi+S−1 (modulo n)
// itself: the S rows after its segment, also mapped by the next lane, cost
// S/(hi−lo) extra sines and cosines, and spare the lanes any hand-over.
type lane struct {
	x, y, xy *covariance.Accumulator
	perm     []*covariance.Accumulator
	accs     []*covariance.Accumulator // x, y, xy, perm...

	// Scratch: the chunk's gathered rows and features, the √w of its rows
	// and scaled copies of its part features (decay only).
	gx, gy, px, py, joint []float64
	weights, scratch      []float64

	lo, hi int
	err    error
	run    func() // e.runLane(this lane), made once: go l.run() does not allocate
}

// newLane returns a lane with its scratch buffers and no accumulators.
func (e *Estimator) newLane() *lane {
	p, P := 2*e.cfg.Features, e.cfg.Permutations
	l := &lane{
		gx:    make([]float64, chunkRows*e.dimX),
		gy:    make([]float64, (chunkRows+P)*e.dimY),
		px:    make([]float64, chunkRows*p),
		py:    make([]float64, (chunkRows+P)*p),
		joint: make([]float64, chunkRows*p),
	}
	if e.cfg.HalfLife > 0 {
		l.weights = make([]float64, chunkRows)
		l.scratch = make([]float64, chunkRows*p)
	}
	l.run = func() {
		defer e.wg.Done()
		l.err = e.addSegment(l)
	}
	return l
}

// laneCount returns the number of lanes for a scope of n rows: as many as
// the estimator's workers, with at least minLaneRows positions each. It
// depends only on n and the number of workers, fixed when the estimator is
// made, so that an estimator always cuts a scope the same way.
func (e *Estimator) laneCount(n int) int {
	return max(1, min(e.workers, n/minLaneRows))
}

// addLanes adds the current scope with w lanes: lanes 1 … w−1 on goroutines
// of their own, lane 0 on the caller's, then merges the lanes' accumulators
// into the estimator's in lane order and empties them.
func (e *Estimator) addLanes(w int) error {
	for len(e.lanes) < w {
		l := e.newLane()
		for _, a := range e.lanes[0].accs {
			b, err := covariance.New(a.Description())
			if err != nil {
				return err
			}
			l.accs = append(l.accs, b)
		}
		l.x, l.y, l.xy, l.perm = l.accs[0], l.accs[1], l.accs[2], l.accs[3:]
		e.lanes = append(e.lanes, l)
	}
	n := e.scope.n
	for i, l := range e.lanes[:w] {
		l.lo, l.hi, l.err = i*n/w, (i+1)*n/w, nil
	}
	e.wg.Add(w - 1)
	for _, l := range e.lanes[1:w] {
		go l.run()
	}
	err := e.addSegment(e.lanes[0])
	e.wg.Wait()
	for _, l := range e.lanes[1:w] {
		if err == nil {
			err = l.err
		}
		for k, a := range l.accs {
			if err == nil {
				err = e.lanes[0].accs[k].Merge(a)
			}
			a.Reset()
		}
	}
	e.scope = scope{}
	return err
}

// addSegment adds the positions [l.lo, l.hi) of the current scope to l's
// accumulators. Rows are mapped in chunks, and the Y features of the S
// positions after a chunk are kept for the next chunk, so that each row's
// features are computed once per lane.
func (e *Estimator) addSegment(l *lane) error {
	sc := &e.scope
	x, y, n, order, S := sc.x, sc.y, sc.n, sc.order, sc.shift
	p := 2 * e.cfg.Features
	dx, dy := e.dimX, e.dimY
	// computed is the end of the positions whose Y features are in py, from
	// position c on.
	computed := l.lo
	for c := l.lo; c < l.hi; c += chunkRows {
		b := min(chunkRows, l.hi-c)
		// Y features of positions c … c+b+S−1 (modulo n): the first `have`
		// rows are carried over from the previous chunk.
		have, need := computed-c, b+S
		for r := have; r < need; r++ {
			pos := c + r
			if pos >= n {
				pos -= n
			}
			copy(l.gy[(r-have)*dy:(r-have+1)*dy], y[order[pos]*dy:(order[pos]+1)*dy])
		}
		if _, err := e.pair.Y.Transform(l.py[have*p:need*p], l.gy[:(need-have)*dy], need-have); err != nil {
			return err
		}
		computed = c + need
		for r := 0; r < b; r++ {
			copy(l.gx[r*dx:(r+1)*dx], x[order[c+r]*dx:(order[c+r]+1)*dx])
		}
		px, err := e.pair.X.Transform(l.px[:b*p], l.gx[:b*dx], b)
		if err != nil {
			return err
		}
		py := l.py[:b*p]
		// With decay, the row at position c+r weighs w = sqrtWeight² by its
		// arrival; the part accumulators take scaled copies of the features,
		// and joint rows (products of unscaled parts) are scaled after.
		weight := float64(b)
		var sw []float64
		if sc.decay {
			sw = l.weights[:b]
			weight = 0
			for r := range sw {
				sw[r] = e.sqrtWeight[order[c+r]]
				weight += sw[r] * sw[r]
			}
		}
		if err := l.x.AddWeighted(l.scaled(px, sw, p), b, weight); err != nil {
			return err
		}
		if err := l.y.AddWeighted(l.scaled(py, sw, p), b, weight); err != nil {
			return err
		}
		if err := l.addJoint(l.xy, px, py, b, e.cfg.Features, sw, weight); err != nil {
			return err
		}
		if n > 1 {
			for k, s := range e.shifts {
				// A permuted pair weighs what its X row weighs.
				if err := l.addJoint(l.perm[k], px, l.py[s*p:(s+b)*p], b, e.cfg.Features, sw, weight); err != nil {
					return err
				}
			}
		} else if e.haveLastY {
			// A lone row is paired with the last row of the previous scope.
			for k := range l.perm {
				if err := l.addJoint(l.perm[k], px, e.lastY, 1, e.cfg.Features, sw, weight); err != nil {
					return err
				}
			}
		}
		if c+b == n {
			// Only the last lane gets here; the caller reads lastY after
			// every lane is done.
			copy(e.lastY, l.py[(b-1)*p:b*p])
			e.haveLastY = true
		}
		// Carry the Y features of positions c+b … c+b+S−1 to the front.
		copy(l.py[:S*p], l.py[b*p:(b+S)*p])
	}
	return nil
}

// addJoint adds the joint features of px and py (row i with row i) to acc,
// row i scaled by sw[i] when sw is not nil; weight is the rows' total weight.
func (l *lane) addJoint(acc *covariance.Accumulator, px, py []float64, rows, features int, sw []float64, weight float64) error {
	p := 2 * features
	joint, err := rff.Joint(l.joint[:rows*p], px, py, rows, features, nil)
	if err != nil {
		return err
	}
	for r, f := range sw {
		scaleRow(joint[r*p:(r+1)*p], f)
	}
	return acc.AddWeighted(joint, rows, weight)
}

// scaled returns features (rows of p) with row r multiplied by sw[r], in
// scratch space, or features itself when sw is nil.
func (l *lane) scaled(features []float64, sw []float64, p int) []float64 {
	if sw == nil {
		return features
	}
	out := l.scratch[:len(features)]
	copy(out, features)
	for r, f := range sw {
		scaleRow(out[r*p:(r+1)*p], f)
	}
	return out
}

// scaleRow multiplies a feature row by f.
func scaleRow(row []float64, f float64) {
	for j := range row {
		row[j] *= f
	}
}
