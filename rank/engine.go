package rank

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// ErrInvalidInput is matched by every error about the caller's settings
// or data.
var ErrInvalidInput = errors.New("rank: invalid input")

func invalidf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidInput, fmt.Sprintf(format, args...))
}

// View is a group of columns scored as one side of a pair: a column, a
// fixed-size list, a slice of one, or a named group.
type View struct {
	// Name labels the view in results.
	Name string
	// Columns name its columns (reported, recorded in states).
	Columns []string
	// Index gives the position of each of its values in a row of the blocks
	// given to Add.
	Index []int
}

// Dim returns the view's width.
func (v View) Dim() int { return len(v.Index) }

// Plan says which pairs of views to score and how a row is laid out.
type Plan struct {
	// Width is the number of values in a row of the blocks given to Add.
	Width int
	// Views are the sides of the pairs.
	Views []View
	// Pairs are the pairs (X view, Y view), indices into Views: the first
	// is scored as dime score's X, the second as its Y.
	Pairs [][2]int
	// OrderX and OrderY name the views (indices) whose rows, concatenated
	// in this order, seed the random order of each shuffle scope as
	// stream.ScopeOrder's x and y: for a ranking against a target, every
	// candidate in OrderX and the target in OrderY, so that with one
	// candidate the rows are grouped as dime score groups them.
	OrderX, OrderY []int
}

// Config holds the settings of a multi-pair estimate.
type Config struct {
	// Stream holds the estimator settings, as for one pair (stream.Config):
	// kernel, alpha, features, variant, groups, jackknife, precision, seed,
	// standardization, pilot rows, shuffle rows, row model, workers,
	// normalized score. Its bandwidth rule BandwidthX applies to every view
	// (fixed, median or an explicit value: auto, which chooses a pair's
	// bandwidths together, is refused). Permutations and HalfLife must be 0.
	Stream stream.Config
	// Sigmas, if not empty, give every view's bandwidth explicitly (a saved
	// state's), and Centers and Scales its standardization: then nothing is
	// chosen on the pilot rows.
	Sigmas          []float64
	Centers, Scales [][]float64
}

// mapKey is one feature map of one view: views share a map when the same
// view needs the same spec in several pairs.
type mapKey struct {
	view int
	spec rff.Spec
}

// pairPlan is where a pair's accumulators are.
type pairPlan struct {
	spec               rff.PairSpec
	x, y               int // part maps
	copyX, copyY       int // copy accumulators (index into copies), −1 without the normalized score
	selfX, selfY       int // self joints (index into selfs)
	cxMap, cyMap       int // the copies' maps
	joint              []*covariance.Accumulator
	jointMean          []*covariance.Mean
	sigmaX, sigmaY     float64
	xColumns, yColumns []string
}

// Accumulator is the streaming estimate of many pairs of views over the
// same rows, in one pass. Each view's feature maps are computed once per
// chunk of rows and shared by every pair that contains the view, and so are
// its part accumulators; a pair adds only its joint accumulators. Its memory
// is O(D²) per pair and per view whatever the number of rows. It is not
// safe for concurrent use.
type Accumulator struct {
	cfg   stream.Config
	plan  Plan
	given Config

	// Resolved on the pilot rows.
	started       bool
	sigma         []float64
	center, scale [][]float64
	maps          []mapKey
	fmaps         []*rff.Map
	parts         []int // maps with part accumulators (index into maps), in order
	partAcc       [][]*covariance.Accumulator
	partMean      [][]*covariance.Mean
	partOf        []int // map → index into parts, −1
	copies        []int // maps with copy accumulators
	copyAcc       [][]*covariance.Accumulator
	copyOf        []int    // map → index into copies, −1
	selfs         [][2]int // (part map, copy map)
	selfAcc       [][]*covariance.Accumulator
	pairs         []pairPlan
	rows, skipped int64
	chunks        int64
	shards        shardSet
	pilot         []float64
	pilotRows     int
	pilotBlocks   []int
	pend          []float64
	pending       int
	std           [][]float64 // the scope's standardized rows, per view
	order         []int
	workers       int
	scratch       []*workerScratch
	hashX, hashY  []float64
	chunkBuf      *chunkData
	needSelf      []int
	noShare       bool // tests: compute every pair's view terms itself
}

