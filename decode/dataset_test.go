//go:build !dimefuzz

package decode_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"

	"github.com/dime-project/dime/dimetest/s3test"
)

// dsCols are the columns of the test datasets: c0..c5, X = c0..c2, Y = c3..c5.
const dsCols = 6

var dsX, dsY = []string{"c0", "c1", "c2"}, []string{"c3", "c4", "c5"}

// writeMatrixFile writes rows of a row-major matrix of dsCols columns.
func writeMatrixFile(t testing.TB, path string, m []float64, wo tablewriter.Options) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := tablewriter.Create(path, dataset.Auto, tablewriter.ColumnNames("c", dsCols), wo)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(m, len(m)/dsCols); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// splitRows are the row counts of the files of the test dataset: uneven, one
// of them smaller than a batch, one of them empty of rows... not allowed by
// Parquet writers here, so at least one row.
var splitRows = []int{7000, 1, 12345, 3000, 20000 - 7000 - 1 - 12345 - 3000 + 10000}

// writeDataset writes the same rows as one file and as a hive-partitioned
// directory day=K/part-0.parquet of len(splitRows) files, with small row
// groups so that row-group ranges are units of their own. It returns the
// matrix, the file and the directory.
func writeDataset(t testing.TB, dir, ext string) (m []float64, one, ds string) {
	t.Helper()
	total := 0
	for _, n := range splitRows {
		total += n
	}
	m = testMatrix(total, dsCols, 5)
	for i := range m { // finite values of modest size: the estimator-free tests compare bits anyway
		if m[i] != m[i] || m[i] > 1e300 || m[i] < -1e300 {
			m[i] = 1
		}
	}
	wo := tablewriter.Options{RowGroupRows: 1500, BatchRows: 1000}
	one = filepath.Join(dir, "one"+ext)
	writeMatrixFile(t, one, m, wo)
	ds = filepath.Join(dir, "ds")
	lo := 0
	for k, n := range splitRows {
		writeMatrixFile(t, filepath.Join(ds, fmt.Sprintf("day=%d", k), "part-0"+ext), m[lo*dsCols:(lo+n)*dsCols], wo)
		lo += n
	}
	// What a Spark job leaves beside its part files, to be skipped.
	for _, junk := range []string{"_SUCCESS", "_metadata", ".part-0.parquet.crc", "day=0/.hidden" + ext, "_temporary/0/part-9" + ext} {
		p := filepath.Join(ds, junk)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("not data"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return m, one, ds
}

// readDataset reads a dataset and returns its concatenated views and the
// sizes of its blocks.
func readDataset(t testing.TB, args []string, opts decode.Options) (x, y []float64, blocks []int, r *decode.DatasetReader, err error) {
	t.Helper()
	r, err = decode.OpenDataset(context.Background(), args, nil, opts)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	defer r.Close()
	for r.Next() {
		if len(r.X()) != r.Rows()*r.DimX() || len(r.Y()) != r.Rows()*r.DimY() {
			t.Fatalf("block of %d rows has %d X and %d Y values", r.Rows(), len(r.X()), len(r.Y()))
		}
		x = append(x, r.X()...)
		y = append(y, r.Y()...)
		blocks = append(blocks, r.Rows())
	}
	return x, y, blocks, r, r.Err()
}

// A directory, a glob, several arguments in any order, file:// URLs and any
// number of workers give the rows of the single file, in the same blocks,
// bit for bit; junk files are skipped; the total comes from the footers.
func TestDatasetSameAsOneFile(t *testing.T) {
	dir := t.TempDir()
	m, one, ds := writeDataset(t, dir, ".parquet")
	for _, batch := range []int{4096, 700} { // 700: files cut into units of 2 row groups
		testSameAsOneFile(t, m, one, ds, batch)
	}
}

func testSameAsOneFile(t *testing.T, m []float64, one, ds string, batch int) {
	rows := len(m) / dsCols
	opts := decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, BatchSize: batch}
	wantX, wantY, wantBlocks, r, err := readDataset(t, []string{one}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := r.TotalRows(); got != int64(rows) {
		t.Errorf("TotalRows %d, want %d", got, rows)
	}
	if i, ok := sameBits(wantX, pickColumns(m, dsCols, []int{0, 1, 2})); !ok {
		t.Fatalf("one file: X differs at %d", i)
	}
	parts := make([]string, len(splitRows))
	for k := range parts {
		parts[k] = filepath.Join(ds, fmt.Sprintf("day=%d", k), "part-0.parquet")
	}
	abs, _ := filepath.Abs(ds)
	shuffled := []string{parts[3], parts[0], parts[4], parts[2], parts[1], parts[0]} // order and a repeat do not matter
	for name, args := range map[string][]string{
		"directory": {ds},
		"dir slash": {ds + "/"},
		"glob **":   {filepath.Join(ds, "**", "*.parquet")},
		"glob *":    {filepath.Join(ds, "day=*")},
		"arguments": shuffled,
		"file URL":  {"file://" + filepath.ToSlash(abs) + "/"},
	} {
		for _, workers := range []int{1, 2, 5} {
			o := opts
			o.Workers = workers
			x, y, blocks, r, err := readDataset(t, args, o)
			if err != nil {
				t.Fatalf("%s, %d workers: %v", name, workers, err)
			}
			if i, ok := sameBits(x, wantX); !ok {
				t.Errorf("%s, %d workers: X differs at %d", name, workers, i)
			}
			if i, ok := sameBits(y, wantY); !ok {
				t.Errorf("%s, %d workers: Y differs at %d", name, workers, i)
			}
			if !slices.Equal(blocks, wantBlocks) {
				t.Errorf("%s, %d workers: blocks %v, want %v", name, workers, blocks, wantBlocks)
			}
			if r.RowsRead() != int64(rows) || r.TotalRows() != int64(rows) || r.FilesDone() != len(splitRows) || r.Files() != len(splitRows) {
				t.Errorf("%s: rows read %d, total %d, files %d of %d; want %d rows, %d files", name, r.RowsRead(), r.TotalRows(), r.FilesDone(), r.Files(), rows, len(splitRows))
			}
		}
	}
}

// The same through IPC files, streams and CSV, which have no footers.
func TestDatasetOtherFormats(t *testing.T) {
	for _, ext := range []string{".arrow", ".arrows", ".csv"} {
		dir := t.TempDir()
		m, one, ds := writeDataset(t, dir, ext)
		opts := decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, BatchSize: 3000, Workers: 3}
		wantX, wantY, _, _, err := readDataset(t, []string{one}, opts)
		if err != nil {
			t.Fatal(err)
		}
		x, y, blocks, r, err := readDataset(t, []string{ds}, opts)
		if err != nil {
			t.Fatalf("%s: %v", ext, err)
		}
		_, okX := sameBits(x, wantX)
		_, okY := sameBits(y, wantY)
		if !okX || !okY || len(x) != len(m)/2 {
			t.Errorf("%s: the dataset's rows differ from the file's", ext)
		}
		for i, b := range blocks[:len(blocks)-1] {
			if b != 3000 {
				t.Errorf("%s: block %d has %d rows, want 3000", ext, i, b)
				break
			}
		}
		if r.TotalRows() != -1 {
			t.Errorf("%s: TotalRows %d, want -1 (unknown)", ext, r.TotalRows())
		}
	}
}

// Hive partitions: integer keys are columns of X or Y; --where keeps the
// matching files and never opens the others (a corrupt file in a partition
// that does not match is not an error); conditions on strings compare
// bytes; a null partition matches nothing.
func TestDatasetPartitions(t *testing.T) {
	dir := t.TempDir()
	m, _, ds := writeDataset(t, dir, ".parquet")
	corrupt := filepath.Join(ds, "day=9", "part-0.parquet")
	os.MkdirAll(filepath.Dir(corrupt), 0o755)
	if err := os.WriteFile(corrupt, []byte("PAR1 this is not a Parquet file PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	d, err := dataset.Resolve(ctx, []string{ds}, dataset.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Keys) != 1 || d.Keys[0] != (dataset.PartitionKey{Name: "day", Int: true}) {
		t.Fatalf("keys %+v, want day (int)", d.Keys)
	}
	// Without a filter the corrupt file is read, and named.
	_, _, _, _, err = readDataset(t, []string{ds}, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}})
	if !errors.Is(err, decode.ErrFormat) {
		t.Fatalf("reading the corrupt file: %v, want ErrFormat", err)
	} else {
		mustContain(t, err.Error(), "day=9")
	}
	where, err := dataset.ParseWhere(" day >= 2 , day!=3,day<9")
	if err != nil {
		t.Fatal(err)
	}
	x, _, _, r, err := readDataset(t, []string{ds}, decode.Options{Files: dataset.Options{Where: where}, Columns: columns.Spec{X: []string{"c0", "day"}, Y: dsY}})
	if err != nil {
		t.Fatalf("--where day>=2,day!=3,day<9 opened a file it excludes: %v", err)
	}
	if r.Files() != 2 {
		t.Errorf("%d files match, want 2 (day=2, day=4)", r.Files())
	}
	// Rows of day=2, then day=4, with the day as the second column of X.
	var want []float64
	lo := 0
	for k, n := range splitRows {
		if k == 2 || k == 4 {
			for i := lo; i < lo+n; i++ {
				want = append(want, m[i*dsCols], float64(k))
			}
		}
		lo += n
	}
	if i, ok := sameBits(x, want); !ok {
		t.Errorf("X = c0, day differs at %d", i)
	}

	// String keys and nulls.
	sdir := t.TempDir()
	small := m[:10*dsCols]
	for _, p := range []string{"region=eu/date=2026-11-01", "region=eu/date=2026-10-31", "region=us/date=2026-11-02", "region=__HIVE_DEFAULT_PARTITION__/date=2026-11-03"} {
		writeMatrixFile(t, filepath.Join(sdir, p, "part-0.parquet"), small, tablewriter.Options{})
	}
	for cond, files := range map[string]int{
		"region=eu": 2, "region!=eu": 1, "date>=2026-11-01": 3, "region=eu,date>=2026-11-01": 1, "region<f": 2,
	} {
		where, err := dataset.ParseWhere(cond)
		if err != nil {
			t.Fatal(err)
		}
		d, err := dataset.Resolve(ctx, []string{sdir}, dataset.Options{Where: where})
		if err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		if len(d.Inputs) != files {
			t.Errorf("--where %s keeps %d files, want %d", cond, len(d.Inputs), files)
		}
	}
	_, _, _, _, err = readDataset(t, []string{sdir}, decode.Options{Columns: columns.Spec{X: []string{"c0", "region"}, Y: dsY}})
	if !errors.Is(err, decode.ErrColumn) {
		t.Errorf("a string partition in X: %v, want ErrColumn", err)
	} else {
		mustContain(t, err.Error(), `"region"`, "not integers")
	}
	for cond, msg := range map[string]string{
		"month=1":    `"month" is not a partition key (partition keys: region, date)`,
		"region=xx":  "none of the 4 files meets region=xx",
		"date":       "no operator",
		"=eu":        "no key",
		"day>=x,a=b": "not a partition key",
	} {
		where, err := dataset.ParseWhere(cond)
		if err == nil {
			_, err = dataset.Resolve(ctx, []string{sdir}, dataset.Options{Where: where})
		}
		if err == nil {
			t.Errorf("--where %s: no error", cond)
			continue
		}
		mustContain(t, err.Error(), msg)
	}
	where, _ = dataset.ParseWhere("day>=x")
	if _, err := dataset.Resolve(ctx, []string{ds}, dataset.Options{Where: where}); err == nil || !strings.Contains(err.Error(), `"x" is not one`) {
		t.Errorf("--where day>=x on an integer key: %v", err)
	}
}

