package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/dime-project/dime/internal/ioerr"
)

// File is an input read at random: an *os.File, or ranged reads of an
// object.
type File interface {
	io.ReaderAt
	io.Seeker
}

// Extent is a byte range [Off, End) of a file.
type Extent struct{ Off, End int64 }

// Source is the bytes of one input, open for a decoder: File for the
// formats read at random (Parquet, Arrow IPC files), Stream for the others
// (Arrow IPC streams, CSV). Close it in every case.
type Source struct {
	// Name names the input in messages: its path, or "stdin".
	Name string
	// Format is the input's format (never Auto).
	Format Format
	// Size is the input's size in bytes, or -1 (stdin, a pipe).
	Size int64
	// File reads the input at random; nil for a stream.
	File File
	// Stream reads the input from its start; for a local file it reads the
	// same *os.File as File.
	Stream io.Reader

	closers []io.Closer
	fail    *readFailure // the first failed read of File or Stream
}

// ReadErr returns the first error of the storage (an object not found or
// denied, a stalled endpoint, an I/O error of the operating system) that a
// read of File or Stream met, or nil. A decoder's error is the consequence
// of it, and says less: Arrow's Parquet column readers end a column early,
// without an error, when a page cannot be read, and report it as a corrupt
// file. A reader reports ReadErr, when there is one, in place of its
// decoder's error.
func (s *Source) ReadErr() error {
	if s.fail == nil {
		return nil
	}
	return s.fail.get()
}

// readFailure keeps the first error of the storage that the reads of a
// source met.
type readFailure struct {
	mu  sync.Mutex
	err error
}

// note keeps err if it is the first error of the storage (not io.EOF, not a
// short read) and returns it.
func (f *readFailure) note(err error) error {
	if f == nil || err == nil || err == io.EOF || err == io.ErrUnexpectedEOF {
		return err
	}
	keep := ioerr.IsStorage(err)
	if pe := ioerr.SystemError(err); !keep && pe != nil {
		keep, err = true, fmt.Errorf("dimeio: %w", pe)
	}
	if keep {
		f.mu.Lock()
		if f.err == nil {
			f.err = err
		}
		f.mu.Unlock()
	}
	return err
}

func (f *readFailure) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// localFile is a local file whose failed reads are noted.
type localFile struct {
	*os.File
	fail *readFailure
}

func (f *localFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	return n, f.fail.note(err)
}

func (f *localFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	return n, f.fail.note(err)
}

// Expect tells the ranged reads of an object which byte ranges the decoder
// will read, sorted (the column chunks of a Parquet file), so that a read
// does not ask for bytes past the end of its range. It does nothing for
// other inputs.
func (s *Source) Expect(ext []Extent) {
	if bf, ok := s.File.(*blobFile); ok {
		bf.setExtents(ext)
	}
}

// Close closes what Open opened (not stdin). It may be called more than
// once.
func (s *Source) Close() error {
	var first error
	for i := len(s.closers) - 1; i >= 0; i-- {
		if err := s.closers[i].Close(); err != nil && !errors.Is(err, os.ErrClosed) && first == nil {
			first = fmt.Errorf("dimeio: %w", err)
		}
	}
	s.closers = nil
	return first
}

// Storage opens the inputs of a dataset, sharing the buckets of object
// storage among them. Close it once its sources are closed.
type Storage struct {
	opts Options
	bk   *buckets
}

// NewStorage returns a Storage that opens buckets with opts.OpenBucket and
// abandons requests after opts.StallTimeout.
func NewStorage(opts Options) *Storage { return &Storage{opts: opts, bk: newBuckets(opts)} }

// Close closes the buckets opened.
func (s *Storage) Close() { s.bk.close() }

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// FormatOf returns the format of in: in.Format, else opts.Format, else the
// one its extension names.
func FormatOf(in Input, opts Options) (Format, error) {
	format := in.Format
	if format == Auto {
		format = opts.Format
	}
	if format == Auto {
		var err error
		if format, err = FormatFromPath(in.Path); err != nil {
			return Auto, ioerr.New(ErrFormat, SourceName(in.Path), nil, "cannot tell the format from the extension (want .parquet, .pq, .arrow, .ipc, .feather, .arrows or .csv); name the format explicitly")
		}
	}
	if format > CSV {
		return Auto, fmt.Errorf("dimeio: %s: unknown format %v", SourceName(in.Path), format)
	}
	return format, nil
}

// Open opens the bytes of in: stdin for the path "-" (read as a stream),
// an object of object storage (ranged reads for the formats read at random,
// one sequential read for the others), or a local file. ctx bounds the
// requests to object storage for the life of the Source. The error names
// the input: ErrFormat for an empty file, a directory, or a format read at
// random from stdin or a pipe.
func (st *Storage) Open(ctx context.Context, in Input, stdin io.Reader) (*Source, error) {
	format, err := FormatOf(in, st.opts)
	if err != nil {
		return nil, err
	}
	path := in.Path
	s := &Source{Name: SourceName(path), Format: format, Size: -1, fail: &readFailure{}}
	random := format == Parquet || format == IPCFile
	fail := func(err error) (*Source, error) {
		s.Close()
		return nil, err
	}
	switch {
	case path == "-":
		if stdin == nil {
			return nil, fmt.Errorf("dimeio: stdin: no standard input given")
		}
		if random {
			return nil, ioerr.New(ErrFormat, s.Name, nil, "%s needs a file that can be read at random; stdin can only be read as an IPC stream or CSV", format)
		}
		s.Stream = stdin
	case isURL(path):
		b, key, n, err := openObject(ctx, st.bk, path, in.Size)
		if err != nil {
			return fail(err)
		}
		s.Size = n
		if n == 0 {
			return fail(ioerr.New(ErrFormat, s.Name, nil, "empty file (0 bytes)"))
		}
		if random {
			f := newBlobFile(ctx, b, key, s.Name, n, st.opts.stallTimeout())
			f.fail = s.fail
			s.closers = append(s.closers, f)
			s.File = f
			break
		}
		gctx, g := newStallGuard(ctx, st.opts.stallTimeout())
		g.start()
		br, err := b.NewReader(gctx, key, nil)
		g.stop()
		if err != nil {
			g.close()
			if e := g.err(s.Name, err); e != err {
				return fail(e)
			}
			return fail(blobError(s.Name, err, "reading"))
		}
		s.closers = append(s.closers, br, closerFunc(func() error { g.close(); return nil }))
		s.Stream = &guardedReader{r: br, g: g, source: s.Name, fail: s.fail}
	default:
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("dimeio: %w", err)
		}
		s.closers = append(s.closers, f)
		info, err := f.Stat()
		if err != nil {
			return fail(fmt.Errorf("dimeio: %w", err))
		}
		switch {
		case info.IsDir():
			return fail(ioerr.New(ErrFormat, s.Name, nil, "is a directory"))
		case !info.Mode().IsRegular(): // a pipe, a device: a stream
			if random {
				return fail(ioerr.New(ErrFormat, s.Name, nil, "%s needs a regular file, which can be read at random; a pipe can only be read as an IPC stream or CSV", format))
			}
		case info.Size() == 0:
			return fail(ioerr.New(ErrFormat, s.Name, nil, "empty file (0 bytes)"))
		default:
			s.Size = info.Size()
		}
		lf := &localFile{File: f, fail: s.fail}
		s.Stream, s.File = lf, lf
	}
	return s, nil
}
