package stream

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/dime-project/dime/synth"
)

// endlessReader serves prefix, then fill forever, counting what it served.
type endlessReader struct {
	prefix []byte
	fill   byte
	served int64
}

func (e *endlessReader) Read(p []byte) (int, error) {
	n := copy(p, e.prefix)
	e.prefix = e.prefix[n:]
	for i := n; i < len(p); i++ {
		p[i] = e.fill
	}
	e.served += int64(len(p))
	return len(p), nil
}

// TestReadStateFromEndlessPipes: from a reader of unknown size (a pipe),
// ReadState checks the header before it reads on, and stops once the input
// goes past what the header says: dime merge /dev/zero, monitor --baseline
// /dev/zero and a state followed by endless bytes end with an error after
// at most the state and one chunk. Before, the input was read whole first:
// out of memory.
func TestReadStateFromEndlessPipes(t *testing.T) {
	x, y := rows(t, synth.Spec{Kind: synth.Gaussian, Dim: 2, MI: 1, Seed: 6}, 200)
	cfg := DefaultConfig()
	cfg.Features = 16
	e, _ := New(2, 2, cfg)
	addBlocks(t, e, x, y, 2, 200)
	var good bytes.Buffer
	if err := e.WriteState(&good); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		prefix []byte
		fill   byte
		want   string
	}{
		{"zeros", nil, 0, "bad magic"},
		{"random-looking bytes", nil, 0xA7, "bad magic"},
		{"a header, then zeros", good.Bytes()[:200], 0, "invalid state"},
		{"a state, then more", good.Bytes(), 1, "and the input goes on"},
	} {
		src := &endlessReader{prefix: c.prefix, fill: c.fill}
		_, err := ReadState(src)
		if !errors.Is(err, ErrState) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrState with %q", c.name, err, c.want)
		}
		if bound := int64(good.Len()) + spoolChunk; src.served > bound {
			t.Errorf("%s: read %d bytes, more than the state and a chunk (%d)", c.name, src.served, bound)
		}
	}
	// The state itself, from a pipe, reads.
	got, err := ReadState(io.MultiReader(bytes.NewReader(good.Bytes())))
	if err != nil || got.Rows() != 200 {
		t.Fatalf("from a pipe: %v", err)
	}
}
