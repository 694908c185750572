// Package framed writes and reads the framing of dime's exact sums (package
// stream's Sum and package rank's): a stream of pieces, some preceded by
// their length (4 bytes, little-endian), under a running CRC-32C
// (Castagnoli) that ends the stream.
//
// A Writer remembers its first error; every later call does nothing, and
// End returns it. A Reader holds one piece at a time and reads what a
// piece's length claims in chunks of at most 1 MiB, so that it holds what
// came, not what a corrupted length says. Its errors wrap the sentinel it
// was given (the package's ErrState) as "<sentinel>: sum: ...".
package framed

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Writer writes pieces to an io.Writer, computing their checksum.
type Writer struct {
	w   io.Writer
	crc uint32
	buf []byte
	err error
}

// NewWriter returns a Writer to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write writes b as it is.
func (w *Writer) Write(b []byte) {
	if w.err != nil {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli, b)
	_, w.err = w.w.Write(b)
}

// Fail records err (if not nil) as the Writer's error unless it has one.
func (w *Writer) Fail(err error) {
	if err != nil && w.err == nil {
		w.err = err
	}
}

// Count writes a number of pieces (4 bytes).
func (w *Writer) Count(n int) {
	w.Write(binary.LittleEndian.AppendUint32(nil, uint32(n)))
}

// Piece writes a field and its length (4 bytes), as appendTo appends it.
func (w *Writer) Piece(appendTo func([]byte) ([]byte, error)) {
	if w.err != nil {
		return
	}
	b, err := AppendSized(w.buf[:0], appendTo)
	if err != nil {
		w.err = err
		return
	}
	w.Write(b)
	w.buf = b
}

// End writes the checksum and returns the first error.
func (w *Writer) End() error {
	w.Write(binary.LittleEndian.AppendUint32(nil, w.crc))
	return w.err
}

// AppendSized appends a 4-byte length and what appendTo appends.
func AppendSized(b []byte, appendTo func([]byte) ([]byte, error)) ([]byte, error) {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b, err := appendTo(b)
	if err != nil {
		return nil, err
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-4))
	return b, nil
}

// Reader reads pieces from an input of unknown length, computing their
// checksum.
type Reader struct {
	r        io.Reader
	crc      uint32
	sentinel error
}

// NewReader returns a Reader of r whose errors wrap sentinel.
func NewReader(r io.Reader, sentinel error) *Reader { return &Reader{r: r, sentinel: sentinel} }

// Bad returns an error of malformed input.
func (r *Reader) Bad(format string, args ...any) error {
	return fmt.Errorf("%w: sum: %s", r.sentinel, fmt.Sprintf(format, args...))
}

// Read reads exactly n bytes, adding them to the checksum.
func (r *Reader) Read(n uint64, what string) ([]byte, error) {
	var b []byte
	for uint64(len(b)) < n {
		chunk := min(n-uint64(len(b)), 1<<20)
		b = slices.Grow(b, int(chunk))
		k, err := io.ReadFull(r.r, b[len(b):len(b)+int(chunk)])
		b = b[:len(b)+k]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, r.Bad("truncated: %s", what)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: sum: reading %s: %v", r.sentinel, what, err)
		}
	}
	r.crc = crc32.Update(r.crc, castagnoli, b)
	return b, nil
}

// Count reads a number of pieces (4 bytes).
func (r *Reader) Count(what string) (int, error) {
	b, err := r.Read(4, "the number of "+what)
	if err != nil {
		return 0, err
	}
	return int(binary.LittleEndian.Uint32(b)), nil
}

// Sized reads a field and its 4-byte length.
func (r *Reader) Sized(what string) ([]byte, error) {
	n, err := r.Read(4, what)
	if err != nil {
		return nil, err
	}
	return r.Read(uint64(binary.LittleEndian.Uint32(n)), what)
}

// End reads and checks the checksum, and that nothing follows it.
func (r *Reader) End() error {
	want := r.crc
	b, err := r.Read(4, "the checksum")
	if err != nil {
		return err
	}
	if binary.LittleEndian.Uint32(b) != want {
		return r.Bad("checksum mismatch (truncated or corrupted)")
	}
	var one [1]byte
	n, err := io.ReadFull(r.r, one[:])
	if n != 0 {
		return r.Bad("trailing data after the checksum")
	}
	if err != nil && err != io.EOF {
		return fmt.Errorf("%w: sum: at its end: %v", r.sentinel, err)
	}
	return nil
}
