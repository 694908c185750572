package cli

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/dime-project/dime/internal/redact"
)

// progress draws a one-line progress report on stderr: rows, rows per second
// and, when the total is known, percent and time left. It draws only when
// enabled (--progress always, or auto with stderr a terminal), at most every
// progressInterval, and erases its line when done, so that nothing of it is
// left in the output.
type progress struct {
	w         io.Writer
	enabled   bool
	label     string
	total     int64 // -1 when unknown
	start     time.Time
	last      time.Time
	mu        sync.Mutex
	drawn     bool
	fileCount fileCounter // nil: one input
}

// fileCounter counts the files of a dataset.
type fileCounter interface {
	Files() int
	FilesDone() int
}

// files makes the report show the files done out of the dataset's, when it
// has more than one.
func (p *progress) files(c fileCounter) *progress {
	if c.Files() > 1 {
		p.fileCount = c
	}
	return p
}

const progressInterval = 200 * time.Millisecond

// newProgress returns a progress report for mode "auto", "always" or "never".
func newProgress(e *env, mode, label string, total int64) *progress {
	enabled := mode == "always"
	if mode == "auto" {
		if f, ok := e.stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			enabled = true
		}
	}
	now := time.Now()
	return &progress{w: e.stderr, enabled: enabled, label: label, total: total, start: now}
}

// update reports that rows rows have been read so far.
func (p *progress) update(rows int64) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	elapsed := now.Sub(p.start).Seconds()
	rate := float64(rows) / max(elapsed, 1e-9)
	line := fmt.Sprintf("%s: %d rows, %.0f rows/s", p.label, rows, rate)
	if p.fileCount != nil {
		line += fmt.Sprintf(", files %d/%d", p.fileCount.FilesDone(), p.fileCount.Files())
	}
	if p.total > 0 {
		frac := min(float64(rows)/float64(p.total), 1)
		line += fmt.Sprintf(", %.1f%%", 100*frac)
		if rate > 0 && rows < p.total {
			left := time.Duration(float64(p.total-rows) / rate * float64(time.Second))
			line += fmt.Sprintf(", %s left", left.Round(time.Second))
		}
	}
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// status draws line as the progress line, at most every progressInterval.
func (p *progress) status(line string) {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	if now.Sub(p.last) < progressInterval {
		return
	}
	p.last = now
	fmt.Fprintf(p.w, "\r\033[K%s", line)
	p.drawn = true
}

// listing returns a dataset.Options.Listing that shows the objects listed
// so far on p's line, and erases it when the listing ends.
func (p *progress) listing() func(arg string, objects int, done bool) {
	if p == nil || !p.enabled {
		return nil
	}
	return func(arg string, objects int, done bool) {
		if done {
			p.done()
			return
		}
		p.status(fmt.Sprintf("listing %s: %d objects", redact.String(arg), objects))
	}
}

// done erases the progress line.
func (p *progress) done() {
	if p == nil || !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\033[K")
		p.drawn = false
	}
}
