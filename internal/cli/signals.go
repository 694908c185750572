package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// interrupted is the error of a run that SIGINT or SIGTERM cut short after
// it printed what it had: Main exits with 128 + the signal's number (130,
// 143), as a shell reports a command killed by the signal.
type interrupted struct {
	sig  syscall.Signal
	what string // what was printed, e.g. "the result of the rows read"
}

func (e interrupted) Error() string {
	return fmt.Sprintf("interrupted by %s: printed %s", signalName(e.sig), e.what)
}

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// exitCode is the exit status of a run ended by e.
func (e interrupted) exitCode() int { return 128 + int(e.sig) }

// signals turns the first SIGINT or SIGTERM into the cancellation of a
// context, so that a command can end cleanly (print what it has) instead of
// being killed. A second signal is left to the default action.
type signals struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	mu     sync.Mutex
	got    os.Signal
	done   chan struct{}
}

// notifySignals starts catching SIGINT and SIGTERM; call stop when done.
func notifySignals() *signals {
	s := &signals{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case sig := <-s.ch:
			s.mu.Lock()
			s.got = sig
			s.mu.Unlock()
			// Restore the default action: a second signal kills.
			signal.Stop(s.ch)
			s.cancel()
		case <-s.done:
		}
	}()
	return s
}

// Done is closed at the first signal.
func (s *signals) Done() <-chan struct{} { return s.ctx.Done() }

// Context is cancelled at the first signal.
func (s *signals) Context() context.Context { return s.ctx }

// err returns the interrupted error of the signal received, saying what was
// printed, or nil if no signal came.
func (s *signals) err(what string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		return nil
	}
	sig, _ := s.got.(syscall.Signal)
	return interrupted{sig: sig, what: what}
}

// stop stops catching the signals.
func (s *signals) stop() {
	signal.Stop(s.ch)
	close(s.done)
	s.cancel()
}

// blocks calls a reader's Next on a goroutine of its own, so that a signal
// ends the wait for a block that does not come (a stalled pipe) while the
// block in hand is finished first. Only this type touches the reader between
// newBlocks and close; in between, the caller uses the block of the last
// next that returned ok, as with Next.
type blocks struct {
	r      blockReader
	req    chan struct{}
	ready  chan bool
	busy   bool // a Next is in flight
	closed bool
}

// blockReader is what blocks needs of a reader (a file's or a dataset's).
type blockReader interface {
	Next() bool
	Close() error
}

func newBlocks(r blockReader) *blocks {
	b := &blocks{r: r, req: make(chan struct{}), ready: make(chan bool)}
	go func() {
		for range b.req {
			b.ready <- r.Next()
		}
	}()
	return b
}

// next advances to the next block, like Next, unless a signal comes first
// (stopped); a signal already received stops it before it asks for a block.
func (b *blocks) next(done <-chan struct{}) (ok, stopped bool) {
	select {
	case <-done:
		return false, true
	default:
	}
	if !b.busy {
		b.req <- struct{}{}
		b.busy = true
	}
	select {
	case ok = <-b.ready:
		b.busy = false
		return ok, false
	case <-done:
		return false, true
	}
}

// idle reports whether no Next is in flight, so that the caller may read
// the reader's counts and error.
func (b *blocks) idle() bool { return !b.busy }

// close closes the reader as soon as no Next is in flight: now, or when the
// one in flight returns. Calls after the first do nothing.
func (b *blocks) close() {
	if b.closed {
		return
	}
	b.closed = true
	close(b.req)
	if !b.busy {
		b.r.Close()
		return
	}
	go func() {
		<-b.ready
		b.r.Close()
	}()
}
