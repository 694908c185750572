package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/dime-project/dime/internal/ioerr"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Object storage: a URL scheme://bucket/key?params names a bucket (the
// scheme, the host and the query parameters, which gocloud.dev's openers
// read: region, endpoint, use_path_style, …) and a key in it (the path).

// schemeOpeners open the buckets of some schemes in place of gocloud.dev's
// default openers (see drivers.go).
var schemeOpeners = map[string]func(context.Context, *url.URL) (*blob.Bucket, error){}

// schemes are the URL schemes the default bucket opener supports.
var schemes = []string{"s3", "gs", "azblob", "file"}

// isURL reports whether s is a URL rather than a local path.
func isURL(s string) bool {
	i := strings.Index(s, "://")
	if i <= 0 {
		return false
	}
	for _, c := range s[:i] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// objectURL is a parsed object-storage URL.
type objectURL struct {
	bucket string // the URL of the bucket: scheme, host, parameters
	key    string // the key or prefix in the bucket, without a leading "/"
	u      *url.URL
}

func parseObjectURL(s string) (objectURL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return objectURL{}, ioerr.New(ErrDataset, s, nil, "not a valid URL: %v", err)
	}
	b := url.URL{Scheme: u.Scheme, Host: u.Host, RawQuery: u.RawQuery}
	key := strings.TrimPrefix(u.Path, "/")
	if strings.EqualFold(u.Scheme, "file") {
		switch u.Host {
		case "", ".", "localhost":
		default:
			return objectURL{}, ioerr.New(ErrDataset, s, nil, "a file:// URL names a local path (file:///abs/path, or file://./rel/path), not host %q", u.Host)
		}
		if u.Host == "localhost" {
			b.Host = ""
		}
		// The path cleaned: file:///d/../d/ is /d/.
		if key != "" {
			clean := strings.TrimPrefix(path.Clean("/"+key), "/")
			if strings.HasSuffix(key, "/") && clean != "" {
				clean += "/"
			}
			key = clean
			u2 := *u
			u2.Path, u2.RawPath = "/"+key, ""
			u = &u2
		}
	}
	if u.Scheme == "file" {
		// fileblob's bucket is a directory: the root, or with the host "."
		// the current directory.
		b.Path = "/"
		if u.Host == "." {
			b.Path = "/."
		}
	}
	return objectURL{bucket: b.String(), key: key, u: u}, nil
}

// withKey returns the URL of another key of the same bucket.
func (o objectURL) withKey(key string) string {
	u := *o.u
	u.Path, u.RawPath = "/"+key, ""
	return u.String()
}

// buckets opens buckets by URL, once each, and closes them together.
type buckets struct {
	open  func(ctx context.Context, url string) (*blob.Bucket, error)
	stall time.Duration
	mu    sync.Mutex
	m     map[string]*blob.Bucket
}

func newBuckets(opts Options) *buckets {
	return &buckets{open: opts.OpenBucket, stall: opts.stallTimeout(), m: map[string]*blob.Bucket{}}
}

// get returns the bucket of the URL o.
func (b *buckets) get(ctx context.Context, o objectURL, source string) (*blob.Bucket, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if bk, ok := b.m[o.bucket]; ok {
		return bk, nil
	}
	open := b.open
	if open == nil {
		known := false
		for _, s := range schemes {
			known = known || strings.EqualFold(o.u.Scheme, s)
		}
		if !known {
			return nil, ioerr.New(ErrDataset, source, nil, "unsupported scheme %q (want a local path, or s3://, gs://, azblob:// or file://)", o.u.Scheme+"://")
		}
		open = blob.OpenBucket
		if so := schemeOpeners[strings.ToLower(o.u.Scheme)]; so != nil {
			open = func(ctx context.Context, bucket string) (*blob.Bucket, error) {
				u, err := url.Parse(bucket)
				if err != nil {
					return nil, err
				}
				return so(ctx, u)
			}
		}
	}
	bk, err := open(ctx, o.bucket)
	if err != nil {
		return nil, ioerr.New(ErrDataset, source, err, "cannot open the bucket")
	}
	b.m[o.bucket] = bk
	return bk, nil
}

