package covariance

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"

	"github.com/dime-project/dime/internal/linalg"
	"github.com/dime-project/dime/rff"
)

// EncodedSize returns the length in bytes of the encoding (MarshalBinary) of
// an accumulator of D features: the header, the upper triangle of the 2D×2D
// sum and the checksum. It is 0 if D is out of range.
func EncodedSize(features int) int64 {
	if features < 1 || features > rff.MaxFeatures {
		return 0
	}
	p := 2 * int64(features)
	return headerSize + 8*p*(p+1)/2 + checksumSize
}

// StoredSize returns the bytes that an accumulator of D features stores:
// its packed upper triangle of the 2D×2D sum, 8·linalg.TriangleLen(2D)
// (1.03 MiB at D = 256, where a dense matrix takes 2 MiB). It is 0 if D is
// out of range.
func StoredSize(features int) int64 {
	if features < 1 || features > rff.MaxFeatures {
		return 0
	}
	return 8 * int64(linalg.TriangleLen(2*features))
}

// DecodeFrom reads one encoding of exactly n bytes from r, as MarshalBinary
// writes it, and sets a to it. On error the receiver is unchanged and the
// error matches ErrFormat (io.ErrUnexpectedEOF is reported as truncation);
// errors of r itself are returned wrapped.
//
// The values are read in chunks straight into the accumulator's packed
// triangle: the only large allocation is that triangle, 8·linalg.TriangleLen(2D)
// bytes, at most 60·2D bytes more than n (the strips' unused corners), and it is made
// only once the header has shown that n bytes hold it. Decoding a stream
// thus never allocates more than about what it reads.
func (a *Accumulator) DecodeFrom(r io.Reader, n int64) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	// readFull reads len(b) bytes; the end of r is truncation.
	readFull := func(b []byte) error {
		if _, err := io.ReadFull(r, b); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return bad("truncated: input ends before the %d bytes of the accumulator", n)
			}
			return fmt.Errorf("covariance: reading an accumulator: %w", err)
		}
		return nil
	}
	var head [headerSize]byte
	if n < int64(len(magic)) {
		return bad("not a dime accumulator (bad magic)")
	}
	if err := readFull(head[:min(n, headerSize)]); err != nil {
		return err
	}
	if string(head[:len(magic)]) != magic {
		return bad("not a dime accumulator (bad magic)")
	}
	if n < headerSize+checksumSize {
		return bad("truncated: %d bytes, header needs %d", n, headerSize+checksumSize)
	}
	if err := checkVersions(head[:]); err != nil {
		return err
	}
	le := binary.LittleEndian
	features := le.Uint32(head[12:])
	if features < 1 || features > rff.MaxFeatures {
		return bad("%d frequencies, want 1 to %d", features, rff.MaxFeatures)
	}
	if want := EncodedSize(int(features)); n != want {
		return bad("%d bytes, want %d for %d features (truncated or trailing data)", n, want, 2*features)
	}
	crc := crc32.Update(0, castagnoli, head[:])
	// The description and weight are checked after the checksum, so that a
	// corrupted byte is reported as such rather than as a strange value.
	p := 2 * int(features)
	sum := linalg.NewTriangle(p)
	buf := make([]byte, min(8*p, 1<<10)) // small: the matrix is most of what decoding allocates
	i, j := 0, 0                         // the next entry (i, i+j) of the upper triangle
	row := sum.Row(0)
	left := p * (p + 1) / 2
	firstBad := ""
	for left > 0 {
		chunk := buf[:8*min(len(buf)/8, left)]
		left -= len(chunk) / 8
		if err := readFull(chunk); err != nil {
			return err
		}
		crc = crc32.Update(crc, castagnoli, chunk)
		for off := 0; off < len(chunk); off += 8 {
			v := math.Float64frombits(le.Uint64(chunk[off:]))
			if (math.IsNaN(v) || math.IsInf(v, 0)) && firstBad == "" {
				firstBad = fmt.Sprintf("entry (%d, %d) is %v", i, i+j, v)
			}
			row[j] = v
			if j++; i+j == p {
				if i, j = i+1, 0; i < p {
					row = sum.Row(i)
				}
			}
		}
	}
	var tail [checksumSize]byte
	if err := readFull(tail[:]); err != nil {
		return err
	}
	if le.Uint32(tail[:]) != crc {
		return bad("checksum mismatch (corrupted)")
	}
	desc, err := parseHeader(head[:])
	if err != nil {
		return err
	}
	weight := math.Float64frombits(le.Uint64(head[52:]))
	if !(weight >= 0) || math.IsInf(weight, 0) {
		return bad("weight %v", weight)
	}
	if firstBad != "" {
		return bad("%s", firstBad)
	}
	a.desc, a.sum, a.weight = desc, sum, weight
	return nil
}

// UnmarshalBinary implements encoding.BinaryUnmarshaler. On error the
// receiver is unchanged; the error matches ErrFormat.
func (a *Accumulator) UnmarshalBinary(data []byte) error {
	return a.DecodeFrom(bytes.NewReader(data), int64(len(data)))
}
