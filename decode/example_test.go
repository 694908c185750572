package decode_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/decode"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
)

// Read two views from a CSV file, block by block, dropping a row with a
// missing value.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "dimeio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "people.csv")
	data := "name,height,age,weight\n" +
		"ann,1.62,34,58.5\n" +
		"bob,1.80,,81\n" + // missing age: dropped
		"cid,1.75,51,77.25\n" +
		"dee,1.58,29,52\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		log.Fatal(err)
	}

	r, err := decode.Open(context.Background(), path, nil, decode.Options{
		Columns:   columns.Spec{X: []string{"age", "height"}, Y: []string{"weight"}},
		Values:    decode.Values{SkipInvalid: true},
		BatchSize: 2,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		fmt.Printf("%d rows: X %v (%d per row), Y %v\n", r.Rows(), r.X(), r.DimX(), r.Y())
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("read %d rows, skipped %d\n", r.RowsRead(), r.Skipped())
	// Output:
	// 1 rows: X [34 1.62] (2 per row), Y [58.5]
	// 2 rows: X [51 1.75 29 1.58] (2 per row), Y [77.25 52]
	// read 4 rows, skipped 1
}

// Copy the columns of an in-memory Arrow record, among them an embedding
// vector, into row-major blocks.
func ExampleExtractor() {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: arrow.PrimitiveTypes.Int64},
		{Name: "embedding", Type: arrow.FixedSizeListOf(2, arrow.PrimitiveTypes.Float32), Nullable: true},
		{Name: "label", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	b.Field(0).(*array.Int64Builder).AppendValues([]int64{7, 8, 9}, nil)
	emb := b.Field(1).(*array.FixedSizeListBuilder)
	for i := 0; i < 3; i++ {
		emb.Append(true)
		emb.ValueBuilder().(*array.Float32Builder).AppendValues([]float32{float32(i), 0.5}, nil)
	}
	b.Field(2).(*array.Float64Builder).AppendValues([]float64{1, 0, 1}, nil)
	rec := b.NewRecord()
	defer rec.Release()

	ex, err := decode.NewExtractor("memory", schema, decode.Options{Columns: columns.Spec{X: []string{"embedding", "id"}, Y: []string{"label"}}})
	if err != nil {
		log.Fatal(err)
	}
	var blk decode.Block
	if err := ex.Extract(&blk, rec); err != nil {
		log.Fatal(err)
	}
	fmt.Println("DimX", ex.DimX(), "X", blk.X)
	fmt.Println("DimY", ex.DimY(), "Y", blk.Y)
	// Output:
	// DimX 3 X [0 0.5 7 1 0.5 8 2 0.5 9]
	// DimY 1 Y [1 0 1]
}