type workerScratch struct {
	joint []float64
}

// New returns an accumulator for the pairs of plan.
func New(plan Plan, cfg Config) (*Accumulator, error) {
	sc := cfg.Stream
	if err := sc.Validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidInput, err)
	}
	if sc.Permutations != 0 {
		return nil, invalidf("the analytic estimator only (permutations 0)")
	}
	if sc.HalfLife != 0 {
		return nil, invalidf("no half-life")
	}
	if sc.BandwidthX.Rule == exact.AutoRule {
		return nil, invalidf("the auto bandwidth chooses a pair's bandwidths together: use fixed, median or a value")
	}
	if plan.Width < 1 || len(plan.Views) == 0 || len(plan.Pairs) == 0 {
		return nil, invalidf("a plan needs columns, views and pairs")
	}
	for i, v := range plan.Views {
		if v.Dim() < 1 {
			return nil, invalidf("view %d (%s) has no columns", i, v.Name)
		}
		for _, j := range v.Index {
			if j < 0 || j >= plan.Width {
				return nil, invalidf("view %s: column index %d out of a row of %d", v.Name, j, plan.Width)
			}
		}
	}
	for _, p := range plan.Pairs {
		if p[0] < 0 || p[1] < 0 || p[0] >= len(plan.Views) || p[1] >= len(plan.Views) || p[0] == p[1] {
			return nil, invalidf("pair %v of %d views", p, len(plan.Views))
		}
	}
	for _, v := range slices.Concat(plan.OrderX, plan.OrderY) {
		if v < 0 || v >= len(plan.Views) {
			return nil, invalidf("order view %d of %d", v, len(plan.Views))
		}
	}
	if len(plan.OrderX) == 0 {
		return nil, invalidf("the scope order needs a view")
	}
	if len(cfg.Sigmas) > 0 {
		if len(cfg.Sigmas) != len(plan.Views) {
			return nil, invalidf("%d bandwidths for %d views", len(cfg.Sigmas), len(plan.Views))
		}
		if sc.Standardize != (len(cfg.Centers) > 0) || len(cfg.Centers) != len(cfg.Scales) || len(cfg.Centers) > 0 && len(cfg.Centers) != len(plan.Views) {
			return nil, invalidf("the scales must be given for every view with standardization, none without")
		}
		for i, v := range plan.Views {
			if !(cfg.Sigmas[i] > 0) || math.IsInf(cfg.Sigmas[i], 0) {
				return nil, invalidf("view %s: bandwidth %v", v.Name, cfg.Sigmas[i])
			}
			if len(cfg.Centers) > 0 && (len(cfg.Centers[i]) != v.Dim() || len(cfg.Scales[i]) != v.Dim()) {
				return nil, invalidf("view %s: %d scales for %d columns", v.Name, len(cfg.Scales[i]), v.Dim())
			}
		}
	}
	w := sc.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	a := &Accumulator{cfg: sc, plan: plan, given: cfg, workers: max(1, w), shards: newShardSet()}
	if len(cfg.Sigmas) > 0 {
		if err := a.start(cfg.Sigmas, cfg.Centers, cfg.Scales); err != nil {
			return nil, err
		}
	}
	return a, nil
}

// needsPilot reports whether settings wait for the pilot rows.
func (a *Accumulator) needsPilot() bool {
	return len(a.given.Sigmas) == 0
}

