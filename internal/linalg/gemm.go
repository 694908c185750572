package linalg

import (
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/floats"
)

// The blocked symmetric rank-k updates of the Gonum backend: Dsyrk and
// Dsyr2k of gonumBLAS (syrk.go), and the float32 variant of the covariance
// accumulators (AddAtA), all run by rankUpdate below.
//
// An update is C ← C + alpha·L·Rᵀ on the triangle ul of the n×n row-major C,
// where L and R are n×K operands (K = the sum of their segments' widths:
// Dsyr2k's C + alpha·(A·Bᵀ + B·Aᵀ) is L = [A B], R = [B A]; Dsyrk's is
// L = R = A). It is computed the way BLIS and OpenBLAS compute a GEMM:
//
//   - K is cut into blocks of at most kcBlock columns. For each block, R is
//     packed into panels of w rows (w = the micro-kernel's vector width):
//     panel q holds, for each p of the block, the w values R(q·w … q·w+w−1,
//     p), contiguous, zero-padded past n. L is packed the same way, except
//     for Dsyrk, where L = R and one packing serves both.
//   - A micro-kernel multiplies mr rows of one L panel by np consecutive R
//     panels into an mr × np·w tile of vector registers and adds alpha times
//     the tile into C. Each strip of mr rows starting at row i0 walks tiles
//     from the panel holding i0 (upper triangle; only the first tile
//     straddles the diagonal) or from column 0 to the diagonal (lower).
//     Tiles inside the triangle and C are added in place; the others go
//     through a scratch tile, of which only the entries inside are added,
//     except, for an upper C, when the kernel has a masked variant
//     (AVX-512 float32): then every tile of mr rows is added in place, the
//     masked variant adding only the entries inside, with the scratch
//     tile's bits (and the last tile of a strip on only the panels it
//     needs).
//
// The micro-kernels are in assembly on amd64 (kernel_amd64.s: AVX2+FMA and
// AVX-512, chosen at run time from the CPU's features) with a portable Go
// kernel everywhere else (and with the build tag purego). Packing makes the
// kernel's loads sequential whatever the strides of the operands (Syrk's
// Trans and NoTrans cases, the strided blocks of LAPACK's tridiagonal
// reduction); it costs O(n·K) against the O(n²·K) of the update.

// operand is an n×k matrix whose element (i, p) is data[i*rs + p*cs].
type operand struct {
	data   []float64
	rs, cs int
	k      int
}

// element is the type of packed panels: float64, or float32 for the
// float32 products of AddAtA.
type element interface{ float32 | float64 }

// microKernel multiplies packed panels: for p < k it accumulates
// a[p·w + r]·b_v[p·w + j] into acc[r][v·w + j] (r < mr, v < np, j < w), in
// T, where b_v starts bstride bytes after b_{v−1}; then it adds alpha·acc,
// in float64, into C[r·ldc + v·w + j]. k ≥ 1.
type microKernel[T element] struct {
	name      string
	w, mr, np int
	fn        func(k int, a, b *T, bstride int, c *float64, ldc int, alpha float64)
	// masked, if not empty, holds fn with a masked store on 1, 2, …, np R
	// panels (masked[q−1]: an mr × q·w tile): it adds into C only the
	// entries of the tile whose bit is set in mask, which holds q·w/8
	// opmasks per row, one per 8 float64 (bit l of mask[r·q·w/8 + h] for
	// column 8h + l), and gives them the bits of the scratch tile:
	// c + (alpha·acc + 0), two roundings (asm.SKern8x48AVX512Masked).
	// diagMasks[d] (d < w) is the mask of a full tile of an upper C whose
	// first row is d columns right of its first column, and colMasks[cols]
	// (0 < cols < nr) that of a tile of ⌈cols/w⌉ panels inside the upper
	// triangle whose columns from cols on are past C's last (upperMasks).
	masked              []func(k int, a, b *T, bstride int, c *float64, ldc int, alpha float64, mask *uint16)
	diagMasks, colMasks [][]uint16
}

