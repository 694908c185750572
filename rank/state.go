package rank

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"

	"github.com/dime-project/dime/covariance"
	"github.com/dime-project/dime/exact"
	"github.com/dime-project/dime/internal/framed"
	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/stream"
)

// ErrState is matched by the errors of ReadState on bytes that are not a
// valid multi-pair state.
var ErrState = errors.New("rank: invalid state")

// ErrIncompatible is matched by the error of merging states of other
// settings, views, pairs, bandwidths or scales, or that share rows.
var ErrIncompatible = errors.New("rank: incompatible states")

// The state encoding, version 1:
//
//	6        magic "dimeRK"
//	1        version (1)
//	4        length h of the header
//	h        the header: JSON (settings, plan, bandwidths, scales, row and
//	         chunk counts, shard ids; floats as Go writes them, which read
//	         back bit for bit)
//	4        number A of accumulators, then each as its length (4) and its
//	         encoding (covariance.Accumulator.MarshalBinary): per part map
//	         its K groups, then the copies', the self joints', the pairs'
//	         joints, in the order New builds them
//	4        number M of means, then each as length and encoding: per part
//	         map its K groups, then the pairs' joints
//	4        CRC-32C (Castagnoli) of every byte before it
const (
	stateMagic   = "dimeRK"
	stateVersion = 1
	// maxHeader bounds the JSON header: column names and scales.
	maxHeader = 64 << 20
)

// StateMagic is the first bytes of a multi-pair state, by which a reader
// tells it from a one-pair state (package stream's).
const StateMagic = stateMagic

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// stateHeader is the JSON header of a state.
type stateHeader struct {
	Settings settings    `json:"settings"`
	Plan     Plan        `json:"plan"`
	Sigmas   []float64   `json:"sigmas"`
	Centers  [][]float64 `json:"centers,omitempty"`
	Scales   [][]float64 `json:"scales,omitempty"`
	Rows     int64       `json:"rows"`
	Skipped  int64       `json:"skipped"`
	Chunks   int64       `json:"chunks"`
	Shards   []string    `json:"shards"`
	// Truncated says that Shards holds the smallest ids of a larger union.
	Truncated bool `json:"truncated,omitempty"`
}

// settings are the estimator settings a state records.
type settings struct {
	Kernel         exact.Kernel         `json:"kernel"`
	Alpha          float64              `json:"alpha"`
	Features       int                  `json:"features"`
	Variant        rff.Variant          `json:"variant"`
	Groups         int                  `json:"groups"`
	Jackknife      stream.Jackknife     `json:"jackknife"`
	Precision      covariance.Precision `json:"precision"`
	Seed           uint64               `json:"seed"`
	Standardize    bool                 `json:"standardize"`
	PilotRows      int                  `json:"pilot_rows"`
	ShuffleRows    int                  `json:"shuffle_rows"`
	RowModel       stream.RowModel      `json:"row_model"`
	SkipNormalized bool                 `json:"skip_normalized"`
	Rule           exact.BandwidthRule  `json:"bandwidth_rule"`
	RuleSigma      float64              `json:"bandwidth_sigma"`
}

func settingsOf(c stream.Config) settings {
	return settings{Kernel: c.Kernel, Alpha: c.Alpha, Features: c.Features, Variant: c.Variant, Groups: c.GroupCount(), Jackknife: c.Jackknife,
		Precision: c.Precision, Seed: c.Seed, Standardize: c.Standardize, PilotRows: c.PilotRows, ShuffleRows: c.ShuffleRows,
		RowModel: c.RowModel, SkipNormalized: c.SkipNormalized, Rule: c.BandwidthX.Rule, RuleSigma: c.BandwidthX.Sigma}
}