// start builds the maps and accumulators for resolved bandwidths and scales.
func (a *Accumulator) start(sigma []float64, center, scale [][]float64) error {
	a.sigma, a.center, a.scale = slices.Clone(sigma), center, scale
	K := a.cfg.GroupCount()
	mapIndex := map[mapKey]int{}
	mapOf := func(view int, spec rff.Spec) int {
		k := mapKey{view, spec}
		if i, ok := mapIndex[k]; ok {
			return i
		}
		mapIndex[k] = len(a.maps)
		a.maps = append(a.maps, k)
		a.partOf = append(a.partOf, -1)
		a.copyOf = append(a.copyOf, -1)
		return len(a.maps) - 1
	}
	partDesc := func(spec rff.Spec, part covariance.Part, k int) covariance.Description {
		return covariance.Description{Map: rff.PairSpec{Kernel: spec.Kernel, Variant: spec.Variant, Features: spec.Features, Seed: spec.Seed,
			SigmaX: spec.Sigma, SigmaY: spec.Sigma, DimX: spec.InputDim, DimY: spec.InputDim}, Part: part, Index: k}
	}
	part := func(m int) error {
		if a.partOf[m] >= 0 {
			return nil
		}
		accs, means := make([]*covariance.Accumulator, K), make([]*covariance.Mean, K)
		for k := range K {
			var err error
			if accs[k], err = a.newAcc(partDesc(a.maps[m].spec, covariance.PartX, k)); err != nil {
				return err
			}
			if means[k], err = covariance.NewMean(partDesc(a.maps[m].spec, covariance.PartX, k)); err != nil {
				return err
			}
		}
		a.partOf[m] = len(a.parts)
		a.parts, a.partAcc, a.partMean = append(a.parts, m), append(a.partAcc, accs), append(a.partMean, means)
		return nil
	}
	cp := func(m int) (int, error) {
		if a.copyOf[m] >= 0 {
			return a.copyOf[m], nil
		}
		accs := make([]*covariance.Accumulator, K)
		for k := range K {
			var err error
			if accs[k], err = a.newAcc(partDesc(a.maps[m].spec, covariance.PartCopyX, k)); err != nil {
				return 0, err
			}
		}
		a.copyOf[m] = len(a.copies)
		a.copies, a.copyAcc = append(a.copies, m), append(a.copyAcc, accs)
		return a.copyOf[m], nil
	}
	selfIndex := map[[2]int]int{}
	self := func(pm, cm int) (int, error) {
		if i, ok := selfIndex[[2]int{pm, cm}]; ok {
			return i, nil
		}
		ps, cs := a.maps[pm].spec, a.maps[cm].spec
		d := covariance.Description{Map: rff.PairSpec{Kernel: ps.Kernel, Variant: ps.Variant, Features: ps.Features, Seed: ps.Seed,
			SigmaX: ps.Sigma, SigmaY: cs.Sigma, DimX: ps.InputDim, DimY: cs.InputDim}, Part: covariance.PartSelfX}
		accs := make([]*covariance.Accumulator, K)
		for k := range K {
			d.Index = k
			var err error
			if accs[k], err = a.newAcc(d); err != nil {
				return 0, err
			}
		}
		selfIndex[[2]int{pm, cm}] = len(a.selfs)
		a.selfs, a.selfAcc = append(a.selfs, [2]int{pm, cm}), append(a.selfAcc, accs)
		return len(a.selfs) - 1, nil
	}
	for _, pr := range a.plan.Pairs {
		vx, vy := a.plan.Views[pr[0]], a.plan.Views[pr[1]]
		spec := a.cfg.PairSpec(vx.Dim(), vy.Dim(), sigma[pr[0]], sigma[pr[1]])
		if err := spec.Validate(); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
		p := pairPlan{spec: spec, x: mapOf(pr[0], spec.X()), y: mapOf(pr[1], spec.Y()), copyX: -1, copyY: -1, selfX: -1, selfY: -1,
			sigmaX: sigma[pr[0]], sigmaY: sigma[pr[1]], xColumns: vx.Columns, yColumns: vy.Columns}
		if err := part(p.x); err != nil {
			return err
		}
		if err := part(p.y); err != nil {
			return err
		}
		if !a.cfg.SkipNormalized {
			p.cxMap, p.cyMap = mapOf(pr[0], spec.CopyX()), mapOf(pr[1], spec.CopyY())
			var err error
			if p.copyX, err = cp(p.cxMap); err != nil {
				return err
			}
			if p.copyY, err = cp(p.cyMap); err != nil {
				return err
			}
			if p.selfX, err = self(p.x, p.cxMap); err != nil {
				return err
			}
			if p.selfY, err = self(p.y, p.cyMap); err != nil {
				return err
			}
		}
		p.joint, p.jointMean = make([]*covariance.Accumulator, K), make([]*covariance.Mean, K)
		for k := range K {
			d := covariance.Description{Map: spec, Part: covariance.PartJoint, Index: k}
			var err error
			if p.joint[k], err = a.newAcc(d); err != nil {
				return err
			}
			if p.jointMean[k], err = covariance.NewMean(d); err != nil {
				return err
			}
		}
		a.pairs = append(a.pairs, p)
	}
	a.fmaps = make([]*rff.Map, len(a.maps))
	for i, m := range a.maps {
		var err error
		if a.fmaps[i], err = rff.New(m.spec); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidInput, err)
		}
	}
	a.std = make([][]float64, len(a.plan.Views))
	a.started = true
	return nil
}

