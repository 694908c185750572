package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"runtime/debug"
	"slices"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// ErrState is matched by the errors of ReadState on bytes that are not a
// valid estimator state: truncated, corrupted, foreign or of another version.
var ErrState = vocab.NewSentinel("stream: invalid state")

// ErrIncompatible is matched by the error of merging estimators whose
// feature maps, settings or columns differ, that share rows (ErrOverlap), or
// whose row counts would overflow.
var ErrIncompatible = vocab.NewSentinel("stream: incompatible states")

// The state encoding, version 3 (raw columns) or 4 (standardized columns).
// Integers are little-endian and unsigned
// unless said otherwise; floats are IEEE 754 bits.
//
//	size        field
//	6           magic "dimeST"
//	1           version (3, or 4 when the columns are standardized)
//	1           flags: bit 0 = the shard ids are truncated (MaxShards); bit 1 =
//	            settings only (A = M = 0, no rows: a stream.Sum's template, read
//	            only inside a Sum's encoding); bit 2 = serial rows
//	            (Config.RowModel; 0 in states written before it existed,
//	            which were iid); other bits 0
//	1 × 8       kernel, variant, skip analytic (0/1), bandwidth rule of X, of Y,
//	            skip normalized (0/1), jackknife (0 generalized, 1 group;
//	            0 in states written before it existed), precision of the
//	            products (0 float64, 1 float32; 0 in states written before
//	            it existed, which were float64)
//	4 × 5       features D, permutations P, width of X, width of Y, groups K (0: default)
//	8 × 6       shuffle rows, pilot rows, seed, rows, skipped rows, chunks added
//	8 × 6       alpha, sigma of X's rule, of Y's rule, resolved sigma X, resolved sigma Y, half-life
//	4 + 16·k    k shard ids (1 ≤ k ≤ MaxShards), sorted ascending, distinct
//	4 + Σ(4+n)  column names of X: their count, then each as length and UTF-8 bytes
//	4 + Σ(4+n)  column names of Y
//	8 · 2(x+y)  version 4 only: the standardization (Scaling), x = width of X,
//	            y = width of Y: the centers of X, the scales of X, the
//	            centers of Y, the scales of Y
//	1           whether the Y features of the last row follow (0/1)
//	8 · 2D      the Y features of the last row (zeros if not)
//	4           the number A of accumulators: 3K (7K with the normalized score's
//	            copies and self joints) + P
//	A × (4+s)   each accumulator, in the order of layout (per group X, Y, joint
//	            [, copy X, copy Y, self X, self Y], then permuted 0 … P−1): its
//	            length s and its encoding (covariance.Accumulator.MarshalBinary,
//	            with its own checksum)
//	4           the number M of means, 3K
//	M × (4+m)   each mean (per group X, Y, joint): its length m and its encoding
//	            (covariance.Mean.MarshalBinary)
//	4           CRC-32C (Castagnoli) of every byte before it
//
// To extend the format, bump stateVersion and add fields; ReadState reads
// versions 3 and 4 (version 2, written before the groups of the jackknife
// and the means of the test, lacks what they need). A state without
// standardization is written as version 3, byte for byte what builds
// before standardization wrote and read. Every count
// and length is checked against the bytes the input has left before
// anything of that size is allocated.
const (
	stateMagic   = "dimeST"
	stateVersion = 4
	// stateVersionRaw is the version of a state without standardization.
	stateVersionRaw = 3
	// stateFlagTruncated marks a shard set that holds the MaxShards smallest ids.
	stateFlagTruncated = 1
	// stateFlagSettings marks the state of an estimator without rows whose
	// accumulators and means are left out (all zero): the template of a
	// Sum, whose sums its encoding holds.
	stateFlagSettings = 2
	// stateFlagSerial marks an estimator of serial rows (Config.RowModel).
	stateFlagSerial = 4
	// stateHeaderSize is the size of the fixed fields, up to the shard ids.
	stateHeaderSize = 8 + 8 + 4*5 + 8*6 + 8*6
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// WriteState flushes the rows waiting in the shuffle buffer and writes the
// estimator's state: settings, bandwidths, row counts, shard ids, column
// names and every accumulator. ReadState restores it exactly: adding more rows to the
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
	b, err := e.appendState(nil, false)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// appendState appends the state of a started estimator to b; settingsOnly
// leaves out the accumulators and means (stateFlagSettings), for an
// estimator without rows.
func (e *Estimator) appendState(b []byte, settingsOnly bool) ([]byte, error) {
	le := binary.LittleEndian
	c := e.cfg
	var flags byte
	if e.shards.truncated {
		flags |= stateFlagTruncated
	}
	if settingsOnly {
		if e.rows != 0 || e.skipped != 0 {
			return nil, invalidf("settings only: the estimator holds rows")
		}
		flags |= stateFlagSettings
	}
	if c.RowModel == SerialRows {
		flags |= stateFlagSerial
	}
	version := byte(stateVersionRaw)
	if !e.scaling.Empty() {
		version = stateVersion
	}
	b = append(b, stateMagic...)
	b = append(b, version, flags)
	b = append(b, byte(c.Kernel), byte(c.Variant), boolByte(c.SkipAnalytic), byte(c.BandwidthX.Rule), byte(c.BandwidthY.Rule),
		boolByte(c.SkipNormalized), byte(c.Jackknife), byte(c.Precision))
	for _, v := range []uint32{uint32(c.Features), uint32(c.Permutations), uint32(e.dimX), uint32(e.dimY), uint32(c.Groups)} {
		b = le.AppendUint32(b, v)
	}
	for _, v := range []uint64{uint64(c.ShuffleRows), uint64(c.PilotRows), c.Seed, uint64(e.rows), uint64(e.skipped), uint64(e.chunks)} {
		b = le.AppendUint64(b, v)
	}
	for _, v := range []float64{c.Alpha, c.BandwidthX.Sigma, c.BandwidthY.Sigma, e.sigmaX, e.sigmaY, c.HalfLife} {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	b = le.AppendUint32(b, uint32(len(e.shards.ids)))
	for _, id := range e.shards.ids {
		b = append(b, id[:]...)
	}
	for _, names := range [][]string{c.XColumns, c.YColumns} {
		b = le.AppendUint32(b, uint32(len(names)))
		for _, n := range names {
			b = appendBytes(b, []byte(n))
		}
	}
	if !e.scaling.Empty() {
		for _, v := range [][]float64{e.scaling.CenterX, e.scaling.ScaleX, e.scaling.CenterY, e.scaling.ScaleY} {
			for _, f := range v {
				b = le.AppendUint64(b, math.Float64bits(f))
			}
		}
	}
	b = append(b, boolByte(e.haveLastY))
	for _, v := range e.lastY {
		b = le.AppendUint64(b, math.Float64bits(v))
	}
	if settingsOnly {
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
	}
	b = slices.Grow(b, 8+len(e.accs)*(4+int(covariance.EncodedSize(c.Features)))+len(e.means)*(4+int(covariance.MeanEncodedSize(c.Features))))
	b = le.AppendUint32(b, uint32(len(e.accs)))
	for _, a := range e.accs {
		start := len(b)
		b = le.AppendUint32(b, 0)
		var err error
		if b, err = a.AppendBinary(b); err != nil {
			return nil, err
		}
		le.PutUint32(b[start:], uint32(len(b)-start-4))
	}
	b = le.AppendUint32(b, uint32(len(e.means)))
	for _, m := range e.means {
		start := len(b)
		b = le.AppendUint32(b, 0)
		var err error
		if b, err = m.AppendBinary(b); err != nil {
			return nil, err
		}
		le.PutUint32(b[start:], uint32(len(b)-start-4))
	}
	return le.AppendUint32(b, crc32.Checksum(b, castagnoli)), nil
}

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

// stateDecoder reads the fields of a state from an input of known size,
// computing the checksum as it goes and remembering the first error.
type stateDecoder struct {
	r    io.Reader
	left int64 // bytes left before the checksum
	crc  uint32
	err  error
	buf  [8]byte
	// stream is true while the input's size is unknown (a pipe): left is
	// then no bound, until spool reads the accumulators and means.
	stream bool
}

// spoolChunk is the size of the largest chunks in which spool reads (the
// first is 64 KiB, each next twice as large).
const spoolChunk = 4 << 20

// maxColumnName bounds the length of a column name in a state.
const maxColumnName = 1 << 16

// spool makes sure that n more bytes (what) and the checksum are there. From
// an input of unknown size it reads them whole, and fails if the input is
// shorter or longer, or if holding them and what they decode to would pass
// the memory limit (debug.SetMemoryLimit); the fields before them (the
// header, shard ids and names) have been read one by one, each bounded.
func (d *stateDecoder) spool(n uint64, what string) bool {
	if !d.stream || d.err != nil {
		return d.fits(n, what)
	}
	if limit := debug.SetMemoryLimit(-1); limit != math.MaxInt64 && n > uint64(limit)/3 {
		d.fail("%s take %d MiB, and decoding them three times that: more than the memory limit of %d MiB", what, n>>20, limit>>20)
		return false
	}
	// Read in chunks, so that what is held is what came, not what the
	// header claims; the decoder lets go of each chunk once decoded.
	var chunks []io.Reader
	var got uint64
	for size := uint64(64 << 10); got <= n+4; size = min(2*size, spoolChunk) {
		buf := make([]byte, min(n+4+1-got, size))
		k, err := io.ReadFull(d.r, buf)
		got += uint64(k)
		if k > 0 {
			chunks = append(chunks, bytes.NewReader(buf[:k]))
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			d.readError(err)
			return false
		}
	}
	switch {
	case got < n+4:
		d.fail("truncated: %s: %d bytes needed, %d left", what, n, max(got, 4)-4)
		return false
	case got > n+4:
		d.fail("%s and a checksum take %d bytes, and the input goes on", what, n+4)
		return false
	}
	d.r, d.left, d.stream = io.MultiReader(chunks...), int64(n), false
	return true
}

// Read implements io.Reader over the bytes before the checksum, for the
// accumulators' decoder.
func (d *stateDecoder) Read(p []byte) (int, error) {
	if d.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > d.left {
		p = p[:d.left]
	}
	n, err := d.r.Read(p)
	d.left -= int64(n)
	d.crc = crc32.Update(d.crc, castagnoli, p[:n])
	return n, err
}

func (d *stateDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrState, fmt.Sprintf(format, args...))
	}
}

