package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"

	"github.com/dime-project/dime/dimetest/s3test"
)

// genDatasetPair writes the same rows as one Parquet file and as a dataset
// of files (dime gen --files), and returns both paths.
func genDatasetPair(t *testing.T, dir string, rows, files int) (one, ds string) {
	t.Helper()
	one, ds = filepath.Join(dir, "one.parquet"), filepath.Join(dir, "ds")
	common := []string{"gen", "--kind", "sine", "--dim", "3", "--rows", fmt.Sprint(rows), "--seed", "7"}
	if code, _, errs := runBinary(t, nil, append(common, "--out", one)...); code != 0 {
		t.Fatalf("gen: %s", errs)
	}
	if code, _, errs := runBinary(t, nil, append(common, "--out", ds, "--files", fmt.Sprint(files))...); code != 0 {
		t.Fatalf("gen --files: %s", errs)
	}
	return one, ds
}

// scoreFlags is a light estimator with an explicit bandwidth, so that no
// pilot sample chooses it.
var scoreFlags = []string{"--x", "x0,x1,x2", "--y", "y0,y1,y2", "--sigma", "1", "--features", "32", "--permutations", "2", "--json", "--batch-size", "2000"}

// scoreFields are the results that must agree between a dataset and the
// file of its rows.
var scoreFields = []string{"rows", "entropy_x", "entropy_y", "entropy_joint", "mutual_information", "dime_analytic", "dime", "dime_stderr", "p_value"}

// dime score over a hive-partitioned directory, a glob, several arguments
// and S3 gives the results of the one file with the same rows in the same
// order. The issue asks for 1e-9 relative on the entropies, MI and analytic
// DiME; the reader hands the estimator the same blocks of rows whatever the
// files (see decode.DatasetReader), so every field is in fact identical,
// and that is what is checked.
func TestScoreDatasetSameAsOneFile(t *testing.T) {
	dir := t.TempDir()
	const files = 7
	one, ds := genDatasetPair(t, dir, 20011, files)
	code, out, errs := runBinary(t, nil, append([]string{"score", one}, scoreFlags...)...)
	if code != 0 {
		t.Fatalf("score one file: %s", errs)
	}
	want := decodeJSON(t, out)
	var parts []string
	for k := files - 1; k >= 0; k-- { // any order: the files are sorted
		parts = append(parts, filepath.Join(ds, fmt.Sprintf("part=%05d", k), fmt.Sprintf("part-%05d.parquet", k)))
	}
	srv := s3test.Start(t, "lake")
	for _, p := range slices.Backward(parts) {
		rel, _ := filepath.Rel(ds, p)
		srv.PutFile(t, "lake", "sine/"+filepath.ToSlash(rel), p)
	}
	srv.Put(t, "lake", "sine/_SUCCESS", nil)
	cases := map[string][]string{
		"directory": {ds},
		"glob":      {filepath.Join(ds, "**", "*.parquet")},
		"arguments": parts,
		"s3":        {srv.URL("lake", "sine/")},
	}
	for name, args := range cases {
		code, out, errs := runBinary(t, nil, append(append([]string{"score"}, args...), scoreFlags...)...)
		if code != 0 {
			t.Errorf("%s: exit %d: %s", name, code, errs)
			continue
		}
		got := decodeJSON(t, out)
		for _, f := range scoreFields {
			if num(t, got, f) != num(t, want, f) {
				t.Errorf("%s: %s = %v, one file %v", name, f, got[f], want[f])
			}
		}
		if !strings.Contains(got["input"].(string), fmt.Sprintf("(%d files)", files)) {
			t.Errorf("%s: input %q does not count the files", name, got["input"])
		}
	}
	// AWS_ENDPOINT_URL, as for MinIO, instead of the endpoint parameter.
	t.Setenv("AWS_ENDPOINT_URL", srv.Endpoint)
	code, out, errs = runBinary(t, nil, append([]string{"score", "s3://lake/sine/**/*.parquet?use_path_style=true"}, scoreFlags...)...)
	if code != 0 {
		t.Fatalf("s3 with AWS_ENDPOINT_URL: %s", errs)
	}
	if got := decodeJSON(t, out); num(t, got, "entropy_joint") != num(t, want, "entropy_joint") {
		t.Errorf("s3 with AWS_ENDPOINT_URL: entropy_joint %v, want %v", got["entropy_joint"], want["entropy_joint"])
	}

	// The exact estimator's sample is drawn from the whole dataset: the
	// same rows as from the file.
	exactFlags := []string{"--x", "x0,x1,x2", "--y", "y0,y1,y2", "--sample", "300", "--permutations", "2", "--json"}
	_, outOne, _ := runBinary(t, nil, append([]string{"exact", one}, exactFlags...)...)
	code, outDS, errs := runBinary(t, nil, append([]string{"exact", ds}, exactFlags...)...)
	if code != 0 {
		t.Fatalf("exact on the dataset: %s", errs)
	}
	a, b := decodeJSON(t, outOne), decodeJSON(t, outDS)
	for _, f := range []string{"entropy_joint", "mutual_information", "dime", "sampled_from_rows"} {
		if num(t, a, f) != num(t, b, f) {
			t.Errorf("exact: %s %v on the dataset, %v on the file", f, b[f], a[f])
		}
	}
}