func (b *buckets) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for k, bk := range b.m {
		bk.Close()
		delete(b.m, k)
	}
}

// blobError turns an error of object storage into one line naming the
// object, an error of the storage (ioerr.Storage) that wins over the
// decoder's error it causes. what says what failed; "reading" is a read of
// an object that was there when it was listed or opened.
func blobError(source string, err error, what string) error {
	if ioerr.IsStorage(err) { // already one line naming the source (a stall)
		return err
	}
	switch gcerrors.Code(err) {
	case gcerrors.NotFound:
		if what == "reading" {
			return ioerr.Storage(source, err, "reading: the object is gone (deleted since the dataset was listed?)")
		}
		return ioerr.Storage(source, err, "%s: not found", what)
	case gcerrors.PermissionDenied:
		return ioerr.Storage(source, err, "%s: permission denied", what)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if strings.HasPrefix(source, "s3://") && strings.Contains(err.Error(), "region") {
		what += " (set AWS_REGION, or add ?region=… to the URL)"
	}
	return ioerr.Storage(source, err, "%s", what)
}

// openObject returns the bucket and key of an object input and its size
// (size, or from the object's attributes when size < 0).
func openObject(ctx context.Context, bk *buckets, path string, size int64) (*blob.Bucket, string, int64, error) {
	o, err := parseObjectURL(path)
	if err != nil {
		return nil, "", 0, err
	}
	b, err := bk.get(ctx, o, path)
	if err != nil {
		return nil, "", 0, err
	}
	if size < 0 {
		attrs, err := guarded(ctx, bk.stall, path, func(ctx context.Context) (*blob.Attributes, error) { return b.Attributes(ctx, o.key) })
		if err != nil {
			return nil, "", 0, blobError(path, err, "reading the object's attributes")
		}
		size = attrs.Size
	}
	return b, o.key, size, nil
}

// resolveURL returns the data files of an object-storage URL: an object, a
// prefix (a key ending in "/", the bucket alone, or a key that is no
// object), or a glob.
func resolveURL(ctx context.Context, arg string, opts Options) ([]Input, error) {
	o, err := parseObjectURL(arg)
	if err != nil {
		return nil, err
	}
	bk := newBuckets(opts)
	defer bk.close()
	b, err := bk.get(ctx, o, arg)
	if err != nil {
		return nil, err
	}
	if isGlob(o.key) {
		if !doublestar.ValidatePattern(o.key) {
			return nil, ioerr.New(ErrDataset, arg, nil, "bad glob pattern")
		}
		base, glob := doublestar.SplitPattern(o.key)
		prefix := ""
		if base != "." {
			prefix = strings.TrimSuffix(base, "/") + "/"
		}
		s := &selection{arg: arg, glob: glob, format: opts.Format}
		if err := listPrefix(ctx, b, o, prefix, s, bk.stall, opts.Listing); err != nil {
			return nil, err
		}
		return s.result("the glob")
	}
	if o.key != "" && !strings.HasSuffix(o.key, "/") {
		attrs, err := guarded(ctx, bk.stall, arg, func(ctx context.Context) (*blob.Attributes, error) { return b.Attributes(ctx, o.key) })
		switch {
		case err == nil:
			f := opts.Format
			if f == Auto {
				if f, err = FormatFromPath(o.key); err != nil {
					return nil, ioerr.New(ErrFormat, arg, nil, "cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv); name the format explicitly")
				}
			}
			return []Input{{Path: arg, Size: attrs.Size, Format: f, Rows: -1}}, nil
		case gcerrors.Code(err) != gcerrors.NotFound:
			return nil, blobError(arg, err, "reading the object's attributes")
		}
		// No such object: a prefix?
		s := &selection{arg: arg, format: opts.Format}
		if err := listPrefix(ctx, b, o, o.key+"/", s, bk.stall, opts.Listing); err != nil {
			return nil, err
		}
		if s.matched == 0 && len(s.inputs) == 0 {
			return nil, ioerr.New(ErrDataset, arg, nil, "no such object or prefix in the bucket")
		}
		return s.result("the prefix")
	}
	s := &selection{arg: arg, format: opts.Format}
	if err := listPrefix(ctx, b, o, o.key, s, bk.stall, opts.Listing); err != nil {
		return nil, err
	}
	return s.result("the prefix")
}

// maxListed bounds the objects of one listing (a variable for the tests):
// a bucket that pages forever, or a prefix of hundreds of millions of
// objects, is an error rather than a process that grows until it dies.
var maxListed = 10_000_000

// listPrefix adds the objects under prefix to s, at most maxListed, and
// tells progress (Options.Listing) how it goes.
func listPrefix(ctx context.Context, b *blob.Bucket, o objectURL, prefix string, s *selection, stall time.Duration, progress func(string, int, bool)) error {
	it := b.List(&blob.ListOptions{Prefix: prefix})
	listed := 0
	if progress != nil {
		defer func() { progress(s.arg, listed, true) }()
	}
	for ; ; listed++ {
		if listed == maxListed {
			return ioerr.New(ErrDataset, s.arg, nil, "the listing goes on past %d objects: name a narrower prefix or glob", maxListed)
		}
		if progress != nil && listed%ListingEvery == 0 {
			progress(s.arg, listed, false)
		}
		obj, err := guarded(ctx, stall, s.arg, it.Next)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if gcerrors.Code(err) == gcerrors.NotFound {
				return ioerr.New(ErrDataset, s.arg, err, "the bucket does not exist")
			}
			return blobError(s.arg, err, "listing the bucket")
		}
		if obj.IsDir || strings.HasSuffix(obj.Key, "/") {
			continue
		}
		s.add(candidate{path: o.withKey(obj.Key), rel: strings.TrimPrefix(obj.Key, prefix), size: obj.Size})
	}
}

