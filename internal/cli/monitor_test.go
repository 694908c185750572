package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/tablewriter"
	"io"
	"math"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/dime-project/dime/synth"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ipcStream returns n rows of spec (columns x0, x1, y0, y1) as an Arrow IPC
// stream in record batches of batch rows.
func ipcStream(t *testing.T, spec synth.Spec, n, batch int) []byte {
	t.Helper()
	var buf bytes.Buffer
	writeStreamTo(t, &buf, spec, n, batch)
	return buf.Bytes()
}

func writeStreamTo(t *testing.T, w io.Writer, spec synth.Spec, n, batch int) {
	t.Helper()
	x, y, _ := synth.Generate(spec, n)
	tw, err := tablewriter.New(w, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: batch})
	if err != nil {
		t.Fatal(err)
	}
	xd, yd := x.RawMatrix().Data, y.RawMatrix().Data
	for i := 0; i < n; i++ {
		tw.Write([]float64{xd[2*i], xd[2*i+1], yd[2*i], yd[2*i+1]}, 1)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
}

// writeSynth writes n rows of spec (two columns per view) to tw.
func writeSynth(t *testing.T, tw *tablewriter.Writer, spec synth.Spec, n int) {
	t.Helper()
	x, y, err := synth.Generate(spec, n)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := tw.Write([]float64{x.At(i, 0), x.At(i, 1), y.At(i, 0), y.At(i, 1)}, 1); err != nil {
			t.Fatal(err)
		}
	}
}

func windowLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ws []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			ws = append(ws, decodeJSON(t, l))
		}
	}
	return ws
}

var monitorFlags = []string{"--x", "x0,x1", "--y", "y0,y1", "--features", "32"}

