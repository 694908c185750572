package stream

import (
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
)

// A scope is added by W workers (the caller's goroutine and W−1 goroutines
// started for the scope) that share out the P+3 accumulators: worker i owns
// accumulators j = i, i+W, i+2W, … of X, Y, joint, permuted 0 … P−1. Each
// worker goes through the whole scope chunk by chunk (chunkRows positions of
// its random order at a time), maps the chunk's X rows and the Y rows of its
// positions plus the S = max shift positions after them (modulo n; those
// already mapped for the previous chunk are carried over), builds the joint
// or permuted features of its accumulators from the parts, and adds them
// with one rank-k update each.
//
// Every accumulator thus receives the same rank-k updates in the same order
// whatever W, from feature rows computed by the same code: results are
// bit-identical for any number of workers, no accumulator is duplicated and
// nothing is merged. The workers wait for each other only at the end of the
// scope. The price is that every worker maps every row (W times the feature
// maps, which cost a fraction of the rank-k updates: about 6% to 12% of a
// worker's time at D = 128, P = 1 and 2 workers, in pure Go; less with
// -tags openblas, whose feature maps are vectorized), and an uneven share
// when W does not divide P+3.
//
// Sharing each chunk's feature maps between the workers instead (two
// synchronizations per chunk of about a millisecond) was measured slower on
// the 2-core virtual machine of development: waking a waiting thread took 50
// to 150 µs there, and each synchronization waited for the slower worker's
// last rank-k update.

// worker is one worker's scratch: gathered input rows, the features of a
// chunk (X of its positions, Y of its positions and of the S after them),
// joint features, scaled copies of part features and the √w of the chunk's
// rows (decay).
type worker struct {
	index            int
	gx, gy           []float64
	px, py, joint    []float64
	scratch, weights []float64
	err              error
	run              func() // e.addOwned(this worker) on a goroutine, made once: go w.run() does not allocate
}

// newWorker returns a worker with its scratch buffers.
func (e *Estimator) newWorker(index int) *worker {
	p, P := 2*e.cfg.Features, e.cfg.Permutations
	w := &worker{
		index: index,
		gx:    make([]float64, chunkRows*e.dimX),
		gy:    make([]float64, (chunkRows+P)*e.dimY),
		px:    make([]float64, chunkRows*p),
		py:    make([]float64, (chunkRows+P)*p),
		joint: make([]float64, chunkRows*p),
	}
	if e.cfg.HalfLife > 0 {
		w.scratch = make([]float64, chunkRows*p)
		w.weights = make([]float64, chunkRows)
	}
	w.run = func() {
		defer e.wg.Done()
		w.err = e.addOwned(w)
	}
	return w
}

// workerCount returns the number of workers for a scope of n rows: the
// configured number, at most the P+3 accumulators, and one for scopes of
// fewer than chunkRows rows.
func (e *Estimator) workerCount(n int) int {
	if n < chunkRows {
		return 1
	}
	return min(e.workers, len(e.accs))
}

// addScope adds the current scope (e.scope) with its workers.
func (e *Estimator) addScope() error {
	W := e.scope.workers
	for len(e.pool) < W {
		e.pool = append(e.pool, e.newWorker(len(e.pool)))
	}
	workers := e.pool[:W]
	e.wg.Add(W - 1)
	for _, w := range workers[1:] {
		go w.run()
	}
	err := e.addOwned(workers[0])
	e.wg.Wait()
	for _, w := range workers[1:] {
		if err == nil {
			err = w.err
		}
	}
	return err
}

// addOwned adds every chunk of the scope to the accumulators that worker w
// owns.
func (e *Estimator) addOwned(w *worker) error {
	sc := &e.scope
	x, y, n, order, S, W := sc.x, sc.y, sc.n, sc.order, sc.shift, sc.workers
	p, dx, dy := 2*e.cfg.Features, e.dimX, e.dimY
	// computed is the end of the positions whose Y features are in py, from
	// position c on.
	computed := 0
	for c := 0; c < n; c += chunkRows {
		b := min(chunkRows, n-c)
		// Y features of positions c … c+b+S−1 (modulo n): the first `have`
		// rows are carried over from the previous chunk.
		have, need := computed-c, b+S
		for r := have; r < need; r++ {
			pos := c + r
			if pos >= n {
				pos -= n
			}
			k := order[pos]
			copy(w.gy[(r-have)*dy:(r-have+1)*dy], y[k*dy:(k+1)*dy])
		}
		if _, err := e.pair.Y.Transform(w.py[have*p:need*p], w.gy[:(need-have)*dy], need-have); err != nil {
			return err
		}
		computed = c + need
		for r := 0; r < b; r++ {
			k := order[c+r]
			copy(w.gx[r*dx:(r+1)*dx], x[k*dx:(k+1)*dx])
		}
		if _, err := e.pair.X.Transform(w.px[:b*p], w.gx[:b*dx], b); err != nil {
			return err
		}
		// With decay, the row at position c+r weighs sqrtWeight² by its
		// arrival; the part accumulators take scaled copies of the features,
		// and joint rows (products of unscaled parts) are scaled after.
		weight := float64(b)
		var sw []float64
		if sc.decay {
			sw, weight = w.weights[:b], 0
			for r := range sw {
				sw[r] = e.sqrtWeight[order[c+r]]
				weight += sw[r] * sw[r]
			}
		}
		for j := w.index; j < len(e.accs); j += W {
			if err := e.accumulate(w, j, b, sw, weight); err != nil {
				return err
			}
		}
		if c+b == n && w.index == 0 {
			// The other workers never read lastY: they exist only for
			// scopes of more than one row.
			copy(e.lastY, w.py[(b-1)*p:b*p])
			e.haveLastY = true
		}
		// Carry the Y features of positions c+b … c+b+S−1 to the front.
		copy(w.py[:S*p], w.py[b*p:(b+S)*p])
	}
	return nil
}

// accumulate adds the b rows of the worker's current chunk to accumulator
// j: X, Y, joint, then the permuted ones.
func (e *Estimator) accumulate(w *worker, j, b int, sw []float64, weight float64) error {
	p, D := 2*e.cfg.Features, e.cfg.Features
	px, py := w.px[:b*p], w.py[:b*p]
	switch j {
	case 0:
		return e.x.AddWeighted(w.scaled(px, sw, p), b, weight)
	case 1:
		return e.y.AddWeighted(w.scaled(py, sw, p), b, weight)
	case 2:
		return w.addJoint(e.xy, px, py, b, D, sw, weight)
	}
	// A permuted pair weighs what its X row weighs.
	k := j - 3
	if e.scope.n > 1 {
		s := e.shifts[k]
		return w.addJoint(e.perm[k], px, w.py[s*p:(s+b)*p], b, D, sw, weight)
	}
	if e.haveLastY {
		// A lone row is paired with the last row of the previous scope.
		return w.addJoint(e.perm[k], px, e.lastY, 1, D, sw, weight)
	}
	return nil
}

// addJoint adds the joint features of px and py (row i with row i) to acc,
// row i scaled by sw[i] when sw is not nil; weight is the rows' total weight.
func (w *worker) addJoint(acc *covariance.Accumulator, px, py []float64, rows, features int, sw []float64, weight float64) error {
	p := 2 * features
	joint, err := rff.Joint(w.joint[:rows*p], px, py, rows, features, nil)
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
func (w *worker) scaled(features []float64, sw []float64, p int) []float64 {
	if sw == nil {
		return features
	}
	out := w.scratch[:len(features)]
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