// --where reads only the files of the matching partitions (a corrupt file
// elsewhere is never opened), partition keys are columns, and --limit
// stops early.
func TestScoreDatasetWhereLimit(t *testing.T) {
	dir := t.TempDir()
	_, ds := genDatasetPair(t, dir, 7000, 7) // 1000 rows per file
	bad := filepath.Join(ds, "part=00009", "part-00009.parquet")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte("PAR1 not parquet PAR1"), 0o644)
	run := func(extra ...string) (int, map[string]any, string) {
		t.Helper()
		code, out, errs := runBinary(t, nil, append(append([]string{"score", ds}, scoreFlags...), extra...)...)
		if code != 0 {
			return code, nil, errs
		}
		return code, decodeJSON(t, out), errs
	}
	if code, _, errs := run(); code != 2 || !strings.Contains(errs, "part=00009") {
		t.Errorf("the corrupt file: exit %d, %q", code, errs)
	}
	code, m, errs := run("--where", "part>=2,part<=4")
	if code != 0 || num(t, m, "rows") != 3000 {
		t.Errorf("--where part>=2,part<=4: exit %d %s, %v rows, want 3000", code, errs, m["rows"])
	}
	// part is constant in the first file, where the scales are chosen.
	code, m, errs = run("--where", "part<9", "--x", "x0,part", "--standardize=false")
	if code != 0 || num(t, m, "rows") != 7000 {
		t.Errorf("--x x0,part: exit %d %s", code, errs)
	}
	code, m, errs = run("--where", "part!=9", "--limit", "2500")
	if code != 0 || num(t, m, "rows") != 2500 {
		t.Errorf("--limit 2500: exit %d %s, %v rows", code, errs, m["rows"])
	}
	for _, tc := range []struct{ flag, msg string }{
		{"day=1", `"day" is not a partition key`},
		{"part", "no operator"},
		{"part>=x", "integers"},
		{"part>100", "none of the 8 files"},
	} {
		code, _, errs := run("--where", tc.flag)
		if code != 2 || !strings.Contains(errs, tc.msg) {
			t.Errorf("--where %s: exit %d, %q, want %q", tc.flag, code, errs, tc.msg)
		}
	}
	// monitor reads the files in order, one window after another.
	code, out, errs := runBinary(t, nil, "monitor", ds, "--where", "part<9", "--x", "x0", "--y", "y0", "--features", "16", "--permutations", "2", "--window-rows", "3500", "--sigma", "1")
	if ws := windowLines(t, out); code != 0 || len(ws) != 2 || num(t, ws[1], "end_row") != 7000 {
		t.Errorf("monitor over the dataset: exit %d %s, %d windows", code, errs, len(ws))
	}
}