// fits reports whether n more bytes (what) fit in the input; if not, the
// decoder fails.
func (d *stateDecoder) fits(n uint64, what string) bool {
	if d.err != nil {
		return false
	}
	if n > uint64(d.left) {
		d.fail("truncated: %s: %d bytes needed, %d left", what, n, d.left)
		return false
	}
	return true
}

// read fills b, or fails.
func (d *stateDecoder) read(b []byte) bool {
	if !d.fits(uint64(len(b)), "fields") {
		return false
	}
	if _, err := io.ReadFull(d, b); err != nil {
		d.readError(err)
		return false
	}
	return true
}

// readError records an error of the input itself.
func (d *stateDecoder) readError(err error) {
	if d.err == nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			d.fail("truncated: the input ended early")
			return
		}
		d.err = fmt.Errorf("stream: reading a state: %w", err)
	}
}

func (d *stateDecoder) u8() byte {
	if d.read(d.buf[:1]) {
		return d.buf[0]
	}
	return 0
}

func (d *stateDecoder) u32() uint32 {
	if d.read(d.buf[:4]) {
		return binary.LittleEndian.Uint32(d.buf[:4])
	}
	return 0
}

func (d *stateDecoder) u64() uint64 {
	if d.read(d.buf[:8]) {
		return binary.LittleEndian.Uint64(d.buf[:8])
	}
	return 0
}

