package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// kafkaRows are the rows of the Kafka tests: x0, x1 and y0 = x0·x1 + noise,
// seeded.
type kafkaRows struct{ x0, x1, y0 []float64 }

func newKafkaRows(n int) kafkaRows {
	rng := rand.New(rand.NewPCG(27, 4))
	r := kafkaRows{make([]float64, n), make([]float64, n), make([]float64, n)}
	for i := range n {
		r.x0[i], r.x1[i] = rng.NormFloat64(), rng.NormFloat64()
		r.y0[i] = r.x0[i]*r.x1[i] + 0.5*rng.NormFloat64()
	}
	return r
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// csv writes rows [from, to) as a CSV file.
func (r kafkaRows) csv(t *testing.T, path string, from, to int) {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("x0,x1,y0\n")
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%s,%s,%s\n", ftoa(r.x0[i]), ftoa(r.x1[i]), ftoa(r.y0[i]))
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// json returns rows [from, to) as JSON messages, with a field that is not
// selected and the fields in another order than the file's.
func (r kafkaRows) json(from, to int) [][]byte {
	out := make([][]byte, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, fmt.Appendf(nil, `{"id":%d,"y0":%s,"x1":%s,"x0":%s,"source":"sensor-%d"}`, i, ftoa(r.y0[i]), ftoa(r.x1[i]), ftoa(r.x0[i]), i%3))
	}
	return out
}

// arrow returns rows [from, to) as Arrow IPC streams of per rows each.
func (r kafkaRows) arrow(t *testing.T, from, to, per int) [][]byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{{Name: "x0", Type: arrow.PrimitiveTypes.Float64},
		{Name: "x1", Type: arrow.PrimitiveTypes.Float64}, {Name: "y0", Type: arrow.PrimitiveTypes.Float64}}, nil)
	var out [][]byte
	for lo := from; lo < to; lo += per {
		hi := min(lo+per, to)
		b := array.NewRecordBuilder(mem, schema)
		b.Field(0).(*array.Float64Builder).AppendValues(r.x0[lo:hi], nil)
		b.Field(1).(*array.Float64Builder).AppendValues(r.x1[lo:hi], nil)
		b.Field(2).(*array.Float64Builder).AppendValues(r.y0[lo:hi], nil)
		rec := b.NewRecord()
		var buf bytes.Buffer
		w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
		if err := w.Write(rec); err != nil {
			t.Fatal(err)
		}
		w.Close()
		rec.Release()
		b.Release()
		out = append(out, buf.Bytes())
	}
	return out
}

// startKafka starts an in-process Kafka (franz-go's kfake: the real
// protocol, no broker) with the topic, of one partition unless parts says.
func startKafka(t *testing.T, topic string, parts int32, opts ...kfake.Opt) *kfake.Cluster {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(parts, topic)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// produceTo writes the messages to partition 0 of the topic, in order.
func produceTo(t *testing.T, c *kfake.Cluster, topic string, values [][]byte, opts ...kgo.Opt) {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.ListenAddrs()...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, v := range values {
		wg.Add(1)
		cl.Produce(context.Background(), &kgo.Record{Value: v}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
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

// kafkaURL is the URL of a topic of c.
func kafkaURL(c *kfake.Cluster, topic, params string) string {
	return "kafka://" + c.ListenAddrs()[0] + "/" + topic + "?" + params
}

// kafkaWindows parses monitor's JSON lines, leaving out the positions
// (window, start_row, end_row), which count from the start of a run.
func kafkaWindows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ws []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var w map[string]any
		if err := json.Unmarshal([]byte(line), &w); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		delete(w, "window")
		delete(w, "start_row")
		delete(w, "end_row")
		ws = append(ws, w)
	}
	return ws
}

// sameWindows fails unless got and want are the same windows, every number
// the same bits (JSON's shortest round-trip form).
func sameWindows(t *testing.T, what string, got, want []map[string]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d windows, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: window %d differs:\n got %v\nwant %v", what, i, got[i], want[i])
		}
	}
}

func rowsOf(ws []map[string]any) (rows, skipped int) {
	for _, w := range ws {
		rows += int(w["rows"].(float64))
		skipped += int(w["skipped_rows"].(float64))
	}
	return rows, skipped
}