// nr returns the number of columns of a tile.
func (m microKernel[T]) nr() int { return m.np * m.w }

// withMasked returns m with the masked variants of its kernel on 1, 2, …,
// np R panels and the masks of its diagonal and last tiles. w must be a
// multiple of 8.
func (m microKernel[T]) withMasked(fn ...func(k int, a, b *T, bstride int, c *float64, ldc int, alpha float64, mask *uint16)) microKernel[T] {
	if len(fn) != m.np || m.w%8 != 0 {
		panic("linalg: masked kernels do not match their kernel")
	}
	m.masked = fn
	nr := m.nr()
	m.diagMasks = make([][]uint16, m.w)
	for d := range m.diagMasks {
		m.diagMasks[d] = upperMasks(make([]uint16, m.mr*nr/8), m.mr, nr, d, nr)
	}
	m.colMasks = make([][]uint16, nr)
	for cols := 1; cols < nr; cols++ {
		q := (cols + m.w - 1) / m.w
		m.colMasks[cols] = upperMasks(make([]uint16, m.mr*q*m.w/8), m.mr, q*m.w, 1-m.mr, cols)
	}
	return m
}

// upperMasks sets mask, mr·nr/8 values, to the masks of a masked kernel
// (see microKernel) for an mr × nr tile of an upper C whose row r holds
// entries of C from column r + d on (d = the tile's first row minus its
// first column) and whose columns from cols on are past C's last: bit l of
// mask[r·nr/8 + h] is set when column c = 8h + l has r + d ≤ c < cols. It
// returns mask.
func upperMasks(mask []uint16, mr, nr, d, cols int) []uint16 {
	clear(mask)
	for r := range mr {
		for c := max(0, r+d); c < min(cols, nr); c++ {
			mask[r*nr/8+c/8] |= 1 << (c % 8)
		}
	}
	return mask
}

const (
	// kcBlock bounds the width of a packed block of K: with the AVX-512
	// kernel, an L panel (8 rows) is then 16 KiB and a tile's three R panels
	// 48 KiB, read from L2 at 8 bytes per cycle. It is also the number of
	// float32 products summed in float32 before they reach C in AddAtA.
	kcBlock = 256
	// maxTile bounds mr·nr over the kernels.
	maxTile = 8 * 48
)

// packBuffers are the packed panels, scratch tile and masks (of the
// masked kernels' rare tiles: see rankUpdate) of one update.
type packBuffers[T element] struct {
	l, r []T
	tile [maxTile]float64
	mask [maxTile / 8]uint16
}

// bufferStack keeps the packBuffers of finished updates for the next ones,
// so that an accumulator's Add does not allocate once warm. It is a plain
// stack rather than a sync.Pool, which drops items at every other garbage
// collection (and at random under the race detector) and would make each
// Add reallocate a megabyte now and then. It keeps at most maxKept buffers,
// and none larger than maxKeptValues values.
type bufferStack[T element] struct {
	mu   sync.Mutex
	free []*packBuffers[T]
}

const (
	maxKept       = 16
	maxKeptValues = 1 << 20 // 8 MiB of float64
)

func (s *bufferStack[T]) get() *packBuffers[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.free); n > 0 {
		b := s.free[n-1]
		s.free = s.free[:n-1]
		return b
	}
	return new(packBuffers[T])
}

func (s *bufferStack[T]) put(b *packBuffers[T]) {
	if cap(b.l)+cap(b.r) > maxKeptValues {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.free) < maxKept {
		s.free = append(s.free, b)
	}
}

var (
	pool64 bufferStack[float64]
	pool32 bufferStack[float32]
)

