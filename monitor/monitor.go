package monitor

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/dime-project/dime/stream"
	"github.com/dime-project/dime/vocab"
)

// ErrLate is matched by the error of a row whose time lies before the
// current time window.
var ErrLate = vocab.NewSentinel("monitor: time goes backwards")

// LateError is the error of a row whose time lies before the current time
// window; it matches ErrLate.
type LateError struct {
	// Row is the 0-based index of the row among the rows added.
	Row int64
	// Time is the row's time, WindowStart the start of the current window.
	Time, WindowStart time.Time
}

func (e *LateError) Error() string {
	return fmt.Sprintf("%v: row %d has time %s, before the window that starts at %s",
		ErrLate, e.Row, e.Time.Format(time.RFC3339Nano), e.WindowStart.Format(time.RFC3339Nano))
}

// Is reports whether target is ErrLate.
func (e *LateError) Is(target error) bool { return target == ErrLate }

// ErrConfig is matched by the errors of an invalid Config.
var ErrConfig = vocab.NewSentinel("monitor: invalid configuration")

// Config chooses the windows, the estimator and the alerts. Exactly one of
// WindowRows (alone), Window, or HalfLife chooses the kind of window.
type Config struct {
	// Stream configures the estimator of each window (its HalfLife is set
	// from Config.HalfLife).
	Stream stream.Config
	// WindowRows is the length of tumbling windows in rows, or with
	// HalfLife the number of rows between reports (default: HalfLife).
	WindowRows int64
	// Window is the length of tumbling windows in time; rows need times.
	Window time.Duration
	// HalfLife, in rows, selects exponential decay.
	HalfLife float64
	// SkipLate drops rows whose time lies before the current window (and
	// counts them as skipped) instead of failing with ErrLate.
	SkipLate bool
	// AlertAbove and AlertBelow are thresholds on DiME, AlertP on the
	// p-value; nil leaves one unset.
	AlertAbove, AlertBelow, AlertP *float64

	// Baseline, if not nil, is the estimator of a reference period (a state
	// saved by dime score --save-state, read with stream.ReadState): each
	// window is compared with it (Window.Change). The windows are then
	// estimated with the baseline's settings and bandwidths, so that both
	// share their feature maps: of Config.Stream only Workers, SkipAnalytic
	// and the column names count. Not with HalfLife. The monitor reads the
	// baseline once, in New.
	Baseline *stream.Estimator
	// BaselineBlocks is the number K of blocks a window is cut into for
	// the jackknife of the change test (default DefaultBaselineBlocks):
	// windows of WindowRows rows every ⌈WindowRows/K⌉ rows, time windows
	// every Window/K. Each block holds an estimator (memory K + 1 times
	// one, about 20 MB each at D = 256, P = 5) and costs one more DiME per
	// window (stream.Estimator.DiMEOnly: with the analytic defaults 30
	// eigenproblems of size 2D, where a whole Result has 53).
	BaselineBlocks int
	// AlertChangeP alerts when the p-value of the change from the baseline
	// falls below it.
	AlertChangeP *float64

	// Rank, if not nil, monitors many pairs instead of one: every window
	// is ranked by a rank.Accumulator (Window.Ranking) and compared with
	// Rank's baseline, and a window alerts when a candidate changed. Of
	// Config.Stream nothing counts; not with HalfLife, Baseline or the
	// thresholds of one pair (AlertAbove, AlertBelow, AlertP).
	Rank *Ranking
}

// Threshold returns a pointer to v, to set an alert threshold.
func Threshold(v float64) *float64 { return &v }

// kind of window.
type kind uint8

const (
	byRows kind = iota
	byTime
	byDecay
)

// Window is one closed window.
type Window struct {
	Index              int
	StartRow, EndRow   int64     // rows [StartRow, EndRow) of those given to Add
	StartTime, EndTime time.Time // the bucket, for time windows; zero otherwise
	Rows               int64     // rows in the window (rows given to Add)
	Skipped            int64     // rows dropped upstream while the window was read
	Partial            bool      // closed by the end of the input, not by its boundary
	Result             stream.Result
	// Change compares the window with Config.Baseline; nil without one.
	Change *Change
	// Ranking is the window's ranking of many pairs (Config.Rank; nil
	// without); Result is then empty but for SkippedRows.
	Ranking      *Ranked
	Alert        bool
	AlertReasons []string
}