// Limit ends the reading after so many rows, in the middle of a file.
func TestDatasetLimit(t *testing.T) {
	dir := t.TempDir()
	m, _, ds := writeDataset(t, dir, ".parquet")
	x, _, blocks, r, err := readDataset(t, []string{ds}, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, BatchSize: 1000, Limit: 7500})
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != 7500*3 || !slices.Equal(blocks, []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 500}) {
		t.Errorf("limit 7500: %d rows in blocks %v", len(x)/3, blocks)
	}
	if i, ok := sameBits(x, pickColumns(m[:7500*dsCols], dsCols, []int{0, 1, 2})); !ok {
		t.Errorf("limit: X differs at %d", i)
	}
	if r.TotalRows() != 7500 {
		t.Errorf("TotalRows %d with a limit of 7500", r.TotalRows())
	}
}

// Bad datasets: one-line errors that say what is wrong and name the file.
func TestDatasetErrors(t *testing.T) {
	dir := t.TempDir()
	m := testMatrix(100, dsCols, 1)
	ctx := context.Background()
	mk := func(rel string) string {
		p := filepath.Join(dir, rel)
		writeMatrixFile(t, p, m, tablewriter.Options{})
		return p
	}
	os.MkdirAll(filepath.Join(dir, "empty"), 0o755)
	os.WriteFile(filepath.Join(dir, "empty", "_SUCCESS"), nil, 0o644)
	mk("mixed/a.parquet")
	mk("mixed/b.csv")
	os.MkdirAll(filepath.Join(dir, "text"), 0o755)
	os.WriteFile(filepath.Join(dir, "text", "notes.txt"), []byte("x"), 0o644)
	mk("keys/a=1/p.parquet")
	mk("keys/b=1/p.parquet")

	// A file whose c1 is float32: a schema mismatch with the first file.
	mk("schema/a.parquet")
	f32 := filepath.Join(dir, "schema", "b.parquet")
	writeFloat32(t, f32)
	// A missing selected column, in the second file.
	mk("missing/a.parquet")
	writeNarrow(t, filepath.Join(dir, "missing", "b.parquet"))
	// An unreadable file in the middle.
	mk("middle/a.parquet")
	os.WriteFile(filepath.Join(dir, "middle", "b.parquet"), []byte("PAR1garbagePAR1"), 0o644)
	mk("middle/c.parquet")

	for _, tc := range []struct {
		args   []string
		is     error
		msg    []string
		onRead bool
	}{
		{[]string{filepath.Join(dir, "empty")}, decode.ErrDataset, []string{"empty", "no data files"}, false},
		{[]string{filepath.Join(dir, "nothing", "**", "*.parquet")}, decode.ErrDataset, []string{"matches no files"}, false},
		{[]string{filepath.Join(dir, "mixed", "*.parquet")}, nil, nil, false},
		{[]string{filepath.Join(dir, "**", "*.zzz")}, decode.ErrDataset, []string{"matches no files"}, false},
		{[]string{filepath.Join(dir, "mixed")}, decode.ErrDataset, []string{"b.csv", "is csv but", "a.parquet", "is parquet"}, false},
		{[]string{filepath.Join(dir, "text")}, decode.ErrDataset, []string{"notes.txt", "unknown format"}, false},
		{[]string{filepath.Join(dir, "keys")}, decode.ErrDataset, []string{"b=1", "partition keys (b)", "a=1", "(a)"}, false},
		{[]string{filepath.Join(dir, "schema")}, decode.ErrDataset, []string{"b.parquet", `"c1"`, "float32", "float64", "a.parquet"}, true},
		{[]string{filepath.Join(dir, "missing")}, decode.ErrColumn, []string{"b.parquet", `no column "c5"`}, true},
		{[]string{filepath.Join(dir, "middle")}, decode.ErrFormat, []string{"b.parquet"}, true},
		{[]string{"ftp://host/data/"}, decode.ErrDataset, []string{"unsupported scheme", "ftp://"}, false},
		{[]string{filepath.Join(dir, "mixed"), "-"}, decode.ErrDataset, []string{"stdin"}, false},
		{[]string{filepath.Join(dir, "absent.parquet")}, os.ErrNotExist, []string{"absent.parquet"}, false},
	} {
		_, _, _, _, err := readDataset(t, tc.args, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, Workers: 2})
		if tc.is == nil {
			if err != nil {
				t.Errorf("%v: %v", tc.args, err)
			}
			continue
		}
		if !errors.Is(err, tc.is) {
			t.Errorf("%v: %v, want %v", tc.args, err, tc.is)
			continue
		}
		mustContain(t, err.Error(), tc.msg...)
		if !tc.onRead {
			if _, err := dataset.Resolve(ctx, tc.args, dataset.Options{}); err == nil && tc.is != decode.ErrColumn {
				t.Errorf("%v: Resolve found no error", tc.args)
			}
		}
	}
}

