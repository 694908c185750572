package dataset

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/dime-project/dime/internal/ioerr"
)

// readFooter returns the rows of each row group of a Parquet input, from
// its footer.
func readFooter(ctx context.Context, bk *buckets, in Input, opts Options) (groups []int64, err error) {
	source := SourceName(in.Path)
	defer func() {
		if v := recover(); v != nil {
			err = ioerr.New(ErrFormat, source, nil, "corrupt Parquet file: the decoder failed (%v)", v)
		}
	}()
	var f File
	if isURL(in.Path) {
		b, key, size, err := openObject(ctx, bk, in.Path, in.Size)
		if err != nil {
			return nil, err
		}
		bf := newBlobFile(ctx, b, key, source, size, opts.stallTimeout())
		defer bf.Close()
		f = bf
	} else {
		lf, err := os.Open(in.Path)
		if err != nil {
			return nil, fmt.Errorf("dimeio: %w", err)
		}
		defer lf.Close()
		f = lf
	}
	props := parquet.NewReaderProperties(memory.DefaultAllocator)
	pf, err := file.NewParquetReader(f, file.WithReadProps(props))
	if err != nil {
		return nil, ioerr.New(ErrFormat, source, err, "not a Parquet file, or a truncated or corrupt one")
	}
	defer pf.Close()
	md := pf.MetaData()
	groups = make([]int64, pf.NumRowGroups())
	var total int64
	for i := range groups {
		groups[i] = md.RowGroup(i).NumRows()
		total += groups[i]
	}
	if total != md.NumRows {
		return nil, ioerr.New(ErrFormat, source, nil, "corrupt Parquet footer: row groups of %d rows in all, where the file says %d", total, md.NumRows)
	}
	return groups, nil
}

// parallel runs fn(ctx, 0), …, fn(ctx, n-1) on workers goroutines and
// returns the error of the lowest index that failed (so that the error does
// not depend on timing); it stops giving out work after a failure.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, n)
	var mu sync.Mutex
	next, failed := 0, false
	var wg sync.WaitGroup
	for w := 0; w < max(1, min(workers, n)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if failed || next == n {
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				if err := fn(ctx, i); err != nil {
					errs[i] = err
					mu.Lock()
					failed = true
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
