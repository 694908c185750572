package decode_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// TestStreamWriterFlushesBatches checks that an IPC stream written through a
// pipe can be read batch by batch while the writer is still open (dime gen
// --out - | dime monitor -): the writer must not hold complete batches back.
func TestStreamWriterFlushesBatches(t *testing.T) {
	r, w := io.Pipe()
	closed := make(chan struct{})
	go func() {
		tw, err := tablewriter.New(w, dataset.IPCStream, []string{"a", "b"}, tablewriter.Options{BatchRows: 10})
		if err != nil {
			t.Error(err)
			return
		}
		for i := 0; i < 25; i++ {
			tw.Write([]float64{float64(i), 1}, 1)
		}
		<-closed // keep the stream open until the reader has two batches
		tw.Close()
		w.Close()
	}()
	rd, err := decode.Open(context.Background(), "-", r, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	got := make(chan int)
	go func() {
		for i := 0; i < 2 && rd.Next(); i++ {
			got <- rd.Rows()
		}
		close(got)
	}()
	for i := 0; i < 2; i++ {
		select {
		case n := <-got:
			if n != 10 {
				t.Errorf("batch %d has %d rows", i, n)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a complete batch was not delivered while the writer was open")
		}
	}
	close(closed)
}