// writeFloat32 writes a file with the test columns, c1 as float32.
func writeFloat32(t testing.TB, path string) {
	t.Helper()
	writeTyped(t, path, tablewriter.ColumnNames("c", dsCols), 1)
}

// writeNarrow writes a file without the column c5.
func writeNarrow(t testing.TB, path string) {
	t.Helper()
	writeTyped(t, path, tablewriter.ColumnNames("c", dsCols-1), -1)
}

// Object storage in memory (memblob) through Options.OpenBucket: the same
// rows as the local directory.
func TestDatasetMemblob(t *testing.T) {
	dir := t.TempDir()
	_, one, ds := writeDataset(t, dir, ".parquet")
	ctx := context.Background()
	bucket := memblob.OpenBucket(nil)
	defer bucket.Close()
	upload(t, bucket, ds, "data/")
	opts := decode.Options{
		Files: dataset.Options{OpenBucket: func(ctx context.Context, url string) (*blob.Bucket, error) {
			if !strings.HasPrefix(url, "mem://b") {
				return nil, fmt.Errorf("no bucket %s", url)
			}
			return blob.PrefixedBucket(bucket, ""), nil
		}},
		Columns:   columns.Spec{X: dsX, Y: dsY},
		BatchSize: 4096,
		Workers:   3,
	}
	wantX, _, wantBlocks, _, err := readDataset(t, []string{one}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, arg := range []string{"mem://b/data/", "mem://b/data", "mem://b/data/**/*.parquet", "mem://b/data/day=2/part-0.parquet"} {
		x, _, blocks, _, err := readDataset(t, []string{arg}, opts)
		if err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if arg == "mem://b/data/day=2/part-0.parquet" {
			if len(x) != splitRows[2]*3 {
				t.Errorf("%s: %d rows, want %d", arg, len(x)/3, splitRows[2])
			}
			continue
		}
		if i, ok := sameBits(x, wantX); !ok || !slices.Equal(blocks, wantBlocks) {
			t.Errorf("%s: X differs at %d, or blocks %v", arg, i, blocks)
		}
	}
	d, err := dataset.Resolve(ctx, []string{"mem://b/data/"}, opts.Files)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.ReadFooters(ctx, opts.Files); err != nil {
		t.Fatal(err)
	}
	if in := d.Inputs[0]; !strings.HasSuffix(in.Path, "data/day=0/part-0.parquet") || in.Rows != int64(splitRows[0]) || len(in.RowGroups) != 5 || in.Partitions[0].Value != "0" {
		t.Errorf("first input %+v", in)
	}
	for _, arg := range []string{"mem://b/nothing/", "mem://b/data/day=7"} {
		if _, err := dataset.Resolve(ctx, []string{arg}, opts.Files); !errors.Is(err, decode.ErrDataset) {
			t.Errorf("%s: %v, want ErrDataset", arg, err)
		}
	}
}

// upload copies the files below dir into the bucket under prefix.
func upload(t testing.TB, b *blob.Bucket, dir, prefix string) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return b.WriteAll(context.Background(), prefix+filepath.ToSlash(rel), data, nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// S3 through a real S3-protocol server on loopback, reached by s3blob with
// the URL parameters or with AWS_ENDPOINT_URL: the same rows as the local
// file; Parquet is read by ranged GETs, never whole; files that --where
// excludes are never requested; a missing bucket is one error.
func TestDatasetS3(t *testing.T) {
	dir := t.TempDir()
	_, one, ds := writeDataset(t, dir, ".parquet")
	srv := s3test.Start(t, "lake")
	ctx := context.Background()
	err := filepath.WalkDir(ds, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(ds, p)
		srv.PutFile(t, "lake", "events/"+filepath.ToSlash(rel), p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}, BatchSize: 4096, Workers: 2}
	wantX, wantY, wantBlocks, _, err := readDataset(t, []string{one}, opts)
	if err != nil {
		t.Fatal(err)
	}
	check := func(name string, args []string) {
		t.Helper()
		x, y, blocks, _, err := readDataset(t, args, opts)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, okX := sameBits(x, wantX)
		_, okY := sameBits(y, wantY)
		if !okX || !okY || !slices.Equal(blocks, wantBlocks) {
			t.Errorf("%s: rows or blocks differ from the local file's", name)
		}
	}
	srv.Reset()
	check("URL parameters", []string{srv.URL("lake", "events/")})
	// Every GET of a Parquet object is ranged, and there are few per
	// object: the footer (twice: for the row counts, then to read) and a
	// window per column chunk at most, not one per page.
	gets := srv.Gets("day=4/part-0.parquet")
	if len(gets) == 0 {
		t.Fatal("no GET of day=4/part-0.parquet")
	}
	for _, g := range gets {
		if !strings.HasPrefix(g.Range, "bytes=") {
			t.Errorf("GET %s without a byte range", g.Path)
		}
	}
	if groups := 6; len(gets) > 2*3+groups*dsCols {
		t.Errorf("%d GETs of a file of %d row groups of %d columns: too many", len(gets), groups, dsCols)
	}
	// Windows smaller than the column chunks: reads that cross the end of
	// a window continue in the next, with the same rows.
	defer dataset.SetBlobWindow(dataset.SetBlobWindow(8 << 10))
	srv.Reset()
	check("8 KiB windows", []string{srv.URL("lake", "events/")})
	for _, g := range srv.Gets("part-0.parquet") {
		var lo, hi int64
		if _, err := fmt.Sscanf(g.Range, "bytes=%d-%d", &lo, &hi); err != nil || hi-lo+1 > 64<<10 {
			t.Errorf("GET %s %s: want at most a 64 KiB page buffer", g.Path, g.Range)
		}
	}
	dataset.SetBlobWindow(8 << 20)

	// AWS_ENDPOINT_URL instead of the endpoint parameter.
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	check("AWS_ENDPOINT_URL", []string{"s3://lake/events/**/*.parquet?use_path_style=true"})

	srv.Reset()
	where, _ := dataset.ParseWhere("day=2")
	d, err := dataset.Resolve(ctx, []string{"s3://lake/events?use_path_style=true"}, dataset.Options{Where: where})
	if err != nil {
		t.Fatal(err)
	}
	r, err := decode.NewDatasetReader(ctx, d, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
	}
	r.Close()
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	for _, g := range srv.Gets("part-0.parquet") {
		if !strings.Contains(g.Path, "day=2/") {
			t.Errorf("--where day=2 read %s", g.Path)
		}
	}
	for _, tc := range []struct{ arg, msg string }{
		{"s3://no-such-bucket/x/?use_path_style=true", "no-such-bucket"},
		{"s3://lake/absent/?use_path_style=true", "no data files"},
		{"s3://lake/events/day=1/none.parquet?use_path_style=true", "no such object or prefix"},
	} {
		_, err := dataset.Resolve(ctx, []string{tc.arg}, dataset.Options{})
		if !errors.Is(err, decode.ErrDataset) {
			t.Errorf("%s: %v, want ErrDataset", tc.arg, err)
			continue
		}
		mustContain(t, err.Error(), tc.msg)
	}
}

// writeTyped writes 100 rows of float64 columns with the given names, the
// column f32 (if ≥ 0) as float32.
func writeTyped(t testing.TB, path string, names []string, f32 int) {
	t.Helper()
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(names))
	cols := make([]arrow.Array, len(names))
	for i, n := range names {
		if i == f32 {
			fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float32}
			b := array.NewFloat32Builder(mem)
			for k := 0; k < 100; k++ {
				b.Append(float32(k))
			}
			cols[i] = b.NewArray()
		} else {
			fields[i] = arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64}
			b := array.NewFloat64Builder(mem)
			for k := 0; k < 100; k++ {
				b.Append(float64(k))
			}
			cols[i] = b.NewArray()
		}
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, 100)
	writeRecords(t, filepath.Dir(path), filepath.Base(path), dataset.Parquet, schema, []arrow.Record{rec})
}