// Bad datasets: one line, exit 2, nothing written (no output, no state
// file).
func TestScoreBadDatasets(t *testing.T) {
	dir := t.TempDir()
	one, ds := genDatasetPair(t, dir, 3000, 3)
	mk := func(rel string, data []byte) string {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	mk("empty/_SUCCESS", nil)
	mk("mixed/a.parquet", read(one))
	mk("mixed/b.csv", []byte("x0,x1,x2,y0,y1,y2\n1,2,3,4,5,6\n"))
	// A file of other columns: x1 is missing.
	mk("schema/a.parquet", read(one))
	if code, _, errs := runBinary(t, nil, "gen", "--kind", "sine", "--dim", "1", "--rows", "10", "--out", filepath.Join(dir, "schema", "b.parquet")); code != 0 {
		t.Fatal(errs)
	}
	// An unreadable file in the middle.
	mid := filepath.Join(ds, "part=00001", "part-00001.parquet")
	good := read(mid)
	os.WriteFile(mid, good[:len(good)/2], 0o644)
	srv := s3test.Start(t, "lake")
	state := filepath.Join(dir, "out.state")
	for _, tc := range []struct {
		name string
		arg  string
		msg  []string
	}{
		{"empty directory", filepath.Join(dir, "empty"), []string{"empty", "no data files"}},
		{"glob matching nothing", filepath.Join(dir, "nothing", "*.parquet"), []string{"matches no files"}},
		{"mixed formats", filepath.Join(dir, "mixed"), []string{"b.csv", "csv", "a.parquet"}},
		{"missing column", filepath.Join(dir, "schema"), []string{"b.parquet", `"x1"`}},
		{"unreadable in the middle", ds, []string{"part-00001.parquet"}},
		{"unknown scheme", "hdfs://namenode/data/", []string{"unsupported scheme", "hdfs://"}},
		{"no such bucket", srv.URL("missing-bucket", "data/"), []string{"missing-bucket", "bucket"}},
	} {
		os.Remove(state)
		code, out, errs := runBinary(t, nil, append([]string{"score", tc.arg, "--save-state", state}, scoreFlags...)...)
		if code != 2 || out != "" || strings.Count(errs, "\n") != 1 || !strings.HasPrefix(errs, "dime: ") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, code, out, errs)
			continue
		}
		for _, m := range tc.msg {
			if !strings.Contains(errs, m) {
				t.Errorf("%s: %q does not mention %q", tc.name, errs, m)
			}
		}
		if _, err := os.Stat(state); err == nil {
			t.Errorf("%s: the state file was written", tc.name)
		}
	}
	// A schema mismatch: x0 float32 in the second file, an error naming
	// both files and the column.
	mk("types/a.parquet", read(one))
	writeFloat32Parquet(t, filepath.Join(dir, "types", "b.parquet"))
	code, out, errs := runBinary(t, nil, append([]string{"score", filepath.Join(dir, "types"), "--save-state", state}, scoreFlags...)...)
	if code != 2 || out != "" || strings.Count(errs, "\n") != 1 {
		t.Errorf("schema mismatch: exit %d %q", code, errs)
	}
	for _, m := range []string{"b.parquet", `"x0"`, "float32", "float64", "a.parquet"} {
		if !strings.Contains(errs, m) {
			t.Errorf("schema mismatch: %q does not mention %q", errs, m)
		}
	}
	if _, err := os.Stat(state); err == nil {
		t.Errorf("schema mismatch: the state file was written")
	}
	code, _, errs = runBinary(t, nil, "gen", "--out", ds, "--files", "2")
	if code != 2 || !strings.Contains(errs, "not empty") {
		t.Errorf("gen --files into a non-empty directory: exit %d %q", code, errs)
	}
}

// writeFloat32Parquet writes 100 rows of x0..x2, y0..y2, x0 as float32.
func writeFloat32Parquet(t *testing.T, path string) {
	t.Helper()
	mem := memory.NewGoAllocator()
	var fields []arrow.Field
	var cols []arrow.Array
	for _, n := range []string{"x0", "x1", "x2", "y0", "y1", "y2"} {
		if n == "x0" {
			b := array.NewFloat32Builder(mem)
			for i := 0; i < 100; i++ {
				b.Append(float32(i))
			}
			fields, cols = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float32}), append(cols, b.NewArray())
			continue
		}
		b := array.NewFloat64Builder(mem)
		for i := 0; i < 100; i++ {
			b.Append(float64(i % 7))
		}
		fields, cols = append(fields, arrow.Field{Name: n, Type: arrow.PrimitiveTypes.Float64}), append(cols, b.NewArray())
	}
	schema := arrow.NewSchema(fields, nil)
	rec := array.NewRecord(schema, cols, 100)
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := pqarrow.NewFileWriter(schema, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