func (s settings) config() stream.Config {
	return stream.Config{Kernel: s.Kernel, Alpha: s.Alpha, Features: s.Features, Variant: s.Variant, Groups: s.Groups, Jackknife: s.Jackknife,
		Precision: s.Precision, Seed: s.Seed, Standardize: s.Standardize, PilotRows: s.PilotRows, ShuffleRows: s.ShuffleRows,
		RowModel: s.RowModel, SkipNormalized: s.SkipNormalized,
		BandwidthX: exact.Bandwidth{Rule: s.Rule, Sigma: s.RuleSigma}, BandwidthY: exact.Bandwidth{Rule: s.Rule, Sigma: s.RuleSigma}}
}

// accumulators returns every accumulator and mean in state order.
func (a *Accumulator) accumulators() (accs []*covariance.Accumulator, means []*covariance.Mean) {
	for i := range a.parts {
		accs = append(accs, a.partAcc[i]...)
	}
	for i := range a.copies {
		accs = append(accs, a.copyAcc[i]...)
	}
	for i := range a.selfs {
		accs = append(accs, a.selfAcc[i]...)
	}
	for i := range a.pairs {
		accs = append(accs, a.pairs[i].joint...)
	}
	for i := range a.parts {
		means = append(means, a.partMean[i]...)
	}
	for i := range a.pairs {
		means = append(means, a.pairs[i].jointMean...)
	}
	return accs, means
}

// Config returns the settings of the accumulator with its resolved
// bandwidths and scales: an accumulator made with it (on other rows) merges
// with this one.
func (a *Accumulator) Config() Config {
	c := Config{Stream: a.cfg, Sigmas: slices.Clone(a.sigma), Centers: a.center, Scales: a.scale}
	c.Stream.Workers = 0
	return c
}

func (a *Accumulator) header() stateHeader {
	return stateHeader{Settings: settingsOf(a.cfg), Plan: a.plan, Sigmas: a.sigma, Centers: a.center, Scales: a.scale,
		Rows: a.rows, Skipped: a.skipped, Chunks: a.chunks, Shards: a.shards.strings(), Truncated: a.shards.truncated}
}

// WriteState flushes the rows waiting for their scope and writes the
// state: settings, plan, bandwidths, scales, counts, shard ids and every
// accumulator. ReadState restores it; Merge adds states of other rows.
func (a *Accumulator) WriteState(w io.Writer) error {
	if err := a.Flush(); err != nil {
		return err
	}
	if !a.started {
		return invalidf("no rows to save")
	}
	h, err := json.Marshal(a.header())
	if err != nil {
		return err
	}
	le := binary.LittleEndian
	b := append([]byte(stateMagic), stateVersion)
	b = le.AppendUint32(b, uint32(len(h)))
	b = append(b, h...)
	accs, means := a.accumulators()
	b = le.AppendUint32(b, uint32(len(accs)))
	for _, acc := range accs {
		if b, err = framed.AppendSized(b, acc.AppendBinary); err != nil {
			return err
		}
	}
	b = le.AppendUint32(b, uint32(len(means)))
	for _, m := range means {
		if b, err = framed.AppendSized(b, m.AppendBinary); err != nil {
			return err
		}
	}
	b = le.AppendUint32(b, crc32.Checksum(b, castagnoli))
	_, err = w.Write(b)
	return err
}