// Monitor cuts a stream of rows into windows and reports each closed window
// to its emit function. It is not safe for concurrent use.
type Monitor struct {
	cfg        Config
	kind       kind
	est        *stream.Estimator // the window's rows (with a baseline: merged from the blocks); nil with rk
	rk         *ranker           // with Config.Rank: the window's pairs
	dimX, dimY int
	emit       func(Window) error
	base       *baseline // nil without a baseline
	blockStart int64     // first row of the current block (baseline, row windows)
	blockRows  int64     // rows per block (baseline, row windows)
	index      int
	row        int64 // rows given to Add so far
	start      int64 // first row of the current window
	skipped    int64 // skipped while reading the current window
	bucket     int64 // current time bucket (byTime)
	haveBucket bool
	period     int64 // rows between reports (byRows, byDecay)
	// stale: est still holds the last closed window (for WriteState); it
	// is reset when the next rows or skips arrive.
	stale bool
}

// New returns a monitor of views with dimX and dimY columns.
func New(dimX, dimY int, cfg Config, emit func(Window) error) (*Monitor, error) {
	m := &Monitor{cfg: cfg, emit: emit, dimX: dimX, dimY: dimY}
	switch {
	case emit == nil:
		return nil, fmt.Errorf("%w: no emit function", ErrConfig)
	case cfg.HalfLife != 0:
		if !(cfg.HalfLife > 0) || math.IsInf(cfg.HalfLife, 0) || cfg.Window != 0 {
			return nil, fmt.Errorf("%w: half-life %v (a finite number of rows > 0, without a time window)", ErrConfig, cfg.HalfLife)
		}
		m.kind, m.period = byDecay, cfg.WindowRows
		if m.period == 0 {
			m.period = max(1, int64(math.Round(cfg.HalfLife)))
		}
		cfg.Stream.HalfLife = cfg.HalfLife
	case cfg.Window != 0:
		if cfg.Window < 0 || cfg.WindowRows != 0 {
			return nil, fmt.Errorf("%w: time window %v (want > 0, without a row window)", ErrConfig, cfg.Window)
		}
		m.kind = byTime
	default:
		m.kind, m.period = byRows, cfg.WindowRows
	}
	if (m.kind == byRows || m.kind == byDecay) && m.period < 1 {
		return nil, fmt.Errorf("%w: window of %d rows (want at least 1)", ErrConfig, m.period)
	}
	for _, v := range []*float64{cfg.AlertAbove, cfg.AlertBelow, cfg.AlertP} {
		if v != nil && (math.IsInf(*v, 0) || math.IsNaN(*v)) {
			return nil, fmt.Errorf("%w: alert threshold %v (want a finite number)", ErrConfig, *v)
		}
	}
	for _, p := range []*float64{cfg.AlertP, cfg.AlertChangeP} {
		if p != nil && !(*p > 0 && *p < 1) {
			return nil, fmt.Errorf("%w: p-value threshold %v (want between 0 and 1)", ErrConfig, *p)
		}
	}
	if cfg.Rank != nil {
		if m.kind == byDecay || cfg.Baseline != nil || cfg.AlertAbove != nil || cfg.AlertBelow != nil || cfg.AlertP != nil || cfg.AlertChangeP != nil {
			return nil, fmt.Errorf("%w: a ranking of many pairs takes row or time windows, its own baseline and no thresholds of one pair", ErrConfig)
		}
		rk, err := newRanker(*cfg.Rank, dimX, dimY)
		if err != nil {
			return nil, err
		}
		m.rk = rk
		return m, nil
	}
	scfg := cfg.Stream
	switch {
	case cfg.Baseline == nil && cfg.AlertChangeP != nil:
		return nil, fmt.Errorf("%w: a change threshold without a baseline", ErrConfig)
	case cfg.Baseline != nil && m.kind == byDecay:
		return nil, fmt.Errorf("%w: a baseline with exponential decay (use row or time windows)", ErrConfig)
	case cfg.Baseline != nil:
		if m.cfg.BaselineBlocks == 0 {
			m.cfg.BaselineBlocks = DefaultBaselineBlocks
		}
		if k := m.cfg.BaselineBlocks; k < 2 || k > MaxBaselineBlocks {
			return nil, fmt.Errorf("%w: %d baseline blocks (want 2 to %d)", ErrConfig, k, MaxBaselineBlocks)
		}
		var err error
		if m.base, scfg, err = newBaseline(cfg.Baseline, m.cfg, dimX, dimY); err != nil {
			return nil, err
		}
		m.blockRows = (m.period + int64(m.cfg.BaselineBlocks) - 1) / int64(m.cfg.BaselineBlocks)
	}
	est, err := stream.New(dimX, dimY, scfg)
	if err != nil {
		return nil, err
	}
	m.est = est
	return m, nil
}

