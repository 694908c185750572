package dataset

import (
	"context"
	"runtime"
	"time"

	"gocloud.dev/blob"

	"github.com/dime-project/dime/internal/ioerr"
)

// Errors of the dataset layer, matched with errors.Is: ErrDataset for the
// dataset as a whole (see Resolve), ErrFormat for the bytes of one file (an
// empty file, a directory, a Parquet footer that cannot be read). They are
// the same values as those of package decode.
var (
	ErrDataset = ioerr.ErrDataset
	ErrFormat  = ioerr.ErrFormat
)

// Options say which files make the dataset and how to reach them. The zero
// value is usable.
type Options struct {
	// Format is the file format; Auto (the zero value) tells it from the
	// file extension, and the path "-" (stdin) is read as an IPC stream. In
	// a directory, a Format other than Auto makes every file a data file.
	Format Format
	// Where keeps the files of a dataset whose hive partitions meet all
	// these conditions (see ParseWhere); the others are never opened.
	Where []Condition
	// StallTimeout is how long a request to object storage (opening a
	// bucket's object, a page of a listing, a ranged read, a read of a
	// body) may go without an answer or a byte: then it is abandoned with
	// an error that says so. 0 is the environment variable
	// DIME_STALL_TIMEOUT (a Go duration), or DefaultStallTimeout.
	StallTimeout time.Duration
	// OpenBucket opens the bucket of an object-storage URL (the URL without
	// the key: scheme, host and query parameters). The default is
	// gocloud.dev's blob.OpenBucket, which knows s3://, gs://, azblob:// and
	// file://; give your own for other schemes (mem:// in tests) or
	// credentials set in code.
	OpenBucket func(ctx context.Context, url string) (*blob.Bucket, error)
	// Listing, if not nil, is told how a listing of object storage goes:
	// called with the argument listed (a URL, as given) and the objects
	// listed so far, when it starts and every ListingEvery objects,
	// and once with done true when the listing ends (also on an error). A
	// listing of millions of objects takes minutes: the dime command shows
	// it on stderr, when that is a terminal. It is called on the goroutine
	// that calls Resolve.
	Listing func(arg string, objects int, done bool)
}

// ListingEvery is how many objects a listing goes through between two
// calls of Options.Listing.
const ListingEvery = 1000

// footerWorkers returns the number of goroutines that read the Parquet
// footers of local files: GOMAXPROCS, at least 2 and at most 4.
func footerWorkers() int {
	return max(2, min(runtime.GOMAXPROCS(0), 4))
}

// SourceName names an input in messages: its path, or "stdin" for "-".
func SourceName(path string) string {
	if path == "-" {
		return "stdin"
	}
	return path
}
