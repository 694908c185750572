package kafka

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/internal/redact"
)

// ErrNoMessage is matched by the error of Open when the input ends (idle,
// or ctx done) before a message could be read.
var ErrNoMessage = errors.New("kafka: no message")

// DefaultBatchRows is the default of Config.BatchRows.
const DefaultBatchRows = 8192

// Config says what to read and how.
type Config struct {
	// Source is the topic, its brokers and the consumer group.
	Source Source
	// X and Y select the columns of the two views, as for files (names,
	// globs, slices of fixed-size lists for Arrow): globs are expanded
	// against the first message (the keys of a JSON object in their order,
	// or the schema of an Arrow stream).
	X, Y []string
	// TimeColumn, if not empty, names a column of times: in JSON a number
	// of TimeUnit since the Unix epoch; in Arrow a timestamp or an integer
	// count of TimeUnit.
	TimeColumn string
	TimeUnit   arrow.TimeUnit
	// SkipInvalid drops a message that cannot be decoded, or a row with a
	// missing, non-numeric, null, NaN, infinite or too large value, and
	// counts it (Skipped); without it such a message ends the reading with
	// an error naming its partition and offset.
	SkipInvalid bool
	// MaxAbs, if positive, makes a value beyond ±MaxAbs invalid.
	MaxAbs float64
	// Limit, if positive, ends the reading after this many rows.
	Limit int64
	// BatchRows bounds the rows of a block (default DefaultBatchRows).
	BatchRows int
	// Getenv reads the SASL and TLS settings (os.Getenv if nil; see Auth).
	Getenv func(string) string
	// Warn, if not nil, is told of trouble the client retries through (a
	// broker that cannot be reached, a commit that failed): one line, with
	// no secret in it.
	Warn func(string)
	// ClientOpts are more options of the franz-go client (tests: shorter
	// session timeouts).
	ClientOpts []kgo.Opt
}

// mark says that once the first end rows read are emitted, the partition's
// messages up to offset next (excluded) are done.
type mark struct {
	end   int64
	part  int32
	next  int64
	epoch int32
}

// Reader reads rows from a topic as a member of a consumer group, in blocks,
// as the file readers of package io do (Next, X, Y, Times, Rows), and
// commits the offsets of the rows the caller says it has emitted (Commit).
//
// Rows are in the order the client polls them: within a partition in offset
// order; across partitions interleaved as fetches arrive. A message that is
// only partly read (Limit) is never committed.
type Reader struct {
	cfg    Config
	cl     *kgo.Client
	ctx    context.Context
	cancel context.CancelFunc
	dec    decoder

	blk     decode.Block // the current block
	tmp     decode.Block // one message's rows
	start   int64        // rows before the current block
	skipped int64
	pending []*kgo.Record
	done    bool
	err     error
	warned  map[string]time.Time

	mu        sync.Mutex
	marks     []mark
	pos       map[int32]int64 // by partition: the offset after the last message read
	owned     map[int32]bool
	committed map[int32]int64
	emitted   int64
	since     time.Time // the last message, or the last assignment (Source.Idle)
}

