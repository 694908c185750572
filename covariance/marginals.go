package covariance

import (
	"fmt"
	"sync"

	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"

	"github.com/dime-project/dime/internal/linalg"
)

// ProductOfMarginals writes to dst (allocated if nil, resized if empty) the
// analytic product-of-marginals covariance C⊥ of the joint features, computed
// from the part accumulators x (PartX) and y (PartY) of the same pair of maps:
// the mean of φ(x_i, y_k)φ(x_i, y_k)ᵀ over all pairs of a row of x and a row
// of y (see the package documentation for the formula). Its trace is 1. Cost
// O(D²), whatever the number of rows; it allocates no O(D²) memory but dst.
func ProductOfMarginals(dst *mat.SymDense, x, y *Accumulator) (*mat.SymDense, error) {
	return ProductOfMarginalsGroups(dst, []*Accumulator{x}, []*Accumulator{y})
}

// ProductOfMarginalsGroups is ProductOfMarginals of the sums of groups of
// part accumulators (xs of PartX, ys of PartY, as SumGroups would sum them:
// same part and map, any Index; nil entries skipped), without forming those
// sums: it allocates no O(D²) memory but dst. Its result equals
// ProductOfMarginals of SumGroups(xs...) and SumGroups(ys...) bit for bit
// (TestGroupsWithoutSums).
func ProductOfMarginalsGroups(dst *mat.SymDense, xs, ys []*Accumulator) (*mat.SymDense, error) {
	return productOfGroups(dst, xs, ys, "product of marginals", func(pa, pb Part) error {
		if pa != PartX || pb != PartY {
			return fmt.Errorf("%w: product of marginals of parts %v and %v, want x and y", ErrIncompatible, pa, pb)
		}
		return nil
	})
}

// SelfProductOfMarginals writes to dst (allocated if nil, resized if empty)
// the product-of-marginals covariance of a view with an identical copy of
// itself: the mean of the joint features e^{i(a_j + a′_j)·(z_i, z_k)} over all
// pairs (z_i, z_k), pairing part (PartX or PartY) with the same view's copy
// (PartCopyX or PartCopyY, the copy map's features). The rows of part and
// copy need not be the same: each estimates its own marginal. Cost O(D²); it
// allocates no O(D²) memory but dst.
func SelfProductOfMarginals(dst *mat.SymDense, part, copy *Accumulator) (*mat.SymDense, error) {
	return SelfProductOfMarginalsGroups(dst, []*Accumulator{part}, []*Accumulator{copy})
}

// SelfProductOfMarginalsGroups is SelfProductOfMarginals of the sums of
// groups of accumulators, without forming the sums, as
// ProductOfMarginalsGroups is for ProductOfMarginals.
func SelfProductOfMarginalsGroups(dst *mat.SymDense, parts, copies []*Accumulator) (*mat.SymDense, error) {
	return productOfGroups(dst, parts, copies, "self product of marginals", func(pa, pb Part) error {
		if ok := (pa == PartX && pb == PartCopyX) || (pa == PartY && pb == PartCopyY); !ok {
			return fmt.Errorf("%w: self product of marginals of parts %v and %v, want x and copy-x or y and copy-y", ErrIncompatible, pa, pb)
		}
		return nil
	})
}

// productOfGroups writes to dst the product of the marginals of the sums of
// as and bs, once parts has accepted their parts.
func productOfGroups(dst *mat.SymDense, as, bs []*Accumulator, what string, parts func(pa, pb Part) error) (*mat.SymDense, error) {
	a, err := marginalOf(as, what)
	if err != nil {
		return nil, err
	}
	b, err := marginalOf(bs, what)
	if err != nil {
		return nil, err
	}
	if err := parts(a.desc.Part, b.desc.Part); err != nil {
		return nil, err
	}
	if a.desc.Map != b.desc.Map {
		return nil, fmt.Errorf("%w: parts of different maps", ErrIncompatible)
	}
	if err := a.checkRows(); err != nil {
		return nil, err
	}
	if err := b.checkRows(); err != nil {
		return nil, err
	}
	if dst, err = symDst(dst, a.dim()); err != nil {
		return nil, err
	}
	product(dst.RawSymmetric(), &a, &b, 1)
	return dst, nil
}

