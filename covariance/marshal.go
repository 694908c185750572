package covariance

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"slices"

	"github.com/dime-project/dime/rff"
	"github.com/dime-project/dime/vocab"
)

// ErrFormat is matched by the errors of UnmarshalBinary on bytes that are not
// a valid encoding of an accumulator: truncated, corrupted, foreign, or of an
// unsupported version.
var ErrFormat = errors.New("covariance: invalid accumulator encoding")

// The encoding, version 1, little-endian:
//
//	offset size
//	0      6    magic "dimeCV"
//	6      1    format version (1)
//	7      1    rff.FrequencyVersion of the map
//	8      1    kernel
//	9      1    variant
//	10     1    part
//	11     1    reserved (0)
//	12     4    features D
//	16     4    index
//	20     4    width of X
//	24     4    width of Y
//	28     8    seed
//	36     8    sigma of X (IEEE 754 bits)
//	44     8    sigma of Y
//	52     8    weight
//	60     8·t  upper triangle of the sum, row by row, t = p(p+1)/2, p = 2D
//	60+8t  4    CRC-32C (Castagnoli) of every byte before it
const (
	magic         = "dimeCV"
	formatVersion = 1
	descSize      = 52 // magic, versions and description: appendHeader
	headerSize    = 60
	checksumSize  = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary implements encoding.BinaryMarshaler.
func (a *Accumulator) MarshalBinary() ([]byte, error) {
	return a.AppendBinary(nil)
}

// AppendBinary implements encoding.BinaryAppender: it appends the encoding of
// a to b.
func (a *Accumulator) AppendBinary(b []byte) ([]byte, error) {
	if a.empty() {
		return nil, fmt.Errorf("%w: cannot encode an accumulator without description", ErrInvalid)
	}
	start := len(b)
	p := a.Dim()
	b = appendHeader(b, magic, a.desc)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(a.weight))
	b = slices.Grow(b, 8*len(a.sum.Data)+checksumSize)
	for i := range p {
		for _, v := range a.sum.Row(i) {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoli)), nil
}

// appendHeader appends the first 52 bytes shared by the encodings of an
// Accumulator and of an ExactSum: their magic, the format and frequency
// versions and the description.
func appendHeader(b []byte, magic string, d Description) []byte {
	m := d.Map
	b = append(b, magic...)
	b = append(b, formatVersion, rff.FrequencyVersion, byte(m.Kernel), byte(m.Variant), byte(d.Part), 0)
	b = binary.LittleEndian.AppendUint32(b, uint32(m.Features))
	b = binary.LittleEndian.AppendUint32(b, uint32(d.Index))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.DimX))
	b = binary.LittleEndian.AppendUint32(b, uint32(m.DimY))
	b = binary.LittleEndian.AppendUint64(b, m.Seed)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.SigmaX))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(m.SigmaY))
	return b
}

// checkVersions checks the format and frequency versions of an encoding of
// at least descSize bytes.
func checkVersions(data []byte) error {
	if v := data[6]; v != formatVersion {
		return fmt.Errorf("%w: format version %d, this build reads version %d", ErrFormat, v, formatVersion)
	}
	if v := data[7]; v != rff.FrequencyVersion {
		return fmt.Errorf("%w: frequencies drawn by version %d, this build draws version %d", ErrFormat, v, rff.FrequencyVersion)
	}
	return nil
}

// parseHeader reads and validates the description that appendHeader wrote;
// the caller has checked the magic, the versions, the length (at least
// descSize bytes) and the checksum.
func parseHeader(data []byte) (Description, error) {
	bad := func(format string, args ...any) (Description, error) {
		return Description{}, fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
	}
	if data[11] != 0 {
		return bad("reserved byte is %d", data[11])
	}
	le := binary.LittleEndian
	desc := Description{
		Map: rff.PairSpec{
			Kernel:   vocab.Kernel(data[8]),
			Variant:  vocab.Variant(data[9]),
			Features: int(le.Uint32(data[12:])),
			DimX:     int(le.Uint32(data[20:])),
			DimY:     int(le.Uint32(data[24:])),
			Seed:     le.Uint64(data[28:]),
			SigmaX:   math.Float64frombits(le.Uint64(data[36:])),
			SigmaY:   math.Float64frombits(le.Uint64(data[44:])),
		},
		Part:  Part(data[10]),
		Index: int(le.Uint32(data[16:])),
	}
	if err := desc.Validate(); err != nil {
		return bad("description: %v", err)
	}
	return desc, nil
}