// Open joins the consumer group and waits for the first message, whose keys
// (JSON) or schema (Arrow) expand the column patterns. It returns when that
// message is decoded, when ctx ends, or with Source.Idle when nothing came
// for that long. Errors about the URL, the settings and the first message
// match ErrURL, ErrAuth, or the errors of package io (decode.ErrColumn,
// decode.ErrFormat, decode.ErrInvalidValue).
func Open(ctx context.Context, cfg Config) (*Reader, error) {
	s := cfg.Source
	if len(s.Brokers) == 0 || s.Topic == "" || s.Group == "" {
		return nil, fmt.Errorf("%w: brokers, topic and group are required", ErrURL)
	}
	if len(cfg.X) == 0 || len(cfg.Y) == 0 {
		return nil, fmt.Errorf("%w: %s: select columns for X and Y", decode.ErrColumn, s.Name())
	}
	if cfg.BatchRows <= 0 {
		cfg.BatchRows = DefaultBatchRows
	}
	auth, err := Auth(cfg.Getenv)
	if err != nil {
		return nil, err
	}
	r := &Reader{cfg: cfg, owned: map[int32]bool{}, pos: map[int32]int64{}, committed: map[int32]int64{}, warned: map[string]time.Time{}}
	r.ctx, r.cancel = context.WithCancel(ctx)
	reset := kgo.NewOffset().AtStart()
	if s.Start == Latest {
		reset = kgo.NewOffset().AtEnd()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.Brokers...),
		kgo.ClientID(s.ClientID),
		kgo.ConsumerGroup(s.Group),
		kgo.ConsumeTopics(s.Topic),
		kgo.DisableAutoCommit(),
		kgo.ConsumeResetOffset(reset),
		kgo.OnPartitionsAssigned(r.assigned),
		kgo.OnPartitionsRevoked(r.revoked),
		kgo.OnPartitionsLost(r.lost),
		kgo.AdjustFetchOffsetsFn(r.adjust),
	}
	if s.InstanceID != "" {
		opts = append(opts, kgo.InstanceID(s.InstanceID))
	}
	opts = append(opts, auth...)
	opts = append(opts, cfg.ClientOpts...)
	if r.cl, err = kgo.NewClient(opts...); err != nil {
		r.cancel()
		return nil, fmt.Errorf("%w: %s: %s", ErrURL, s.Name(), redact.String(err.Error()))
	}
	// A wrong password or certificate is known at the first request: stop
	// there rather than retry for ever. A broker that is not up yet is only
	// a warning: the client retries.
	pctx, cancel := context.WithTimeout(r.ctx, pingTimeout)
	err = r.cl.Ping(pctx)
	cancel()
	switch {
	case err == nil || r.ctx.Err() != nil:
	case isAuth(err):
		r.Close()
		return nil, fmt.Errorf("%w: %s: %s", ErrAuth, s.Name(), redact.String(err.Error()))
	case usesSASL(cfg.Getenv):
		r.warn(fmt.Sprintf("%s: %v (retrying; with SASL, a broker that closes the connection may have refused the user or password)", s.Name(), err))
	default:
		r.warn(fmt.Sprintf("%s: %v (retrying)", s.Name(), err))
	}
	if s.Format == Arrow {
		r.dec = &arrowDecoder{cfg: &r.cfg}
	} else {
		r.dec = &jsonDecoder{cfg: &r.cfg}
	}
	// The first message that decodes sets the columns.
	for r.dec.dimX() < 0 {
		if len(r.pending) == 0 {
			r.poll()
			if r.err != nil || r.done {
				err := r.err
				if err == nil {
					err = fmt.Errorf("%w: %s: no message to read the columns from (%s)", ErrNoMessage, s.Name(), r.endReason())
				}
				r.Close()
				return nil, err
			}
			continue
		}
		rec := r.pending[0]
		err := r.dec.init(rec)
		if err == nil {
			break
		}
		if !cfg.SkipInvalid || errors.Is(err, decode.ErrColumn) {
			r.Close()
			return nil, r.messageError(rec, err)
		}
		r.pending = r.pending[1:]
		r.skipped++
		r.mark(rec, 0)
	}
	return r, nil
}

// endReason says why the input ended without rows.
func (r *Reader) endReason() string {
	if r.cfg.Source.Idle > 0 && r.ctx.Err() == nil {
		return fmt.Sprintf("none came in idle=%v", r.cfg.Source.Idle)
	}
	return "stopped"
}

// messageError names the message of an error.
func (r *Reader) messageError(rec *kgo.Record, err error) error {
	return &MessageError{Topic: rec.Topic, Partition: rec.Partition, Offset: rec.Offset, Source: r.cfg.Source.Name(), Err: err}
}

// MessageError is the error of a message that cannot be used; it matches
// the error it wraps (decode.ErrInvalidValue, decode.ErrFormat or
// decode.ErrColumn).
type MessageError struct {
	Source    string
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *MessageError) Error() string {
	return redact.String(fmt.Sprintf("%s: topic %s, partition %d, offset %d: %v (--skip-invalid skips such messages)",
		e.Source, e.Topic, e.Partition, e.Offset, e.Err))
}

func (e *MessageError) Unwrap() error { return e.Err }

// unassignedWait is how much longer than Source.Idle the input waits for
// partitions before it ends: a group that waits for a member gone without
// leaving (killed) drops it after its session timeout, 45 s by default.
const unassignedWait = 60 * time.Second

