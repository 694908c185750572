package stream

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/internal/randstream"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// Estimator is the streaming RFF estimator of the entropies, mutual
// information and DiME of two views. Feed it row-major blocks with Add and
// read a Result at any moment; its memory is O(D²) whatever the number of
// rows. An Estimator is not safe for concurrent use.
type Estimator struct {
	cfg            Config
	dimX, dimY     int
	sigmaX, sigmaY float64      // resolved bandwidths
	scaling        Scaling      // resolved standardization (empty: none)
	stdX, stdY     []float64    // scratch: a block's standardized rows
	spec           rff.PairSpec // the feature maps, once the bandwidths are resolved
	pair           *rff.Pair    // built from spec when the first scope is added (featureMaps)
	copyX, copyY   *rff.Map     // the copies' maps (normalized score), built with pair
	shards         shardSet     // whose rows the accumulators hold (shard.go)
	groups         []group      // the K groups of rows
	perm           []*covariance.Accumulator
	accs           []*covariance.Accumulator // every accumulator, in state order (layout)
	means          []*covariance.Mean        // every mean, in state order (layout)
	chunks         int64                     // chunks added so far: the next chunk's group is chunks mod K
	shuffleSrc     *rand.PCG                 // reseeded for each scope (scopeStream)
	shuffle        *rand.Rand                // draws from shuffleSrc
	rows           int64                     // rows added, including rows still pending
	skipped        int64                     // rows dropped upstream, reported in Result
	lagX, lagY     lagStats                  // lag-1 autocorrelations of the rows added (serial.go)
	shared         [2]*ViewTerms             // X's and Y's terms computed elsewhere (EstimateGroupsWith), or nil

	// Rows held back to resolve data-dependent bandwidths.
	// Every row of the blocks added until the pilot is full, and the
	// blocks' sizes: they are added block by block once the settings are
	// resolved, so that the shuffle scopes are those of an estimator
	// without a pilot.
	pilotX, pilotY []float64
	pilot          int
	pilotBlocks    []int

	// Rows waiting for their shuffle scope to fill.
	pendX, pendY []float64
	pending      int

	// Scratch, reused: the scope's random order, the weights of a decaying
	// scope, the permutations' shifts and the Y features of the last row of
	// the previous scope.
	order      []int
	sqrtWeight []float64 // √w of each row of a decaying scope, by arrival
	shifts     []int
	lastY      []float64
	haveLastY  bool

	// The scope being added and the workers that add it (see workers.go).
	scope   scope
	pool    []*worker
	cursors []groupCursor // scratch of scope.cursors
	workers int           // Config.workers() when the estimator was made
	wg      sync.WaitGroup
}