func (d *stateDecoder) f64() float64 { return math.Float64frombits(d.u64()) }

// names reads a view's column names: at most max, each within the input.
func (d *stateDecoder) names(view string, max int) []string {
	n := d.u32()
	if d.err != nil {
		return nil
	}
	if uint64(n) > uint64(max) {
		d.fail("%d column names for the %d columns of %s", n, max, view)
		return nil
	}
	if !d.fits(4*uint64(n), "column names") {
		return nil
	}
	var names []string
	for range n {
		size := d.u32()
		if d.err == nil && size > maxColumnName {
			d.fail("a column name of %d bytes, want at most %d", size, maxColumnName)
		}
		if !d.fits(uint64(size), "a column name") {
			return nil
		}
		b := make([]byte, size)
		if !d.read(b) {
			return nil
		}
		names = append(names, string(b))
	}
	return names
}

// finish reads the rest of the input before the checksum (after an error,
// without keeping it) and checks the checksum: a corrupted or truncated state
// is reported as such rather than by the first strange field it shows.
func (d *stateDecoder) finish() error {
	if d.err != nil && (d.stream || !errors.Is(d.err, ErrState)) {
		return d.err // a pipe is not read on to its end, which may never come
	}
	if _, err := io.Copy(io.Discard, d); err != nil {
		return fmt.Errorf("stream: reading a state: %w", err)
	}
	var tail [4]byte
	_, err := io.ReadFull(d.r, tail[:])
	switch {
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		return fmt.Errorf("stream: reading a state: %w", err)
	case d.left > 0 || err != nil || binary.LittleEndian.Uint32(tail[:]) != d.crc:
		return fmt.Errorf("%w: checksum mismatch (truncated or corrupted)", ErrState)
	}
	return d.err
}