func (a *Accumulator) newAcc(d covariance.Description) (*covariance.Accumulator, error) {
	acc, err := covariance.New(d)
	if err != nil {
		return nil, err
	}
	_ = acc.SetPrecision(a.cfg.Precision)
	return acc, nil
}

// Rows returns the number of rows added.
func (a *Accumulator) Rows() int64 { return a.rows }

// Skip counts n rows dropped upstream, reported in results.
func (a *Accumulator) Skip(n int64) { a.skipped += n }

// Plan returns the plan (the caller must not change it).
func (a *Accumulator) Plan() Plan { return a.plan }

// Settings returns the estimator settings.
func (a *Accumulator) Settings() stream.Config { return a.cfg }

// Bandwidths returns each view's bandwidth, in units of its standardized
// columns (nil before the pilot rows are in).
func (a *Accumulator) Bandwidths() []float64 { return a.sigma }

// Scales returns each view's standardization (nil without it, or before
// the pilot rows are in).
func (a *Accumulator) Scales() (center, scale [][]float64) { return a.center, a.scale }

// Add adds rows rows of a row-major block of Plan.Width values each.
// Values must be finite and within ±exact.MaxAbsValue: another is refused
// with an error naming the row (counted from the first row added) and the
// column, and nothing of the block is added.
func (a *Accumulator) Add(block []float64, rows int) error {
	W := a.plan.Width
	if rows < 0 || len(block) != rows*W {
		return invalidf("block of %d rows has %d values, want %d", rows, len(block), rows*W)
	}
	if i := vocab.FirstInvalid(block); i >= 0 {
		return invalidf("row %d, column %d: %s", a.rows+int64(i/W), i%W, vocab.CheckValue(block[i]))
	}
	if rows == 0 {
		return nil
	}
	a.rows += int64(rows)
	if !a.started {
		a.pilot = append(a.pilot, block...)
		a.pilotRows += rows
		a.pilotBlocks = append(a.pilotBlocks, rows)
		if a.pilotRows < a.pilotTarget() {
			return nil
		}
		return a.resolvePilot()
	}
	return a.addStarted(block, rows)
}

func (a *Accumulator) pilotTarget() int {
	if a.cfg.PilotRows > 0 {
		return a.cfg.PilotRows
	}
	return stream.DefaultPilotRows
}

// viewRows copies the view's columns of n rows of a block into dst.
func (a *Accumulator) viewRows(dst, block []float64, n, v int) []float64 {
	idx := a.plan.Views[v].Index
	d := len(idx)
	dst = slices.Grow(dst[:0], n*d)[:n*d]
	W := a.plan.Width
	for i := range n {
		row := block[i*W : (i+1)*W]
		out := dst[i*d : (i+1)*d]
		for j, c := range idx {
			out[j] = row[c]
		}
	}
	return dst
}

// resolvePilot chooses every view's scales and bandwidth on the rows held
// back (resolveViews), then adds those rows block by block.
func (a *Accumulator) resolvePilot() error {
	n := min(a.pilotRows, a.pilotTarget())
	sigma, center, scale, err := resolveViews(a.plan, a.cfg, a.pilot, n, fmt.Sprintf("the first %d rows", n))
	if err != nil {
		return err
	}
	if err := a.start(sigma, center, scale); err != nil {
		return err
	}
	px, blocks := a.pilot, a.pilotBlocks
	a.pilot, a.pilotRows, a.pilotBlocks = nil, 0, nil
	W := a.plan.Width
	for _, b := range blocks {
		if err := a.addStarted(px[:b*W], b); err != nil {
			return err
		}
		px = px[b*W:]
	}
	return nil
}

