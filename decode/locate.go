package decode

import (
	"sort"

	"github.com/dime-project/dime/dataset"
)

// span records that the rows handed out from start on come from a unit,
// whose first row is row base of its input.
type span struct {
	start int64
	unit  int
	base  int64
}

// noteSpan records, when the reader takes its first rows from a unit, that
// the row start (among the rows handed out) is that unit's first.
func (r *DatasetReader) noteSpan(start int64) {
	if n := len(r.spans); n > 0 && r.spans[n-1].unit == r.head {
		return
	}
	r.mu.Lock()
	r.spans = append(r.spans, span{start: start, unit: r.head, base: r.queues[r.head].base})
	r.mu.Unlock()
}

// Locate returns the file (as errors name it: a path, a URL, or stdin) and
// the 0-based row in it of row, the 0-based index of a row among those Next
// has handed out, so that a consumer can name the origin of a row it
// refuses. The file row is exact when no row was skipped (see
// Options.SkipInvalid) in that file before it. ok is false for a negative
// row; a row not handed out yet is placed in the last file read. Locate may
// be called from any goroutine.
func (r *DatasetReader) Locate(row int64) (source string, fileRow int64, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := sort.Search(len(r.spans), func(i int) bool { return r.spans[i].start > row }) - 1
	if i < 0 || row < 0 {
		return "", 0, false
	}
	s := r.spans[i]
	return dataset.SourceName(r.d.Inputs[r.units[s.unit].input].Path), s.base + row - s.start, true
}