// inputSize returns the number of bytes left in r when r can tell (a
// regular file, a bytes.Reader, a bytes.Buffer, a strings.Reader), or -1.
func inputSize(r io.Reader) int64 {
	switch v := r.(type) {
	case interface{ Len() int }:
		return int64(v.Len())
	case *os.File:
		info, err := v.Stat()
		if err != nil || !info.Mode().IsRegular() {
			return -1
		}
		off, err := v.Seek(0, io.SeekCurrent)
		if err != nil || off > info.Size() {
			return -1
		}
		return info.Size() - off
	}
	return -1
}

// ReadState reads a state written by WriteState and returns the estimator it
// describes. Truncated, corrupted or foreign input gives an error matching
// ErrState.
//
// Every size in the state is checked against the bytes the input holds
// before anything of that size is allocated, and the accumulators are
// decoded as they are read: from an input whose size is known (a regular
// file, a bytes.Reader, a bytes.Buffer, a strings.Reader) ReadState allocates
// less than twice the input's size, the accumulators' matrices (each 8·(2D)²
// bytes for an encoding of 4·2D·(2D+1) bytes) and the column names (16 bytes
// more per name) making most of it. From other readers (a pipe) the header,
// shard ids and column names are read and checked first, each bounded (a
// column name is at most 64 KiB), and then the accumulators and means, whose
// size the header fixes, are read whole, which adds their size: input that
// is not a state (/dev/zero, /dev/urandom) fails after a few bytes, and
// input that goes on past the state's end fails as soon as it does. The
// accumulators are refused if three times their size passes the memory
// limit (debug.SetMemoryLimit). The view widths cost nothing: the feature
// maps, 8·D·(dimX + dimY) bytes, are built only when rows are added to the
// restored estimator.
func ReadState(rd io.Reader) (*Estimator, error) { return decodeState(rd, false) }

// decodeState is ReadState; settingsOK accepts a settings-only state
// (stateFlagSettings), which restores an estimator without rows.
func decodeState(rd io.Reader, settingsOK bool) (*Estimator, error) {
	size := inputSize(rd)
	if size < 0 {
		return decodeStream(rd, settingsOK)
	}
	var head [len(stateMagic) + 2]byte
	if n, _ := io.ReadFull(rd, head[:min(size, int64(len(head)))]); n < len(stateMagic) || string(head[:len(stateMagic)]) != stateMagic {
		return nil, fmt.Errorf("%w: not a dime state (bad magic)", ErrState)
	}
	if size < int64(len(head))+stateHeaderSize+4 {
		return nil, fmt.Errorf("%w: truncated: %d bytes", ErrState, size)
	}
	v := head[len(stateMagic)]
	if v != stateVersion && v != stateVersionRaw {
		return nil, fmt.Errorf("%w: version %d, this build reads versions %d and %d (save the state again with this build)", ErrState, v, stateVersionRaw, stateVersion)
	}
	flags := head[len(stateMagic)+1]
	d := &stateDecoder{r: rd, left: size - int64(len(head)) - 4, crc: crc32.Update(0, castagnoli, head[:])}
	e := d.decode(flags, settingsOK, v == stateVersion)
	if err := d.finish(); err != nil {
		return nil, err
	}
	return e, nil
}

