package arrowfix

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/apache/arrow/go/v15/parquet/metadata"
)

// CheckEmbeddedArrowSchema checks the Arrow schema that writers embed in a
// Parquet file's metadata (key "ARROW:schema", an IPC schema message in
// base64) before pqarrow decodes it. Arrow's decoder trusts the lengths of
// the flatbuffer's vectors: a corrupt length makes it allocate hundreds of
// gigabytes, a fatal out-of-memory that no recover catches. Here every
// vector and string that the decoder will allocate from is checked against
// the size of the message. Malformed offsets make the flatbuffers runtime
// panic, which recoverDecoder, deferred by the caller, reports.
func CheckEmbeddedArrowSchema(meta metadata.KeyValueMetadata) error {
	if meta == nil {
		return nil
	}
	serialized := meta.FindValue("ARROW:schema")
	if serialized == nil {
		return nil
	}
	// As pqarrow decodes it: padded base64, else unpadded.
	var blob []byte
	var err error
	if len(*serialized)%4 == 0 {
		blob, err = base64.StdEncoding.DecodeString(*serialized)
	}
	if len(blob) == 0 || err != nil {
		if blob, err = base64.RawStdEncoding.DecodeString(*serialized); err != nil {
			return nil // pqarrow reports an undecodable value itself
		}
	}
	// IPC framing: an optional continuation marker, then the length.
	le := binary.LittleEndian
	if len(blob) >= 4 && le.Uint32(blob) == 0xFFFFFFFF {
		blob = blob[4:]
	}
	if len(blob) < 4 {
		return fmt.Errorf("embedded Arrow schema of %d bytes", len(blob))
	}
	n := int64(int32(le.Uint32(blob)))
	blob = blob[4:]
	if n < 4 || n > int64(len(blob)) {
		return fmt.Errorf("embedded Arrow schema claims %d bytes, has %d", n, len(blob))
	}
	// Arrow's message reader allocates the body that the metadata declares
	// before it reads a byte of it: a schema has none, and a body of more
	// than the bytes left is garbage.
	if err := CheckMetadata(blob[:n], int64(len(blob))-n, nil); err != nil {
		return err
	}
	root := flatbuffers.Table{Bytes: blob[:n], Pos: flatbuffers.GetUOffsetT(blob)}
	if body := root.GetInt64Slot(slot(3), 0); body < 0 || body > int64(len(blob))-n {
		return fmt.Errorf("embedded Arrow schema declares a body of %d bytes, has %d", body, int64(len(blob))-n)
	}
	return nil
}

// fbChecker checks the vectors of an Arrow IPC schema message.
type fbChecker struct {
	buf    []byte
	budget int // tables left to visit: a message of n bytes has fewer than n
}

func (c *fbChecker) table(pos flatbuffers.UOffsetT) (*flatbuffers.Table, error) {
	if c.budget--; c.budget < 0 {
		return nil, fmt.Errorf("embedded Arrow schema has more tables than bytes")
	}
	if int(pos)+4 > len(c.buf) {
		return nil, fmt.Errorf("embedded Arrow schema table out of bounds")
	}
	return &flatbuffers.Table{Bytes: c.buf, Pos: pos}, nil
}

// field returns the offset of a table's field (slot), 0 if absent.
func field(t *flatbuffers.Table, slot int) flatbuffers.UOffsetT {
	return flatbuffers.UOffsetT(t.Offset(flatbuffers.VOffsetT(4 + 2*slot)))
}

// vector checks the vector (or string) in a slot and returns its start and
// length.
func (c *fbChecker) vector(t *flatbuffers.Table, slot, elemSize int) (flatbuffers.UOffsetT, int, error) {
	o := field(t, slot)
	if o == 0 {
		return 0, 0, nil
	}
	start, n := t.Vector(o), t.VectorLen(o)
	if n < 0 || int64(start)+int64(n)*int64(elemSize) > int64(len(c.buf)) {
		return 0, 0, fmt.Errorf("embedded Arrow schema has a vector of %d elements in a message of %d bytes", n, len(c.buf))
	}
	return start, n, nil
}

// tables checks a vector of tables and each table with check.
func (c *fbChecker) tables(t *flatbuffers.Table, slot int, check func(*flatbuffers.Table) error) error {
	start, n, err := c.vector(t, slot, 4)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		at := start + flatbuffers.UOffsetT(4*i)
		sub, err := c.table(at + flatbuffers.GetUOffsetT(c.buf[at:]))
		if err != nil {
			return err
		}
		if err := check(sub); err != nil {
			return err
		}
	}
	return nil
}

// subTable returns the table in a slot (or a union's value), nil if absent.
func (c *fbChecker) subTable(t *flatbuffers.Table, slot int) (*flatbuffers.Table, error) {
	o := field(t, slot)
	if o == 0 {
		return nil, nil
	}
	return c.table(t.Indirect(t.Pos + o))
}

// message checks Message { version, header_type, header: Schema, ... }.
func (c *fbChecker) message() error {
	root, err := c.table(flatbuffers.GetUOffsetT(c.buf))
	if err != nil {
		return err
	}
	schema, err := c.subTable(root, 2)
	if err != nil || schema == nil {
		return err
	}
	// Schema { endianness, fields: [Field], custom_metadata: [KeyValue], features: [long] }
	if err := c.tables(schema, 1, func(f *flatbuffers.Table) error { return c.field(f, 0) }); err != nil {
		return err
	}
	if err := c.tables(schema, 2, c.keyValue); err != nil {
		return err
	}
	_, _, err = c.vector(schema, 3, 8)
	return err
}

// keyValue checks KeyValue { key: string, value: string }.
func (c *fbChecker) keyValue(kv *flatbuffers.Table) error {
	if _, _, err := c.vector(kv, 0, 1); err != nil {
		return err
	}
	_, _, err := c.vector(kv, 1, 1)
	return err
}

// Arrow's flatbuffer type ids whose tables hold vectors or strings.
const (
	fbTypeTimestamp = 10 // Timestamp { unit, timezone: string }
	fbTypeUnion     = 14 // Union { mode, typeIds: [int] }
)

// field checks Field { name, nullable, type_type, type, dictionary,
// children: [Field], custom_metadata: [KeyValue] }.
func (c *fbChecker) field(f *flatbuffers.Table, depth int) error {
	if depth > 64 {
		return fmt.Errorf("embedded Arrow schema nests fields more than 64 deep")
	}
	if _, _, err := c.vector(f, 0, 1); err != nil {
		return err
	}
	typ, err := c.subTable(f, 3)
	if err != nil {
		return err
	}
	if typ != nil {
		switch f.GetByteSlot(flatbuffers.VOffsetT(4+2*2), 0) {
		case fbTypeTimestamp:
			_, _, err = c.vector(typ, 1, 1)
		case fbTypeUnion:
			_, _, err = c.vector(typ, 1, 4)
		}
		if err != nil {
			return err
		}
	}
	if err := c.tables(f, 5, func(child *flatbuffers.Table) error { return c.field(child, depth+1) }); err != nil {
		return err
	}
	return c.tables(f, 6, c.keyValue)
}
