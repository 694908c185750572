package monitor

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/synth"
)

// TestWriteStateLastWindow: WriteState writes the last closed window, a
// partial one after Close, or a full one when the input ended on a
// boundary; its result is the window's. Before any window it is an error.
func TestWriteStateLastWindow(t *testing.T) {
	x, y := data(t, synth.Gaussian, 250, 1)
	for _, tc := range []struct{ rows, want int }{{250, 50}, {200, 100}} {
		var ws []Window
		m, err := New(2, 2, Config{Stream: streamConfig(), WindowRows: 100}, collect(&ws))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.WriteState(&bytes.Buffer{}); !errors.Is(err, stream.ErrInvalidInput) {
			t.Fatalf("before any window: got %v", err)
		}
		if err := feedBlocks(t, m, x[:2*tc.rows], y[:2*tc.rows], nil, 64); err != nil {
			t.Fatal(err)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := m.WriteState(&b); err != nil {
			t.Fatal(err)
		}
		st, err := stream.ReadState(&b)
		if err != nil {
			t.Fatal(err)
		}
		r, err := st.Result()
		if err != nil {
			t.Fatal(err)
		}
		last := ws[len(ws)-1]
		if st.Rows() != int64(tc.want) || r.DiME != last.Result.DiME {
			t.Fatalf("%d rows: state of %d rows, DiME %v; want %d rows, the last window's %v", tc.rows, st.Rows(), r.DiME, tc.want, last.Result.DiME)
		}
		// More rows start the next window: the state is gone.
		if err := m.Add(x[:2], y[:2], nil, 1); err != nil {
			t.Fatal(err)
		}
		if err := m.WriteState(&b); !errors.Is(err, stream.ErrInvalidInput) {
			t.Fatalf("after more rows: got %v", err)
		}
	}
}
