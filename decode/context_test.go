package decode_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// A reader honours its context: once it is done, Next returns false and Err
// returns the context's error, for a Reader of a file (checked before each
// record batch) and for a DatasetReader.
func TestReadersHonourTheirContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.parquet")
	w, err := tablewriter.Create(path, dataset.Auto, []string{"a", "b"}, tablewriter.Options{RowGroupRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(testMatrix(10_000, 2, 3), 10_000)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	opts := decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}, BatchSize: 500}
	open := map[string]func(ctx context.Context) (decode.BlockReader, error){
		"Reader": func(ctx context.Context) (decode.BlockReader, error) { return decode.Open(ctx, path, nil, opts) },
		"DatasetReader": func(ctx context.Context) (decode.BlockReader, error) {
			return decode.OpenDataset(ctx, []string{path}, nil, opts)
		},
	}
	for name, open := range open {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := open(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if !r.Next() {
				t.Fatalf("no first block: %v", r.Err())
			}
			cancel()
			blocks := 0
			for r.Next() {
				blocks++
			}
			// The DatasetReader may hand over a block decoded before the
			// cancellation; never the 19 others.
			if blocks > 1 || !errors.Is(r.Err(), context.Canceled) {
				t.Errorf("after the cancellation: %d more blocks, error %v; want none (or one), context.Canceled", blocks, r.Err())
			}
		})
	}
}

// A DatasetReader whose input stalls (a pipe that sends a batch, then
// nothing) returns from Next as soon as its context is done, without
// waiting for the input: the caller needs no goroutine of its own to stop
// on a signal.
func TestDatasetReaderCancelledWhileInputStalls(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	go func() {
		tw, err := tablewriter.New(pw, dataset.IPCStream, []string{"a", "b"}, tablewriter.Options{BatchRows: 10})
		if err != nil {
			t.Error(err)
			return
		}
		rows := make([]float64, 20)
		tw.Write(rows, 10) // one whole batch, sent at once; then the writer stalls
	}()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := decode.OpenDataset(ctx, []string{"-"}, pr, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.Next() || r.Rows() != 10 {
		t.Fatalf("first block: %d rows, error %v; want the 10 rows sent", r.Rows(), r.Err())
	}
	done := make(chan bool)
	go func() { done <- r.Next() }()
	select {
	case <-done:
		t.Fatal("Next returned before the input sent a second batch")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	select {
	case ok := <-done:
		if ok || !errors.Is(r.Err(), context.Canceled) {
			t.Errorf("Next after the cancellation: %v, error %v; want false, context.Canceled", ok, r.Err())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next still waits for the stalled input 10 s after its context was cancelled")
	}
}
