package arrowfix

import (
	"encoding/binary"
	"errors"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"
)

// CheckMetadata bounds the vectors of a message's metadata (a flatbuffer)
// by the bytes that hold them, before ipc.Reader sizes slices from their
// lengths: a schema whose fields vector claims 2^31 entries made it allocate
// the fields of all of them (hundreds of gigabytes, a fatal out-of-memory
// rather than an error), and a schema whose fields share children can
// describe exponentially many fields in a few bytes. The walk follows the
// layout of Arrow's Message.fbs and Schema.fbs:
//
//	Message:   version, header_type, header, bodyLength, custom_metadata
//	Schema:    endianness, fields, custom_metadata, features
//	Field:     name, nullable, type_type, type, dictionary, children, custom_metadata
//	RecordBatch: length, nodes, buffers, compression, variadicBufferCounts
//	DictionaryBatch: id, data, isDelta
//
// Every vector's elements must lie inside the metadata; a schema is checked
// by fbChecker, as the one a Parquet file embeds (arrowschema.go).
//
// A record batch's buffers must lie inside its body (bodyLen bytes), and
// when the batch is compressed, the uncompressed size that begins each
// buffer is bounded (see maxInflation), since ipc.Reader allocates it before
// it decompresses a byte: body holds the body once it is read (nil before).
func CheckMetadata(meta []byte, bodyLen int64, body []byte) (err error) {
	defer func() {
		if recover() != nil { // an offset out of range
			err = errors.New("corrupt message metadata")
		}
	}()
	if len(meta) < 4 {
		return errors.New("corrupt message metadata")
	}
	msg := flatbuffers.Table{Bytes: meta, Pos: flatbuffers.GetUOffsetT(meta)}
	if err := checkVector(&msg, 4, 4); err != nil { // custom_metadata
		return err
	}
	var header flatbuffers.Table
	if !union(&msg, 2, &header) {
		return nil
	}
	switch msg.GetByteSlot(slot(1), 0) { // header_type
	case 1: // Schema: its fields, types, names and key-values
		c := &fbChecker{buf: meta, budget: len(meta)}
		return c.message()
	case 2: // DictionaryBatch
		var data flatbuffers.Table
		if !table(&header, 1, &data) {
			return nil
		}
		return checkRecordBatch(&data, bodyLen, body)
	case 3: // RecordBatch
		return checkRecordBatch(&header, bodyLen, body)
	}
	return nil
}

// maxInflation bounds the uncompressed size of a compressed buffer to
// maxInflation times its compressed size (plus 1 MiB): LZ4 frames inflate at
// most about 255 times, zstd more on constant data, so that this refuses
// only sizes no compressor wrote.
const maxInflation = 1 << 12

// checkRecordBatch bounds a record batch's nodes and buffers (structs of 16
// bytes) and its variadic buffer counts (int64), each buffer by the body,
// and with compression the uncompressed sizes.
func checkRecordBatch(t *flatbuffers.Table, bodyLen int64, body []byte) error {
	for _, s := range []struct{ field, size int }{{1, 16}, {2, 16}, {4, 8}} {
		if err := checkVector(t, s.field, s.size); err != nil {
			return err
		}
	}
	o := t.Offset(slot(2))
	if o == 0 {
		return nil
	}
	compressed := t.Offset(slot(3)) != 0
	n := t.VectorLen(flatbuffers.UOffsetT(o))
	start := t.Vector(flatbuffers.UOffsetT(o))
	for i := 0; i < n; i++ {
		at := start + flatbuffers.UOffsetT(16*i)
		off := flatbuffers.GetInt64(t.Bytes[at:])
		size := flatbuffers.GetInt64(t.Bytes[at+8:])
		if off < 0 || size < 0 || size > bodyLen || off > bodyLen-size {
			return fmt.Errorf("corrupt message metadata: buffer %d at %d of %d bytes in a body of %d", i, off, size, bodyLen)
		}
		if !compressed || body == nil || size < 8 {
			continue
		}
		raw := int64(binary.LittleEndian.Uint64(body[off:]))
		if raw != -1 && (raw < 0 || raw > maxInflation*size+1<<20) {
			return fmt.Errorf("corrupt record batch: buffer %d of %d compressed bytes claims %d uncompressed", i, size, raw)
		}
	}
	return nil
}

// checkVector checks that the vector at field index f of t (if present)
// has its elements of size bytes inside t's buffer.
func checkVector(t *flatbuffers.Table, f, size int) error {
	o := t.Offset(slot(f))
	if o == 0 {
		return nil
	}
	n := t.VectorLen(flatbuffers.UOffsetT(o))
	start := int(t.Vector(flatbuffers.UOffsetT(o)))
	if n < 0 || start > len(t.Bytes) || n > (len(t.Bytes)-start)/size {
		return fmt.Errorf("corrupt message metadata: a vector of %d entries in %d bytes", n, len(t.Bytes))
	}
	return nil
}

// union points u at the union (a table) at field index f of t.
func union(t *flatbuffers.Table, f int, u *flatbuffers.Table) bool {
	o := t.Offset(slot(f))
	if o == 0 {
		return false
	}
	t.Union(u, flatbuffers.UOffsetT(o))
	return true
}

// table points u at the table at field index f of t.
func table(t *flatbuffers.Table, f int, u *flatbuffers.Table) bool {
	o := t.Offset(slot(f))
	if o == 0 {
		return false
	}
	u.Bytes, u.Pos = t.Bytes, t.Indirect(flatbuffers.UOffsetT(o)+t.Pos)
	return true
}

// slot is the vtable offset of field index f.
func slot(f int) flatbuffers.VOffsetT { return flatbuffers.VOffsetT(4 + 2*f) }