// poll fills r.pending, or sets r.done (idle, closed) or r.err. With
// Source.Idle, the input ends when no message has come for that long since
// the last one or since partitions were assigned (unassignedWait more while
// none is).
func (r *Reader) poll() {
	idle := r.cfg.Source.Idle
	for len(r.pending) == 0 {
		ctx, cancel := r.ctx, context.CancelFunc(func() {})
		if idle > 0 {
			r.mu.Lock()
			since, owned := r.since, len(r.owned) > 0
			r.mu.Unlock()
			if since.IsZero() {
				since = time.Now()
				r.mu.Lock()
				r.since = since
				r.mu.Unlock()
			}
			wait := idle
			if !owned {
				wait += unassignedWait
			}
			left := time.Until(since.Add(wait))
			if left <= 0 {
				r.done = true // idle: the input ends
				return
			}
			// Wake up at least every idle period to look at the
			// assignment again.
			ctx, cancel = context.WithTimeout(r.ctx, min(left, idle))
		}
		fs := r.cl.PollRecords(ctx, r.cfg.BatchRows)
		cancel()
		if fs.IsClientClosed() || r.ctx.Err() != nil {
			r.done = true
			return
		}
		for _, fe := range fs.Errors() {
			switch {
			case errors.Is(fe.Err, context.DeadlineExceeded) || errors.Is(fe.Err, context.Canceled):
				// Idle a while: look again.
			case retriable(fe.Err):
				r.warn(fmt.Sprintf("%s: partition %d: %v (retrying)", r.cfg.Source.Name(), fe.Partition, fe.Err))
			default:
				r.err = fmt.Errorf("%s: partition %d: %s", r.cfg.Source.Name(), fe.Partition, redact.String(fe.Err.Error()))
				return
			}
		}
		fs.EachRecord(func(rec *kgo.Record) {
			if rec.Topic == r.cfg.Source.Topic {
				r.pending = append(r.pending, rec)
			}
		})
		if len(r.pending) > 0 {
			r.mu.Lock()
			r.since = time.Now()
			r.mu.Unlock()
		}
	}
}

// usesSASL reports whether the environment sets SASL.
func usesSASL(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv(EnvSASLMechanism) != "" || getenv(EnvSASLUsername) != ""
}

// pingTimeout bounds the first request to the brokers.
const pingTimeout = 10 * time.Second

// isAuth reports whether err is a failure to authenticate or to be
// authorized.
func isAuth(err error) bool {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		switch ke {
		case kerr.SaslAuthenticationFailed, kerr.UnsupportedSaslMechanism, kerr.IllegalSaslState,
			kerr.TopicAuthorizationFailed, kerr.GroupAuthorizationFailed, kerr.ClusterAuthorizationFailed:
			return true
		}
	}
	var te tls.RecordHeaderError
	var ce *tls.CertificateVerificationError
	return errors.As(err, &te) || errors.As(err, &ce)
}

// retriable reports whether a fetch error is one the client retries through.
func retriable(err error) bool {
	var ne net.Error
	var dl *kgo.ErrDataLoss
	return kerr.IsRetriable(err) || errors.As(err, &ne) || errors.As(err, &dl) || errors.Is(err, kerr.UnknownTopicOrPartition)
}

// warn passes a line to Config.Warn, at most once a minute for each text.
func (r *Reader) warn(s string) {
	if r.cfg.Warn == nil {
		return
	}
	s = redact.String(s)
	if t, ok := r.warned[s]; ok && time.Since(t) < time.Minute {
		return
	}
	r.warned[s] = time.Now()
	r.cfg.Warn(s)
}

// Next reads the next block of rows; false at the end (Limit, Source.Idle,
// Close) or on an error (Err). A block holds the rows of the messages one
// poll returned, at most BatchRows; it may hold no row when every message
// of it was skipped (Skipped grew).
func (r *Reader) Next() bool {
	r.start += int64(r.blk.Rows)
	r.blk.X, r.blk.Y, r.blk.Rows = r.blk.X[:0], r.blk.Y[:0], 0
	if r.blk.Times != nil {
		r.blk.Times = r.blk.Times[:0]
	}
	if r.done || r.err != nil {
		return false
	}
	skipped := r.skipped
	for r.blk.Rows < r.cfg.BatchRows {
		if r.cfg.Limit > 0 && r.start+int64(r.blk.Rows) >= r.cfg.Limit {
			r.done = true
			break
		}
		if len(r.pending) == 0 {
			if r.blk.Rows > 0 || r.skipped > skipped {
				break // hand out what there is rather than wait
			}
			r.poll()
			if r.done || r.err != nil {
				break
			}
			continue
		}
		rec := r.pending[0]
		r.pending[0] = nil
		r.pending = r.pending[1:]
		if r.read(rec) {
			continue // read already, before the partition was reassigned
		}
		if err := r.add(rec); err != nil {
			r.err = err
			break
		}
	}
	// Rows read before an error are handed out first: the error ends the
	// next call.
	return r.blk.Rows > 0 || r.skipped > skipped
}

