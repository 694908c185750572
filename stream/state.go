package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/rff"
)

// ErrState is matched by the errors of ReadState on bytes that are not a
// valid estimator state: truncated, corrupted, foreign or of another version.
var ErrState = errors.New("stream: invalid state")

// ErrIncompatible is matched by the error of merging estimators whose
// feature maps, settings or columns differ.
var ErrIncompatible = errors.New("stream: incompatible states")

// The state encoding, version 2, little-endian: magic "dimeST", version, a
// reserved byte, then the fields written by WriteState in order (settings,
// bandwidths, row counts, chunks added, column names, the Y features of the
// last row, the accumulators, the means), and a CRC-32C of every byte before
// it. Each accumulator and mean is embedded in its own encoding (package
// covariance), with its own checksum. Version 1 (written before the groups
// of the jackknife and the means of the test existed) is refused: it lacks
// what the analytic estimator and the test need.
const (
	stateMagic   = "dimeST"
	stateVersion = 2
	// maxStateNames bounds the column names of a view in a state.
	maxStateNames = 1 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteState flushes the rows waiting in the shuffle buffer and writes the
// estimator's state: settings, bandwidths, row counts, column names and every
// accumulator. ReadState restores it exactly: adding more rows to the
// restored estimator gives what the original would have given (scopes are
// ordered from their own content, not from a running generator). The estimator needs at least 2 rows if a bandwidth rule still
// waits for its pilot sample.
func (e *Estimator) WriteState(w io.Writer) error {
	if err := e.Flush(); err != nil {
		return err
	}
	if !e.Started() {
		return invalidf("no rows to save")
	}
	var b []byte
	le := binary.LittleEndian
	c := e.cfg
	b = append(b, stateMagic...)
	b = append(b, stateVersion, 0)
	b = append(b, byte(c.Kernel), byte(c.Variant), boolByte(c.SkipAnalytic), byte(c.BandwidthX.Rule), byte(c.BandwidthY.Rule),
		boolByte(c.SkipNormalized), 0, 0)
	for _, v := range []uint32{uint32(c.Features), uint32(c.Permutations), uint32(e.dimX), uint32(e.dimY), uint32(c.Groups)} {
		b = le.AppendUint32(b, v)
	}
	for _, v := range []uint64{uint64(c.ShuffleRows), uint64(c.PilotRows), c.Seed, uint64(e.rows), uint64(e.skipped), uint64(e.chunks)} {
		b = le.AppendUint64(b, v)
	}
	for _, v := range []float64{c.Alpha, c.BandwidthX.Sigma, c.BandwidthY.Sigma, e.sigmaX, e.sigmaY} {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	for _, names := range [][]string{c.XColumns, c.YColumns} {
		b = le.AppendUint32(b, uint32(len(names)))
		for _, n := range names {
			b = appendBytes(b, []byte(n))
		}
	}
	b = append(b, boolByte(e.haveLastY))
	for _, v := range e.lastY {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	for _, a := range e.accumulators() {
		enc, err := a.MarshalBinary()
		if err != nil {
			return err
		}
		b = appendBytes(b, enc)
	}
	for _, m := range e.means {
		enc, err := m.MarshalBinary()
		if err != nil {
			return err
		}
		b = appendBytes(b, enc)
	}
	b = le.AppendUint32(b, crc32.Checksum(b, castagnoli))
	_, err := w.Write(b)
	return err
}

// accumulators returns every accumulator in state order: per group X, Y,
// joint (and the copies and self joints), then the permuted ones (nil before
// the estimator has started).
func (e *Estimator) accumulators() []*covariance.Accumulator { return e.accs }

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

func appendBytes(b, v []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(v)))
	return append(b, v...)
}

// stateReader reads the fields of a state, remembering the first error.
type stateReader struct {
	b   []byte
	err error
}

func (r *stateReader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: truncated", ErrState)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *stateReader) u8() byte {
	if v := r.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (r *stateReader) u32() uint32 {
	if v := r.take(4); v != nil {
		return binary.LittleEndian.Uint32(v)
	}
	return 0
}

func (r *stateReader) u64() uint64 {
	if v := r.take(8); v != nil {
		return binary.LittleEndian.Uint64(v)
	}
	return 0
}

func (r *stateReader) f64() float64 { return math.Float64frombits(r.u64()) }

func (r *stateReader) bytes() []byte { return r.take(int(r.u32())) }

// ReadState reads a state written by WriteState and returns the estimator it
// describes. Truncated, corrupted or foreign input gives an error matching
// ErrState; nothing larger than the input is allocated.
func ReadState(rd io.Reader) (*Estimator, error) {
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, err
	}
	if len(data) < len(stateMagic)+2 || string(data[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("%w: not a dime state (bad magic)", ErrState)
	}
	if v := data[len(stateMagic)]; v != stateVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads version %d", ErrState, v, stateVersion)
	}
	if len(data) < len(stateMagic)+2+4 {
		return nil, fmt.Errorf("%w: truncated", ErrState)
	}
	body := data[:len(data)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(data[len(body):]) {
		return nil, fmt.Errorf("%w: checksum mismatch (truncated or corrupted)", ErrState)
	}
	r := &stateReader{b: body[len(stateMagic)+2:]}
	var c Config
	c.Kernel, c.Variant = exact.Kernel(r.u8()), rff.Variant(r.u8())
	c.SkipAnalytic = r.u8() == 1
	c.BandwidthX.Rule, c.BandwidthY.Rule = exact.BandwidthRule(r.u8()), exact.BandwidthRule(r.u8())
	c.SkipNormalized = r.u8() == 1
	r.take(2)
	c.Features, c.Permutations = int(r.u32()), int(r.u32())
	dimX, dimY := int(r.u32()), int(r.u32())
	c.Groups = int(r.u32())
	c.ShuffleRows, c.PilotRows, c.Seed = int(r.u64()), int(r.u64()), r.u64()
	rows, skipped, chunks := int64(r.u64()), int64(r.u64()), int64(r.u64())
	c.Alpha, c.BandwidthX.Sigma, c.BandwidthY.Sigma = r.f64(), r.f64(), r.f64()
	sigmaX, sigmaY := r.f64(), r.f64()
	for _, names := range []*[]string{&c.XColumns, &c.YColumns} {
		n := r.u32()
		if n > maxStateNames || int(n) > len(r.b)/4 {
			return nil, fmt.Errorf("%w: %d column names", ErrState, n)
		}
		for i := uint32(0); i < n && r.err == nil; i++ {
			*names = append(*names, string(r.bytes()))
		}
	}
	haveLastY := r.u8() == 1
	if r.err != nil {
		return nil, r.err
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("%w: settings: %v", ErrState, err)
	}
	if rows < 0 || skipped < 0 || chunks < 0 {
		return nil, fmt.Errorf("%w: negative row or chunk counts", ErrState)
	}
	// The accumulators take at least 8·p(p+1)/2 bytes each (p = 2D): check
	// before New allocates buffers of the size the settings claim.
	p := uint64(2 * c.Features)
	perGroup := uint64(3)
	if !c.SkipNormalized {
		perGroup = 7
	}
	count := perGroup*uint64(c.groups()) + uint64(c.Permutations)
	if need := count*8*p*(p+1)/2 + 8*p; need > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: truncated: %d bytes left, the accumulators need %d", ErrState, len(r.b), need)
	}
	e, err := New(dimX, dimY, withBandwidths(c, sigmaX, sigmaY))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	e.cfg = c // keep the rules as they were, not the explicit values used to start
	e.haveLastY = haveLastY
	for i := range e.lastY {
		e.lastY[i] = r.f64()
	}
	for _, a := range e.accumulators() {
		want := a.Description()
		if err := a.UnmarshalBinary(r.bytes()); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrState, err)
		}
		if a.Description() != want {
			return nil, fmt.Errorf("%w: accumulator %v#%d does not belong to these settings", ErrState, want.Part, want.Index)
		}
	}
	for _, m := range e.means {
		want := m.Description()
		if err := m.UnmarshalBinary(r.bytes()); err != nil {
			return nil, fmt.Errorf("%w: %v", ErrState, err)
		}
		if m.Description() != want {
			return nil, fmt.Errorf("%w: mean %v#%d does not belong to these settings", ErrState, want.Part, want.Index)
		}
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes of trailing data", ErrState, len(r.b))
	}
	e.rows, e.skipped, e.chunks = rows, skipped, chunks
	return e, nil
}

