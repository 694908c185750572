package stream

import (
	"runtime"
	"sync/atomic"
	"time"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
)

// A scope is added chunk by chunk (chunkRows positions of its random order
// at a time) by W workers: the caller's goroutine and W−1 goroutines started
// for the scope. Adding chunk k takes two kinds of tasks:
//
//   - map: the X rows of the chunk and the Y rows of its positions not
//     mapped yet (its own, and the S = max shift positions after it, modulo
//     n, which its shifted pairs need; the first S are carried over from the
//     previous chunk) are gathered and mapped to features, pieceRows rows per
//     task;
//   - accumulate: one task per accumulator (X, Y, joint, permuted 0 … P−1)
//     builds its joint or permuted features from the parts into the worker's
//     own buffer, if any, and adds them with one rank-k update.
//
// The features of a chunk have two buffers, used in turn, so that one step
// runs the accumulate tasks of chunk k and the map tasks of chunk k+1
// together: one synchronization per chunk. Workers take the step's tasks
// from a shared counter, the accumulate tasks (the largest) first, so that
// the work is balanced whatever the number of accumulators.
//
// Each accumulator receives the same rank-k updates in the same order
// whoever runs them, and each feature row is computed by the same code
// whichever task maps it: results are bit-identical for any number of
// workers, and no accumulator is duplicated.
//
// The synchronizations spin before they sleep (signal): waking a sleeping
// goroutine's thread took 50 to 150 µs on the 2-core virtual machine of
// development, where a step lasts about 1 ms (D = 128, P = 1, OpenBLAS);
// with channels alone the workers spent 16% of their time waiting for each
// other.

// pieceRows is the number of rows a map task maps.
const pieceRows = 32

// worker is the scratch of one worker: gathered input rows, its joint
// features and scaled copies of part features (decay).
type worker struct {
	index          int
	gx, gy         []float64
	joint, scratch []float64
	err            error

	// A worker goroutine (index > 0) runs a step (or exits) each time cmd is
	// notified.
	exit bool
	cmd  signal
	seen uint64 // cmd's count when the goroutine starts
	loop func() // the goroutine's body, made once: go w.loop() does not allocate
}

// chunk is a chunk of positions c … c+b−1 and its feature buffers: py holds
// the Y features of positions c … c+need−1 (modulo n), of which the first
// have were carried over. weight is the rows' total weight, sw their √w with
// decay (nil otherwise).
type chunk struct {
	valid      bool
	c, b       int
	have, need int
	buf        int // which of the two buffers
	px, py     []float64
	weight     float64
	sw         []float64
}

// newWorker returns a worker with its scratch buffers.
func (e *Estimator) newWorker(index int) *worker {
	p := 2 * e.cfg.Features
	w := &worker{
		index: index,
		gx:    make([]float64, pieceRows*e.dimX),
		gy:    make([]float64, pieceRows*e.dimY),
		joint: make([]float64, chunkRows*p),
	}
	if e.cfg.HalfLife > 0 {
		w.scratch = make([]float64, chunkRows*p)
	}
	if index > 0 {
		w.cmd = newSignal()
		w.loop = func() {
			seen := w.seen
			for {
				w.cmd.await(func() bool { return w.cmd.count.Load() != seen })
				seen++
				exit := w.exit
				if !exit {
					w.err = e.work(w)
				}
				if e.busy.Add(-1) == 0 {
					e.done.notify()
				}
				if exit {
					return
				}
			}
		}
	}
	return w
}

// workerCount returns the number of workers for a scope of n rows: the
// configured number, at most the number of tasks of a step (P+3 accumulate
// tasks and about 2·chunkRows/pieceRows map tasks), and one for scopes of
// fewer than 2·chunkRows rows, too small to share.
func (e *Estimator) workerCount(n int) int {
	if n < 2*chunkRows {
		return 1
	}
	return min(e.workers, len(e.accs)+2*chunkRows/pieceRows)
}

