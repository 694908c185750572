package decode_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// An IPC stream on stdin, whole and cut off at many points: a cut at the end
// of a message (the stream format allows the end-of-stream marker to be
// missing) reads the batches before it; any other cut is an error, never a
// panic, and garbage is an error.
func TestIPCStreamStdin(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n, batch = 500, 100
	tb := newTable(n, 6)
	recs := tb.records(mem, batch)
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(tableSchema()), ipc.WithAllocator(mem))
	var ends []int // end of the schema message, then of each batch
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
		ends = append(ends, buf.Len())
		r.Release()
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	stream := buf.Bytes()
	opts := decode.Options{Columns: columns.Spec{X: []string{"e64", "i8"}, Y: []string{"f64", "e32"}, TimeColumn: "ts"}, Allocator: mem}
	wantX := tb.expectView(opts.Columns.X, seq(0, n))

	x, _, _, r, err := readAll(t, "-", bytes.NewReader(stream), opts)
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameBits(x, wantX); !ok || r.RowsRead() != n {
		t.Fatalf("whole stream: X differs at %d, %d rows", i, r.RowsRead())
	}
	strict := opts
	strict.Strict = true
	if _, _, _, r, err := readAll(t, "-", bytes.NewReader(stream), strict); err != nil || len(r.Warnings()) != 0 {
		t.Fatalf("whole stream, strict: %v, warnings %q", err, r.Warnings())
	}

	// The first Write also wrote the schema: find where the first batch
	// starts by writing the schema alone.
	var schemaOnly bytes.Buffer
	sw := ipc.NewWriter(&schemaOnly, ipc.WithSchema(tableSchema()))
	sw.Close()
	boundaries := map[int]int{schemaOnly.Len() - 8: 0} // minus the end-of-stream marker
	for k, e := range ends {
		boundaries[e] = (k + 1) * batch
	}
	eos := ends[len(ends)-1]
	cuts := 0
	for cut := 1; cut < len(stream); cut++ {
		_, isBoundary := boundaries[cut]
		if cut%53 != 0 && !isBoundary && !isBoundary2(boundaries, cut) {
			continue
		}
		cuts++
		_, _, _, r, err := readAll(t, "-", bytes.NewReader(stream[:cut]), opts)
		rows, ok := boundaries[cut]
		switch {
		case cut >= eos: // inside the end-of-stream marker: anything but a panic
		case ok:
			// A valid shorter stream, but for its missing end-of-stream
			// marker: a warning, or with Strict an error (issue 13, item 5:
			// it read as valid without a word).
			if err != nil || r.RowsRead() != int64(rows) {
				t.Errorf("cut at message end %d: %v, %d rows, want %d rows", cut, err, rowsOf(r), rows)
			}
			want := fmt.Sprintf("dimeio: stdin: the Arrow IPC stream ends after %d rows without its end-of-stream marker: it may be truncated", rows)
			if w := r.Warnings(); len(w) != 1 || w[0] != want {
				t.Errorf("cut at message end %d: warnings %q, want %q", cut, w, want)
			}
			_, _, _, r, err := readAll(t, "-", bytes.NewReader(stream[:cut]), strict)
			if !errors.Is(err, decode.ErrFormat) || err.Error() != want || len(r.Warnings()) != 0 {
				t.Errorf("cut at message end %d, strict: error %v", cut, err)
			}
		case err == nil:
			t.Errorf("cut at %d: no error (%d rows)", cut, rowsOf(r))
		case !errors.Is(err, decode.ErrFormat):
			t.Errorf("cut at %d: error %v, want ErrFormat", cut, err)
		}
	}
	if cuts < 100 {
		t.Fatalf("only %d cuts tried", cuts)
	}

	// Bytes of a valid stream shuffled: an error, not a panic.
	garbage := append([]byte{}, stream...)
	for i := range garbage {
		garbage[i] ^= byte(i * 131)
	}
	if _, _, _, _, err := readAll(t, "-", bytes.NewReader(garbage), opts); err == nil {
		t.Error("no error for garbage")
	}
}

// isBoundary2 reports whether cut is next to a message end.
func isBoundary2(b map[int]int, cut int) bool {
	_, l := b[cut-1]
	_, r := b[cut+1]
	return l || r
}

func rowsOf(r *decode.Reader) int64 {
	if r == nil {
		return -1
	}
	return r.RowsRead()
}

// A cut IPC stream from a file path behaves as from stdin, and the error
// names the file.
func TestIPCStreamTruncatedFile(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	var buf bytes.Buffer
	w, err := tablewriter.New(&buf, dataset.IPCStream, []string{"a", "b"}, tablewriter.Options{BatchRows: 100})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(testMatrix(250, 2, 1), 250)
	w.Close()
	path := writeBytes(t, t.TempDir(), "cut.arrows", buf.Bytes()[:buf.Len()*2/3])
	_, _, _, r, err := readAll(t, path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}, Allocator: mem})
	if !errors.Is(err, decode.ErrFormat) {
		t.Fatalf("error %v, want ErrFormat", err)
	}
	mustContain(t, err.Error(), path, "reading the record batch at row 100", "unexpected EOF")
	if r.RowsRead() != 100 {
		t.Errorf("RowsRead %d, want 100", r.RowsRead())
	}
}
