package rank

import (
	"fmt"
	"slices"
	"strings"
)

// Group is a named group of columns scored as one view (dime rank
// --group name=a,b,c): Columns are selectors (names, globs or slices of a
// list column), expanded against the dataset.
type Group struct {
	Name    string
	Columns []string
}

// Probe returns the columns (labels) that the selectors x pick in a
// dataset, read with y as the other view, and their total width (a list
// column counts for its list size). The dime and dimebeam commands probe
// the dataset they will read (decode.OpenDataset).
type Probe func(x, y []string) (labels []string, width int, err error)

// Expand returns the labels that selectors pick in the dataset (with
// other as the other view) and the width of each label: one look at the
// dataset, and one per label when a list column or a slice is among them.
func Expand(probe Probe, sel, other []string) (labels []string, widths []int, err error) {
	labels, total, err := probe(sel, other)
	if err != nil {
		return nil, nil, err
	}
	widths = make([]int, len(labels))
	if total == len(labels) {
		for i := range widths {
			widths[i] = 1
		}
		return labels, widths, nil
	}
	for i, l := range labels {
		if _, widths[i], err = probe([]string{l}, other); err != nil {
			return nil, nil, err
		}
	}
	return labels, widths, nil
}

// Layout is how the views of a run lie in the rows that a dataset reader
// gives: the reader reads XColumns (every view's columns but the target's,
// in the order of the views) as its X and YColumns as its Y, and a row of
// the Plan is the reader's X row followed by its Y row.
type Layout struct {
	Plan Plan
	// XColumns and YColumns are the reader's selections.
	XColumns, YColumns []string
	// DimX and DimY are the widths of the reader's X and Y.
	DimX, DimY int
}

// AddView appends a view of the given labels and widths, read as the next
// columns of the reader's X.
func (l *Layout) AddView(name string, labels []string, widths []int) {
	v := View{Name: name, Columns: labels}
	for _, w := range widths {
		for range w {
			v.Index = append(v.Index, l.DimX)
			l.DimX++
		}
	}
	l.XColumns = append(l.XColumns, labels...)
	l.Plan.Views = append(l.Plan.Views, v)
}

// Row returns a row-major block of the Plan's rows from a reader's X and Y
// blocks of n rows, reusing dst.
func (l *Layout) Row(dst, x, y []float64, n int) []float64 {
	dx, dy := l.DimX, l.DimY
	W := dx + dy
	dst = slices.Grow(dst[:0], n*W)[:n*W]
	for i := range n {
		copy(dst[i*W:i*W+dx], x[i*dx:(i+1)*dx])
		copy(dst[i*W+dx:(i+1)*W], y[i*dy:(i+1)*dy])
	}
	return dst
}

// RankLayout returns the layout of a ranking of candidates (each column
// that the selectors pick is one candidate, a list column or a slice of
// one counting for its width; the target's own columns and repeats are
// left out), then the groups (one candidate each), against the target:
// every candidate is a pair's X, the target its Y, as dime rank and
// dimebeam rank score them.
func RankLayout(probe Probe, target, candidates []string, groups []Group) (Layout, error) {
	var lay Layout
	tlabels, twidths, err := Expand(probe, target, target)
	if err != nil {
		return lay, err
	}
	if len(candidates) > 0 {
		labels, widths, err := Expand(probe, candidates, target)
		if err != nil {
			return lay, err
		}
		seen := map[string]bool{}
		for _, l := range tlabels {
			seen[l] = true
		}
		for i, l := range labels {
			if seen[l] {
				continue
			}
			seen[l] = true
			lay.AddView(l, []string{l}, widths[i:i+1])
		}
	}
	for _, g := range groups {
		labels, widths, err := Expand(probe, g.Columns, target)
		if err != nil {
			return lay, err
		}
		lay.AddView(g.Name, labels, widths)
	}
	C := len(lay.Plan.Views)
	if C == 0 {
		return lay, invalidf("no candidate left once the target's columns are set aside")
	}
	t := View{Name: strings.Join(tlabels, ","), Columns: tlabels}
	for _, w := range twidths {
		for range w {
			t.Index = append(t.Index, lay.DimX+lay.DimY)
			lay.DimY++
		}
	}
	lay.YColumns = tlabels
	for i := range C {
		lay.Plan.Pairs = append(lay.Plan.Pairs, [2]int{i, C})
		lay.Plan.OrderX = append(lay.Plan.OrderX, i)
	}
	lay.Plan.Views = append(lay.Plan.Views, t)
	lay.Plan.OrderY = []int{C}
	lay.Plan.Width = lay.DimX + lay.DimY
	return lay, nil
}

// SameViews reports, as an error naming what differs, whether two plans
// score the same views and pairs: a state given as --like must.
func SameViews(a, b Plan) error {
	if !slices.EqualFunc(a.Views, b.Views, func(x, y View) bool {
		return x.Name == y.Name && slices.Equal(x.Columns, y.Columns) && slices.Equal(x.Index, y.Index)
	}) || !slices.Equal(a.Pairs, b.Pairs) {
		return fmt.Errorf("%w: the state scores other views or pairs; give the same columns and groups", ErrIncompatible)
	}
	return nil
}