// New returns an estimator for views of dimX and dimY columns. With fixed or
// explicit bandwidths it is ready at once; with median or auto it holds back
// the first cfg.PilotRows rows, resolves the bandwidths on them, and only then
// builds its feature maps and adds them.
func New(dimX, dimY int, cfg Config) (*Estimator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := checkViews(dimX, dimY, cfg); err != nil {
		return nil, err
	}
	e := newEstimator(dimX, dimY, cfg)
	e.shards = newShardSet()
	if !cfg.Scaling.Empty() {
		if err := cfg.Scaling.check(dimX, dimY); err != nil {
			return nil, err
		}
		e.scaling = cfg.Scaling.clone()
	}
	if !cfg.needsPilot() {
		if err := e.start(resolveDataFree(cfg.BandwidthX, dimX), resolveDataFree(cfg.BandwidthY, dimY)); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// checkViews checks the widths of the views and their names.
func checkViews(dimX, dimY int, cfg Config) error {
	if dimX < 1 || dimY < 1 {
		return invalidf("views need at least one column, got %d and %d", dimX, dimY)
	}
	for _, c := range []struct {
		names []string
		dim   int
		view  string
	}{{cfg.XColumns, dimX, "X"}, {cfg.YColumns, dimY, "Y"}} {
		if len(c.names) > c.dim {
			return invalidf("%d names for the %d columns of %s", len(c.names), c.dim, c.view)
		}
	}
	return nil
}

// newEstimator returns an estimator without accumulators or shard ids.
func newEstimator(dimX, dimY int, cfg Config) *Estimator {
	src := rand.NewPCG(cfg.Seed, randstream.Permutation)
	return &Estimator{cfg: cfg, dimX: dimX, dimY: dimY, shuffleSrc: src, shuffle: rand.New(src), workers: cfg.workers()}
}

// resolveDataFree returns the bandwidth of a fixed or explicit rule.
func resolveDataFree(b vocab.Bandwidth, d int) float64 {
	if b.Rule == vocab.ExplicitRule {
		return b.Sigma
	}
	return exact.FixedSigma(d)
}

// layout returns the descriptions of an estimator's accumulators and means,
// in state order: per group k, X, Y, joint (and, for the normalized score,
// the copies of X and Y and the self joints of X and Y), then the permuted
// joints; the means are those of X, Y and joint per group.
func layout(cfg Config, spec rff.PairSpec) (accs, means []covariance.Description) {
	accs = make([]covariance.Description, 0, 7*cfg.groups()+cfg.Permutations)
	means = make([]covariance.Description, 0, 3*cfg.groups())
	d := func(part covariance.Part, index int) covariance.Description {
		return covariance.Description{Map: spec, Part: part, Index: index}
	}
	for k := range cfg.groups() {
		accs = append(accs, d(covariance.PartX, k), d(covariance.PartY, k), d(covariance.PartJoint, k))
		if !cfg.SkipNormalized {
			accs = append(accs, d(covariance.PartCopyX, k), d(covariance.PartCopyY, k), d(covariance.PartSelfX, k), d(covariance.PartSelfY, k))
		}
		means = append(means, d(covariance.PartX, k), d(covariance.PartY, k), d(covariance.PartJoint, k))
	}
	for k := range cfg.Permutations {
		accs = append(accs, d(covariance.PartPermuted, k))
	}
	return accs, means
}

// start makes the accumulators for the given bandwidths. The feature maps,
// whose frequencies take 8·D·(dimX + dimY) bytes, are built when the first
// rows come (featureMaps): an estimator restored to be merged never needs
// them.
func (e *Estimator) start(sigmaX, sigmaY float64) error {
	return e.startAccumulators(sigmaX, sigmaY, false)
}

// startAccumulators is start; a template's accumulators and means are zero
// values.
func (e *Estimator) startAccumulators(sigmaX, sigmaY float64, template bool) error {
	spec := e.cfg.pairSpec(e.dimX, e.dimY, sigmaX, sigmaY)
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	accDescs, meanDescs := layout(e.cfg, spec)
	accs := make([]*covariance.Accumulator, len(accDescs))
	for i, d := range accDescs {
		if template {
			accs[i] = new(covariance.Accumulator)
			continue
		}
		var err error
		if accs[i], err = covariance.New(d); err != nil {
			return err
		}
	}
	means := make([]*covariance.Mean, len(meanDescs))
	for i, d := range meanDescs {
		if template {
			means[i] = new(covariance.Mean)
			continue
		}
		var err error
		if means[i], err = covariance.NewMean(d); err != nil {
			return err
		}
	}
	e.setAccumulators(spec, sigmaX, sigmaY, accs, means)
	return nil
}

// startTemplate starts an estimator that only holds settings, a Sum's
// template: its accumulators and means are zero values, which hold no
// memory (a Sum keeps the sums themselves), so that decoding a Sum's
// settings allocates no more than the settings' bytes (plus the layout, at
// most 7·MaxGroups + MaxPermutations descriptions), whatever the features
// and groups they claim.
func (e *Estimator) startTemplate(sigmaX, sigmaY float64) error {
	return e.startAccumulators(sigmaX, sigmaY, true)
}

// releaseAccumulators replaces every accumulator by a zero value, which holds
// no memory, and zeroes the means.
func (e *Estimator) releaseAccumulators() {
	accs := make([]*covariance.Accumulator, len(e.accs))
	for i := range accs {
		accs[i] = new(covariance.Accumulator)
	}
	for _, m := range e.means {
		m.Reset()
	}
	e.setAccumulators(e.spec, e.sigmaX, e.sigmaY, accs, e.means)
}

// setAccumulators sets the resolved bandwidths, the accumulators and the
// means (in the order of layout) of a starting estimator.
func (e *Estimator) setAccumulators(spec rff.PairSpec, sigmaX, sigmaY float64, accs []*covariance.Accumulator, means []*covariance.Mean) {
	e.spec, e.sigmaX, e.sigmaY = spec, sigmaX, sigmaY
	e.accs, e.means = accs, means
	for _, a := range accs {
		// Validate has checked the precision: SetPrecision cannot fail.
		_ = a.SetPrecision(e.cfg.Precision)
	}
	e.groups = make([]group, e.cfg.groups())
	for k := range e.groups {
		g := &e.groups[k]
		g.x, g.y, g.xy, accs = accs[0], accs[1], accs[2], accs[3:]
		if !e.cfg.SkipNormalized {
			g.cx, g.cy, g.sx, g.sy, accs = accs[0], accs[1], accs[2], accs[3], accs[4:]
		}
		g.mx, g.my, g.mxy, means = means[0], means[1], means[2], means[3:]
	}
	e.perm = accs
	e.lastY = make([]float64, 2*e.cfg.Features)
	e.shifts = make([]int, e.cfg.Permutations)
}

// featureMaps returns the feature maps, building them (and the copies' maps)
// the first time.
func (e *Estimator) featureMaps() (*rff.Pair, error) {
	if e.pair == nil {
		pair, err := rff.NewPair(e.spec)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		if !e.cfg.SkipNormalized {
			if e.copyX, err = rff.New(e.spec.CopyX()); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
			}
			if e.copyY, err = rff.New(e.spec.CopyY()); err != nil {
				return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
			}
		}
		e.pair = pair
	}
	return e.pair, nil
}

// group holds the accumulators of one group of rows: the X and Y parts, the
// joint, their first moments, and for the normalized score the copies'
// parts and the self joints (nil with SkipNormalized).
type group struct {
	x, y, xy       *covariance.Accumulator
	mx, my, mxy    *covariance.Mean
	cx, cy, sx, sy *covariance.Accumulator
}

// Which chunks feed the self terms of the normalized score: those of the
// first selfFirstRounds rounds of K chunks (every group gets one chunk per
// round), then one round in selfRounds. A self chunk costs four more rank-k
// updates and two more feature maps: in the long run about 8% of the work
// of the three updates of every chunk.
const (
	selfFirstRounds = 4
	selfRounds      = 16
)

// isSelfChunk reports whether chunk c (counted over the whole stream) feeds
// the self terms.
func (e *Estimator) isSelfChunk(c int64) bool {
	round := c / int64(len(e.groups))
	return !e.cfg.SkipNormalized && (round < selfFirstRounds || round%selfRounds == 0)
}

// Started reports whether the bandwidths are resolved and the accumulators
// made (always, except while a pilot sample is being gathered).
func (e *Estimator) Started() bool { return e.accs != nil }

// Bandwidths returns the resolved bandwidths (0 before Started), in the
// units of the standardized columns when Scaling is not empty.
func (e *Estimator) Bandwidths() (sigmaX, sigmaY float64) { return e.sigmaX, e.sigmaY }

// Scaling returns the columns' standardization (empty before Started or
// without Config.Standardize). The caller must not change it.
func (e *Estimator) Scaling() Scaling { return e.scaling }

// resolvePilot resolves the scaling and the bandwidths on the rows held
// back (ResolvePilot), starts, and adds those rows.
func (e *Estimator) resolvePilot() error {
	n := min(e.pilot, e.cfg.pilotRows())
	if n < 2 {
		return invalidf("%d rows, want at least 2 to choose the scales and bandwidths", n)
	}
	p, err := ResolvePilot(e.pilotX[:n*e.dimX], e.pilotY[:n*e.dimY], n, e.dimX, e.dimY, e.cfg)
	if err != nil {
		return fmt.Errorf("%w: choosing the scales and bandwidths on the first %d rows: %v", ErrInvalidInput, n, trimInvalid(err))
	}
	e.scaling = p.Scaling
	if err := e.start(p.SigmaX, p.SigmaY); err != nil {
		return err
	}
	px, py, blocks := e.pilotX, e.pilotY, e.pilotBlocks
	e.pilotX, e.pilotY, e.pilot, e.pilotBlocks = nil, nil, 0, nil
	for _, b := range blocks {
		if err := e.addRaw(px[:b*e.dimX], py[:b*e.dimY], b); err != nil {
			return err
		}
		px, py = px[b*e.dimX:], py[b*e.dimY:]
	}
	return nil
}

// trimInvalid returns the message of err without the ErrInvalidInput
// prefix that the caller adds again.
func trimInvalid(err error) string {
	return strings.ReplaceAll(err.Error(), ErrInvalidInput.Error()+": ", "")
}

// addRaw standardizes finite rows (if the estimator does) and adds them.
func (e *Estimator) addRaw(x, y []float64, rows int) error {
	if !e.scaling.Empty() {
		e.stdX = apply(e.stdX, x, e.dimX, e.scaling.CenterX, e.scaling.ScaleX)
		e.stdY = apply(e.stdY, y, e.dimY, e.scaling.CenterY, e.scaling.ScaleY)
		x, y = e.stdX, e.stdY
	}
	return e.addStarted(x, y, rows)
}

// Config returns the estimator's configuration, with the scaling that the
// pilot chose (if any) in Scaling: an estimator made with it standardizes
// rows as this one does.
func (e *Estimator) Config() Config {
	c := e.cfg
	if c.Scaling.Empty() && !e.scaling.Empty() {
		c.Scaling = e.scaling.clone()
	}
	return c
}

// Dims returns the widths of the views.
func (e *Estimator) Dims() (dimX, dimY int) { return e.dimX, e.dimY }

// Rows returns the number of rows added.
func (e *Estimator) Rows() int64 { return e.rows }

// Add adds rows paired rows: x holds rows×dimX values and y rows×dimY,
// row-major. Values must be finite and within ±vocab.MaxAbsValue: another
// value is refused with an error naming the view, the row (counted from the
// first row ever added, from 0) and the column, and nothing of the block is
// added.
func (e *Estimator) Add(x, y []float64, rows int) error {
	if rows < 0 || len(x) != rows*e.dimX || len(y) != rows*e.dimY {
		return invalidf("block of %d rows has %d X values (want %d) and %d Y values (want %d)",
			rows, len(x), rows*e.dimX, len(y), rows*e.dimY)
	}
	if err := checkFinite("X", x, e.dimX, e.rows); err != nil {
		return err
	}
	if err := checkFinite("Y", y, e.dimY, e.rows); err != nil {
		return err
	}
	e.rows += int64(rows)
	e.lagX.add(x, rows, e.dimX)
	e.lagY.add(y, rows, e.dimY)
	if !e.Started() {
		e.pilotX = append(e.pilotX, x...)
		e.pilotY = append(e.pilotY, y...)
		e.pilot += rows
		e.pilotBlocks = append(e.pilotBlocks, rows)
		if e.pilot < e.cfg.pilotRows() {
			return nil
		}
		return e.resolvePilot()
	}
	return e.addRaw(x, y, rows)
}

// addStarted adds finite rows once the feature maps exist.
func (e *Estimator) addStarted(x, y []float64, rows int) error {
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

// checkFinite returns an error naming the first NaN, Inf or value beyond
// ±vocab.MaxAbsValue of a block.
func checkFinite(view string, v []float64, d int, offset int64) error {
	if i := vocab.FirstInvalid(v); i >= 0 {
		return invalidf("%s row %d, column %d: %s", view, offset+int64(i/d), i%d, vocab.CheckValue(v[i]))
	}
	return nil
}

// Flush pairs the rows waiting in the shuffle buffer now, as a scope of their
// own, and, if a pilot sample is still being gathered, resolves the
// bandwidths on the rows so far. Result calls it; a caller that ends a window
// calls it too.
func (e *Estimator) Flush() error {
	if !e.Started() {
		if e.pilot == 0 {
			return nil
		}
		if err := e.resolvePilot(); err != nil {
			return err
		}
	}
	if e.pending == 0 {
		return nil
	}
	err := e.processScope(e.pendX, e.pendY, e.pending)
	e.pendX, e.pendY, e.pending = e.pendX[:0], e.pendY[:0], 0
	return err
}

// scopeStream returns the PCG stream of a scope's random order: the
// permutation stream mixed with a hash of the scope's size and of its first
// and last rows. A scope is thus ordered the same way whenever and wherever
// it is processed, so that shards merged from saved states equal one run over
// the same scopes, and a restored state continues exactly.
//
// Standardized rows (rounded is true) are hashed rounded to float32: a
// column multiplied by a constant or shifted gives standardized values that
// differ from the original's in the last bits only, and rounding to 24 bits
// gives them the same hash, and so the same order, unless a value lies
// within round-off of a float32 rounding boundary (a chance of about 1e-8
// per value).
func scopeStream(x, y []float64, n, dx, dy int, rounded bool) uint64 {
	h := mix(randstream.Permutation ^ uint64(n))
	for _, v := range [][]float64{x[:dx], y[:dy], x[(n-1)*dx : n*dx], y[(n-1)*dy : n*dy]} {
		for _, f := range v {
			if rounded {
				h = mix(h ^ uint64(math.Float32bits(float32(f))))
			} else {
				h = mix(h ^ math.Float64bits(f))
			}
		}
	}
	return h
}

// mix is the SplitMix64 finalizer.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// processScope adds the n rows of one shuffle scope to every accumulator.
//
// The rows are put in a random order o (seeded by the estimator's seed and
// scopeStream) and cut into chunks of consecutive positions (256, or n/K
// rounded up for a scope of fewer than 256·K rows); chunk c of the stream
// goes to group c mod K, whose X part, Y part and joint take its rows, and
// the chunks of one round of K in selfRounds feed the self terms too.
// Permuted accumulator k pairs X at position i with Y at position i + s_k
// (cyclically), s_k = 1 + (k−1) mod (n−1): a random derangement, no row
// paired with itself.
//
// Rows are mapped in chunks of positions, and the Y features of the S =
// max s_k positions after a chunk are kept for the next chunk, so that each
// row's features are computed once per worker (and those of the first S
// positions once more for the wrap). Parallel workers share out the
// accumulators (workers.go), with results that do not depend on their
// number.
func (e *Estimator) processScope(x, y []float64, n int) error {
	if _, err := e.featureMaps(); err != nil {
		return err
	}
	if cap(e.order) < n {
		e.order = make([]int, n)
	}
	order := e.order[:n]
	for i := range order {
		order[i] = i
	}
	if e.cfg.RowModel != SerialRows {
		// Serial rows keep their order, so that each chunk is a block of
		// consecutive rows and the groups' spread sees their dependence.
		e.shuffleSrc.Seed(e.cfg.Seed, scopeStream(x, y, n, e.dimX, e.dimY, !e.scaling.Empty()))
		e.shuffle.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
	}

	decay := e.cfg.HalfLife > 0
	if decay {
		// Every row so far loses the weight of n more rows; the rows of this
		// scope weigh 2^(−(n−1−i)/h) by their arrival i in the scope.
		f := math.Exp2(-float64(n) / e.cfg.HalfLife)
		for _, a := range e.accs {
			if err := a.Scale(f); err != nil {
				return err
			}
		}
		for _, m := range e.means {
			if err := m.Scale(f); err != nil {
				return err
			}
		}
		if cap(e.sqrtWeight) < n {
			e.sqrtWeight = make([]float64, n)
		}
		e.sqrtWeight = e.sqrtWeight[:n]
		for i := range e.sqrtWeight {
			e.sqrtWeight[i] = math.Exp2(-float64(n-1-i) / (2 * e.cfg.HalfLife))
		}
	}
	S := 0
	if n > 1 {
		for k := range e.shifts {
			e.shifts[k] = 1 + k%(n-1)
			S = max(S, e.shifts[k])
		}
	}
	// Chunks of `size` positions; a small scope is cut into K chunks so that
	// every group gets rows.
	K := len(e.groups)
	size := min(chunkRows, (n+K-1)/K)
	chunks := (n + size - 1) / size
	e.scope = scope{x: x, y: y, n: n, order: order, shift: S, decay: decay, size: size, chunks: chunks, first: e.chunks}
	e.scope.workers = e.workerCount(n, chunks)
	err := e.addScope()
	e.scope = scope{} // do not hold on to the caller's rows
	e.chunks += int64(chunks)
	return err
}

// scope is the shuffle scope being added: its rows, their random order, the
// largest shift S of the permutations, whether rows are weighted, its
// chunks (of size positions; the first is chunk number first of the stream)
// and the number of workers adding it.
type scope struct {
	x, y         []float64
	n            int
	order        []int
	shift        int
	decay        bool
	size, chunks int
	first        int64
	workers      int

	// The claims of the analytic estimator's workers (workers.go): where
	// each group stands, and whether a worker failed; under mu.
	mu      sync.Mutex
	cursors []groupCursor
	failed  bool
}

// Reset forgets every row, keeping the feature maps, the bandwidths and the
// settings: the next rows start a new estimate (a new window), under a new
// shard id. Rows still
// waiting in the shuffle buffer are dropped: call Result (or Flush) first to
// count them.
func (e *Estimator) Reset() {
	for _, a := range e.accs {
		a.Reset()
	}
	for _, m := range e.means {
		m.Reset()
	}
	e.chunks = 0
	e.pendX, e.pendY, e.pending = e.pendX[:0], e.pendY[:0], 0
	e.pilotX, e.pilotY, e.pilot, e.pilotBlocks = e.pilotX[:0], e.pilotY[:0], 0, e.pilotBlocks[:0]
	e.haveLastY = false
	e.rows, e.skipped = 0, 0
	e.lagX, e.lagY = lagStats{}, lagStats{}
	e.shards = newShardSet() // the next rows are another shard's
}
