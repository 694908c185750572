package decode_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
)

// The files of testdata/parquet-testing come from apache/parquet-testing
// (data/, Apache License 2.0, see LICENSE.txt there): Parquet files written
// by parquet-mr with page CRCs, correct or deliberately wrong.

// readChecksumFile reads two columns of a parquet-testing file to the end.
func readChecksumFile(t *testing.T, name, x, y string) (rows int64, err error) {
	t.Helper()
	return readChecksumPath(filepath.Join("testdata", "parquet-testing", name), x, y)
}

// readChecksumPath reads two columns of a dataset (a path or URL) to the end.
func readChecksumPath(path, x, y string) (rows int64, err error) {
	ctx := context.Background()
	d, err := dataset.Resolve(ctx, []string{path}, dataset.Options{})
	if err != nil {
		return 0, err
	}
	r, err := decode.NewDatasetReader(ctx, d, nil, decode.Options{Columns: columns.Spec{X: []string{x}, Y: []string{y}}, BatchSize: 1000})
	if err != nil {
		return 0, err
	}
	defer r.Close()
	for r.Next() {
		rows += int64(r.Rows())
	}
	return rows, r.Err()
}

// TestPageChecksums reads files whose pages carry correct CRCs (plain and
// snappy, data pages v1 and v2, dictionary pages) and files with a wrong CRC,
// which must fail with one line naming the file, row group, column and page.
func TestPageChecksums(t *testing.T) {
	testPageChecksums(t, func(name, x, y string) (int64, error) { return readChecksumFile(t, name, x, y) })
	// The same with a probe of the first page header of every chunk (the
	// path of chunks larger than a buffer).
	defer decode.SetPageCRCWhole(decode.SetPageCRCWhole(0))
	testPageChecksums(t, func(name, x, y string) (int64, error) { return readChecksumFile(t, name, x, y) })
}

func testPageChecksums(t *testing.T, read func(name, x, y string) (int64, error)) {
	t.Helper()
	for _, c := range []struct {
		file, x, y string
		want       string // the error, or "" for a clean read
	}{
		{file: "datapage_v1-uncompressed-checksum.parquet", x: "a", y: "b"},
		{file: "datapage_v1-snappy-compressed-checksum.parquet", x: "a", y: "b"},
		{file: "plain-dict-uncompressed-checksum.parquet", x: "long_field", y: "long_field"},
		{file: "rle-dict-snappy-checksum.parquet", x: "long_field", y: "long_field"},
		// Page 0 of column a is corrupt (page 1 of b too, found later).
		{file: "datapage_v1-corrupt-checksum.parquet", x: "a", y: "b", want: `row group 0, column "a", page 0: checksum`},
		// Only b: its page 1 is the corrupt one.
		{file: "datapage_v1-corrupt-checksum.parquet", x: "b", y: "b", want: `row group 0, column "b", page 1: checksum`},
		// The dictionary page is page 0, its data page is page 1.
		{file: "rle-dict-uncompressed-corrupt-checksum.parquet", x: "long_field", y: "long_field", want: `row group 0, column "long_field", page 0: checksum`},
	} {
		rows, err := read(c.file, c.x, c.y)
		if c.want == "" {
			if err != nil || rows == 0 {
				t.Errorf("%s: %d rows, %v", c.file, rows, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s (%s, %s): %d rows read without an error", c.file, c.x, c.y, rows)
			continue
		}
		msg := err.Error()
		if !errors.Is(err, decode.ErrFormat) || !strings.Contains(msg, c.want) || !strings.Contains(msg, c.file) || strings.Contains(msg, "\n") {
			t.Errorf("%s: error %q: want ErrFormat, one line naming the file and %q", c.file, msg, c.want)
		}
	}
}

// TestPageChecksumFlip flips one byte in a page of a file with CRCs: without
// the check it is read silently (a changed value); with it, it is an error.
func TestPageChecksumFlip(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "parquet-testing", "datapage_v1-uncompressed-checksum.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	// Byte 1000 lies in the values of page 0 of column a (the first page
	// starts at byte 4 and holds 5,000+ bytes of int32 values).
	bad := append([]byte(nil), good...)
	bad[1000] ^= 0x10
	dir := t.TempDir()
	path := filepath.Join(dir, "flipped.parquet")
	if err := os.WriteFile(path, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := decode.Open(context.Background(), path, nil, decode.Options{Columns: columns.Spec{X: []string{"a"}, Y: []string{"b"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for r.Next() {
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), `row group 0, column "a", page 0: checksum`) {
		t.Errorf("flipped value byte: %v", err)
	}
}

// BenchmarkPageCRC reads a file whose pages carry CRCs (two uncompressed
// int32 columns, 5,120 rows, 41 KB) and one without (our writer's, 1,000,000
// rows of the bench columns), with and without the verification.
func BenchmarkPageCRC(b *testing.B) {
	withCRC := filepath.Join("testdata", "parquet-testing", "datapage_v1-uncompressed-checksum.parquet")
	withoutCRC := writeBenchFile(b, b.TempDir(), ".parquet", 1_000_000)
	for _, f := range []struct {
		name, path string
		x, y       []string
	}{{"crc", withCRC, []string{"a"}, []string{"b"}}, {"nocrc", withoutCRC, benchX, benchY}} {
		for _, skip := range []bool{false, true} {
			b.Run(fmt.Sprintf("file=%s/skip=%v", f.name, skip), func(b *testing.B) {
				decode.SkipPageCRC(skip)
				defer decode.SkipPageCRC(false)
				for range b.N {
					r, err := decode.Open(context.Background(), f.path, nil, decode.Options{Columns: columns.Spec{X: f.x, Y: f.y}})
					if err != nil {
						b.Fatal(err)
					}
					for r.Next() {
					}
					if r.Err() != nil {
						b.Fatal(r.Err())
					}
					r.Close()
				}
			})
		}
	}
}