// blobFile reads an object at random, for Parquet and IPC files, with
// ranged reads. A read continues the ranged read (one GET) that ended where
// it starts, if there is one, so that a column chunk read page by page, or
// the messages of an IPC file, cost one request per window of blobWindow
// bytes rather than one per read; the bytes come as the decoder asks for
// them, never the whole object at once.
type blobFile struct {
	ctx    context.Context
	b      *blob.Bucket
	key    string
	source string
	size   int64
	pos    int64         // for Seek
	stall  time.Duration // the stall timeout of each request and read

	mu      sync.Mutex
	streams []*blobStream // open ranged reads, most recently used last
	extents []Extent      // ranges read whole (setExtents)
	fail    *readFailure  // notes the first failed read, if not nil
}

// blobStream is an open ranged read.
type blobStream struct {
	r        *blob.Reader
	g        *stallGuard
	pos, end int64 // next byte it gives, end of its range
}

// blobWindow is the most a ranged read asks for: a column chunk of a few
// MiB is one request; a read past it opens the next. (A variable for the
// tests.)
var blobWindow int64 = 8 << 20

// blobStreams is how many ranged reads stay open: one per Parquet column
// being read, and a few for footers and other reads.
const blobStreams = 64

func newBlobFile(ctx context.Context, b *blob.Bucket, key, source string, size int64, stall time.Duration) *blobFile {
	return &blobFile{ctx: ctx, b: b, key: key, source: source, size: size, stall: stall}
}

// ReadAt implements io.ReaderAt. An error of the storage is one line naming
// the object (blobError), noted in f.fail.
func (f *blobFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.readAt(p, off)
	return n, f.fail.note(err)
}