// ReadState reads a state written by WriteState. Bytes that are not one
// give an error matching ErrState; sizes are checked against what the
// header implies before the accumulators are read.
func ReadState(r io.Reader) (*Accumulator, error) {
	le := binary.LittleEndian
	var head [11]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, eofIsTruncated(err))
	}
	if string(head[:6]) != stateMagic {
		return nil, fmt.Errorf("%w: not a multi-pair state (bad magic)", ErrState)
	}
	if head[6] != stateVersion {
		return nil, fmt.Errorf("%w: version %d, this build reads %d", ErrState, head[6], stateVersion)
	}
	hlen := le.Uint32(head[7:])
	if hlen > maxHeader {
		return nil, fmt.Errorf("%w: header of %d bytes", ErrState, hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrState, eofIsTruncated(err))
	}
	var h stateHeader
	dec := json.NewDecoder(bytes.NewReader(hb))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("%w: header: %v", ErrState, err)
	}
	cfg := h.Settings.config()
	if h.Settings.Features < 1 || h.Settings.Features > rff.MaxFeatures || len(h.Sigmas) == 0 {
		return nil, fmt.Errorf("%w: header: %d features, %d bandwidths", ErrState, h.Settings.Features, len(h.Sigmas))
	}
	a, err := New(h.Plan, Config{Stream: cfg, Sigmas: h.Sigmas, Centers: h.Centers, Scales: h.Scales})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrState, err)
	}
	if h.Rows < 0 || h.Skipped < 0 || h.Chunks < 0 {
		return nil, fmt.Errorf("%w: counts %d, %d, %d", ErrState, h.Rows, h.Skipped, h.Chunks)
	}
	a.rows, a.skipped, a.chunks = h.Rows, h.Skipped, h.Chunks
	if a.shards, err = h.shardSet(); err != nil {
		return nil, err
	}
	accs, means := a.accumulators()
	// The rest has a known size: read it whole, then check the checksum.
	D := cfg.Features
	rest := 4 + int64(len(accs))*(4+covariance.EncodedSize(D)) + 4 + int64(len(means))*(4+covariance.MeanEncodedSize(D)) + 4
	body := make([]byte, rest)
	if _, err := io.ReadFull(r, body); err != nil {
		return nil, fmt.Errorf("%w: accumulators: %v", ErrState, eofIsTruncated(err))
	}
	if n, _ := r.Read(make([]byte, 1)); n > 0 {
		return nil, fmt.Errorf("%w: bytes after the end of the state", ErrState)
	}
	sum := crc32.Update(crc32.Checksum(append(head[:], hb...), castagnoli), castagnoli, body[:len(body)-4])
	if sum != le.Uint32(body[len(body)-4:]) {
		return nil, fmt.Errorf("%w: checksum mismatch (corrupted)", ErrState)
	}
	p := body
	next := func(what string, i int) ([]byte, error) {
		if len(p) < 4 {
			return nil, fmt.Errorf("%w: truncated at %s %d", ErrState, what, i)
		}
		n := int(le.Uint32(p))
		if n > len(p)-4 {
			return nil, fmt.Errorf("%w: %s %d of %d bytes, %d left", ErrState, what, i, n, len(p)-4)
		}
		v := p[4 : 4+n]
		p = p[4+n:]
		return v, nil
	}
	if len(p) < 4 || int(le.Uint32(p)) != len(accs) {
		return nil, fmt.Errorf("%w: accumulator count", ErrState)
	}
	p = p[4:]
	for i, acc := range accs {
		v, err := next("accumulator", i)
		if err != nil {
			return nil, err
		}
		want := acc.Description()
		if err := acc.UnmarshalBinary(v); err != nil {
			return nil, fmt.Errorf("%w: accumulator %d: %v", ErrState, i, err)
		}
		if acc.Description() != want {
			return nil, fmt.Errorf("%w: accumulator %d describes other features", ErrState, i)
		}
		_ = acc.SetPrecision(cfg.Precision)
	}
	if len(p) < 4 || int(le.Uint32(p)) != len(means) {
		return nil, fmt.Errorf("%w: mean count", ErrState)
	}
	p = p[4:]
	for i, m := range means {
		v, err := next("mean", i)
		if err != nil {
			return nil, err
		}
		want := m.Description()
		if err := m.UnmarshalBinary(v); err != nil {
			return nil, fmt.Errorf("%w: mean %d: %v", ErrState, i, err)
		}
		if m.Description() != want {
			return nil, fmt.Errorf("%w: mean %d describes other features", ErrState, i)
		}
	}
	if len(p) != 4 {
		return nil, fmt.Errorf("%w: %d bytes left before the checksum", ErrState, len(p)-4)
	}
	return a, nil
}

func eofIsTruncated(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated")
	}
	return err
}