func TestMonitorWindowsOnStdin(t *testing.T) {
	in := ipcStream(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}, 2500, 300)
	code, out, errs := runBinary(t, in, append([]string{"monitor", "-", "--window-rows", "1000", "--alert-p", "0.01", "--standardize=false"}, monitorFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	ws := windowLines(t, out)
	if len(ws) != 3 {
		t.Fatalf("%d windows, want 3:\n%s", len(ws), out)
	}
	for i, w := range ws {
		for _, f := range []string{"window", "start_row", "end_row", "rows", "entropy_joint", "mutual_information", "dime", "dime_stderr", "dime_analytic", "dime_normalized", "p_value", "alert"} {
			if _, ok := w[f]; !ok {
				t.Errorf("window %d: no field %q", i, f)
			}
		}
		if num(t, w, "window") != float64(i) || num(t, w, "start_row") != float64(1000*i) || num(t, w, "end_row") != math.Min(float64(1000*(i+1)), 2500) {
			t.Errorf("window %d: %v", i, w)
		}
		if w["alert"] != true || w["partial"] != (i == 2) {
			t.Errorf("window %d: sine data should alert at p < 0.01: %v", i, w)
		}
	}
}

// TestMonitorMetrics scrapes the Prometheus endpoint over loopback while the
// monitor runs and finds the values of the last closed window.
func TestMonitorMetrics(t *testing.T) {
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	stderrR, stderrW := io.Pipe()
	done := make(chan int)
	go func() {
		code := Main(append([]string{"monitor", "-", "--window-rows", "1000", "--listen", "127.0.0.1:0"}, monitorFlags...), stdinR, stdoutW, stderrW)
		stdoutW.Close()
		stderrW.Close()
		done <- code
	}()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderrR)
		for sc.Scan() {
			if m := regexp.MustCompile(`http://(\S+)/metrics`).FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	lines := make(chan string, 10)
	go func() {
		sc := bufio.NewScanner(stdoutR)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Write two windows' worth of rows and keep the stream open.
	tw, err := tablewriter.New(stdinW, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 500})
	if err != nil {
		t.Fatal(err)
	}
	writeSynth(t, tw, synth.Spec{Kind: synth.Circle, Dim: 2, Noise: 0.1, Seed: 2}, 2000)
	var last map[string]any
	for i := 0; i < 2; i++ {
		select {
		case l := <-lines:
			last = decodeJSON(t, l)
		case <-time.After(30 * time.Second):
			t.Fatal("no window line")
		}
	}
	var url string
	select {
	case a := <-addr:
		url = "http://" + a + "/metrics"
	case <-time.After(5 * time.Second):
		t.Fatal("no metrics address on stderr")
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("metrics not on loopback: %s", url)
	}
	base := strings.TrimSuffix(url, "/metrics")
	if code, body := httpGet(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz during the run: %d %q", code, body)
	}
	fams := scrape(t, base)
	metric := func(name string) float64 { return metricValue(t, fams, name, "x0,x1", "y0,y1") }
	for name, field := range map[string]string{"dime_dime_nats": "dime", "dime_mutual_information_nats": "mutual_information",
		"dime_entropy_joint_nats": "entropy_joint", "dime_p_value": "p_value", "dime_dime_analytic_nats": "dime_analytic",
		"dime_dime_normalized": "dime_normalized"} {
		// The text format writes the shortest exact form of a float, and so
		// does JSON: the values agree bit for bit.
		if got, want := metric(name), num(t, last, field); got != want {
			t.Errorf("%s = %v, last window's %s = %v", name, got, field, want)
		}
	}
	if metric("dime_rows_total") != 2000 || metric("dime_window") != 1 || metric("dime_windows_total") != 2 {
		t.Errorf("counters: rows %v window %v windows %v", metric("dime_rows_total"), metric("dime_window"), metric("dime_windows_total"))
	}
	if ts := metric("dime_last_window_end_timestamp_seconds"); math.Abs(ts-float64(time.Now().Unix())) > 60 {
		t.Errorf("last window end %v, now %v", ts, time.Now().Unix())
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no Go collector")
	}
	tw.Close()
	stdinW.Close()
	if code := <-done; code != 0 {
		t.Errorf("exit %d", code)
	}
}

// TestMonitorBadStreams checks a stream cut off mid-batch, garbage on stdin
// and a time column going backwards: each a clear error (exit 2), with the
// windows before it intact; late rows are skipped with --skip-invalid.
func TestMonitorBadStreams(t *testing.T) {
	// Six batches of 500 rows, cut inside the sixth: windows [0, 1000) and
	// [1000, 2000) close, then rows [2000, 2500) form a partial window
	// reported before the error.
	full := ipcStream(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 3}, 3000, 500)
	cut := full[:len(full)-len(full)/12]
	code, out, errs := runBinary(t, cut, append([]string{"monitor", "-", "--window-rows", "1000"}, monitorFlags...)...)
	ws := windowLines(t, out)
	if code != 2 || len(ws) != 3 || !strings.Contains(errs, "stdin") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("cut stream: exit %d, %d windows, stderr %q", code, len(ws), errs)
	}
	if ws[2]["partial"] != true || num(t, ws[2], "rows") != 500 || num(t, ws[1], "end_row") != 2000 {
		t.Errorf("cut stream: windows %v", ws)
	}
	code, out, errs = runBinary(t, []byte("garbage that is not an Arrow stream at all"), append([]string{"monitor", "-", "--window-rows", "1000"}, monitorFlags...)...)
	if code != 2 || out != "" || !strings.HasPrefix(errs, "dime: ") {
		t.Errorf("garbage: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	// A time column going backwards across a window boundary.
	ts := timedStream(t, []int64{0, 10, 20, 70, 80, 30, 90, 130, 140})
	args := []string{"monitor", "-", "--x", "x", "--y", "y", "--features", "8", "--time-col", "ts", "--window", "1m"}
	code, out, errs = runBinary(t, ts, args...)
	ws = windowLines(t, out)
	if code != 2 || !strings.Contains(errs, "backwards") || len(ws) < 1 || num(t, ws[0], "rows") != 3 {
		t.Errorf("time backwards: exit %d, windows %v, stderr %q", code, ws, errs)
	}
	code, out, errs = runBinary(t, ts, append(args, "--skip-invalid")...)
	ws = windowLines(t, out)
	if code != 0 || len(ws) != 3 || num(t, ws[1], "skipped_rows") != 1 || ws[0]["start_time"] != "1970-01-01T00:00:00Z" || ws[1]["end_time"] != "1970-01-01T00:02:00Z" {
		t.Errorf("time backwards, skipped: exit %d %s, windows %v", code, errs, ws)
	}
}

// timedStream is an IPC stream with int64 epoch seconds "ts" and columns x, y.
func timedStream(t *testing.T, secs []int64) []byte {
	t.Helper()
	mem := memory.NewGoAllocator()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: arrow.PrimitiveTypes.Int64},
		{Name: "x", Type: arrow.PrimitiveTypes.Float64},
		{Name: "y", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	b := array.NewRecordBuilder(mem, schema)
	for i, s := range secs {
		b.Field(0).(*array.Int64Builder).Append(s)
		b.Field(1).(*array.Float64Builder).Append(math.Sin(float64(i)))
		b.Field(2).(*array.Float64Builder).Append(math.Cos(float64(3 * i)))
	}
	rec := b.NewRecord()
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	rec.Release()
	b.Release()
	w.Close()
	return buf.Bytes()
}

// TestMonitorSignalFlushes sends SIGINT while the monitor waits on stdin:
// it reports the window in progress and exits 130, the input unfinished.
func TestMonitorSignalFlushes(t *testing.T) {
	cmd := exec.Command(dimeBinary, append([]string{"monitor", "-", "--window-rows", "1000"}, monitorFlags...)...)
	stdin, _ := cmd.StdinPipe()
	var out, errb syncBuffer // read here while the command writes
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tw, _ := tablewriter.New(stdin, dataset.IPCStream, []string{"x0", "x1", "y0", "y1"}, tablewriter.Options{BatchRows: 250})
	writeSynth(t, tw, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 4}, 1500)
	// 1500 rows written in batches of 250: wait for the first window's line.
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), "\n") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // let the second window's 500 rows arrive
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ws := windowLines(t, out.String())
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || len(ws) != 2 || ws[1]["partial"] != true || num(t, ws[1], "rows") != 500 {
		t.Errorf("SIGINT: %v, stderr %q, windows %v", err, errb.String(), ws)
	}
	stdin.Close()
}

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// httpGet gets a URL with a real client.
func httpGet(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// scrape gets base/metrics and parses the exposition with the Prometheus
// text parser.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// metricValue returns the value of the one series of a dime metric, with
// the views' labels.
func metricValue(t *testing.T, fams map[string]*dto.MetricFamily, name, x, y string) float64 {
	t.Helper()
	f, ok := fams[name]
	if !ok || len(f.Metric) != 1 {
		t.Fatalf("metric %s: %v", name, f)
	}
	m := f.Metric[0]
	labels := map[string]string{}
	for _, l := range m.Label {
		labels[l.GetName()] = l.GetValue()
	}
	if labels["x"] != x || labels["y"] != y {
		t.Errorf("%s: labels %v, want x=%q y=%q", name, labels, x, y)
	}
	if m.Gauge != nil {
		return m.Gauge.GetValue()
	}
	return m.Counter.GetValue()
}

// TestMonitorServeAfterEnd runs the command on a stream that ends, with
// --serve-after-end: after the last window, /metrics and /healthz still
// answer with the last window's values, until SIGTERM ends the wait (exit
// 0: the input was read whole). Without the flag the endpoint goes with
// the input.
func TestMonitorServeAfterEnd(t *testing.T) {
	in := ipcStream(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 7}, 2500, 500)
	cmd := exec.Command(dimeBinary, append([]string{"monitor", "-", "--window-rows", "1000", "--listen", "127.0.0.1:0", "--serve-after-end", "5m"}, monitorFlags...)...)
	cmd.Stdin = bytes.NewReader(in)
	var out, errb syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	re := regexp.MustCompile(`input ended; serving metrics at http://(\S+)/metrics for 5m0s more`)
	var m []string
	for deadline := time.Now().Add(30 * time.Second); m == nil && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		m = re.FindStringSubmatch(errb.String())
	}
	if m == nil {
		t.Fatalf("no end-of-input line on stderr: %q", errb.String())
	}
	base := "http://" + m[1]
	ws := windowLines(t, out.String())
	if len(ws) != 3 {
		t.Fatalf("%d windows", len(ws))
	}
	if code, body := httpGet(t, base+"/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz after the end: %d %q", code, body)
	}
	fams := scrape(t, base)
	metric := func(name string) float64 { return metricValue(t, fams, name, "x0,x1", "y0,y1") }
	if metric("dime_windows_total") != 3 || metric("dime_rows_total") != 2500 || metric("dime_window_rows") != 500 ||
		metric("dime_dime_nats") != num(t, ws[2], "dime") {
		t.Errorf("after the end: windows %v rows %v dime %v, last window %v", metric("dime_windows_total"), metric("dime_rows_total"), metric("dime_dime_nats"), ws[2])
	}
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("SIGTERM during --serve-after-end: %v, stderr %q", err, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SIGTERM did not end --serve-after-end")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("still serving after exit")
	}
	// Without --serve-after-end the command exits at the end of the input.
	code, _, errs := runBinary(t, in, append([]string{"monitor", "-", "--window-rows", "1000", "--listen", "127.0.0.1:0"}, monitorFlags...)...)
	if code != 0 || strings.Contains(errs, "input ended") {
		t.Errorf("without --serve-after-end: exit %d, %q", code, errs)
	}
}

