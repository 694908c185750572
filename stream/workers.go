package stream

import (
	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
)

// A scope is added by W workers (the caller's goroutine and W−1 goroutines
// started for the scope), in one of two ways.
//
// Analytic estimator (no permutations): the workers claim chunks one at a
// time (claimChunk): the next chunk of a group that no other worker is
// adding, from the group with the most chunks left. A worker maps the
// chunk's rows (X, Y and, for self chunks, the copies), builds the joint and
// self features and adds them with one rank-k update per accumulator of the
// group. A group's chunks are thus added in order, one at a time, whichever
// worker adds them; each row is mapped once, by one worker, and W is at most
// K. Claiming chunks rather than owning whole groups keeps both cores busy
// when something else (the decoding of the next block, another process)
// takes one of them for a while: with fixed groups the other worker waited
// at the end of every scope for the one that had been held up.
//
// Permutation estimator: the permuted joints pair positions of different
// chunks, so the workers share out accumulator slots instead: slot 0 is the
// X part of the chunk's group, 1 its Y part, 2 its joint, 3 … P+2 the
// permuted joints, and P+3, P+4 the self terms of X and Y. Worker i owns
// slots i, i+W, …, goes through the whole scope chunk by chunk, maps every
// row itself (the X rows of the chunk and the Y rows of its positions plus
// the S = max shift positions after them, modulo n; those already mapped for
// the previous chunk are carried over) and adds its slots' rank-k updates.
// The price is that every worker maps every row (W times the feature maps,
// a fraction of the rank-k updates: about 6% to 12% of a worker's time at
// D = 128, P = 1 and 2 workers, in pure Go).
//
// Either way every accumulator receives the same rank-k updates in the same
// order whatever W, from feature rows computed by the same code: results
// are bit-identical for any number of workers, no accumulator is duplicated
// and nothing is merged. The workers wait for each other only at the end of
// the scope. Sharing each chunk's feature maps between the workers instead
// (two synchronizations per chunk of about a millisecond) was measured
// slower on the 2-core virtual machine of development: waking a waiting
// thread took 50 to 150 µs there.

// worker is one worker's scratch: gathered input rows, the features of a
// chunk (X of its positions, Y of its positions and of the S after them, a
// copy's), joint features, scaled copies of features, and the √w and w of
// the chunk's rows (decay).
type worker struct {
	index                     int
	gx, gy, gyc               []float64
	px, py, pc, joint         []float64
	scratch, sqrtW, rowWeight []float64
	err                       error
	run                       func() // e.addOwned(this worker) on a goroutine, made once: go w.run() does not allocate
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
	if !e.cfg.SkipNormalized {
		w.pc = make([]float64, chunkRows*p)
		if P > 0 {
			w.gyc = make([]float64, chunkRows*e.dimY)
		}
	}
	if e.cfg.HalfLife > 0 {
		w.scratch = make([]float64, chunkRows*p)
		w.sqrtW = make([]float64, chunkRows)
		w.rowWeight = make([]float64, chunkRows)
	}
	w.run = func() {
		defer e.wg.Done()
		w.err = e.addOwned(w)
	}
	return w
}

// slots returns the number of accumulator slots of the permutation
// estimator.
func (e *Estimator) slots() int {
	n := 3 + len(e.perm)
	if !e.cfg.SkipNormalized {
		n += 2
	}
	return n
}

// workerCount returns the number of workers for a scope of n rows in the
// given number of chunks: the configured number, at most the K groups (or
// the slots, with permutations), and one for scopes of fewer than
// chunkRows rows.
func (e *Estimator) workerCount(n, chunks int) int {
	if n < chunkRows {
		return 1
	}
	if len(e.perm) == 0 {
		return max(1, min(e.workers, len(e.groups), chunks))
	}
	return min(e.workers, e.slots())
}