const kafkaN, kafkaWindow = 200000, 20000

// kafkaArgs are the monitor flags of the tests: small feature maps keep
// them cheap; the Kafka path does not depend on D.
var kafkaArgs = []string{"--x", "x*", "--y", "y0", "--window-rows", strconv.Itoa(kafkaWindow), "--json"}

// kafkaEst are the estimator flags of the runs without --like: small
// feature maps keep the tests cheap (the Kafka path does not depend on D),
// and scopes of a fixed size (--shuffle-buffer, a divisor of the window)
// make the file's windows independent of its blocks as well, so that file
// and topic read the same scopes.
var kafkaEst = []string{"--features", "64", "--shuffle-buffer", "5000"}

// TestKafkaMonitorSameAsFile: 200,000 rows as JSON messages (and as Arrow
// IPC streams of 1,000 rows) give the same windows as the same rows from a
// file, --limit stops after them and commits, and the group then has
// nothing left to read.
func TestKafkaMonitorSameAsFile(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 rows through the binary: not with -short (the race run)")
	}
	dir := t.TempDir()
	rows := newKafkaRows(kafkaN)
	file := filepath.Join(dir, "rows.csv")
	rows.csv(t, file, 0, kafkaN)
	c := startKafka(t, "events", 1)
	produceTo(t, c, "events", rows.json(0, kafkaN))
	c2 := startKafka(t, "batches", 1)
	produceTo(t, c2, "batches", rows.arrow(t, 0, kafkaN, 1000))

	args := append([]string{"monitor", file}, append(kafkaEst, kafkaArgs...)...)
	code, out, errs := runBinary(t, nil, args...)
	if code != 0 {
		t.Fatalf("file: exit %d: %s", code, errs)
	}
	want := kafkaWindows(t, out)
	if len(want) != kafkaN/kafkaWindow {
		t.Fatalf("file: %d windows", len(want))
	}

	start := time.Now()
	args = append([]string{"monitor", kafkaURL(c, "events", "group=g&format=json"), "--limit", strconv.Itoa(kafkaN)}, append(kafkaEst, kafkaArgs...)...)
	code, out, errs = runBinary(t, nil, args...)
	if code != 0 {
		t.Fatalf("kafka json: exit %d: %s", code, errs)
	}
	t.Logf("json: %d rows in %v", kafkaN, time.Since(start))
	sameWindows(t, "kafka json", kafkaWindows(t, out), want)

	args = append([]string{"monitor", kafkaURL(c2, "batches", "group=g&format=arrow&idle=2s")}, append(kafkaEst, kafkaArgs...)...)
	code, out, errs = runBinary(t, nil, args...)
	if code != 0 {
		t.Fatalf("kafka arrow: exit %d: %s", code, errs)
	}
	sameWindows(t, "kafka arrow", kafkaWindows(t, out), want)

	// Everything was committed: the group finds nothing more.
	args = append([]string{"monitor", kafkaURL(c, "events", "group=g&format=json&idle=1s")}, append(kafkaEst, kafkaArgs...)...)
	code, out, errs = runBinary(t, nil, args...)
	if code != 0 || out != "" || !strings.Contains(errs, "no message") {
		t.Fatalf("after --limit: exit %d, stdout %q, stderr %q; want nothing left", code, out, errs)
	}
}