// target is the estimator rows are added to: the window's, with a
// baseline the current block's, with a ranking the window's accumulator.
func (m *Monitor) target() interface {
	Add(x, y []float64, rows int) error
} {
	m.fresh()
	if m.rk != nil {
		return m.rk
	}
	if m.base != nil {
		return m.base.target()
	}
	return m.est
}

// fresh resets the estimator of the last closed window before it takes
// the next window's rows.
func (m *Monitor) fresh() {
	switch {
	case m.stale && m.rk != nil:
		m.rk.reset()
	case m.stale:
		m.est.Reset()
	}
	m.stale = false
}

// WriteState writes the state of the last closed window's estimator (with
// HalfLife, of the decayed estimator as of the last report), in the format
// of stream.Estimator.WriteState: after Close, the last window. It carries
// the window's settings, scales and bandwidths, so that a later run given it
// (dime monitor --like) estimates on the same feature maps. Not with a
// baseline, whose settings the windows take already.
func (m *Monitor) WriteState(w io.Writer) error {
	switch {
	case m.rk != nil:
		return fmt.Errorf("%w: no window state of a ranking", ErrConfig)
	case m.base != nil:
		return fmt.Errorf("%w: no window state with a baseline (the baseline holds the settings)", ErrConfig)
	case m.index == 0:
		return fmt.Errorf("%w: no window has closed", stream.ErrInvalidInput)
	case m.kind != byDecay && !m.stale:
		return fmt.Errorf("%w: the last window's rows are gone (rows came after it)", stream.ErrInvalidInput)
	}
	return m.est.WriteState(w)
}

// NeedsTimes reports whether Add needs the time of each row.
func (m *Monitor) NeedsTimes() bool { return m.kind == byTime }

// Add adds rows consecutive rows (row-major blocks of X and Y; times in
// nanoseconds since the Unix epoch for time windows, else nil), emitting
// every window they close. On an error (invalid values, a late row) the
// windows emitted so far stand and the current one keeps the rows before
// the error.
func (m *Monitor) Add(x, y []float64, times []int64, rows int) error {
	dx, dy := m.dimX, m.dimY
	if rows < 0 || len(x) != rows*dx || len(y) != rows*dy {
		return fmt.Errorf("%w: block of %d rows has %d X and %d Y values", stream.ErrInvalidInput, rows, len(x), len(y))
	}
	if m.kind == byTime {
		if len(times) != rows {
			return fmt.Errorf("%w: block of %d rows has %d times", stream.ErrInvalidInput, rows, len(times))
		}
		return m.addTimed(x, y, times, rows)
	}
	for rows > 0 {
		take := int(min(int64(rows), m.period-(m.row-m.start)))
		if m.base != nil {
			take = int(min(int64(take), m.blockRows-(m.row-m.blockStart)))
		}
		if err := m.target().Add(x[:take*dx], y[:take*dy], take); err != nil {
			return err
		}
		m.row += int64(take)
		x, y, rows = x[take*dx:], y[take*dy:], rows-take
		switch {
		case m.row-m.start == m.period:
			if err := m.close(false); err != nil {
				return err
			}
		case m.base != nil && m.row-m.blockStart == m.blockRows:
			m.base.next(-1)
			m.blockStart = m.row
		}
	}
	return nil
}

// addTimed adds rows to time windows, closing a window when a row of a later
// bucket arrives.
func (m *Monitor) addTimed(x, y []float64, times []int64, rows int) error {
	dx, dy := m.dimX, m.dimY
	w := int64(m.cfg.Window)
	run := 0 // rows of the current bucket not yet added, ending at i
	flush := func(end int) error {
		if run == 0 {
			return nil
		}
		lo := end - run
		err := m.target().Add(x[lo*dx:end*dx], y[lo*dy:end*dy], run)
		if err == nil {
			m.row += int64(run)
		}
		run = 0
		return err
	}
	for i, t := range times {
		b := floorDiv(t, w)
		switch {
		case !m.haveBucket:
			m.bucket, m.haveBucket = b, true
			m.toBlock(t)
		case b > m.bucket:
			if err := flush(i); err != nil {
				return err
			}
			if err := m.close(false); err != nil {
				return err
			}
			m.bucket = b
			m.toBlock(t)
		case b == m.bucket && m.base != nil && m.blockOf(t) > m.base.cur:
			if err := flush(i); err != nil {
				return err
			}
			m.toBlock(t)
		case b < m.bucket:
			if err := flush(i); err != nil {
				return err
			}
			if !m.cfg.SkipLate {
				return &LateError{Row: m.row, Time: time.Unix(0, t).UTC(), WindowStart: m.bucketStart()}
			}
			m.Skip(1)
			continue
		}
		run++
	}
	return flush(rows)
}