// stateHeader is what the fixed header of a state says.
type stateHeader struct {
	c                     Config
	spec                  rff.PairSpec
	sigmaX, sigmaY        float64
	rows, skipped, chunks uint64
}

// header reads and checks the fixed header (the settings, bandwidths and
// row counts after the magic, version and flags).
func (d *stateDecoder) header(settingsOnly, serial bool) (h stateHeader, ok bool) {
	var c Config
	if serial {
		c.RowModel = SerialRows
	}
	c.Kernel, c.Variant = vocab.Kernel(d.u8()), vocab.Variant(d.u8())
	skip := d.u8()
	c.SkipAnalytic = skip == 1
	c.BandwidthX.Rule, c.BandwidthY.Rule = vocab.BandwidthRule(d.u8()), vocab.BandwidthRule(d.u8())
	skipNormalized := d.u8()
	c.SkipNormalized = skipNormalized == 1
	c.Jackknife = Jackknife(d.u8())
	c.Precision = vocab.Precision(d.u8())
	features, perms, dimX, dimY, groups := d.u32(), d.u32(), d.u32(), d.u32(), d.u32()
	shuffle, pilot, seed, rows, skipped, chunks := d.u64(), d.u64(), d.u64(), d.u64(), d.u64(), d.u64()
	c.Alpha, c.BandwidthX.Sigma, c.BandwidthY.Sigma = d.f64(), d.f64(), d.f64()
	sigmaX, sigmaY := d.f64(), d.f64()
	c.HalfLife = d.f64()
	if d.err != nil {
		return h, false
	}
	// Range checks before any conversion to int: a uint64 above MaxInt64
	// must not wrap around to a valid-looking negative or small value.
	switch {
	case skip > 1 || skipNormalized > 1:
		d.fail("reserved bytes are not zero")
	case uint64(groups) > MaxGroups:
		d.fail("%d groups, want at most %d", groups, MaxGroups)
	case uint64(features) > rff.MaxFeatures || uint64(perms) > MaxPermutations:
		d.fail("%d features and %d permutations, want at most %d and %d", features, perms, rff.MaxFeatures, MaxPermutations)
	case uint64(dimX) > rff.MaxInputDim || uint64(dimY) > rff.MaxInputDim:
		d.fail("views of %d and %d columns, want at most %d", dimX, dimY, rff.MaxInputDim)
	case shuffle > MaxShuffleRows || pilot > MaxPilotRows:
		d.fail("shuffle buffer of %d rows and pilot of %d rows, want at most %d and %d", shuffle, pilot, MaxShuffleRows, MaxPilotRows)
	case rows > math.MaxInt64 || skipped > math.MaxInt64 || chunks > math.MaxInt64:
		d.fail("row and chunk counts %d, %d and %d out of range", rows, skipped, chunks)
	case settingsOnly && (rows != 0 || skipped != 0):
		d.fail("settings only, with %d rows and %d skipped", rows, skipped)
	}
	if d.err != nil {
		return h, false
	}
	c.Features, c.Permutations, c.Groups = int(features), int(perms), int(groups)
	c.ShuffleRows, c.PilotRows, c.Seed = int(shuffle), int(pilot), seed
	if err := c.Validate(); err != nil {
		d.fail("settings: %v", err)
		return h, false
	}
	spec := c.pairSpec(int(dimX), int(dimY), sigmaX, sigmaY)
	if err := spec.Validate(); err != nil {
		d.fail("feature maps: %v", err)
		return h, false
	}
	h.c, h.spec, h.sigmaX, h.sigmaY = c, spec, sigmaX, sigmaY
	h.rows, h.skipped, h.chunks = rows, skipped, chunks
	return h, true
}

