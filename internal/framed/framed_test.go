package framed

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

var errTest = errors.New("test state")

func encode(t *testing.T) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	w.Write([]byte("MAGIC"))
	w.Count(2)
	w.Piece(func(b []byte) ([]byte, error) { return append(b, "first"...), nil })
	w.Piece(func(b []byte) ([]byte, error) { return append(b, bytes.Repeat([]byte{7}, 3<<20)...), nil })
	if err := w.End(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func decode(data []byte) error {
	r := NewReader(bytes.NewReader(data), errTest)
	if b, err := r.Read(5, "the magic"); err != nil || string(b) != "MAGIC" {
		return errors.Join(err, errors.New("magic"))
	}
	n, err := r.Count("pieces")
	if err != nil {
		return err
	}
	for range n {
		if _, err := r.Sized("a piece"); err != nil {
			return err
		}
	}
	return r.End()
}

// TestRoundTrip: what a Writer writes a Reader reads, a piece longer than
// the Reader's 1 MiB chunks included; each damage is an error wrapping the
// sentinel and naming what went wrong.
func TestRoundTrip(t *testing.T) {
	data := encode(t)
	if err := decode(data); err != nil {
		t.Fatalf("round trip: %v", err)
	}
	flipped := bytes.Clone(data)
	flipped[100] ^= 1 // inside the second piece
	for _, c := range []struct {
		name string
		data []byte
		want string
	}{
		{"truncated", data[:len(data)-10], "truncated"},
		{"flipped", flipped, "checksum mismatch"},
		{"trailing", append(bytes.Clone(data), 0), "trailing data"},
	} {
		err := decode(c.data)
		if !errors.Is(err, errTest) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error wrapping the sentinel with %q", c.name, err, c.want)
		}
	}
}

// TestWriterKeepsFirstError: after a failed piece nothing more is written
// and End returns that error.
func TestWriterKeepsFirstError(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	bad := errors.New("bad piece")
	w.Piece(func(b []byte) ([]byte, error) { return nil, bad })
	w.Write([]byte("more"))
	w.Fail(errors.New("second"))
	if err := w.End(); err != bad || buf.Len() != 0 {
		t.Errorf("End: %v with %d bytes written, want the first error and nothing", err, buf.Len())
	}
}