// Merge adds the rows of other (a state of other rows, with the same
// settings, plan, bandwidths and scales: run the shards with the Config of
// one of them) to a. On error a is unchanged. What merges is exact: every
// accumulator of the union of the rows, group by group, up to the order of
// float64 additions.
func (a *Accumulator) Merge(other *Accumulator) error {
	if err := a.Flush(); err != nil {
		return err
	}
	if err := other.Flush(); err != nil {
		return err
	}
	if !a.started || !other.started {
		return fmt.Errorf("%w: a state has no rows", ErrIncompatible)
	}
	if err := compatible(a.header(), other.header()); err != nil {
		return err
	}
	if id, ok := a.shards.common(other.shards); ok {
		return fmt.Errorf("%w: both hold the rows of shard %x, which would count twice (a state merged twice, or with a merge that contains it)", ErrIncompatible, id)
	}
	accs, means := a.accumulators()
	oaccs, omeans := other.accumulators()
	for i := range accs {
		if err := accs[i].Merge(oaccs[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	for i := range means {
		if err := means[i].Merge(omeans[i]); err != nil {
			return fmt.Errorf("%w: %v", ErrIncompatible, err)
		}
	}
	a.rows += other.rows
	a.skipped += other.skipped
	a.chunks += other.chunks
	a.shards = a.shards.union(other.shards)
	return nil
}

// compatible returns an error matching ErrIncompatible unless states of
// headers ha and hb merge: the same settings, plan, bandwidths and scales,
// and row counts that add without overflow.
func compatible(ha, hb stateHeader) error {
	ja, _ := json.Marshal(struct {
		S settings
		P Plan
	}{ha.Settings, ha.Plan})
	jb, _ := json.Marshal(struct {
		S settings
		P Plan
	}{hb.Settings, hb.Plan})
	switch {
	case !bytes.Equal(ja, jb):
		return fmt.Errorf("%w: settings, columns or pairs differ", ErrIncompatible)
	case !slices.Equal(bitsOf(ha.Sigmas), bitsOf(hb.Sigmas)):
		return fmt.Errorf("%w: bandwidths differ (each shard chose its own: run the shards with --like a state of one of them)", ErrIncompatible)
	case !equalScales(ha.Centers, hb.Centers) || !equalScales(ha.Scales, hb.Scales):
		return fmt.Errorf("%w: the columns' scales differ (each shard chose its own on its first rows: run the shards with --like a state of one of them)", ErrIncompatible)
	case ha.Rows > math.MaxInt64-hb.Rows || ha.Chunks > math.MaxInt64-hb.Chunks || ha.Skipped > math.MaxInt64-hb.Skipped:
		return fmt.Errorf("%w: row counts overflow", ErrIncompatible)
	}
	return nil
}

// shardSet returns the shard ids of a header.
func (h stateHeader) shardSet() (shardSet, error) {
	if len(h.Shards) == 0 || len(h.Shards) > maxShards {
		return shardSet{}, fmt.Errorf("%w: %d shards", ErrState, len(h.Shards))
	}
	set := shardSet{truncated: h.Truncated}
	for _, s := range h.Shards {
		var id [16]byte
		if v, err := hex.DecodeString(s); err != nil || len(v) != 16 {
			return shardSet{}, fmt.Errorf("%w: shard id %q", ErrState, s)
		} else {
			copy(id[:], v)
		}
		set.ids = append(set.ids, id)
	}
	if !slices.IsSortedFunc(set.ids, cmpID) {
		return shardSet{}, fmt.Errorf("%w: shard ids not sorted", ErrState)
	}
	return set, nil
}

func bitsOf(v []float64) []uint64 {
	out := make([]uint64, len(v))
	for i, f := range v {
		out[i] = math.Float64bits(f)
	}
	return out
}

func equalScales(a, b [][]float64) bool {
	return slices.EqualFunc(a, b, func(x, y []float64) bool { return slices.Equal(bitsOf(x), bitsOf(y)) })
}