// addScope adds the current scope (e.scope) with w workers.
func (e *Estimator) addScope(w int) error {
	for len(e.pool) < w {
		e.pool = append(e.pool, e.newWorker(len(e.pool)))
	}
	workers := e.pool[:w]
	for _, wk := range workers[1:] {
		wk.seen, wk.exit = wk.cmd.count.Load(), false
		go wk.loop()
	}
	err := e.addChunks(workers)
	// An empty step, to wait for the goroutines to exit: the next scope
	// starts new ones on the same workers.
	e.cur, e.next = chunk{}, chunk{}
	for _, wk := range workers[1:] {
		wk.exit = true
	}
	e.step(workers)
	return err
}

// addChunks adds the scope's chunks in order, mapping chunk k+1 while
// accumulating chunk k.
func (e *Estimator) addChunks(workers []*worker) error {
	n, S, p := e.scope.n, e.scope.shift, 2*e.cfg.Features
	e.cur, e.next = chunk{}, e.chunkAt(0, 0, 0)
	for {
		if err := e.step(workers); err != nil {
			return err
		}
		if cur := &e.cur; cur.valid && cur.c+cur.b == n {
			copy(e.lastY, cur.py[(cur.b-1)*p:cur.b*p])
			e.haveLastY = true
		}
		if !e.next.valid {
			return nil
		}
		e.cur, e.next = e.next, chunk{}
		if c := e.cur.c + e.cur.b; c < n {
			e.next = e.chunkAt(c, 1-e.cur.buf, S)
			// Carry the Y features of positions c … c+S−1 over.
			copy(e.next.py[:S*p], e.cur.py[e.cur.b*p:(e.cur.b+S)*p])
		}
	}
}

// chunkAt returns the chunk of positions from c, in buffer buf, whose first
// have rows of Y features will be carried over.
func (e *Estimator) chunkAt(c, buf, have int) chunk {
	sc := &e.scope
	b := min(chunkRows, sc.n-c)
	ch := chunk{valid: true, c: c, b: b, have: have, need: b + sc.shift, buf: buf,
		px: e.px[buf], py: e.py[buf], weight: float64(b)}
	if sc.decay {
		// With decay, the row at position c+r weighs w = sqrtWeight² by its
		// arrival; the part accumulators take scaled copies of the features,
		// and joint rows (products of unscaled parts) are scaled after.
		ch.sw, ch.weight = e.weights[buf][:b], 0
		for r := range ch.sw {
			ch.sw[r] = e.sqrtWeight[sc.order[c+r]]
			ch.weight += ch.sw[r] * ch.sw[r]
		}
	}
	return ch
}

// step runs the tasks of the current step (accumulate e.cur, map e.next) on
// every worker, the first on the caller's goroutine, and returns the first
// error once all are done; with the workers' exit set, it waits for their
// goroutines to exit.
func (e *Estimator) step(workers []*worker) error {
	e.accTasks, e.tasks = 0, 0
	if e.cur.valid {
		e.accTasks = len(e.accs)
	}
	e.tasks = e.accTasks
	if nx := &e.next; nx.valid {
		e.tasks += (nx.b + nx.need - nx.have + pieceRows - 1) / pieceRows
	}
	e.taken.Store(0)
	e.busy.Store(int32(len(workers) - 1))
	for _, wk := range workers[1:] {
		wk.cmd.notify()
	}
	err := e.work(workers[0])
	if len(workers) > 1 {
		e.done.await(func() bool { return e.busy.Load() == 0 })
	}
	for _, wk := range workers[1:] {
		if err == nil {
			err = wk.err
		}
	}
	return err
}

// work runs tasks of the current step until none is left.
func (e *Estimator) work(w *worker) error {
	for {
		t := int(e.taken.Add(1)) - 1
		switch {
		case t >= e.tasks:
			return nil
		case t < e.accTasks:
			if err := e.accumulate(w, t); err != nil {
				return err
			}
		default:
			if err := e.mapPiece(w, t-e.accTasks); err != nil {
				return err
			}
		}
	}
}