// startKafkaMonitor starts dime and returns a channel of its stdout lines.
func startKafkaMonitor(t *testing.T, env []string, args ...string) (*exec.Cmd, <-chan string, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(dimeBinary, args...)
	cmd.Env = append(os.Environ(), env...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines, &errb
}

// TestKafkaMonitorKilledResumes: a monitor killed (SIGKILL) after a few
// windows is restarted; the restart resumes from the last committed window:
// it reads again at most one window's rows (those of the window printed but
// maybe not committed when the kill came), loses none, and its windows are
// the file's (both runs take their settings from one state with --like).
func TestKafkaMonitorKilledResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("200,000 rows through the binary: not with -short (the race run)")
	}
	dir := t.TempDir()
	rows := newKafkaRows(kafkaN)
	file := filepath.Join(dir, "rows.csv")
	rows.csv(t, file, 0, kafkaN)
	ref := filepath.Join(dir, "ref.state")
	if code, _, errs := runBinary(t, nil, "score", file, "--x", "x*", "--y", "y0", "--features", "64", "--shuffle-buffer", "5000", "--limit", "5000", "--save-state", ref); code != 0 {
		t.Fatalf("score: exit %d: %s", code, errs)
	}
	c := startKafka(t, "events", 1)
	produceTo(t, c, "events", rows.json(0, kafkaN))

	code, out, errs := runBinary(t, nil, append([]string{"monitor", file, "--like", ref}, kafkaArgs...)...)
	if code != 0 {
		t.Fatalf("file: exit %d: %s", code, errs)
	}
	want := kafkaWindows(t, out)

	// A static member (instance_id): the restart takes the partition back
	// at once, rather than after the killed member's session timeout.
	url := kafkaURL(c, "events", "group=g&format=json&instance_id=monitor-1")
	cmd, lines, stderr := startKafkaMonitor(t, nil, append([]string{"monitor", url, "--like", ref}, kafkaArgs...)...)
	var first []string
	for line := range lines {
		first = append(first, line)
		if len(first) == 3 {
			cmd.Process.Signal(syscall.SIGKILL)
		}
	}
	cmd.Wait()
	k := len(first)
	if k < 3 {
		t.Fatalf("the first run printed %d windows before it ended: %s", k, stderr)
	}
	sameWindows(t, "before the kill", kafkaWindows(t, strings.Join(first, "\n")), want[:k])

	code, out, errs = runBinary(t, nil, append([]string{"monitor", url + "&idle=2s", "--like", ref}, kafkaArgs...)...)
	if code != 0 {
		t.Fatalf("restart: exit %d: %s", code, errs)
	}
	got := kafkaWindows(t, out)
	read, _ := rowsOf(got)
	resumed := kafkaN - read // the committed offset the restart began at
	t.Logf("killed after %d windows printed (%d rows); the restart began at row %d and read %d rows", k, k*kafkaWindow, resumed, read)
	if resumed != k*kafkaWindow && resumed != (k-1)*kafkaWindow {
		t.Fatalf("the restart began at row %d: want %d (the last window committed) or %d (killed before its commit)", resumed, k*kafkaWindow, (k-1)*kafkaWindow)
	}
	sameWindows(t, "after the restart", got, want[resumed/kafkaWindow:])
}

