package covariance

import (
	"fmt"

	"gonum.org/v1/gonum/mat"
)

// SumGroups returns a new accumulator holding the sum of accs: accumulators
// of the same part and map that differ only by their Index, groups of rows
// (package stream splits its rows into groups for a jackknife). The result
// has Index 0; nil or empty entries are skipped. It is an error matching
// ErrInvalid if no accumulator has a description, and ErrIncompatible if two
// differ by more than their Index.
func SumGroups(accs ...*Accumulator) (*Accumulator, error) {
	var out *Accumulator
	for _, a := range accs {
		if a == nil || a.empty() {
			continue
		}
		if out == nil {
			desc := a.desc
			desc.Index = 0
			var err error
			if out, err = New(desc); err != nil {
				return nil, err
			}
		}
		if err := out.addGroup(a); err != nil {
			return nil, err
		}
	}
	if out == nil {
		return nil, fmt.Errorf("%w: no accumulator to sum", ErrInvalid)
	}
	return out, nil
}

// SumGroupsTo writes to dst (allocated if nil, resized if empty) the sum
// Σφφᵀ of accs (upper triangle), accumulators that differ only by their
// Index as for SumGroups, adding them in order to zero as SumGroups does:
// the matrix equals SumGroups(accs...).Sum() bit for bit, and nothing is
// allocated but dst. It returns dst and the total weight.
func SumGroupsTo(dst *mat.SymDense, accs ...*Accumulator) (*mat.SymDense, float64, error) {
	var first *Accumulator
	for _, a := range accs {
		if a == nil || a.empty() {
			continue
		}
		if first == nil {
			first = a
			var err error
			if dst, err = symDst(dst, a.Dim()); err != nil {
				return nil, 0, err
			}
			raw := dst.RawSymmetric()
			for i := 0; i < raw.N; i++ {
				clear(raw.Data[i*raw.Stride+i : i*raw.Stride+raw.N])
			}
		} else {
			d := a.desc
			d.Index = first.desc.Index
			if diff := first.desc.diff(d); diff != "" {
				return nil, 0, fmt.Errorf("%w: %s", ErrIncompatible, diff)
			}
		}
	}
	if first == nil {
		return nil, 0, fmt.Errorf("%w: no accumulator to sum", ErrInvalid)
	}
	var weight float64
	for _, a := range accs {
		if a == nil || a.empty() {
			continue
		}
		addUpperTo(dst.RawSymmetric(), a.sum)
		weight += a.weight
	}
	return dst, weight, nil
}

// addGroup adds a's sum and weight to out, whose description must equal a's
// but for the Index.
func (out *Accumulator) addGroup(a *Accumulator) error {
	d := a.desc
	d.Index = out.desc.Index
	if diff := out.desc.diff(d); diff != "" {
		return fmt.Errorf("%w: %s", ErrIncompatible, diff)
	}
	addUpper(out.sum, a.sum)
	out.weight += a.weight
	return nil
}

// SumMeanGroups returns a new Mean holding the sum of means that differ
// only by their Index, as SumGroups does for accumulators.
func SumMeanGroups(means ...*Mean) (*Mean, error) {
	var out *Mean
	for _, m := range means {
		if m == nil || m.sum == nil {
			continue
		}
		if out == nil {
			desc := m.desc
			desc.Index = 0
			var err error
			if out, err = NewMean(desc); err != nil {
				return nil, err
			}
		}
		d := m.desc
		d.Index = 0
		if diff := out.desc.diff(d); diff != "" {
			return nil, fmt.Errorf("%w: %s", ErrIncompatible, diff)
		}
		for j, v := range m.sum {
			out.sum[j] += v
		}
		out.weight += m.weight
		out.weight2 += m.weight2
	}
	if out == nil {
		return nil, fmt.Errorf("%w: no mean to sum", ErrInvalid)
	}
	return out, nil
}