func (f *blobFile) readAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("negative offset %d", off)
	}
	if off >= f.size {
		return 0, io.EOF
	}
	want := len(p)
	var short error
	if off+int64(want) > f.size {
		want = int(f.size - off)
		short = io.EOF
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var s *blobStream
	for i, c := range f.streams {
		if c.pos == off && off+int64(want) <= c.end {
			s = c
			f.streams = append(append(f.streams[:i:i], f.streams[i+1:]...), s)
			break
		}
	}
	if s == nil {
		length := min(max(int64(want), blobWindow), f.size-off)
		if end := f.extentEnd(off); end >= off+int64(want) {
			length = min(length, max(end-off, blobSlack))
		}
		ctx, g := newStallGuard(f.ctx, f.stall)
		g.start()
		r, err := f.b.NewRangeReader(ctx, f.key, off, length, nil)
		g.stop()
		if err != nil {
			g.close()
			if e := g.err(f.source, err); e != err {
				return 0, e
			}
			return 0, blobError(f.source, err, "reading")
		}
		s = &blobStream{r: r, g: g, pos: off, end: off + length}
		if len(f.streams) == blobStreams {
			f.streams[0].r.Close()
			f.streams[0].g.close()
			f.streams = f.streams[1:]
		}
		f.streams = append(f.streams, s)
	}
	s.g.start()
	n, err := io.ReadFull(s.r, p[:want])
	s.g.stop()
	s.pos += int64(n)
	if err != nil {
		f.drop(s)
		if e := s.g.err(f.source, err); e != err {
			return n, e
		}
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return n, io.ErrUnexpectedEOF
		}
		return n, blobError(f.source, err, "reading")
	}
	if s.pos == s.end {
		f.drop(s)
	}
	return n, short
}

// Extent (see source.go) is a byte range [Off, End) of an object that its reader reads from
// start to end, such as a Parquet column chunk.

// blobSlack is how far a ranged read that starts in an extent may go past
// its end: small chunks that lie one after the other are then read with one
// request when they are read in order.
const blobSlack = 64 << 10

// setExtents tells f the byte ranges its reader reads whole: a ranged read
// that starts inside one asks for no more than blobSlack bytes past its end
// (and at most blobWindow in all), rather than for the next blobWindow bytes of the object.
// Without them, a column chunk of 1 MiB read through an 8 MiB window asked
// for 7 MiB that were never read: on object storage, bytes sent before the
// read is closed. The ranges are sorted by off and do not overlap.
func (f *blobFile) setExtents(ext []Extent) {
	f.mu.Lock()
	f.extents = ext
	f.mu.Unlock()
}

// extentEnd returns the end of the extent that holds off, or -1.
func (f *blobFile) extentEnd(off int64) int64 {
	i, _ := slices.BinarySearchFunc(f.extents, off, func(e Extent, off int64) int { return cmp.Compare(e.Off, off+1) })
	if i > 0 && off < f.extents[i-1].End {
		return f.extents[i-1].End
	}
	return -1
}

// ReadExact reads len(p) bytes at off with one GET of exactly those bytes,
// outside the open ranged reads: for a look at a few bytes (a page header)
// that the reader will not go on from.
func (f *blobFile) ReadExact(p []byte, off int64) (int, error) {
	n, err := f.readExact(p, off)
	return n, f.fail.note(err)
}

func (f *blobFile) readExact(p []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(p)) > f.size {
		return 0, io.ErrUnexpectedEOF
	}
	ctx, g := newStallGuard(f.ctx, f.stall)
	defer g.close()
	g.start()
	r, err := f.b.NewRangeReader(ctx, f.key, off, int64(len(p)), nil)
	if err != nil {
		g.stop()
		if e := g.err(f.source, err); e != err {
			return 0, e
		}
		return 0, blobError(f.source, err, "reading")
	}
	defer r.Close()
	n, err := io.ReadFull(r, p)
	g.stop()
	switch e := g.err(f.source, err); {
	case e != err:
		return n, e
	case err == nil:
		return n, nil
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		return n, io.ErrUnexpectedEOF
	}
	return n, blobError(f.source, err, "reading")
}

// drop closes a stream.
func (f *blobFile) drop(s *blobStream) {
	for i, c := range f.streams {
		if c == s {
			f.streams = append(f.streams[:i], f.streams[i+1:]...)
			break
		}
	}
	s.r.Close()
	s.g.close()
}

// Seek implements io.Seeker (Parquet's reader asks for the size).
func (f *blobFile) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += f.pos
	case io.SeekEnd:
		offset += f.size
	}
	if offset < 0 {
		return 0, fmt.Errorf("negative position %d", offset)
	}
	f.pos = offset
	return offset, nil
}

// Close closes the open ranged reads.
func (f *blobFile) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.streams {
		s.r.Close()
	}
	f.streams = nil
	return nil
}