func trimInvalid(msg string) string {
	for _, p := range []string{stream.ErrInvalidInput.Error() + ": ", ErrInvalidInput.Error() + ": "} {
		for len(msg) >= len(p) && msg[:len(p)] == p {
			msg = msg[len(p):]
		}
	}
	return msg
}

// addStarted pools rows into shuffle scopes exactly as stream.Estimator
// does: each block of at least stream.DefaultMinScopeRows rows is its own
// scope unless rows are pending, smaller blocks are pooled; with
// ShuffleRows R, scopes of R rows.
func (a *Accumulator) addStarted(block []float64, rows int) error {
	W := a.plan.Width
	scope := a.cfg.ShuffleRows
	if scope == 0 {
		if a.pending == 0 && rows >= stream.DefaultMinScopeRows {
			return a.processScope(block, rows)
		}
		scope = stream.DefaultMinScopeRows
	}
	for rows > 0 {
		take := min(rows, scope-a.pending)
		a.pend = append(a.pend, block[:take*W]...)
		a.pending += take
		block, rows = block[take*W:], rows-take
		if a.pending == scope {
			if err := a.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush adds the rows waiting for their shuffle scope as a scope of their
// own (and resolves the pilot if it is still open). Result calls it.
func (a *Accumulator) Flush() error {
	if !a.started {
		if a.pilotRows == 0 {
			return nil
		}
		if err := a.resolvePilot(); err != nil {
			return err
		}
	}
	if a.pending == 0 {
		return nil
	}
	err := a.processScope(a.pend, a.pending)
	a.pend, a.pending = a.pend[:0], 0
	return err
}

// processScope adds the n rows of one shuffle scope: standardized per
// view, put in the scope's random order, cut into chunks that go to the
// groups in turn; per chunk every map's features once, then every part,
// copy, self and joint accumulator.
func (a *Accumulator) processScope(block []float64, n int) error {
	for v := range a.plan.Views {
		a.std[v] = a.viewRows(a.std[v], block, n, v)
		if a.center != nil {
			d := a.plan.Views[v].Dim()
			s := a.std[v]
			c, sc := a.center[v], a.scale[v]
			for i := 0; i < len(s); i += d {
				for j := range d {
					s[i+j] = (s[i+j] - c[j]) / sc[j]
				}
			}
		}
	}
	hx, dx := a.concat(&a.hashX, a.plan.OrderX, n)
	hy, dy := a.concat(&a.hashY, a.plan.OrderY, n)
	a.order = stream.ScopeOrder(a.order, a.cfg, hx, hy, n, dx, dy, a.center != nil)
	size, chunks := stream.ScopeChunks(a.cfg, n)
	for i := range chunks {
		c := i * size
		b := min(size, n-c)
		if err := a.addChunk(a.chunks+int64(i), c, b); err != nil {
			return err
		}
	}
	a.chunks += int64(chunks)
	return nil
}

// concat returns the rows of the views, concatenated per row, and their width.
func (a *Accumulator) concat(buf *[]float64, views []int, n int) ([]float64, int) {
	d := 0
	for _, v := range views {
		d += a.plan.Views[v].Dim()
	}
	if len(views) == 1 {
		return a.std[views[0]], d
	}
	dst := slices.Grow((*buf)[:0], n*d)[:n*d]
	*buf = dst
	for i := range n {
		o := i * d
		for _, v := range views {
			w := a.plan.Views[v].Dim()
			copy(dst[o:o+w], a.std[v][i*w:(i+1)*w])
			o += w
		}
	}
	return dst, d
}

// chunk state shared by the workers of one chunk.
type chunkData struct {
	rows  [][]float64 // per view: the chunk's gathered rows (nil if unused)
	feats [][]float64 // per map
}

// addChunk adds the b rows at positions c … c+b−1 of the scope's order as
// chunk number chunk of the stream.
func (a *Accumulator) addChunk(chunk int64, c, b int) error {
	K := int64(a.cfg.GroupCount())
	k := int(chunk % K)
	self := stream.SelfChunk(a.cfg, chunk)
	p := 2 * a.cfg.Features
	if a.chunkBuf == nil {
		a.chunkBuf = &chunkData{rows: make([][]float64, len(a.plan.Views)), feats: make([][]float64, len(a.maps))}
	}
	cd := a.chunkBuf
	for v := range a.plan.Views {
		d := a.plan.Views[v].Dim()
		dst := slices.Grow(cd.rows[v][:0], b*d)[:b*d]
		src := a.std[v]
		for r := range b {
			o := a.order[c+r]
			copy(dst[r*d:(r+1)*d], src[o*d:(o+1)*d])
		}
		cd.rows[v] = dst
	}
	// Features of every map needed by this chunk.
	need := a.mapsNeeded(self)
	err := a.parallel(len(need), func(_ *workerScratch, i int) error {
		m := need[i]
		buf := slices.Grow(cd.feats[m][:0], b*p)[:b*p]
		out, err := a.fmaps[m].Transform(buf, cd.rows[a.maps[m].view], b)
		cd.feats[m] = out
		return err
	})
	if err != nil {
		return err
	}
	// Accumulator jobs: parts, pairs' joints, and on self chunks copies and
	// self joints.
	nParts, nPairs := len(a.parts), len(a.pairs)
	jobs := nParts + nPairs
	if self {
		jobs += len(a.copies) + len(a.selfs)
	}
	weight := float64(b)
	D := a.cfg.Features
	return a.parallel(jobs, func(w *workerScratch, j int) error {
		switch {
		case j < nParts:
			f := cd.feats[a.parts[j]]
			if err := a.partMean[j][k].AddWeighted(f, b, nil); err != nil {
				return err
			}
			return a.partAcc[j][k].AddWeighted(f, b, weight)
		case j < nParts+nPairs:
			pp := &a.pairs[j-nParts]
			joint, err := rff.Joint(w.joint, cd.feats[pp.x], cd.feats[pp.y], b, D, nil)
			if err != nil {
				return err
			}
			w.joint = joint
			if err := pp.jointMean[k].AddWeighted(joint, b, nil); err != nil {
				return err
			}
			return pp.joint[k].AddWeighted(joint, b, weight)
		case j < nParts+nPairs+len(a.copies):
			i := j - nParts - nPairs
			return a.copyAcc[i][k].AddWeighted(cd.feats[a.copies[i]], b, weight)
		default:
			i := j - nParts - nPairs - len(a.copies)
			s := a.selfs[i]
			joint, err := rff.Joint(w.joint, cd.feats[s[0]], cd.feats[s[1]], b, D, nil)
			if err != nil {
				return err
			}
			w.joint = joint
			return a.selfAcc[i][k].AddWeighted(joint, b, weight)
		}
	})
}

// mapsNeeded returns the maps whose features a chunk needs: those of the
// parts, and on self chunks those of the copies.
func (a *Accumulator) mapsNeeded(self bool) []int {
	if self {
		if a.needSelf == nil {
			seen := map[int]bool{}
			for _, m := range slices.Concat(a.parts, a.copies) {
				if !seen[m] {
					seen[m] = true
					a.needSelf = append(a.needSelf, m)
				}
			}
		}
		return a.needSelf
	}
	return a.parts
}

// parallel runs fn for i = 0 … n−1 on the accumulator's workers, each job
// once; the first error stops the claims.
func (a *Accumulator) parallel(n int, fn func(w *workerScratch, i int) error) error {
	W := min(a.workers, n)
	for len(a.scratch) < W {
		a.scratch = append(a.scratch, &workerScratch{})
	}
	if W <= 1 {
		for i := range n {
			if err := fn(a.scratch[0], i); err != nil {
				return err
			}
		}
		return nil
	}
	var next atomic.Int64
	var failed atomic.Bool
	errs := make([]error, W)
	var wg sync.WaitGroup
	wg.Add(W)
	for w := range W {
		go func() {
			defer wg.Done()
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(a.scratch[w], i); err != nil {
					errs[w] = err
					failed.Store(true)
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