// decodeStream is decodeState for an input of unknown size (a pipe): the
// magic, version and header are read and checked first, then the shard ids
// and names, each bounded, and only then the accumulators and means, whose
// size the header fixes (spool), are read whole.
func decodeStream(rd io.Reader, settingsOK bool) (*Estimator, error) {
	var head [len(stateMagic) + 2]byte
	n, err := io.ReadFull(rd, head[:])
	switch {
	case n < len(stateMagic) || string(head[:len(stateMagic)]) != stateMagic:
		if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("stream: reading a state: %w", err)
		}
		return nil, fmt.Errorf("%w: not a dime state (bad magic)", ErrState)
	case err != nil:
		return nil, fmt.Errorf("%w: truncated: %d bytes", ErrState, n)
	case head[len(stateMagic)] != stateVersion && head[len(stateMagic)] != stateVersionRaw:
		return nil, fmt.Errorf("%w: version %d, this build reads versions %d and %d (save the state again with this build)", ErrState, head[len(stateMagic)], stateVersionRaw, stateVersion)
	}
	d := &stateDecoder{r: rd, left: math.MaxInt64, crc: crc32.Update(0, castagnoli, head[:]), stream: true}
	e := d.decode(head[len(stateMagic)+1], settingsOK, head[len(stateMagic)] == stateVersion)
	if err := d.finish(); err != nil {
		return nil, err
	}
	return e, nil
}