// addScope adds the current scope (e.scope) with its workers.
func (e *Estimator) addScope() error {
	W := e.scope.workers
	for len(e.pool) < W {
		e.pool = append(e.pool, e.newWorker(len(e.pool)))
	}
	workers := e.pool[:W]
	if len(e.perm) == 0 {
		e.startClaims()
	}
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

// addOwned adds what worker w owns of the scope.
func (e *Estimator) addOwned(w *worker) error {
	if len(e.perm) == 0 {
		return e.addGroups(w)
	}
	return e.addSlots(w)
}

// chunkWeights fills the worker's √w and w of the b rows at positions
// c … c+b−1 of a decaying scope and returns the √w (nil without decay) and
// the rows' total weight.
func (e *Estimator) chunkWeights(w *worker, c, b int) (sw []float64, weight float64) {
	if !e.scope.decay {
		return nil, float64(b)
	}
	sw = w.sqrtW[:b]
	for r := range sw {
		sw[r] = e.sqrtWeight[e.scope.order[c+r]]
		w.rowWeight[r] = sw[r] * sw[r]
		weight += w.rowWeight[r]
	}
	return sw, weight
}

// rowWeights returns the weights of the rows of the current chunk (nil
// without decay).
func (w *worker) rowWeights(sw []float64) []float64 {
	if sw == nil {
		return nil
	}
	return w.rowWeight[:len(sw)]
}

// gather copies the rows of the b positions from c (modulo n) of data
// (rows of d values) into dst.
func (e *Estimator) gather(dst, data []float64, c, b, d int) []float64 {
	sc := &e.scope
	for r := 0; r < b; r++ {
		pos := c + r
		if pos >= sc.n {
			pos -= sc.n
		}
		k := sc.order[pos]
		copy(dst[r*d:(r+1)*d], data[k*d:(k+1)*d])
	}
	return dst[:b*d]
}

// groupCursor is where a group stands in the current scope of the analytic
// estimator: the position (scope-relative chunk index) of its next chunk,
// and whether a worker is adding one of its chunks.
type groupCursor struct {
	next int
	busy bool
}

// startClaims sets up the claims of the current scope's chunks.
func (e *Estimator) startClaims() {
	sc := &e.scope
	K := len(e.groups)
	if cap(e.cursors) < K {
		e.cursors = make([]groupCursor, K)
	}
	sc.cursors = e.cursors[:K]
	first := int(sc.first % int64(K))
	for k := range sc.cursors {
		sc.cursors[k] = groupCursor{next: (k - first + K) % K}
	}
	sc.failed = false
}

// claimChunk returns the scope-relative index of a chunk for a worker to
// add, after releasing the chunk it added before (done, or −1 for none):
// the next chunk of the group with the most chunks left that no other
// worker is adding (the lowest group on a tie). ok is false when no chunk is
// free: every group is done or being added by another worker (which then
// adds its remaining chunks), or a worker failed.
func (e *Estimator) claimChunk(done int) (i int, ok bool) {
	sc := &e.scope
	K := len(e.groups)
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if done >= 0 {
		c := &sc.cursors[int((sc.first+int64(done))%int64(K))]
		c.next += K
		c.busy = false
	}
	if sc.failed {
		return 0, false
	}
	best, left := -1, 0
	for k, c := range sc.cursors {
		if c.busy || c.next >= sc.chunks {
			continue
		}
		if l := (sc.chunks - c.next + K - 1) / K; l > left {
			best, left = k, l
		}
	}
	if best < 0 {
		return 0, false
	}
	sc.cursors[best].busy = true
	return sc.cursors[best].next, true
}

// failClaims stops the claims of the current scope after an error.
func (e *Estimator) failClaims() {
	e.scope.mu.Lock()
	e.scope.failed = true
	e.scope.mu.Unlock()
}

// addGroups adds chunks of the scope, claimed one at a time (claimChunk),
// until none is free (analytic estimator).
func (e *Estimator) addGroups(w *worker) error {
	for i, ok := e.claimChunk(-1); ok; i, ok = e.claimChunk(i) {
		if err := e.addChunk(w, i); err != nil {
			e.failClaims()
			return err
		}
	}
	return nil
}

// addChunk adds chunk i of the scope (scope-relative) to its group's
// accumulators (analytic estimator).
func (e *Estimator) addChunk(w *worker, i int) error {
	sc := &e.scope
	K := int64(len(e.groups))
	p := 2 * e.cfg.Features
	chunk := sc.first + int64(i)
	k := int(chunk % K)
	c := i * sc.size
	b := min(sc.size, sc.n-c)
	gx := e.gather(w.gx, sc.x, c, b, e.dimX)
	gy := e.gather(w.gy, sc.y, c, b, e.dimY)
	px, err := e.pair.X.Transform(w.px[:b*p], gx, b)
	if err != nil {
		return err
	}
	// Y's features and the joint ones in one pass (rff.Map.TransformJoint).
	py, joint, err := e.pair.Y.TransformJoint(w.py[:b*p], w.joint[:b*p], gy, px, b)
	if err != nil {
		return err
	}
	sw, weight := e.chunkWeights(w, c, b)
	g := &e.groups[k]
	if err := e.addPart(w, g.x, g.mx, px, b, sw, weight); err != nil {
		return err
	}
	if err := e.addPart(w, g.y, g.my, py, b, sw, weight); err != nil {
		return err
	}
	if err := w.addJointFeatures(g.xy, g.mxy, joint, b, p, sw, weight); err != nil {
		return err
	}
	if e.isSelfChunk(chunk) {
		if err := e.addSelf(w, e.copyX, g.cx, g.sx, px, gx, b, sw, weight); err != nil {
			return err
		}
		if err := e.addSelf(w, e.copyY, g.cy, g.sy, py, gy, b, sw, weight); err != nil {
			return err
		}
	}
	return nil
}

// addSlots adds every chunk of the scope to the accumulator slots that
// worker w owns (permutation estimator).
func (e *Estimator) addSlots(w *worker) error {
	sc := &e.scope
	x, y, n, S, W := sc.x, sc.y, sc.n, sc.shift, sc.workers
	p, dy := 2*e.cfg.Features, e.dimY
	slots := e.slots()
	// computed is the end of the positions whose Y features are in py, from
	// position c on.
	computed := 0
	for i := 0; i < sc.chunks; i++ {
		c := i * sc.size
		b := min(sc.size, n-c)
		// Y features of positions c … c+b+S−1 (modulo n): the first `have`
		// rows are carried over from the previous chunk.
		have, need := computed-c, b+S
		e.gather(w.gy[:(need-have)*dy], y, c+have, need-have, dy)
		if _, err := e.pair.Y.Transform(w.py[have*p:need*p], w.gy[:(need-have)*dy], need-have); err != nil {
			return err
		}
		computed = c + need
		gx := e.gather(w.gx, x, c, b, e.dimX)
		if _, err := e.pair.X.Transform(w.px[:b*p], gx, b); err != nil {
			return err
		}
		sw, weight := e.chunkWeights(w, c, b)
		chunk := sc.first + int64(i)
		g := &e.groups[chunk%int64(len(e.groups))]
		self := e.isSelfChunk(chunk)
		for j := w.index; j < slots; j += W {
			if err := e.addSlot(w, g, j, c, b, gx, self, sw, weight); err != nil {
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

// addSlot adds the b rows of the worker's current chunk (positions c …
// c+b−1) to slot j: the X part, Y part and joint of group g, a permuted
// joint, or a self term.
func (e *Estimator) addSlot(w *worker, g *group, j, c, b int, gx []float64, self bool, sw []float64, weight float64) error {
	p, D, P := 2*e.cfg.Features, e.cfg.Features, len(e.perm)
	px, py := w.px[:b*p], w.py[:b*p]
	switch {
	case j == 0:
		return e.addPart(w, g.x, g.mx, px, b, sw, weight)
	case j == 1:
		return e.addPart(w, g.y, g.my, py, b, sw, weight)
	case j == 2:
		return w.addJoint(g.xy, g.mxy, px, py, b, D, sw, weight)
	case j == 3+P:
		if !self {
			return nil
		}
		return e.addSelf(w, e.copyX, g.cx, g.sx, px, gx, b, sw, weight)
	case j == 4+P:
		if !self {
			return nil
		}
		// The Y rows of the chunk's positions, gathered again: w.gy holds
		// only the rows mapped for this chunk.
		gy := e.gather(w.gyc, e.scope.y, c, b, e.dimY)
		return e.addSelf(w, e.copyY, g.cy, g.sy, py, gy, b, sw, weight)
	}
	// A permuted pair weighs what its X row weighs.
	k := j - 3
	if e.scope.n > 1 {
		s := e.shifts[k]
		return w.addJoint(e.perm[k], nil, px, w.py[s*p:(s+b)*p], b, D, sw, weight)
	}
	if e.haveLastY {
		// A lone row is paired with the last row of the previous scope.
		return w.addJoint(e.perm[k], nil, px, e.lastY, 1, D, sw, weight)
	}
	return nil
}

// addPart adds part features (b rows, unscaled) to a part accumulator and
// its mean, row r weighing sw[r]² (1 when sw is nil).
func (e *Estimator) addPart(w *worker, acc *covariance.Accumulator, mean *covariance.Mean, features []float64, b int, sw []float64, weight float64) error {
	if err := mean.AddWeighted(features, b, w.rowWeights(sw)); err != nil {
		return err
	}
	return acc.AddWeighted(w.scaled(features, sw, 2*e.cfg.Features), b, weight)
}

// addSelf maps the b gathered rows of a view through its copy's map, and
// adds the copy's part features to copyAcc and the joint of the view's part
// features with them to selfAcc.
func (e *Estimator) addSelf(w *worker, copyMap *rff.Map, copyAcc, selfAcc *covariance.Accumulator, part, rows []float64, b int, sw []float64, weight float64) error {
	p := 2 * e.cfg.Features
	pc, joint, err := copyMap.TransformJoint(w.pc[:b*p], w.joint[:b*p], rows, part, b)
	if err != nil {
		return err
	}
	if err := w.addJointFeatures(selfAcc, nil, joint, b, p, sw, weight); err != nil {
		return err
	}
	return copyAcc.AddWeighted(w.scaled(pc, sw, p), b, weight)
}

// addJoint adds the joint features of px and py (row i with row i) to acc,
// and unscaled to mean (unless nil), row i weighing sw[i]² (1 when sw is
// nil); weight is the rows' total weight.
func (w *worker) addJoint(acc *covariance.Accumulator, mean *covariance.Mean, px, py []float64, rows, features int, sw []float64, weight float64) error {
	p := 2 * features
	joint, err := rff.Joint(w.joint[:rows*p], px, py, rows, features, nil)
	if err != nil {
		return err
	}
	return w.addJointFeatures(acc, mean, joint, rows, p, sw, weight)
}

// addJointFeatures adds joint features (rows of p, unscaled) to acc, and
// to mean (unless nil), as addJoint; the rows are scaled in place.
func (w *worker) addJointFeatures(acc *covariance.Accumulator, mean *covariance.Mean, joint []float64, rows, p int, sw []float64, weight float64) error {
	if mean != nil {
		if err := mean.AddWeighted(joint, rows, w.rowWeights(sw)); err != nil {
			return err
		}
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
