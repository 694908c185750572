//go:build !dimefuzz

package decode_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/dime-project/dime/columns"
	"github.com/dime-project/dime/dataset"
	"github.com/dime-project/dime/decode"
	"github.com/dime-project/dime/tablewriter"

	"github.com/dime-project/dime/dimetest/s3test"
)

// TestPageChecksumsS3 reads the files of TestPageChecksums from a real
// S3-protocol server on loopback, with and without probes.
func TestPageChecksumsS3(t *testing.T) {
	srv := s3test.Start(t, "lake")
	entries, err := os.ReadDir(filepath.Join("testdata", "parquet-testing"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		srv.PutFile(t, "lake", e.Name(), filepath.Join("testdata", "parquet-testing", e.Name()))
	}
	read := func(name, x, y string) (int64, error) { return readChecksumPath(srv.URL("lake", name), x, y) }
	testPageChecksums(t, read)
	defer decode.SetPageCRCWhole(decode.SetPageCRCWhole(0))
	testPageChecksums(t, read)
}

// TestS3ReadsWhatItNeeds reads a Parquet file without CRCs (our writer's) of
// 4 row groups × 6 columns of 160 KB chunks from a real S3-protocol server:
// the ranged GETs ask for the file once, plus a probe of each chunk's first
// page header, plus the footer read twice (once for the row counts of the
// dataset, once to decode). Before the reads knew the column chunks' extents,
// each asked for an 8 MiB window (or the rest of the file): 6.1 times the
// file's bytes, 12 times with the CRC pass, on a 48 MB file.
func TestS3ReadsWhatItNeeds(t *testing.T) {
	const rows, groups = 80000, 4
	m := testMatrix(rows, dsCols, 7)
	path := filepath.Join(t.TempDir(), "f.parquet")
	writeMatrixFile(t, path, m, tablewriter.Options{RowGroupRows: rows / groups})
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := s3test.Start(t, "lake")
	srv.PutFile(t, "lake", "f.parquet", path)
	ctx := context.Background()
	for _, skip := range []bool{true, false} {
		decode.SkipPageCRC(skip)
		srv.Reset()
		d, err := dataset.Resolve(ctx, []string{srv.URL("lake", "f.parquet")}, dataset.Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := decode.NewDatasetReader(ctx, d, nil, decode.Options{Columns: columns.Spec{X: dsX, Y: dsY}})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for r.Next() {
			n += r.Rows()
		}
		if err := r.Close(); err != nil || n != rows {
			t.Fatalf("%d rows, %v", n, err)
		}
		var asked int64
		gets := srv.Gets("f.parquet")
		for _, g := range gets {
			var lo, hi int64
			if _, err := fmt.Sscanf(g.Range, "bytes=%d-%d", &lo, &hi); err != nil {
				t.Fatalf("GET %s %q: not one byte range", g.Path, g.Range)
			}
			asked += hi - lo + 1
		}
		// The footer of this file is under 4 KiB; Arrow's first read of
		// it asks for up to 64 KiB from the end.
		bound := info.Size() + 2*(64<<10)
		if !skip {
			bound += groups * dsCols * decode.PageCRCProbe
		}
		if asked > bound {
			t.Errorf("skip CRC %v: %d GETs asked for %d bytes of a %d-byte file (bound %d)", skip, len(gets), asked, info.Size(), bound)
		}
	}
	decode.SkipPageCRC(false)
}