// mapPiece maps rows i·pieceRows … (i+1)·pieceRows−1 of the next chunk's b
// X rows followed by its need−have new Y rows.
func (e *Estimator) mapPiece(w *worker, i int) error {
	sc, ch := &e.scope, &e.next
	p, dx, dy := 2*e.cfg.Features, e.dimX, e.dimY
	lo, hi := i*pieceRows, min((i+1)*pieceRows, ch.b+ch.need-ch.have)
	if end := min(hi, ch.b); lo < end { // X rows lo … end−1 of the chunk
		for r := lo; r < end; r++ {
			k := sc.order[ch.c+r]
			copy(w.gx[(r-lo)*dx:(r-lo+1)*dx], sc.x[k*dx:(k+1)*dx])
		}
		if _, err := e.pair.X.Transform(ch.px[lo*p:end*p], w.gx[:(end-lo)*dx], end-lo); err != nil {
			return err
		}
	}
	if from, to := max(lo, ch.b)-ch.b, hi-ch.b; from < to { // new Y rows, at py rows have+from …
		for r := from; r < to; r++ {
			pos := ch.c + ch.have + r
			if pos >= sc.n {
				pos -= sc.n
			}
			k := sc.order[pos]
			copy(w.gy[(r-from)*dy:(r-from+1)*dy], sc.y[k*dy:(k+1)*dy])
		}
		if _, err := e.pair.Y.Transform(ch.py[(ch.have+from)*p:(ch.have+to)*p], w.gy[:(to-from)*dy], to-from); err != nil {
			return err
		}
	}
	return nil
}

// accumulate adds the current chunk to accumulator j: X, Y, joint, then the
// permuted ones.
func (e *Estimator) accumulate(w *worker, j int) error {
	ch := &e.cur
	b, p, D := ch.b, 2*e.cfg.Features, e.cfg.Features
	px, py := ch.px[:b*p], ch.py[:b*p]
	switch j {
	case 0:
		return e.x.AddWeighted(w.scaled(px, ch.sw, p), b, ch.weight)
	case 1:
		return e.y.AddWeighted(w.scaled(py, ch.sw, p), b, ch.weight)
	case 2:
		return w.addJoint(e.xy, px, py, b, D, ch.sw, ch.weight)
	}
	// A permuted pair weighs what its X row weighs.
	k := j - 3
	if e.scope.n > 1 {
		s := e.shifts[k]
		return w.addJoint(e.perm[k], px, ch.py[s*p:(s+b)*p], b, D, ch.sw, ch.weight)
	}
	if e.haveLastY {
		// A lone row is paired with the last row of the previous scope.
		return w.addJoint(e.perm[k], px, e.lastY, 1, D, ch.sw, ch.weight)
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

// signal is a counter that waiters poll for a while before they sleep on a
// channel, so that a waiter that is woken soon after it starts waiting wakes
// at once rather than after its thread has gone to sleep.
type signal struct {
	count atomic.Uint64
	wake  chan struct{} // capacity 1: a wake-up for a sleeping waiter
}

func newSignal() signal { return signal{wake: make(chan struct{}, 1)} }

// notify increments the count and wakes a sleeping waiter. If the channel
// is full, its token (perhaps left by an earlier notify that the waiter saw
// while polling) wakes the waiter, which then finds the new count.
func (s *signal) notify() {
	s.count.Add(1)
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// spinTime is how long a waiter polls before it sleeps.
const spinTime = 200 * time.Microsecond

// await waits until done() holds, polling (and yielding to other goroutines)
// for up to spinTime, then sleeping until a notify. done must become true
// only before a notify of s.
func (s *signal) await(done func() bool) {
	start := time.Now()
	for i := 0; !done(); i++ {
		if i&63 != 63 || time.Since(start) < spinTime {
			runtime.Gosched()
			continue
		}
		<-s.wake // then check again: the token may be stale
	}
}
