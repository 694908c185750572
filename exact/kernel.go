package exact

import (
	"math"
	"runtime"
	"sync"

	"github.com/dime-project/dime/vocab"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/gonum/mat"
)

// The vocabulary of an estimate (kernels, bandwidth rules, the value
// bound) lives in package vocab; these names stay for callers of exact.
type (
	// Kernel is vocab.Kernel.
	Kernel = vocab.Kernel
)

// The kernels (vocab.Gaussian, vocab.Laplacian, vocab.Elliptical).
const (
	Gaussian   = vocab.Gaussian
	Laplacian  = vocab.Laplacian
	Elliptical = vocab.Elliptical
)

// ParseKernel returns the kernel with the given name (case-insensitive), or
// an error matching ErrInvalidInput.
func ParseKernel(name string) (Kernel, error) {
	k, err := vocab.ParseKernel(name)
	if err != nil {
		return k, invalidf("%v", err)
	}
	return k, nil
}

// CheckSigma returns an error matching ErrInvalidInput unless sigma is a
// finite number greater than zero.
func CheckSigma(sigma float64) error {
	if err := vocab.CheckSigma(sigma); err != nil {
		return invalidf("%v", err)
	}
	return nil
}

// Eval returns κ(x, y) of kernel k for bandwidth sigma. x and y must have
// the same length.
func Eval(k Kernel, x, y []float64, sigma float64) float64 {
	var s float64
	switch k {
	case Laplacian:
		for i := range x {
			s += math.Abs(x[i] - y[i])
		}
		return math.Exp(-s / (math.Sqrt2 * sigma))
	default:
		for i := range x {
			d := x[i] - y[i]
			s += d * d
		}
		return fromSquaredDistance(k, s, sigma)
	}
}

// fromSquaredDistance returns the Gaussian or Elliptical kernel of a squared
// Euclidean distance.
func fromSquaredDistance(k Kernel, sq, sigma float64) float64 {
	if k == Elliptical {
		return math.Exp(-math.Sqrt(sq) / (math.Sqrt2 * sigma))
	}
	return math.Exp(-sq / (2 * sigma * sigma))
}

// MaxAbsValue is vocab.MaxAbsValue, the bound on the values the
// estimators take.
const MaxAbsValue = vocab.MaxAbsValue

// CheckFinite returns an error matching ErrInvalidInput that names the first
// row and column (both counted from 0) of x holding NaN, ±Inf or a value
// beyond ±MaxAbsValue.
func CheckFinite(x mat.Matrix) error {
	r, c := x.Dims()
	if d, ok := x.(*mat.Dense); ok {
		raw := d.RawMatrix()
		for i := 0; i < r; i++ {
			row := raw.Data[i*raw.Stride : i*raw.Stride+c]
			if j := vocab.FirstInvalid(row); j >= 0 {
				return invalidf("row %d, column %d: %s", i, j, vocab.CheckValue(row[j]))
			}
		}
		return nil
	}
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if msg := vocab.CheckValue(x.At(i, j)); msg != "" {
				return invalidf("row %d, column %d: %s", i, j, msg)
			}
		}
	}
	return nil
}

// Gram fills dst with the n×n Gram matrix κ(xᵢ, xⱼ) of the rows of x (n rows
// of d columns) and returns it. If dst is nil a new matrix is allocated; if it
// is empty it is resized; otherwise it must be n×n. x is not modified.
//
// Squared Euclidean distances are computed as ‖xᵢ‖² + ‖xⱼ‖² − 2xᵢ·xⱼ on
// column-centred data (one symmetric rank-k update) and clamped at 0, so that
// round-off never yields a negative squared distance (and the elliptical
// kernel never a NaN). The diagonal is exactly 1.
func Gram(dst *mat.SymDense, kern Kernel, sigma float64, x mat.Matrix) (*mat.SymDense, error) {
	if !kern.Valid() {
		return nil, invalidf("unknown kernel %d", uint8(kern))
	}
	if err := CheckSigma(sigma); err != nil {
		return nil, err
	}
	n, d := x.Dims()
	if n < 1 || d < 1 {
		return nil, invalidf("data has %d rows and %d columns, want at least 1 of each", n, d)
	}
	if err := CheckFinite(x); err != nil {
		return nil, err
	}
	switch {
	case dst == nil:
		dst = mat.NewSymDense(n, nil)
	case dst.IsEmpty():
		dst.ReuseAsSym(n)
	case dst.SymmetricDim() != n:
		return nil, invalidf("Gram destination is %d×%d, want %d×%d", dst.SymmetricDim(), dst.SymmetricDim(), n, n)
	}
	centred := centreColumns(x)
	g := dst.RawSymmetric()
	if kern == Laplacian {
		parallelRows(n, func(i int) {
			xi := centred.Data[i*centred.Stride : i*centred.Stride+d]
			row := g.Data[i*g.Stride : i*g.Stride+n]
			row[i] = 1
			for j := i + 1; j < n; j++ {
				xj := centred.Data[j*centred.Stride : j*centred.Stride+d]
				var s float64
				for k, v := range xi {
					s += math.Abs(v - xj[k])
				}
				row[j] = math.Exp(-s / (math.Sqrt2 * sigma))
			}
		})
		return dst, nil
	}
	// G = X Xᵀ on the upper triangle, then distances from it in place.
	blas64.Syrk(blas.NoTrans, 1, centred, 0, g)
	norms := make([]float64, n)
	for i := range norms {
		norms[i] = g.Data[i*g.Stride+i]
	}
	parallelRows(n, func(i int) {
		row := g.Data[i*g.Stride : i*g.Stride+n]
		row[i] = 1
		for j := i + 1; j < n; j++ {
			sq := norms[i] + norms[j] - 2*row[j]
			if sq < 0 {
				sq = 0
			}
			row[j] = fromSquaredDistance(kern, sq, sigma)
		}
	})
	return dst, nil
}

// centreColumns returns a row-major copy of x with each column's mean
// subtracted. Distances do not change, and the expansion of squared distances
// through inner products keeps its precision for data far from the origin.
func centreColumns(x mat.Matrix) blas64.General {
	n, d := x.Dims()
	c := mat.DenseCopyOf(x)
	raw := c.RawMatrix()
	mean := make([]float64, d)
	for i := 0; i < n; i++ {
		for j, v := range raw.Data[i*raw.Stride : i*raw.Stride+d] {
			mean[j] += v
		}
	}
	for j := range mean {
		mean[j] /= float64(n)
	}
	for i := 0; i < n; i++ {
		row := raw.Data[i*raw.Stride : i*raw.Stride+d]
		for j := range row {
			row[j] -= mean[j]
		}
	}
	return raw
}

// parallelRows calls f(i) for every row i in [0, n) of an upper-triangular
// loop, spread over GOMAXPROCS goroutines. Rows are dealt round-robin so that
// the long first rows and the short last rows are shared evenly.
func parallelRows(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n/64+1)
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}