// floorDiv returns ⌊a/b⌋ for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// blockOf returns the block of the current time bucket that time t falls
// in: its k-th K-th, 0 ≤ k < K (with a baseline).
func (m *Monitor) blockOf(t int64) int {
	k := int64(m.cfg.BaselineBlocks)
	offset := t - m.bucket*int64(m.cfg.Window)
	return int(min(k-1, offset/max(1, int64(m.cfg.Window)/k)))
}

// toBlock makes the block of time t current (with a baseline).
func (m *Monitor) toBlock(t int64) {
	if m.base != nil {
		m.base.next(m.blockOf(t))
	}
}

func (m *Monitor) bucketStart() time.Time {
	return time.Unix(0, m.bucket*int64(m.cfg.Window)).UTC()
}

// Skip counts n rows dropped upstream while the current window was read.
func (m *Monitor) Skip(n int64) {
	m.fresh()
	m.skipped += n
	if m.est != nil {
		m.est.Skip(n)
	}
}

// Close emits the current window, if it has rows or skipped rows, as a
// partial window. Call it at the end of the input, or on a signal.
func (m *Monitor) Close() error {
	if m.row == m.start && m.skipped == 0 {
		return nil
	}
	return m.close(true)
}

// close emits the current window and starts the next.
func (m *Monitor) close(partial bool) error {
	m.fresh()
	win := Window{Index: m.index, StartRow: m.start, EndRow: m.row, Rows: m.row - m.start, Skipped: m.skipped, Partial: partial}
	if m.kind == byTime && m.haveBucket {
		win.StartTime = m.bucketStart()
		win.EndTime = win.StartTime.Add(m.cfg.Window)
	}
	switch {
	case m.rk != nil:
		if err := m.rk.window(&win); err != nil {
			return err
		}
	case m.base != nil:
		if _, err := m.base.window(m.est); err != nil {
			return err
		}
	}
	switch {
	case m.rk != nil:
	case m.est.Rows() >= 2:
		r, err := m.est.Result()
		if err != nil {
			return err
		}
		win.Result = r
	default:
		win.Result = m.est.NaNResult()
	}
	win.Result.SkippedRows = m.skipped
	if m.base != nil {
		ch, err := m.base.change(m.est, win.Result.DiME, win.Rows)
		if err != nil {
			return err
		}
		win.Change = ch
	}
	m.alerts(&win)
	if m.kind != byDecay {
		m.stale = true // reset when the next window's rows come
	}
	m.index++
	m.start, m.skipped, m.blockStart = m.row, 0, m.row
	return m.emit(win)
}

// alerts sets the window's alert from the thresholds.
func (m *Monitor) alerts(w *Window) {
	r, c := w.Result, m.cfg
	if c.AlertAbove != nil && r.DiME > *c.AlertAbove {
		w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("DiME %.4g above %g", r.DiME, *c.AlertAbove))
	}
	if c.AlertBelow != nil && r.DiME < *c.AlertBelow {
		w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("DiME %.4g below %g", r.DiME, *c.AlertBelow))
	}
	if c.AlertP != nil && r.PValue < *c.AlertP {
		w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("p-value %.3g below %g", r.PValue, *c.AlertP))
	}
	if ch := w.Change; c.AlertChangeP != nil && ch != nil && ch.PValue < *c.AlertChangeP {
		w.AlertReasons = append(w.AlertReasons, fmt.Sprintf("DiME changed from the baseline's %.4g by %+.4g ± %.2g (change p-value %.3g below %g)",
			ch.BaselineDiME, ch.Difference, ch.StdErr, ch.PValue, *c.AlertChangeP))
	}
	w.Alert = len(w.AlertReasons) > 0
}