// marginal is the second moments of a part's features, read from the sum
// of the upper triangles of some accumulators (groups of rows) without
// forming it: with u_j = e^{i a_j·z} (so that φ = [Re u, Im u]/√D),
// M−[j,k] = E u_j ū_k = CC + SS + i(CSᵀ − CS) and M+[j,k] = E u_j u_k =
// CC − SS + i(CSᵀ + CS), centered (M− − μμ*, M+ − μμᵀ) when re and im, the
// real and imaginary parts of the means μ_j = E u_j, are set.
type marginal struct {
	desc   Description
	sums   []linalg.Triangle // the groups' upper triangles
	weight float64           // their total weight
	re, im []float64         // the means, to center; nil for raw moments
}

// marginalOf returns the marginal of the sum of accs, which must agree but
// for their Index. It allocates only a short slice of headers.
func marginalOf(accs []*Accumulator, what string) (marginal, error) {
	var m marginal
	for _, a := range accs {
		if a == nil || a.empty() {
			continue
		}
		if m.sums == nil {
			m.desc = a.desc
			m.desc.Index = 0
			m.sums = make([]linalg.Triangle, 0, len(accs))
		} else {
			d := a.desc
			d.Index = 0
			if diff := m.desc.diff(d); diff != "" {
				return m, fmt.Errorf("%w: %s", ErrIncompatible, diff)
			}
		}
		m.sums = append(m.sums, a.sum)
		m.weight += a.weight
	}
	if m.sums == nil {
		return m, fmt.Errorf("%w: %s needs two accumulators", ErrInvalid, what)
	}
	return m, nil
}

func (m *marginal) dim() int { return 2 * m.desc.Map.Features }

func (m *marginal) checkRows() error {
	if !(m.weight > 0) {
		return ErrEmpty
	}
	return nil
}

// productBlock is the number of rows j of the moments that product reads
// at a time: it gathers rows j and D+j of each marginal's summed matrix for
// productBlock values of j, 2·productBlock·2D values per marginal (64 KiB at
// D = 256), which stay in cache while they are used.
const productBlock = 8

// productScratch holds product's scratch rows.
var productScratch = sync.Pool{New: func() any { return new([]float64) }}

// rows writes to dst (rows × n, n = 2D, row-major) the whole rows r0, …,
// r0+rows−1 of the summed symmetric matrix, adding the groups in order as
// SumGroups does: entry (r, c) is read from row min(r, c) of each stored
// upper triangle, so that the entries left of the diagonal, a column of
// the triangle, come rows values at a time from consecutive memory.
func (m *marginal) rows(dst []float64, r0, rows int) {
	n := m.dim()
	dst = dst[:rows*n]
	clear(dst)
	for _, t := range m.sums {
		for c := range r0 {
			// Entries (c, r0 … r0+rows−1), above the block.
			seg := t.Row(c)[r0-c : r0-c+rows]
			for i, v := range seg {
				dst[i*n+c] += v
			}
		}
		for i := range rows {
			r := r0 + i
			d := dst[i*n : (i+1)*n]
			for c := r0; c < r; c++ {
				// Entries (c, r) of the block, left of the diagonal.
				d[c] += t.Row(c)[r-c]
			}
			for k, v := range t.Row(r) {
				d[r+k] += v
			}
		}
	}
}

// moments holds M−[j,k] and M+[j,k], real and imaginary parts.
type moments struct{ mr, mi, pr, pi float64 }

// moment returns M−[j,k] and M+[j,k] of the covariance Σφφᵀ/weight from
// the summed matrix's entries (j, k), (D+j, D+k), (j, D+k) and (k, D+j):
// with φ = [cos, sin]/√D the blocks of D·C are CC, SS, CS and CSᵀ.
func (m *marginal) moment(j, k int, cc, ss, cs, csT float64) moments {
	D := m.desc.Map.Features
	f := float64(D) / m.weight
	cc, ss = f*cc, f*ss
	cs, csT = f*cs, f*csT // E cos_j sin_k, E cos_k sin_j
	o := moments{cc + ss, csT - cs, cc - ss, csT + cs}
	if m.re != nil {
		// μ_j μ̄_k and μ_j μ_k.
		re, im := m.re, m.im
		o.mr -= re[j]*re[k] + im[j]*im[k]
		o.mi -= im[j]*re[k] - re[j]*im[k]
		o.pr -= re[j]*re[k] - im[j]*im[k]
		o.pi -= im[j]*re[k] + re[j]*im[k]
	}
	return o
}