// add decodes one message into the block.
func (r *Reader) add(rec *kgo.Record) error {
	r.tmp.Rows = 0
	bad, err := r.dec.decode(&r.tmp, rec)
	if err != nil {
		if !r.cfg.SkipInvalid {
			return r.messageError(rec, err)
		}
		r.skipped++
		r.mark(rec, r.start+int64(r.blk.Rows))
		return nil
	}
	r.skipped += bad
	n := r.tmp.Rows
	whole := true
	if r.cfg.Limit > 0 {
		if left := r.cfg.Limit - r.start - int64(r.blk.Rows); int64(n) > left {
			n, whole = int(left), false
		}
	}
	dx, dy := r.dec.dimX(), r.dec.dimY()
	r.blk.X = append(r.blk.X, r.tmp.X[:n*dx]...)
	r.blk.Y = append(r.blk.Y, r.tmp.Y[:n*dy]...)
	if r.tmp.Times != nil {
		r.blk.Times = append(r.blk.Times, r.tmp.Times[:n]...)
	}
	r.blk.Rows += n
	if whole {
		r.mark(rec, r.start+int64(r.blk.Rows))
	}
	return nil
}

// mark records that rec is done once the first end rows are emitted.
func (r *Reader) mark(rec *kgo.Record, end int64) {
	r.mu.Lock()
	r.marks = append(r.marks, mark{end: end, part: rec.Partition, next: rec.Offset + 1, epoch: rec.LeaderEpoch})
	r.pos[rec.Partition] = max(r.pos[rec.Partition], rec.Offset+1)
	r.mu.Unlock()
}

// read reports whether this reader has read rec already: a partition that
// comes back to it after a rebalance (or after the broker lost the group's
// members) is fetched again from the committed offset, before the rows it
// has read.
func (r *Reader) read(rec *kgo.Record) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	p, ok := r.pos[rec.Partition]
	return ok && rec.Offset < p
}

// adjust starts a partition that comes back to this reader after the last
// message it read, when the committed offset is before it.
func (r *Reader) adjust(_ context.Context, offs map[string]map[int32]kgo.Offset) (map[string]map[int32]kgo.Offset, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for p, o := range offs[r.cfg.Source.Topic] {
		if pos, ok := r.pos[p]; ok && o.EpochOffset().Offset < pos {
			offs[r.cfg.Source.Topic][p] = kgo.NewOffset().At(pos)
		}
	}
	return offs, nil
}

// X returns the block's X values, row-major (Rows × DimX).
func (r *Reader) X() []float64 { return r.blk.X }

// Y returns the block's Y values, row-major (Rows × DimY).
func (r *Reader) Y() []float64 { return r.blk.Y }

// Times returns the block's times (ns since the epoch), or nil without a
// time column.
func (r *Reader) Times() []int64 { return r.blk.Times }

// Rows returns the rows of the block.
func (r *Reader) Rows() int { return r.blk.Rows }

// RowsRead returns the rows handed out so far, the current block's included.
func (r *Reader) RowsRead() int64 { return r.start + int64(r.blk.Rows) }

// DimX returns the values in a row of X.
func (r *Reader) DimX() int { return r.dec.dimX() }

// DimY returns the values in a row of Y.
func (r *Reader) DimY() int { return r.dec.dimY() }

// Columns returns the columns of the views, patterns expanded.
func (r *Reader) Columns() columns.Selection { return r.dec.columns() }

// Skipped returns the rows and messages skipped so far (SkipInvalid): a
// message that cannot be decoded counts as one.
func (r *Reader) Skipped() int64 { return r.skipped }

