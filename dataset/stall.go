package dataset

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/dime-project/dime/internal/ioerr"
)

// DefaultStallTimeout is how long a request to object storage may go without
// an answer or a byte before it is abandoned, when neither
// Options.StallTimeout nor the environment variable DIME_STALL_TIMEOUT (a
// Go duration, e.g. 30s) says otherwise.
const DefaultStallTimeout = 2 * time.Minute

// stallTimeout returns the stall timeout of opts.
func (o *Options) stallTimeout() time.Duration {
	if o.StallTimeout > 0 {
		return o.StallTimeout
	}
	if d, err := time.ParseDuration(os.Getenv("DIME_STALL_TIMEOUT")); err == nil && d > 0 {
		return d
	}
	return DefaultStallTimeout
}

// stallGuard cancels the context of a request when a call on it (the
// request, or a read of its body) goes longer than d without returning: an
// endpoint that accepts and never answers, or stalls in the middle of a
// body. Between calls (while the decoder works) the clock stops.
type stallGuard struct {
	d      time.Duration
	cancel context.CancelFunc
	t      *time.Timer
	fired  atomic.Bool
}

func newStallGuard(ctx context.Context, d time.Duration) (context.Context, *stallGuard) {
	ctx, cancel := context.WithCancel(ctx)
	g := &stallGuard{d: d, cancel: cancel}
	g.t = time.AfterFunc(d, func() {
		g.fired.Store(true)
		cancel()
	})
	g.t.Stop()
	return ctx, g
}

func (g *stallGuard) start() { g.t.Reset(g.d) }
func (g *stallGuard) stop()  { g.t.Stop() }
func (g *stallGuard) close() { g.t.Stop(); g.cancel() }

// err returns the error of a call: one line saying that the endpoint stalled
// if the guard fired, else err.
func (g *stallGuard) err(source string, err error) error {
	if err != nil && g.fired.Load() {
		// An SDK that retries until its context ends (Google Cloud
		// Storage's does) keeps the last attempt's error: a connection
		// refused, a name that does not resolve.
		var oe *net.OpError
		if errors.As(err, &oe) {
			return ioerr.Storage(source, nil, "object storage could not be reached for %s, the last attempt: %v; --stall-timeout or DIME_STALL_TIMEOUT sets how long to keep trying", g.d, oe)
		}
		return ioerr.Storage(source, nil, "object storage sent nothing for %s (an endpoint that does not answer, or a stalled transfer); --stall-timeout or DIME_STALL_TIMEOUT sets how long to wait", g.d)
	}
	return err
}

// guardedReader is a body read under a stall guard.
type guardedReader struct {
	r      io.Reader
	g      *stallGuard
	source string
	fail   *readFailure
}

func (gr *guardedReader) Read(p []byte) (int, error) {
	gr.g.start()
	n, err := gr.r.Read(p)
	gr.g.stop()
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		if e := gr.g.err(gr.source, err); e != err {
			err = e
		} else {
			err = blobError(gr.source, err, "reading")
		}
	}
	return n, gr.fail.note(err)
}

// guarded runs a call (an attributes request, a page of a listing) with a
// stall guard of its own.
func guarded[T any](ctx context.Context, d time.Duration, source string, call func(context.Context) (T, error)) (T, error) {
	ctx, g := newStallGuard(ctx, d)
	defer g.close()
	g.start()
	v, err := call(ctx)
	g.stop()
	return v, g.err(source, err)
}