// rowMoment is moment read from the whole rows j and D+j of the summed
// matrix (see rows): entry (k, D+j) is (D+j, k).
func (m *marginal) rowMoment(j, k int, rowJ, rowDJ []float64) moments {
	D := m.desc.Map.Features
	return m.moment(j, k, rowJ[k], rowDJ[D+k], rowJ[D+k], rowDJ[k])
}

// storeProduct writes the entries (j, k) of product's output from the
// moments a and b of the two marginals: (j, k) and (D+j, D+k) when k ≥ j,
// and (j, D+k).
func storeProduct(out blas64.Symmetric, D, j, k int, scale float64, a, b moments) {
	reMinus := a.mr*b.mr - a.mi*b.mi
	imMinus := a.mr*b.mi + a.mi*b.mr
	rePlus := a.pr*b.pr - a.pi*b.pi
	imPlus := a.pr*b.pi + a.pi*b.pr
	if k >= j {
		out.Data[j*out.Stride+k] = (reMinus + rePlus) * scale
		out.Data[(D+j)*out.Stride+D+k] = (reMinus - rePlus) * scale
	}
	// Cross block: row j (cos), column D+k (sin), always upper.
	out.Data[j*out.Stride+D+k] = (imPlus - imMinus) * scale
}

// scaleUpper multiplies the upper triangle of out by f (f = 1: no-op).
func scaleUpper(out blas64.Symmetric, f float64) {
	if f == 1 {
		return
	}
	for i := 0; i < out.N; i++ {
		row := out.Data[i*out.Stride+i : i*out.Stride+out.N]
		for j := range row {
			row[j] = f * row[j]
		}
	}
}

// product writes to out (2D×2D, upper triangle) f times the real covariance
// of the joint features whose complex moments are the Hadamard products
// P− = A− ∘ B− and P+ = A+ ∘ B+:
//
//	(1/D) [[(Re P− + Re P+)/2, (Im P+ − Im P−)/2], [·ᵀ, (Re P− − Re P+)/2]].
//
// The moments are read from the accumulators productBlock rows at a time
// (see rows), into 4·productBlock·2D values of scratch from a pool.
func product(out blas64.Symmetric, a, b *marginal, f float64) {
	D := a.desc.Map.Features
	n := 2 * D
	scale := 1 / (2 * float64(D))
	const B = productBlock
	buf := productScratch.Get().(*[]float64)
	defer productScratch.Put(buf)
	if cap(*buf) < 4*B*n {
		*buf = make([]float64, 4*B*n)
	}
	scratch := (*buf)[:4*B*n]
	ra, rb := scratch[:2*B*n], scratch[2*B*n:]
	for j0 := 0; j0 < D; j0 += B {
		rows := min(B, D-j0)
		a.rows(ra[:rows*n], j0, rows)
		a.rows(ra[B*n:B*n+rows*n], D+j0, rows)
		b.rows(rb[:rows*n], j0, rows)
		b.rows(rb[B*n:B*n+rows*n], D+j0, rows)
		for jj := range rows {
			j := j0 + jj
			aJ, aDJ := ra[jj*n:(jj+1)*n], ra[(B+jj)*n:(B+jj+1)*n]
			bJ, bDJ := rb[jj*n:(jj+1)*n], rb[(B+jj)*n:(B+jj+1)*n]
			for k := 0; k < D; k++ {
				storeProduct(out, D, j, k, scale, a.rowMoment(j, k, aJ, aDJ), b.rowMoment(j, k, bJ, bDJ))
			}
		}
	}
	scaleUpper(out, f)
}
