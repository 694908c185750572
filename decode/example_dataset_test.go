package decode_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"
)

// Read a hive-partitioned directory as one table, keeping some partitions,
// with a partition key as a column of X.
func ExampleOpenDataset() {
	dir, err := os.MkdirTemp("", "dimeio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	// sales/year=2025/region=eu/part-0.csv, … with columns price and units.
	for _, p := range []struct{ year, region, rows string }{
		{"2025", "eu", "price,units\n1.5,3\n2,4\n"},
		{"2025", "us", "price,units\n9,9\n"},
		{"2026", "eu", "price,units\n2.5,5\n"},
	} {
		d := filepath.Join(dir, "sales", "year="+p.year, "region="+p.region)
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, "part-0.csv"), []byte(p.rows), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "sales", "_SUCCESS"), nil, 0o644) // skipped

	where, err := dataset.ParseWhere("region=eu")
	if err != nil {
		log.Fatal(err)
	}
	r, err := decode.OpenDataset(context.Background(), []string{filepath.Join(dir, "sales")}, nil, decode.Options{
		Files:   dataset.Options{Where: where},
		Columns: columns.Spec{X: []string{"price", "year"}, Y: []string{"units"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		fmt.Printf("%d rows: X %v, Y %v\n", r.Rows(), r.X(), r.Y())
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d of %d files\n", r.FilesDone(), r.Files())
	// Output:
	// 3 rows: X [1.5 2025 2 2025 2.5 2026], Y [3 4 5]
	// 2 of 2 files
}

// Resolve a dataset into its inputs, read their Parquet footers, and open
// one input, or a range of row groups of one, by itself: what a distributed
// runner does to share out the work.
func ExampleOpenRowGroups() {
	dir, err := os.MkdirTemp("", "dimeio")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	for part := 0; part < 2; part++ {
		path := filepath.Join(dir, fmt.Sprintf("part=%d", part), "data.parquet")
		os.MkdirAll(filepath.Dir(path), 0o755)
		w, err := tablewriter.Create(path, dataset.Auto, []string{"a", "b"}, tablewriter.Options{RowGroupRows: 2})
		if err != nil {
			log.Fatal(err)
		}
		w.Write([]float64{1, 2, 3, 4, 5, 6}, 3) // 3 rows: row groups of 2 and 1
		if err := w.Close(); err != nil {
			log.Fatal(err)
		}
	}
	ctx := context.Background()
	opts := decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b", "part"}}}
	d, err := dataset.Resolve(ctx, []string{dir}, opts.Files)
	if err != nil {
		log.Fatal(err)
	}
	if err := d.ReadFooters(ctx, opts.Files); err != nil {
		log.Fatal(err)
	}
	for _, in := range d.Inputs {
		rel, _ := filepath.Rel(dir, in.Path)
		fmt.Printf("%s: %v, %d rows in row groups %v, partition %s=%s\n", filepath.ToSlash(rel), in.Format, in.Rows, in.RowGroups, in.Partitions[0].Key, in.Partitions[0].Value)
	}
	r, err := decode.OpenRowGroups(ctx, d.Inputs[1], 1, 1, opts) // the second row group of part=1
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
		fmt.Printf("rows %d to %d: X %v, Y %v\n", r.RowsRead()-int64(r.Rows()), r.RowsRead(), r.X(), r.Y())
	}
	if err := r.Err(); err != nil {
		log.Fatal(err)
	}
	// Output:
	// part=0/data.parquet: parquet, 3 rows in row groups [2 1], partition part=0
	// part=1/data.parquet: parquet, 3 rows in row groups [2 1], partition part=1
	// rows 2 to 3: X [5], Y [6 1]
}
