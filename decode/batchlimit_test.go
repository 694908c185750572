//go:build !dimefuzz

package decode_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	flatbuffers "github.com/google/flatbuffers/go"
)

// TestRecordBatchLimit: an Arrow IPC record batch whose body is larger than
// MaxRecordBatchBytes is an error (ErrFormat) that names its size and asks
// for smaller batches, from a stream of unknown size and from a file,
// before its body is read; a batch of many rows is handed over in blocks of
// at most BatchSize rows; and DatasetReader.HeldBatchBytes counts two
// batches per worker, each at most the largest IPC file, for the memory
// check. Before, the body was read whatever its size (growing as its bytes
// came, up to gigabytes), a block held a whole batch, and the memory check
// counted no IPC batch.
func TestRecordBatchLimit(t *testing.T) {
	dir := t.TempDir()
	names := []string{"x0", "x1", "y0", "y1"}
	const rows = 50_000
	m := make([]float64, rows*len(names))
	for i := range m {
		m[i] = float64(i % 101)
	}
	var stream bytes.Buffer
	tw, err := tablewriter.New(&stream, dataset.IPCStream, names, tablewriter.Options{BatchRows: rows})
	if err != nil {
		t.Fatal(err)
	}
	if err := tw.Write(m, rows); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	opts := decode.Options{Columns: columns.Spec{X: names[:2], Y: names[2:]}, BatchSize: 4096, Files: dataset.Options{Format: dataset.IPCStream}}

	// One batch of 50,000 rows: blocks of at most 4,096 rows, the same values.
	r, err := decode.Open(context.Background(), "-", bytes.NewReader(stream.Bytes()), opts)
	if err != nil {
		t.Fatal(err)
	}
	var x []float64
	for r.Next() {
		if r.Rows() > opts.BatchSize {
			t.Errorf("a block of %d rows from a batch of %d, want at most %d", r.Rows(), rows, opts.BatchSize)
		}
		x = append(x, r.X()...)
	}
	if err := r.Err(); err != nil || len(x) != 2*rows || x[2*rows-1] != m[len(m)-3] {
		t.Errorf("%d values of X, error %v", len(x), err)
	}
	r.Close()

	// The same batch claiming a body of MaxRecordBatchBytes+1 bytes.
	big := bytes.Clone(stream.Bytes())
	setBodyLength(t, big, decode.MaxRecordBatchBytes+1)
	path := filepath.Join(dir, "big.arrows")
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		stdin      []byte
	}{{"stdin", "-", big}, {"file", path, nil}} {
		r, err := decode.Open(context.Background(), c.path, bytes.NewReader(c.stdin), opts)
		if err == nil {
			for r.Next() {
			}
			err = r.Err()
			r.Close()
		}
		if !errors.Is(err, decode.ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", c.name, err)
			continue
		}
		mustContain(t, err.Error(), "record batch of 536870913 bytes", "512 MiB", "smaller record batches")
	}

	// HeldBatchBytes: two batches per worker of the largest IPC file.
	small := filepath.Join(dir, "part-1.arrows")
	if err := os.WriteFile(small, stream.Bytes()[:len(stream.Bytes())/2], 0o644); err != nil {
		t.Fatal(err)
	}
	whole := filepath.Join(dir, "part-2.arrows")
	if err := os.WriteFile(whole, stream.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	pq := filepath.Join(dir, "d.parquet")
	writeMatrixFile(t, pq, make([]float64, 100*dsCols), tablewriter.Options{})
	for _, c := range []struct {
		args    []string
		workers int
		want    int64
	}{
		{[]string{small, whole}, 2, 2 * 2 * int64(stream.Len())},
		{[]string{whole}, 1, 2 * int64(stream.Len())},
		{[]string{pq}, 2, 0},
		{[]string{"-"}, 1, 0}, // a stream of unknown size: bounded, not counted
	} {
		o := opts
		o.Workers = c.workers
		if c.args[0] == pq {
			o.Columns, o.Files = columns.Spec{X: dsX, Y: dsY}, dataset.Options{}
		}
		d, err := decode.OpenDataset(context.Background(), c.args, bytes.NewReader(stream.Bytes()), o)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if got := d.HeldBatchBytes(); got != c.want {
			t.Errorf("%v with %d workers: HeldBatchBytes %d, want %d", c.args, c.workers, got, c.want)
		}
		d.Close()
	}
}

// setBodyLength sets the body length in the metadata of the second message
// (the first record batch) of an IPC stream.
func setBodyLength(t *testing.T, s []byte, n int64) {
	t.Helper()
	at := 0
	for k := 0; k < 2; k++ {
		if binary.LittleEndian.Uint32(s[at:]) != 0xFFFFFFFF {
			t.Fatal("no continuation marker")
		}
		metaLen := int(binary.LittleEndian.Uint32(s[at+4:]))
		meta := s[at+8 : at+8+metaLen]
		msg := flatbuffers.Table{Bytes: meta, Pos: flatbuffers.GetUOffsetT(meta)}
		o := msg.Offset(4 + 2*3) // Message.bodyLength
		if k == 1 {
			if o == 0 {
				t.Fatal("no body length in the batch's metadata")
			}
			binary.LittleEndian.PutUint64(meta[msg.Pos+flatbuffers.UOffsetT(o):], uint64(n))
			return
		}
		body := int64(0)
		if o != 0 {
			body = int64(binary.LittleEndian.Uint64(meta[msg.Pos+flatbuffers.UOffsetT(o):]))
		}
		at += 8 + metaLen + int(body)
	}
}