// decode reads the fields after the magic and version. It returns nil when
// the decoder has failed.
func (d *stateDecoder) decode(flags byte, settingsOK, scaled bool) *Estimator {
	known := byte(stateFlagTruncated | stateFlagSerial)
	if settingsOK {
		known |= stateFlagSettings
	}
	if flags&^known != 0 {
		d.fail("unknown flags %#x", flags)
		return nil
	}
	settingsOnly := flags&stateFlagSettings != 0
	h, ok := d.header(settingsOnly, flags&stateFlagSerial != 0)
	if !ok {
		return nil
	}
	c, spec, sigmaX, sigmaY := h.c, h.spec, h.sigmaX, h.sigmaY
	features, dimX, dimY := uint32(c.Features), uint32(h.spec.DimX), uint32(h.spec.DimY)
	rows, skipped, chunks := h.rows, h.skipped, h.chunks

	// Shard ids.
	shards := shardSet{truncated: flags&stateFlagTruncated != 0}
	k := d.u32()
	if d.err == nil && (k < 1 || k > MaxShards) {
		d.fail("%d shard ids, want 1 to %d", k, MaxShards)
	}
	if !d.fits(16*uint64(k), "shard ids") {
		return nil
	}
	shards.ids = make([]ShardID, k)
	for i := range shards.ids {
		d.read(shards.ids[i][:])
	}
	if d.err == nil && !shards.valid() {
		d.fail("shard ids are not sorted and distinct")
	}
	c.XColumns = d.names("X", int(dimX))
	c.YColumns = d.names("Y", int(dimY))
	if scaled {
		if !d.fits(16*(uint64(dimX)+uint64(dimY)), "scaling") {
			return nil
		}
		sc := Scaling{CenterX: make([]float64, dimX), ScaleX: make([]float64, dimX), CenterY: make([]float64, dimY), ScaleY: make([]float64, dimY)}
		for _, v := range [][]float64{sc.CenterX, sc.ScaleX, sc.CenterY, sc.ScaleY} {
			for i := range v {
				v[i] = d.f64()
			}
		}
		if d.err != nil {
			return nil
		}
		if err := sc.check(int(dimX), int(dimY)); err != nil {
			d.fail("%v", trimInvalid(err))
			return nil
		}
		c.Standardize, c.Scaling = true, sc
	}
	haveLastY := d.u8()
	if d.err == nil && haveLastY > 1 {
		d.fail("last-row flag is %d", haveLastY)
	}

	// The last row's Y features, the accumulators and the means: check that
	// the input holds them all before allocating any.
	p := 2 * uint64(features)
	var accDescs, meanDescs []covariance.Description
	var A, M uint64
	if !settingsOnly { // a settings-only state needs no layout
		accDescs, meanDescs = layout(c, spec)
		A, M = uint64(len(accDescs)), uint64(len(meanDescs))
	}
	accSize := uint64(covariance.EncodedSize(int(features)))
	meanSize := uint64(covariance.MeanEncodedSize(int(features)))
	if !d.spool(8*p+4+A*(4+accSize)+4+M*(4+meanSize), fmt.Sprintf("%d accumulators and %d means of %d features", A, M, p)) {
		return nil
	}
	e := newEstimator(int(dimX), int(dimY), c)
	e.scaling = c.Scaling
	if err := checkViews(e.dimX, e.dimY, c); err != nil {
		d.fail("%v", err)
		return nil
	}
	lastY := make([]float64, p)
	for i := range lastY {
		lastY[i] = d.f64()
		if d.err == nil && (math.IsNaN(lastY[i]) || math.IsInf(lastY[i], 0)) {
			d.fail("Y features of the last row: value %v", lastY[i])
		}
	}
	if n := d.u32(); d.err == nil && uint64(n) != A {
		d.fail("%d accumulators, want %d", n, A)
	}
	if settingsOnly {
		if n := d.u32(); d.err == nil && n != 0 {
			d.fail("%d means in a settings-only state", n)
		}
		if d.err != nil {
			return nil
		}
		if err := e.startTemplate(sigmaX, sigmaY); err != nil { // no accumulators, zero means
			d.fail("%v", err)
			return nil
		}
		e.lastY, e.haveLastY = lastY, haveLastY == 1
		e.shards = shards
		e.chunks = int64(chunks)
		return e
	}
	accs := make([]*covariance.Accumulator, A)
	for i := range accs {
		if n := d.u32(); d.err == nil && uint64(n) != accSize {
			d.fail("accumulator %d: %d bytes, want %d", i, n, accSize)
		}
		if d.err != nil {
			return nil
		}
		accs[i] = new(covariance.Accumulator)
		if err := accs[i].DecodeFrom(d, int64(accSize)); err != nil {
			if errors.Is(err, covariance.ErrFormat) {
				d.fail("accumulator %d: %v", i, err)
			} else if d.err == nil {
				d.err = err // the input's own error
			}
			return nil
		}
		if want := accDescs[i]; accs[i].Description() != want {
			d.fail("accumulator %v#%d does not belong to these settings", want.Part, want.Index)
			return nil
		}
	}
	if n := d.u32(); d.err == nil && uint64(n) != M {
		d.fail("%d means, want %d", n, M)
	}
	means := make([]*covariance.Mean, M)
	buf := make([]byte, meanSize)
	for i := range means {
		if n := d.u32(); d.err == nil && uint64(n) != meanSize {
			d.fail("mean %d: %d bytes, want %d", i, n, meanSize)
		}
		if !d.read(buf) {
			return nil
		}
		means[i] = new(covariance.Mean)
		if err := means[i].UnmarshalBinary(buf); err != nil {
			d.fail("mean %d: %v", i, err)
			return nil
		}
		if want := meanDescs[i]; means[i].Description() != want {
			d.fail("mean %v#%d does not belong to these settings", want.Part, want.Index)
			return nil
		}
	}
	if err := checkWeights(c, accs, means, int64(rows)); err != nil {
		d.fail("%v", err)
		return nil
	}
	e.setAccumulators(spec, sigmaX, sigmaY, accs, means)
	e.lastY = lastY
	e.haveLastY = haveLastY == 1
	e.shards = shards
	e.rows, e.skipped, e.chunks = int64(rows), int64(skipped), int64(chunks)
	return e
}

// checkWeights checks the weights of the accumulators and means (in the
// order of layout) against the row count: the groups' joints hold every row
// once (their weights sum to rows, or less with a half-life), each group's
// X, Y and means weigh what its joint weighs, and every other accumulator
// (copies, self joints, permuted) at most every row.
func checkWeights(c Config, accs []*covariance.Accumulator, means []*covariance.Mean, rows int64) error {
	n := float64(rows)
	hi := n * (1 + 1e-12)
	var total float64
	for _, a := range accs {
		if w := a.Weight(); w > hi {
			desc := a.Description()
			return fmt.Errorf("accumulator %v#%d has a weight of %v for %d rows", desc.Part, desc.Index, w, rows)
		}
	}
	per := 3
	if !c.SkipNormalized {
		per = 7
	}
	for k := range c.groups() {
		g := accs[k*per : k*per+3]
		w := g[2].Weight()
		total += w
		for _, other := range []float64{g[0].Weight(), g[1].Weight(), means[3*k].Weight(), means[3*k+1].Weight(), means[3*k+2].Weight()} {
			if math.Abs(other-w) > 1e-12*max(n, 1) {
				return fmt.Errorf("group %d: the X, Y and joint accumulators and means weigh %v and %v", k, other, w)
			}
		}
	}
	lo := n * (1 - 1e-12)
	if c.HalfLife > 0 {
		lo = 0
	}
	if total < lo || total > hi {
		return fmt.Errorf("the groups weigh %v for %d rows", total, rows)
	}
	return nil
}

