package covariance

import "fmt"

// Relabel returns an accumulator that reads a's sum and weight under
// another description of the same dimension, sharing a's memory (no copy):
// for callers that accumulate features shared by several pairs of maps
// (package rank), where one sum is the Y part of one pair and the X part of
// another, and each pair's estimate needs its parts described as its own.
// The result must only be read (entropies, products of marginals, tests)
// while a is not changed; adding to either changes both.
func (a *Accumulator) Relabel(d Description) (*Accumulator, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Dim() != a.desc.Dim() {
		return nil, fmt.Errorf("%w: relabel a sum of %d features as %d", ErrIncompatible, a.desc.Dim(), d.Dim())
	}
	return &Accumulator{desc: d, sum: a.sum, weight: a.weight, prec: a.prec}, nil
}

// Relabel returns a mean that reads m's sums under another description of
// the same dimension, sharing m's memory, as Accumulator.Relabel does.
func (m *Mean) Relabel(d Description) (*Mean, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	if d.Dim() != m.desc.Dim() {
		return nil, fmt.Errorf("%w: relabel a mean of %d features as %d", ErrIncompatible, m.desc.Dim(), d.Dim())
	}
	return &Mean{desc: d, sum: m.sum, weight: m.weight, weight2: m.weight2}, nil
}