// grow returns s resized to n, reallocated if too small.
func grow[T element](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// packPanels packs columns [p0, p0+kb) of the concatenation of ops (n rows
// each) into ⌈n/w⌉ panels of w rows followed by pad zero panels: panel q
// holds, for each p, the values of rows q·w … q·w+w−1, zero past n. dst must
// hold (⌈n/w⌉+pad)·w·kb values.
func packPanels[T element](dst []T, ops []operand, n, p0, kb, w, pad int) {
	panels := (n + w - 1) / w
	clear(dst[panels*kb*w : (panels+pad)*kb*w])
	// Walk the segments covering columns [p0, p0+kb).
	pp, off := 0, p0 // pp: column within the block; off: within the segment
	for _, op := range ops {
		if off >= op.k {
			off -= op.k
			continue
		}
		cnt := min(op.k-off, kb-pp)
		packSegment(dst, op, n, off, cnt, pp, kb, w)
		pp += cnt
		off = 0
		if pp == kb {
			break
		}
	}
}

// packSegment packs columns [p0, p0+cnt) of op into columns [pp, pp+cnt) of
// the panels of dst (kb columns each).
func packSegment[T element](dst []T, op operand, n, p0, cnt, pp, kb, w int) {
	panels := (n + w - 1) / w
	if op.rs == 1 {
		// Column p of op is contiguous (Syrk Trans: a feature row of the
		// accumulators): read it once, w values into each panel.
		if d32, ok := any(dst).([]float32); ok && cvtGroups != nil && w%4 == 0 && n >= w {
			packRows32(d32, op, n, p0, cnt, pp, kb, w)
			return
		}
		for p := range cnt {
			src := op.data[(p0+p)*op.cs : (p0+p)*op.cs+n]
			for q := range panels {
				d := dst[(q*kb+pp+p)*w : (q*kb+pp+p+1)*w]
				if q*w+w <= n {
					s := src[q*w : q*w+w]
					for r, v := range s {
						d[r] = T(v)
					}
					continue
				}
				s := src[q*w:]
				for r, v := range s {
					d[r] = T(v)
				}
				clear(d[len(s):])
			}
		}
		return
	}
	// Rows contiguous in p (cs = 1: Syrk NoTrans, Dsyr2k's blocks): gather
	// row by row into each panel.
	for q := range panels {
		panel := dst[(q*kb+pp)*w : (q*kb+pp+cnt)*w]
		valid := min(w, n-q*w)
		for r := range valid {
			base := (q*w+r)*op.rs + p0*op.cs
			if op.cs == 1 {
				for p, v := range op.data[base : base+cnt] {
					panel[p*w+r] = T(v)
				}
				continue
			}
			for p := range cnt {
				panel[p*w+r] = T(op.data[base+p*op.cs])
			}
		}
		if valid < w {
			for p := range cnt {
				clear(panel[p*w+valid : p*w+w])
			}
		}
	}
}

// cvtGroups, if not nil, is an assembly routine that rounds n groups of w
// float64 (w a multiple of 4), contiguous from src, to float32, group g at
// dst plus g·dstride bytes (asm.CvtGroupsAVX2, set with the kernels).
var cvtGroups func(n, w int, src *float64, dst *float32, dstride int)

// prefetchRows, if not nil, asks for the cache lines of rows rows of cols
// values of a row-major matrix of stride ldc (asm.PrefetchRows).
var prefetchRows func(c *float64, ldc, rows, cols int)

// packRows32 is packSegment's contiguous case for float32 panels with
// cvtGroups: the full panels of each column in one call (the scalar
// conversion loop was a tenth of the time of a float32 update at 512
// features), the last partial panel, if any, in Go. n ≥ w.
func packRows32(dst []float32, op operand, n, p0, cnt, pp, kb, w int) {
	full, panels := n/w, (n+w-1)/w
	for p := range cnt {
		src := op.data[(p0+p)*op.cs : (p0+p)*op.cs+n]
		first := (pp + p) * w
		_ = dst[((full-1)*kb+pp+p)*w+w-1] // the last value written: bounds-checked before the assembly writes
		cvtGroups(full, w, &src[0], &dst[first], kb*w*4)
		if full < panels {
			d := dst[(full*kb+pp+p)*w : (full*kb+pp+p+1)*w]
			s := src[full*w:]
			for r, v := range s {
				d[r] = float32(v)
			}
			clear(d[len(s):])
		}
	}
}

// rankUpdate computes C ← C + alpha·L·Rᵀ on the triangle ul of the n×n
// matrix c (dense with a row stride, or a Triangle: then ul must be
// blas.Upper) with the micro-kernel kern, where L and R are the
// concatenations of the segments left and right (same widths; same
// segments for Dsyrk, which sameLR says). n ≥ 1, and the operands and c must
// be large enough (the BLAS methods check). The tiles, and so the order of
// the additions into each entry of C, do not depend on c's layout.
func rankUpdate[T element](kern microKernel[T], pool *bufferStack[T], ul blas.Uplo, n int, alpha float64, left, right []operand, sameLR bool, cm cMatrix) {
	var k int
	for _, op := range left {
		k += op.k
	}
	if k == 0 || alpha == 0 {
		return
	}
	w, mr, np, nr := kern.w, kern.mr, kern.np, kern.nr()
	buf := pool.get()
	defer pool.put(buf)
	panels := (n + w - 1) / w
	kbMax := min(k, kcBlock)
	// R has np−1 zero panels after the last so that a tile may start at any
	// panel.
	buf.r = grow(buf.r, (panels+np-1)*w*kbMax)
	if !sameLR {
		buf.l = grow(buf.l, panels*w*kbMax)
	}
	tile := buf.tile[:mr*nr]
	upper := ul == blas.Upper
	c := cm.data
	var elem T
	size := int(unsafe.Sizeof(elem))
	for pc := 0; pc < k; pc += kcBlock {
		kb := min(kcBlock, k-pc)
		packPanels(buf.r, right, n, pc, kb, w, np-1)
		lbuf := buf.r
		if !sameLR {
			packPanels(buf.l, left, n, pc, kb, w, 0)
			lbuf = buf.l
		}
		bstride := kb * w * size
		for i0 := 0; i0 < n; i0 += mr {
			rows := min(mr, n-i0)
			// Rows i0 … i0+rows−1 of C are ldc apart from off0 (a Triangle's
			// strips hold whole kernel strips: StripRows is a multiple of mr).
			off0, ldc := cm.row(i0)
			lp := &lbuf[(i0/w)*kb*w+i0%w]
			j0, jEnd := 0, i0+rows // lower: tiles from column 0 up to the diagonal
			if upper {
				j0, jEnd = i0/w*w, n // upper: from the panel holding i0 to n
			}
			for ; j0 < jEnd; j0 += nr {
				cols := min(nr, n-j0)
				rp := &buf.r[(j0/w)*kb*w]
				inside := j0 >= i0+rows-1 // all j ≥ i
				if !upper {
					inside = j0+cols-1 <= i0 // all j ≤ i
				}
				if inside && rows == mr && cols == nr {
					kern.fn(kb, lp, rp, bstride, &c[off0+j0], ldc, alpha)
					continue
				}
				if upper && len(kern.masked) > 0 && rows == mr {
					// The tile across the diagonal (the strip's first) or
					// past C's last column (its last, if n is not a
					// multiple of nr from there, on only the ⌈cols/w⌉
					// panels it needs): the kernel adds the entries with
					// i ≤ j < n into C, with the bits of the scratch tile
					// below, and leaves the others alone (in a Triangle, a
					// strip's unused entries; in a dense C, the lower
					// triangle and what follows each row). The packed R
					// panels past n are zeros.
					q := (cols + w - 1) / w
					var mask []uint16
					switch d := i0 - j0; {
					case cols == nr && d >= 0 && d < len(kern.diagMasks):
						mask = kern.diagMasks[d]
					case inside:
						mask = kern.colMasks[cols]
					default: // across the diagonal and past n: the last strips
						mask = upperMasks(buf.mask[:mr*q*w/8], mr, q*w, d, cols)
					}
					kern.masked[q-1](kb, lp, rp, bstride, &c[off0+j0], ldc, alpha, &mask[0])
					continue
				}
				if prefetchRows != nil {
					// The kernel prefetches the tile it writes, here the
					// scratch one: ask for C's lines, which the additions
					// below read (they were 86% of rankUpdate's own time,
					// waiting for memory, at 512 features).
					prefetchRows(&c[off0+j0], ldc, rows, cols)
				}
				clear(tile)
				kern.fn(kb, lp, rp, bstride, &tile[0], nr, alpha)
				for r := range rows {
					i, off := i0+r, off0+r*ldc
					lo, hi := 0, cols // columns j0+lo … j0+hi−1 inside the triangle
					if upper {
						lo = max(0, i-j0)
					} else {
						hi = min(cols, i-j0+1)
					}
					if lo >= hi {
						continue
					}
					floats.Add(c[off+j0+lo:off+j0+hi], tile[r*nr+lo:r*nr+hi])
				}
			}
		}
	}
}

// goKernel2x4 is the portable micro-kernel: w = 4, one R panel, a 2×4 tile
// (two rows of the L panel at a time) in eight scalar accumulators of type
// T, few enough to stay in the sixteen floating-point registers of amd64
// and arm64 (a 4×4 tile spilled and ran at half the speed).
func goKernel2x4[T element](k int, a, b *T, _ int, c *float64, ldc int, alpha float64) {
	// a may point into its panel (rows 2 and 3 of it): the slice ends at the
	// last value read, 4(k−1)+1.
	as := unsafe.Slice(a, 4*(k-1)+2)
	bs := unsafe.Slice(b, 4*k)
	var c00, c01, c02, c03, c10, c11, c12, c13 T
	for p := 0; p < k; p++ {
		ap := as[4*p : 4*p+2 : 4*p+2]
		bp := bs[4*p : 4*p+4 : 4*p+4]
		a0, a1 := ap[0], ap[1]
		b0, b1, b2, b3 := bp[0], bp[1], bp[2], bp[3]
		c00 += a0 * b0
		c01 += a0 * b1
		c02 += a0 * b2
		c03 += a0 * b3
		c10 += a1 * b0
		c11 += a1 * b1
		c12 += a1 * b2
		c13 += a1 * b3
	}
	cs := unsafe.Slice(c, ldc+4)
	r0, r1 := cs[0:4:4], cs[ldc:ldc+4:ldc+4]
	r0[0] += alpha * float64(c00)
	r0[1] += alpha * float64(c01)
	r0[2] += alpha * float64(c02)
	r0[3] += alpha * float64(c03)
	r1[0] += alpha * float64(c10)
	r1[1] += alpha * float64(c11)
	r1[2] += alpha * float64(c12)
	r1[3] += alpha * float64(c13)
}

// The portable kernels, available on every platform.
var (
	goKernel64 = microKernel[float64]{name: "go-2x4", w: 4, mr: 2, np: 1, fn: goKernel2x4[float64]}
	goKernel32 = microKernel[float32]{name: "go-2x4", w: 4, mr: 2, np: 1, fn: goKernel2x4[float32]}
)

// kernels64 and kernels32 list the micro-kernels this CPU can run, the
// portable one first; kernel64 and kernel32 are the ones in use (the last
// of each list). They are set by the package's initialization
// (kernel_amd64.go on amd64) and only changed by tests.
var (
	kernels64 = []microKernel[float64]{goKernel64}
	kernels32 = []microKernel[float32]{goKernel32}
	kernel64  = goKernel64
	kernel32  = goKernel32
)

// blocked64 says whether gonumBLAS's Dsyrk and Dsyr2k use the blocked update
// (true) or gonum's own. It is false only on amd64 CPUs without AVX2 and
// FMA, where gonum's loops over its SSE2 assembly (8.4 GFLOP/s per core on
// the Syrk of the accumulators) beat the portable kernel (5.6); elsewhere
// gonum is pure Go (3.1 GFLOP/s with its noasm tag) and the portable kernel
// wins. Measured on an AMD EPYC (Zen 4) by BenchmarkRankK.
var blocked64 = true