// withBandwidths returns c with the resolved bandwidths as explicit rules.
func withBandwidths(c Config, sigmaX, sigmaY float64) Config {
	c.BandwidthX, c.BandwidthY = vocab.Sigma(sigmaX), vocab.Sigma(sigmaY)
	return c
}

// Merge adds the rows of other (a shard's estimator, typically from
// ReadState) to e. Both must have resolved the same bandwidths and share
// every setting that shapes the accumulators (kernel, variant, features,
// permutations, seed, widths, column names) and alpha; otherwise the error
// matches ErrIncompatible and e is unchanged. Estimators that share a shard
// id (ShardID) hold the same rows: their merge is refused with an error
// matching ErrOverlap, as is one whose row counts would overflow. Rows
// waiting in either shuffle buffer are flushed first. What merges is exact:
// the accumulators of the union of the rows, as if one estimator had seen
// both shards' scopes, group by group (the groups of the jackknife merge
// pairwise); e then holds the shard ids of both.
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
	case a.RowModel != b.RowModel:
		return fmt.Errorf("%w: rows %v vs %v", ErrIncompatible, a.RowModel, b.RowModel)
	case a.Alpha != b.Alpha:
		return fmt.Errorf("%w: alpha %v vs %v", ErrIncompatible, a.Alpha, b.Alpha)
	case !e.scaling.Equal(other.scaling):
		return fmt.Errorf("%w: the columns' scales differ (each shard chose its own on its first rows: run the shards with --like a state of one of them, or with explicit scales)", ErrIncompatible)
	case e.sigmaX != other.sigmaX || e.sigmaY != other.sigmaY:
		return fmt.Errorf("%w: bandwidths %v, %v vs %v, %v (data-dependent rules give each shard its own: give sigma explicitly to shards that will be merged)",
			ErrIncompatible, e.sigmaX, e.sigmaY, other.sigmaX, other.sigmaY)
	case e.rows > math.MaxInt64-other.rows || e.skipped > math.MaxInt64-other.skipped || e.chunks > math.MaxInt64-other.chunks:
		return fmt.Errorf("%w: row counts overflow (%d + %d rows, %d + %d skipped)", ErrIncompatible, e.rows, other.rows, e.skipped, other.skipped)
	}
	if id, ok := e.shards.common(other.shards); ok {
		return overlapError{fmt.Sprintf("%v: both hold the rows of shard %v, which would count twice (a state merged twice, or with a merge that contains it)", ErrOverlap, id)}
	}
	// Check every pair before changing anything.
	mine, theirs := e.accumulators(), other.accumulators()
	for i := range mine {
		if mine[i].Description() != theirs[i].Description() {
			return fmt.Errorf("%w: feature maps differ (kernel, variant, features or seed)", ErrIncompatible)
		}
	}
	for i, m := range e.means {
		if m.Description() != other.means[i].Description() {
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
	// The lag-1 autocorrelations are of one run's rows in their order: a
	// union of shards has no order.
	e.lagX, e.lagY = lagStats{}, lagStats{}
	e.skipped += other.skipped
	e.shards = e.shards.union(other.shards)
	return nil
}

// accumulators returns every accumulator in the order of layout (nil before
// the estimator has started).
func (e *Estimator) accumulators() []*covariance.Accumulator { return e.accs }

// MarshalBinary returns the state as WriteState writes it.
func (e *Estimator) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	err := e.WriteState(&buf)
	return buf.Bytes(), err
}
