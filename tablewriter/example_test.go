package tablewriter_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// Write row-major blocks as an Arrow IPC stream (as to stdout) and read them
// back (as from stdin).
func ExampleNew() {
	var pipe bytes.Buffer
	w, err := tablewriter.New(&pipe, dataset.IPCStream, tablewriter.ColumnNames("x", 2), tablewriter.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Write([]float64{1, 2, 3, 4, 5, 6}, 3); err != nil {
		log.Fatal(err)
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}

	r, err := decode.Open(context.Background(), "-", &pipe, decode.Options{Columns: columns.Spec{X: []string{"x1"}, Y: []string{"x0"}}})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		fmt.Println(r.X(), r.Y())
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// [2 4 6] [1 3 5]
}