// withBandwidths returns c with the resolved bandwidths as explicit rules.
func withBandwidths(c Config, sigmaX, sigmaY float64) Config {
	c.BandwidthX, c.BandwidthY = exact.Sigma(sigmaX), exact.Sigma(sigmaY)
	return c
}

// Merge adds the rows of other (a shard's estimator, typically from
// ReadState) to e. Both must have resolved the same bandwidths and share
// every setting that shapes the accumulators (kernel, variant, features,
// permutations, seed, widths, column names) and alpha; otherwise the error
// matches ErrIncompatible and e is unchanged. Rows waiting in either shuffle
// buffer are flushed first. What merges is exact: the accumulators of the
// union of the rows, as if one estimator had seen both shards' scopes, group
// by group (the groups of the jackknife merge pairwise).
func (e *Estimator) Merge(other *Estimator) error {
	if err := e.Flush(); err != nil {
		return err
	}
	if err := other.Flush(); err != nil {
		return err
	}
	if !e.Started() || !other.Started() {
		return fmt.Errorf("%w: an estimator has no rows", ErrIncompatible)
	}
	a, b := e.cfg, other.cfg
	switch {
	case e.dimX != other.dimX || e.dimY != other.dimY:
		return fmt.Errorf("%w: views of %d and %d columns vs %d and %d", ErrIncompatible, e.dimX, e.dimY, other.dimX, other.dimY)
	case !slices.Equal(a.XColumns, b.XColumns) || !slices.Equal(a.YColumns, b.YColumns):
		return fmt.Errorf("%w: columns %v/%v vs %v/%v", ErrIncompatible, a.XColumns, a.YColumns, b.XColumns, b.YColumns)
	case a.Permutations != b.Permutations:
		return fmt.Errorf("%w: %d vs %d permutations", ErrIncompatible, a.Permutations, b.Permutations)
	case a.groups() != b.groups():
		return fmt.Errorf("%w: %d vs %d groups", ErrIncompatible, a.groups(), b.groups())
	case a.SkipNormalized != b.SkipNormalized:
		return fmt.Errorf("%w: with and without the normalized score's self terms", ErrIncompatible)
	case a.Alpha != b.Alpha:
		return fmt.Errorf("%w: alpha %v vs %v", ErrIncompatible, a.Alpha, b.Alpha)
	case e.sigmaX != other.sigmaX || e.sigmaY != other.sigmaY:
		return fmt.Errorf("%w: bandwidths %v, %v vs %v, %v (data-dependent rules give each shard its own: give sigma explicitly to shards that will be merged)",
			ErrIncompatible, e.sigmaX, e.sigmaY, other.sigmaX, other.sigmaY)
	}
	// Check every pair before changing anything.
	mine, theirs := e.accumulators(), other.accumulators()
	for i := range mine {
		if mine[i].Description() != theirs[i].Description() {
			return fmt.Errorf("%w: feature maps differ (kernel, variant, features or seed)", ErrIncompatible)
		}
	}
	for i := range mine {
		if err := mine[i].Merge(theirs[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	for i, m := range e.means {
		if err := m.Merge(other.means[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	e.chunks += other.chunks
	e.rows += other.rows
	e.skipped += other.skipped
	return nil
}

// MarshalBinary returns the state as WriteState writes it.
func (e *Estimator) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	err := e.WriteState(&buf)
	return buf.Bytes(), err
}