// TestKafkaMonitorSignal: SIGTERM reports the window in progress, commits
// it, saves --save-state and exits 143; a restart with --like the saved
// state reads only the new rows, none twice.
func TestKafkaMonitorSignal(t *testing.T) {
	dir := t.TempDir()
	rows := newKafkaRows(60000)
	c := startKafka(t, "events", 1)
	produceTo(t, c, "events", rows.json(0, 50000))
	state := filepath.Join(dir, "last.state")
	url := kafkaURL(c, "events", "group=g&format=json")
	cmd, lines, stderr := startKafkaMonitor(t, nil, append([]string{"monitor", url, "--save-state", state}, append(kafkaEst, kafkaArgs...)...)...)
	var got []string
	for line := range lines {
		got = append(got, line)
		if len(got) == 2 {
			// The 10,000 rows of the third window are read, or being read.
			time.Sleep(500 * time.Millisecond)
			cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 143 {
		t.Fatalf("exit %v, want 143: %s", err, stderr)
	}
	ws := kafkaWindows(t, strings.Join(got, "\n"))
	n, _ := rowsOf(ws)
	if len(ws) != 3 || ws[2]["partial"] != true || n != 50000 {
		t.Fatalf("%d windows of %d rows (last partial: %v), want 3 of 50000: %s", len(ws), n, ws[len(ws)-1]["partial"], stderr)
	}
	produceTo(t, c, "events", rows.json(50000, 60000))
	code, out, errs := runBinary(t, nil, append([]string{"monitor", url + "&idle=2s", "--like", state}, kafkaArgs...)...)
	if code != 0 {
		t.Fatalf("restart: exit %d: %s", code, errs)
	}
	ws = kafkaWindows(t, out)
	if n, _ := rowsOf(ws); n != 10000 || len(ws) != 1 {
		t.Fatalf("restart: %d windows of %d rows, want the 10000 new rows in one", len(ws), n)
	}
}

// TestKafkaMonitorMalformed: a message that is not a JSON object stops
// monitor with exit 2 and one line naming topic, partition and offset (the
// windows before it printed); with --skip-invalid it is counted and skipped.
func TestKafkaMonitorMalformed(t *testing.T) {
	rows := newKafkaRows(3000)
	msgs := rows.json(0, 3000)
	msgs[2500] = []byte(`{"x0": 1, "x1": "2", "y0": 3}`)
	c := startKafka(t, "events", 1)
	produceTo(t, c, "events", msgs)
	args := []string{"--x", "x*", "--y", "y0", "--window-rows", "1000", "--features", "32", "--json"}
	code, out, errs := runBinary(t, nil, append([]string{"monitor", kafkaURL(c, "events", "group=a&format=json&idle=2s")}, args...)...)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 ||
		!strings.Contains(errs, "topic events, partition 0, offset 2500: ") || !strings.Contains(errs, `column "x1" is a string, not a number`) {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if ws := kafkaWindows(t, out); len(ws) != 3 || ws[2]["partial"] != true {
		t.Fatalf("windows before the error: %v", ws)
	}
	code, out, errs = runBinary(t, nil, append([]string{"monitor", kafkaURL(c, "events", "group=b&format=json&idle=2s"), "--skip-invalid"}, args...)...)
	if code != 0 {
		t.Fatalf("--skip-invalid: exit %d: %s", code, errs)
	}
	if n, skipped := rowsOf(kafkaWindows(t, out)); n != 2999 || skipped != 1 {
		t.Fatalf("--skip-invalid: %d rows, %d skipped; want 2999 and 1", n, skipped)
	}
}

// TestKafkaMonitorNoSecret: a SASL password from the environment appears
// in no output, whether the broker takes it or not.
func TestKafkaMonitorNoSecret(t *testing.T) {
	const pass = "Tr0ub4dor-and-3-kafka-secret"
	c := startKafka(t, "events", 1, kfake.EnableSASL(), kfake.Superuser("PLAIN", "dime", pass))
	produceTo(t, c, "events", newKafkaRows(100).json(0, 100), kgo.SASL(plain.Auth{User: "dime", Pass: pass}.AsMechanism()))
	args := []string{"monitor", kafkaURL(c, "events", "group=g&format=json&idle=2s"), "--x", "x*", "--y", "y0", "--window-rows", "50", "--features", "32", "--json"}
	for _, p := range []string{"wrong-" + pass, pass} {
		env := []string{"DIME_KAFKA_SASL_MECHANISM=PLAIN", "DIME_KAFKA_SASL_USERNAME=dime", "DIME_KAFKA_SASL_PASSWORD=" + p}
		cmd, lines, stderr := startKafkaMonitor(t, env, args...)
		if p != pass {
			// kfake closes the connection on a wrong password (a broker
			// answers SASL_AUTHENTICATION_FAILED): the client retries
			// until stopped.
			time.AfterFunc(3*time.Second, func() { cmd.Process.Signal(syscall.SIGTERM) })
		}
		var out []string
		for l := range lines {
			out = append(out, l)
		}
		err := cmd.Wait()
		all := strings.Join(out, "\n") + stderr.String()
		if strings.Contains(all, pass) {
			t.Fatalf("the password is shown: %s", all)
		}
		if p == pass && (err != nil || len(out) != 2) {
			t.Fatalf("right password: %v, %d windows: %s", err, len(out), stderr)
		}
		t.Logf("password %s…: exit %v, %d windows, stderr %q", p[:6], err, len(out), stderr)
	}
	// The URL takes no credentials.
	code, _, errs := runBinary(t, nil, "monitor", "kafka://dime:"+pass+"@127.0.0.1:1/t?group=g", "--x", "a", "--y", "b", "--window-rows", "5")
	if code != 2 || strings.Contains(errs, pass) {
		t.Fatalf("credentials in the URL: exit %d, %q", code, errs)
	}
}