// Err returns the error that ended the reading, if any.
func (r *Reader) Err() error { return r.err }

// Commit says that the first rows rows handed out (counted across blocks
// from the first) have been emitted, and commits, for each partition this
// member owns, the offset after its last message whose rows are all among
// them. Messages skipped as invalid are committed with the rows before
// them. Call it from any goroutine.
func (r *Reader) Commit(ctx context.Context, rows int64) error {
	r.mu.Lock()
	r.emitted = max(r.emitted, rows)
	offs := r.ready(func(int32) bool { return true })
	r.mu.Unlock()
	return r.commit(ctx, offs)
}

// ready pops the marks of emitted rows of the partitions in, and returns
// the offsets to commit of those this member owns. r.mu is held.
func (r *Reader) ready(in func(int32) bool) map[int32]kgo.EpochOffset {
	offs := map[int32]kgo.EpochOffset{}
	keep := r.marks[:0]
	for _, m := range r.marks {
		if m.end > r.emitted || !in(m.part) {
			keep = append(keep, m)
			continue
		}
		if !r.owned[m.part] {
			continue
		}
		if e, ok := offs[m.part]; !ok || e.Offset < m.next {
			offs[m.part] = kgo.EpochOffset{Epoch: m.epoch, Offset: m.next}
		}
	}
	clear(r.marks[len(keep):])
	r.marks = keep
	return offs
}

// commit commits offs synchronously.
func (r *Reader) commit(ctx context.Context, offs map[int32]kgo.EpochOffset) error {
	if len(offs) == 0 {
		return nil
	}
	var rerr error
	r.cl.CommitOffsetsSync(ctx, map[string]map[int32]kgo.EpochOffset{r.cfg.Source.Topic: offs},
		func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
			if err != nil {
				rerr = err
				return
			}
			for _, t := range resp.Topics {
				for _, p := range t.Partitions {
					if err := kerr.ErrorForCode(p.ErrorCode); err != nil && rerr == nil {
						rerr = fmt.Errorf("partition %d: %w", p.Partition, err)
					}
				}
			}
		})
	if rerr != nil {
		return fmt.Errorf("%s: committing offsets: %s", r.cfg.Source.Name(), redact.String(rerr.Error()))
	}
	r.mu.Lock()
	for p, e := range offs {
		r.committed[p] = max(r.committed[p], e.Offset)
	}
	r.mu.Unlock()
	return nil
}

// Committed returns the offsets this reader has committed, by partition.
func (r *Reader) Committed() map[int32]int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int32]int64, len(r.committed))
	for p, o := range r.committed {
		out[p] = o
	}
	return out
}

// assigned, revoked and lost follow the group's assignment. On a revocation
// the emitted rows of the revoked partitions are committed; rows of theirs
// not yet emitted are left to the partition's next owner (read twice, never
// lost).
func (r *Reader) assigned(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	r.mu.Lock()
	for _, p := range m[r.cfg.Source.Topic] {
		r.owned[p] = true
	}
	r.since = time.Now()
	r.mu.Unlock()
}

func (r *Reader) revoked(ctx context.Context, _ *kgo.Client, m map[string][]int32) {
	parts := m[r.cfg.Source.Topic]
	r.mu.Lock()
	in := func(p int32) bool { return slices.Contains(parts, p) }
	offs := r.ready(in)
	r.mu.Unlock()
	if err := r.commit(ctx, offs); err != nil {
		r.warnLocked(err.Error())
	}
	r.drop(parts)
}

func (r *Reader) lost(_ context.Context, _ *kgo.Client, m map[string][]int32) {
	r.drop(m[r.cfg.Source.Topic])
}

// drop forgets partitions no longer owned. Their marks stay: if a partition
// comes back before its rows are emitted, they are committed then; if not,
// Commit drops them.
func (r *Reader) drop(parts []int32) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range parts {
		delete(r.owned, p)
	}
}

// warnLocked is warn from a callback goroutine.
func (r *Reader) warnLocked(s string) {
	if r.cfg.Warn != nil {
		r.cfg.Warn(redact.String(s))
	}
}

// Close leaves the group and closes the client. It does not commit: call
// Commit first.
func (r *Reader) Close() error {
	r.cancel()
	if r.cl != nil {
		r.cl.Close()
	}
	return nil
}