// TestMonitorTable checks --json=false: a header, then one line per window
// as it closes, no trailing spaces.
func TestMonitorTable(t *testing.T) {
	in := ipcStream(t, synth.Spec{Kind: synth.Sine, Dim: 2, Noise: 0.2, Seed: 1}, 2500, 300)
	code, out, errs := runBinary(t, in, append([]string{"monitor", "-", "--window-rows", "1000", "--alert-p", "0.01", "--json=false", "--standardize=false"}, monitorFlags...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "window") || !strings.Contains(lines[0], "DiME") || !strings.Contains(lines[0], "normalized") ||
		!strings.HasPrefix(lines[1], "0 [0, 1000)") || !strings.HasPrefix(lines[3], "2 [2000, 2500) partial") {
		t.Fatalf("table:\n%s", out)
	}
	for _, l := range lines {
		if strings.TrimRight(l, " ") != l {
			t.Errorf("trailing spaces: %q", l)
		}
		if strings.HasPrefix(l, "{") {
			t.Errorf("JSON in the table: %q", l)
		}
	}
	if !strings.Contains(lines[1], "ALERT: p-value") {
		t.Errorf("no alert in %q", lines[1])
	}
	// The normalized column is the JSON's dime_normalized, in the column
	// under its header.
	_, out, _ = runBinary(t, in, append([]string{"monitor", "-", "--window-rows", "1000", "--standardize=false"}, monitorFlags...)...)
	col := utf8.RuneCountInString(lines[0][:strings.Index(lines[0], "normalized")]) + len("normalized") // the header has a "±"
	for i, w := range windowLines(t, out) {
		want := fmt.Sprintf("%.6f", num(t, w, "dime_normalized"))
		if l := lines[i+1]; len(l) < col || !strings.HasSuffix(l[:col], " "+want) {
			t.Errorf("window %d: normalized %s not under its header in %q", i, want, l)
		}
	}
}
