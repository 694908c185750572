package kafka

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"github.com/dime-project/dime/decode"
)

// cluster starts an in-process Kafka (kfake: the real protocol, no broker)
// with one topic of parts partitions.
func cluster(t *testing.T, topic string, parts int32, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(parts, topic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// produce writes the messages to the topic, to partition i % parts for the
// i-th message when parts > 0 (else the client's choice).
func produce(t *testing.T, addrs []string, topic string, parts int32, values [][]byte, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for i, v := range values {
		wg.Add(1)
		rec := &kgo.Record{Value: v}
		if parts > 0 {
			rec.Partition = int32(i) % parts
		}
		cl.Produce(context.Background(), rec, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				first = firstErr(first, err)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	if first != nil {
		t.Fatal(first)
	}
}

func firstErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// jsonRows returns n messages {"id": i, "a": f(i), "b": g(i), "note": "…"}.
func jsonRows(from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		id := from + i
		out[i] = fmt.Appendf(nil, `{"id":%d,"a":%g,"b":%g,"note":"row %d"}`, id, math.Sin(float64(id)), float64(id%7)-3.5, id)
	}
	return out
}

// readAll reads the reader to its end, committing after every block, and
// returns the X values (the ids) in the order read.
func readAll(t *testing.T, r *Reader) []float64 {
	t.Helper()
	var ids []float64
	for r.Next() {
		ids = append(ids, r.X()...)
		if err := r.Commit(context.Background(), r.RowsRead()); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}

func source(c *kfake.Cluster, topic, group string, format Format, idle time.Duration) Source {
	return Source{Brokers: c.ListenAddrs(), Topic: topic, Group: group, Format: format, ClientID: "test", Idle: idle}
}

// fastGroup makes rebalances quick for tests.
var fastGroup = []kgo.Opt{kgo.HeartbeatInterval(100 * time.Millisecond), kgo.FetchMaxWait(200 * time.Millisecond)}

func TestParseURL(t *testing.T) {
	s, err := ParseURL("kafka://127.0.0.1:9092,b2:9093/events.v1?group=g&format=arrow&start=latest&client_id=me&instance_id=m-1&idle=5s")
	if err != nil {
		t.Fatal(err)
	}
	want := Source{Brokers: []string{"127.0.0.1:9092", "b2:9093"}, Topic: "events.v1", Group: "g", Format: Arrow, Start: Latest, ClientID: "me", InstanceID: "m-1", Idle: 5 * time.Second}
	if fmt.Sprint(s) != fmt.Sprint(want) {
		t.Fatalf("got %+v, want %+v", s, want)
	}
	for _, bad := range []string{
		"kafka://h:1/t", "kafka://h:1/t?group=g&format=csv", "kafka://h/t?group=g", "kafka://h:1/?group=g",
		"kafka://u:secret@h:1/t?group=g", "kafka://h:1/t?group=g&password=x", "kafka://h:1/t?group=g&idle=-1s",
		"kafka://h:1/a b?group=g", "kafka://h:99999/t?group=g", "kafka://h:1/t?group=g&group=h",
	} {
		_, err := ParseURL(bad)
		if !errors.Is(err, ErrURL) {
			t.Errorf("%s: got %v, want ErrURL", bad, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the error shows the password: %v", bad, err)
		}
	}
}

// TestJSONRowsCommitted reads JSON rows from 3 partitions, commits them, and
// finds nothing left for the group on a second reader; another group reads
// them all again.
func TestJSONRowsCommitted(t *testing.T) {
	c := cluster(t, "t", 3)
	const n = 3000
	produce(t, c.ListenAddrs(), "t", 3, jsonRows(0, n))
	r, err := Open(context.Background(), Config{Source: source(c, "t", "g", JSON, time.Second), X: []string{"id"}, Y: []string{"a", "b"}, BatchRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	if r.DimX() != 1 || r.DimY() != 2 {
		t.Fatalf("dims %d %d", r.DimX(), r.DimY())
	}
	ids := readAll(t, r)
	got := r.Committed()
	r.Close()
	checkIDs(t, ids, 0, n, false)
	if got[0]+got[1]+got[2] != n {
		t.Fatalf("committed %v, want %d messages in all", got, n)
	}
	// The group has read everything: a new member finds no message.
	if _, err := Open(context.Background(), Config{Source: source(c, "t", "g", JSON, time.Second), X: []string{"id"}, Y: []string{"a"}}); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("reopened: got %v, want no message", err)
	}
	// Within a partition rows come in offset order: ids i ≡ p (mod 3) rise.
	last := map[int]float64{0: -1, 1: -1, 2: -1}
	for _, id := range ids {
		p := int(id) % 3
		if id <= last[p] {
			t.Fatalf("partition %d: id %v after %v", p, id, last[p])
		}
		last[p] = id
	}
}

// checkIDs checks that ids holds every id in [from, to): exactly once
// unless dups.
func checkIDs(t *testing.T, ids []float64, from, to int, dups bool) {
	t.Helper()
	seen := make([]int, to-from)
	for _, id := range ids {
		i := int(id) - from
		if i < 0 || i >= len(seen) || float64(int(id)) != id {
			t.Fatalf("unexpected id %v", id)
		}
		seen[i]++
	}
	for i, k := range seen {
		if k == 0 || k > 1 && !dups {
			t.Fatalf("id %d read %d times", from+i, k)
		}
	}
}

// TestCommitFollowsEmission: only the rows said to be emitted are committed;
// a restart reads the rest, and the rows read twice are those not emitted.
func TestCommitFollowsEmission(t *testing.T) {
	c := cluster(t, "t", 1)
	const n = 1000
	produce(t, c.ListenAddrs(), "t", 1, jsonRows(0, n))
	cfg := Config{Source: source(c, "t", "g", JSON, time.Second), X: []string{"id"}, Y: []string{"a"}, BatchRows: 64}
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	for read < 700 && r.Next() {
		read += int64(r.Rows())
	}
	// A "window" of the first 250 rows was emitted; rows up to 700 were read.
	if err := r.Commit(context.Background(), 250); err != nil {
		t.Fatal(err)
	}
	if got := r.Committed()[0]; got != 250 {
		t.Fatalf("committed %d, want 250", got)
	}
	r.Close() // killed: the rows read after 250 were never emitted
	r, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := readAll(t, r)
	r.Close()
	checkIDs(t, ids, 250, n, false)
}

// TestLimit stops after Limit rows and commits no message beyond them.
func TestLimit(t *testing.T) {
	c := cluster(t, "t", 1)
	produce(t, c.ListenAddrs(), "t", 1, jsonRows(0, 500))
	cfg := Config{Source: source(c, "t", "g", JSON, 0), X: []string{"id"}, Y: []string{"a"}, Limit: 123, BatchRows: 50}
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := readAll(t, r)
	r.Close()
	if len(ids) != 123 || r.Committed()[0] != 123 {
		t.Fatalf("read %d rows, committed %v; want 123", len(ids), r.Committed())
	}
}

// TestMalformedJSON: a message that is not a JSON object, one with a
// missing column and one with a string value stop the reading with an error
// naming topic, partition and offset, or with SkipInvalid are counted and
// skipped (and committed: a restart does not read them again).
func TestMalformedJSON(t *testing.T) {
	c := cluster(t, "t", 1)
	msgs := jsonRows(0, 100)
	msgs[10] = []byte(`not json`)
	msgs[20] = []byte(`{"id":20,"b":1}`)
	msgs[30] = []byte(`{"id":30,"a":"0.5"}`)
	msgs[40] = []byte(`{"id":40,"a":1e999}`)
	produce(t, c.ListenAddrs(), "t", 1, msgs)
	cfg := Config{Source: source(c, "t", "g", JSON, time.Second), X: []string{"id"}, Y: []string{"a"}, MaxAbs: 1e150}
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	err = r.Err()
	r.Close()
	var me *MessageError
	if !errors.As(err, &me) || me.Partition != 0 || me.Offset != 10 || !errors.Is(err, decode.ErrFormat) ||
		!strings.Contains(err.Error(), "topic t, partition 0, offset 10: ") || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("got %v", err)
	}
	cfg.SkipInvalid = true
	r, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := readAll(t, r)
	r.Close()
	if len(ids) != 96 || r.Skipped() != 4 || r.Committed()[0] != 100 {
		t.Fatalf("read %d rows, skipped %d, committed %v; want 96, 4, 100", len(ids), r.Skipped(), r.Committed())
	}
	// The errors of the others, one by one.
	for off, want := range map[int64]string{20: `column "a" is missing`, 30: `column "a" is a string, not a number`, 40: `overflows float64`} {
		d := &jsonDecoder{cfg: &Config{X: []string{"id"}, Y: []string{"a"}}}
		rec := &kgo.Record{Value: msgs[off]}
		if err := d.init(rec); err != nil {
			t.Fatal(err)
		}
		var b decode.Block
		if _, err := d.decode(&b, rec); !errors.Is(err, decode.ErrInvalidValue) || !strings.Contains(err.Error(), want) {
			t.Errorf("offset %d: got %v, want %q", off, err, want)
		}
	}
}

// arrowMessage returns one Arrow IPC stream of rows ids [from, from+n): id
// (int64), a (float64), emb (fixed-size list of 2 float32).
func arrowMessage(t *testing.T, from, n int, nullAt int) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "a", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
		{Name: "emb", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32)},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	emb := b.Field(2).(*array.FixedSizeListBuilder)
	ev := emb.ValueBuilder().(*array.Float32Builder)
	for i := from; i < from+n; i++ {
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		if i == nullAt {
			b.Field(1).(*array.Float64Builder).AppendNull()
		} else {
			b.Field(1).(*array.Float64Builder).Append(math.Cos(float64(i)))
		}
		emb.Append(true)
		ev.Append(float32(i % 5))
		ev.Append(float32(i % 3))
	}
	rec := b.NewRecord()
	defer rec.Release()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestArrowMessages reads one IPC stream per message, with a glob and a
// list column, a null value (an invalid row) and a damaged message.
func TestArrowMessages(t *testing.T) {
	c := cluster(t, "t", 2)
	var msgs [][]byte
	for i := 0; i < 40; i++ {
		null := -1
		if i == 7 {
			null = 7*50 + 3
		}
		msgs = append(msgs, arrowMessage(t, i*50, 50, null))
	}
	good := msgs[13]
	msgs[13] = good[:len(good)/2] // cut short (partition 1, offset 6: after the null)
	produce(t, c.ListenAddrs(), "t", 2, msgs)
	cfg := Config{Source: source(c, "t", "g", Arrow, time.Second), X: []string{"id"}, Y: []string{"a", "e*"}}
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if sel := r.Columns(); fmt.Sprint(sel.X.Labels(), sel.Y.Labels()) != "[id] [a emb]" || r.DimY() != 3 {
		t.Fatalf("columns %v %v, dimY %d", sel.X.Labels(), sel.Y.Labels(), r.DimY())
	}
	for r.Next() {
	}
	err = r.Err()
	r.Close()
	var me *MessageError
	if !errors.As(err, &me) || !strings.Contains(err.Error(), "partition 1, offset 3: ") || !errors.Is(err, decode.ErrInvalidValue) ||
		!strings.Contains(err.Error(), `column "a", row 3 of the message: null`) {
		t.Fatalf("got %v, want the null of message 7 (partition 1, offset 3)", err)
	}
	cfg.SkipInvalid = true
	r, err = Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []float64
	var ys []float64
	for r.Next() {
		ids = append(ids, r.X()...)
		ys = append(ys, r.Y()...)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// 40 × 50 rows, less the null row and the 50 rows of the cut message
	// (one skipped message).
	if len(ids) != 2000-51 || r.Skipped() != 2 {
		t.Fatalf("read %d rows, skipped %d; want %d and 2", len(ids), r.Skipped(), 2000-51)
	}
	for i, id := range ids {
		if y := ys[3*i : 3*i+3]; y[0] != math.Cos(id) || y[1] != float64(int(id)%5) || y[2] != float64(int(id)%3) {
			t.Fatalf("row of id %v: %v", id, y)
		}
	}
}

// TestRebalanceLosesNoRow: a second member joins the group half-way and the
// first leaves later; every row is read, and the rows read twice are at most
// those of the revoked partitions not yet emitted.
func TestRebalanceLosesNoRow(t *testing.T) {
	c := cluster(t, "t", 4)
	const n = 20000
	// Small batches and small fetches: a member reads from all its
	// partitions at once, so that a revoked one has rows in its open window.
	produce(t, c.ListenAddrs(), "t", 4, jsonRows(0, n), kgo.ProducerBatchMaxBytes(2<<10))
	opts := append([]kgo.Opt{kgo.FetchMaxPartitionBytes(4 << 10)}, fastGroup...)
	cfg := Config{Source: source(c, "t", "g", JSON, 3*time.Second), X: []string{"id"}, Y: []string{"a"}, BatchRows: 100, ClientOpts: opts}
	a, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// "Windows" of 1000 rows: commit when one closes.
	const window = 1000
	type member struct {
		r        *Reader
		ids      []float64
		inWindow int64
	}
	step := func(m *member) bool {
		if !m.r.Next() {
			return false
		}
		m.ids = append(m.ids, m.r.X()...)
		if rows := m.r.RowsRead(); rows/window > (rows-int64(m.r.Rows()))/window {
			if err := m.r.Commit(context.Background(), rows/window*window); err != nil {
				t.Log("commit:", err) // a commit across a rebalance may fail: rows are read again
			}
		}
		return true
	}

	ma := &member{r: a}
	for len(ma.ids) < 5000 && step(ma) {
	}
	var bRows atomic.Int64
	b, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	mb := &member{r: b}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for step(mb) {
			bRows.Store(int64(len(mb.ids)))
		}
	}()
	// a goes on, slowly, until b has been given partitions and read from
	// them, then stops after its windows so far (as on SIGTERM: the last
	// window emitted and committed, then it leaves the group).
	deadline := time.Now().Add(20 * time.Second)
	for (len(ma.ids) < 9000 || bRows.Load() < 1000) && time.Now().Before(deadline) && step(ma) {
		time.Sleep(5 * time.Millisecond)
	}
	both := bRows.Load()
	if err := a.Commit(context.Background(), a.RowsRead()); err != nil {
		t.Log("final commit:", err)
	}
	a.Close()
	wg.Wait()
	if err := b.Err(); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(context.Background(), b.RowsRead()); err != nil {
		t.Fatal(err)
	}
	b.Close()
	all := append(append([]float64(nil), ma.ids...), mb.ids...)
	checkIDs(t, all, 0, n, true)
	t.Logf("member a read %d rows, b %d; %d read twice", len(ma.ids), len(mb.ids), len(all)-n)
	if len(all)-n >= window {
		t.Fatalf("%d rows read twice: more than a window (%d)", len(all)-n, window)
	}
	if both < 1000 {
		t.Fatalf("the second member read %d rows while the first was in the group: no rebalance happened", both)
	}
	// Everything is committed: a new member of the group finds nothing.
	if _, err := Open(context.Background(), Config{Source: source(c, "t", "g", JSON, time.Second), X: []string{"id"}, Y: []string{"a"}}); !errors.Is(err, ErrNoMessage) {
		t.Fatalf("after both: got %v, want no message left", err)
	}
}

// TestBrokerGoesAndComesBack: the broker stops half-way through the topic
// and starts again on the same port with its data (kfake persists to a
// directory); the reader waits and goes on, and reads every row once.
func TestBrokerGoesAndComesBack(t *testing.T) {
	dir := t.TempDir()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "t"), kfake.DataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	addr := c.ListenAddrs()[0]
	const n = 4000
	produce(t, c.ListenAddrs(), "t", 1, jsonRows(0, n/2))
	var warnings []string
	var wmu sync.Mutex
	cfg := Config{Source: Source{Brokers: []string{addr}, Topic: "t", Group: "g", ClientID: "test", Idle: 4 * time.Second},
		X: []string{"id"}, Y: []string{"a"}, BatchRows: 100, ClientOpts: fastGroup,
		Warn: func(s string) { wmu.Lock(); warnings = append(warnings, s); wmu.Unlock() }}
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ids []float64
	for len(ids) < n/4 && r.Next() {
		ids = append(ids, r.X()...)
	}
	if err := r.Commit(context.Background(), int64(len(ids))); err != nil {
		t.Fatal(err)
	}
	c.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for r.Next() {
			ids = append(ids, r.X()...)
			_ = r.Commit(context.Background(), r.RowsRead()) // may fail while the broker is away
		}
	}()
	time.Sleep(1500 * time.Millisecond)
	_, port, _ := strings.Cut(addr, ":")
	var p int
	fmt.Sscan(port, &p)
	c2, err := kfake.NewCluster(kfake.Ports(p), kfake.DataDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	produce(t, c2.ListenAddrs(), "t", 1, jsonRows(n/2, n/2))
	<-done
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.Commit(context.Background(), r.RowsRead()); err != nil {
		t.Fatal(err)
	}
	r.Close()
	checkIDs(t, ids, 0, n, false)
	t.Logf("warnings while the broker was away: %q", warnings)
}

// TestSASLSecretNeverShown: a wrong password fails with a message that does
// not show it; the right one reads.
func TestSASLSecretNeverShown(t *testing.T) {
	const pass = "s3cret-Pa55word-xyzzy"
	c := cluster(t, "t", 1, kfake.EnableSASL(), kfake.Superuser("PLAIN", "dime", pass))
	produce(t, c.ListenAddrs(), "t", 1, jsonRows(0, 10), kgo.SASL(plainAuth("dime", pass)))
	env := map[string]string{EnvSASLMechanism: "PLAIN", EnvSASLUsername: "dime", EnvSASLPassword: "wrong-" + pass}
	var warnings []string
	cfg := Config{Source: source(c, "t", "g", JSON, 3*time.Second), X: []string{"id"}, Y: []string{"a"},
		Getenv: func(k string) string { return env[k] }, Warn: func(s string) { warnings = append(warnings, s) }}
	// kfake closes the connection on a failed authentication (a broker
	// answers SASL_AUTHENTICATION_FAILED, an error of Open): the client
	// retries until the context ends.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := Open(ctx, cfg)
	if err == nil {
		t.Fatal("a wrong password read the topic")
	}
	for _, s := range append(warnings, err.Error()) {
		if strings.Contains(s, pass) {
			t.Fatalf("the password is shown: %s", s)
		}
	}
	t.Logf("wrong password: %v; warnings %q", err, warnings)
	env[EnvSASLPassword] = pass
	r, err := Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ids := readAll(t, r)
	r.Close()
	checkIDs(t, ids, 0, 10, false)
	// Bad settings name the variable, never the value.
	env[EnvSASLMechanism] = "OAUTH-" + pass
	if _, err := Auth(func(k string) string { return env[k] }); !errors.Is(err, ErrAuth) || strings.Contains(err.Error(), pass) {
		t.Fatalf("got %v", err)
	}
}

func plainAuth(user, pass string) sasl.Mechanism {
	return plain.Auth{User: user, Pass: pass}.AsMechanism()
}

// TestJSONTimes reads a time column in the given unit.
func TestJSONTimes(t *testing.T) {
	cfg := &Config{X: []string{"a"}, Y: []string{"b"}, TimeColumn: "ts", TimeUnit: arrow.Millisecond}
	d := &jsonDecoder{cfg: cfg}
	rec := &kgo.Record{Value: []byte(`{"ts": 1764115200123, "a": 1, "b": 2}`)}
	if err := d.init(rec); err != nil {
		t.Fatal(err)
	}
	var b decode.Block
	if _, err := d.decode(&b, rec); err != nil {
		t.Fatal(err)
	}
	if b.Rows != 1 || len(b.Times) != 1 || b.Times[0] != 1764115200123*int64(time.Millisecond) {
		t.Fatalf("got %+v", b)
	}
	rec.Value = []byte(`{"ts": "2026-11-26", "a": 1, "b": 2}`)
	if _, err := d.decode(&b, rec); !errors.Is(err, decode.ErrInvalidValue) {
		t.Fatalf("a string time: got %v", err)
	}
}

// TestNaturalOrder: JSON keys expand in natural order, whatever the order
// of the first message.
func TestNaturalOrder(t *testing.T) {
	d := &jsonDecoder{cfg: &Config{X: []string{"emb_*"}, Y: []string{"y"}}}
	if err := d.init(&kgo.Record{Value: []byte(`{"emb_10":0,"y":1,"emb_2":0,"emb_1":0,"emb_01":0}`)}); err != nil {
		t.Fatal(err)
	}
	if x := d.columns().X.Labels(); fmt.Sprint(x) != "[emb_1 emb_01 emb_2 emb_10]" {
		t.Fatalf("got %v", x)
	}
}
