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
// being killed. A second signal is left to the default action. A command
// opens its reader with Context before it catches the signals (catch): the
// reader honours the context, so that its Next returns false at the first
// signal, also while it waits for a block that does not come (a stalled
// pipe), and a signal that comes before catch kills the command as usual.
type signals struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal
	mu     sync.Mutex
	got    os.Signal
	done   chan struct{}
}

// newSignals returns the context that the first signal will cancel once
// catch is called; call stop when done.
func newSignals() *signals {
	s := &signals{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s
}

// notifySignals starts catching SIGINT and SIGTERM; call stop when done.
func notifySignals() *signals { return newSignals().catch() }

// catch starts catching SIGINT and SIGTERM, and returns s.
func (s *signals) catch() *signals {
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

// received reports whether a signal came.
func (s *signals) received() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.got != nil
}

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

// stop stops catching the signals. Calls after the first do nothing.
func (s *signals) stop() {
	signal.Stop(s.ch)
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.cancel()
}
