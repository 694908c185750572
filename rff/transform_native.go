//go:build openblas && cgo

package rff

// With the build tag openblas (which links OpenBLAS through cgo), Transform
// (and Joint, without a permutation) runs this C version of itself when the
// CPU has AVX2 and FMA: the phases as
// fused multiply-adds, 16 frequencies at a time in registers, and the same
// table method as sincosScaled on four phases at a time (table entries read
// one by one: AVX2 gathers were 15% slower here). Measured on the 2-core
// development machine (AMD EPYC), 256 features: 5.4 million rows/s against
// 1.2 million for the Go version (BenchmarkTransform). Fused multiply-adds
// round once where the Go version rounds twice, so the two differ by the
// rounding of the phases (TestNativeMatchesGo); each is deterministic, and a
// row's features do not depend on the other rows of a call.

/*
#cgo CFLAGS: -O2
#cgo LDFLAGS: -lm
#include <immintrin.h>
#include <math.h>

static int dime_has_avx2_fma(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

static int dime_has_avx512f(void) {
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f");
}

typedef struct {
	double stepsPerRadian, roundMagic, step1, step2, step3, maxArg;
	long mask;
} dime_sincos_consts;

// One phase by the table method (sincos.go), with fused multiply-adds.
__attribute__((target("avx2,fma")))
static inline void dime_sincos1(const dime_sincos_consts *k, const double *sinTable, const double *cosTable,
		double x, double scale, double *c, double *s) {
	if (!(fabs(x) < k->maxArg)) {
		*c = cos(x) * scale;
		*s = sin(x) * scale;
		return;
	}
	double t = fma(x, k->stepsPerRadian, k->roundMagic);
	long i;
	__builtin_memcpy(&i, &t, sizeof i);
	i &= k->mask;
	double fk = t - k->roundMagic;
	double r = fma(-fk, k->step1, x);
	r = fma(-fk, k->step2, r);
	r = fma(-fk, k->step3, r);
	double z = r * r;
	double sr = fma(r * z, fma(z, fma(z, -1.0 / 5040, 1.0 / 120), -1.0 / 6), r);
	double cm = z * fma(z, fma(z, -1.0 / 720, 1.0 / 24), -0.5);
	double sa = sinTable[i], ca = cosTable[i];
	*s = (sa + fma(sa, cm, ca * sr)) * scale;
	*c = (ca + fma(ca, cm, -(sa * sr))) * scale;
}

// oc, os = joint features of one row pair (cosines and sines of x and y),
// as Joint.
__attribute__((target("avx2,fma")))
static inline void dime_joint_row(double *oc, double *os, const double *xc, const double *xs,
		const double *yc, const double *ys, long D, double scale) {
	const __m256d vs = _mm256_set1_pd(scale);
	long j = 0;
	for (; j + 4 <= D; j += 4) {
		__m256d a = _mm256_loadu_pd(xc + j), b = _mm256_loadu_pd(xs + j);
		__m256d c = _mm256_loadu_pd(yc + j), e = _mm256_loadu_pd(ys + j);
		_mm256_storeu_pd(oc + j, _mm256_mul_pd(vs, _mm256_fmsub_pd(a, c, _mm256_mul_pd(b, e))));
		_mm256_storeu_pd(os + j, _mm256_mul_pd(vs, _mm256_fmadd_pd(b, c, _mm256_mul_pd(a, e))));
	}
	for (; j < D; j++) {
		oc[j] = scale * fma(xc[j], yc[j], -(xs[j] * ys[j]));
		os[j] = scale * fma(xs[j], yc[j], xc[j] * ys[j]);
	}
}

// dst (n rows of 2D) = features of x (n rows of d) with frequencies w (d×D,
// row-major), as Map.Transform.
__attribute__((target("avx2,fma")))
static void dime_transform(double *dst, const double *x, const double *w, long n, long d, long D,
		double scale, const dime_sincos_consts *k, const double *sinTable, const double *cosTable,
		const double *px, double *jdst, double jscale) {
	const __m256d spr = _mm256_set1_pd(k->stepsPerRadian), magic = _mm256_set1_pd(k->roundMagic);
	const __m256d s1 = _mm256_set1_pd(k->step1), s2 = _mm256_set1_pd(k->step2), s3 = _mm256_set1_pd(k->step3);
	const __m256d maxArg = _mm256_set1_pd(k->maxArg), sign = _mm256_set1_pd(-0.0), vscale = _mm256_set1_pd(scale);
	const __m256d c1 = _mm256_set1_pd(-1.0 / 6), c2 = _mm256_set1_pd(1.0 / 120), c3 = _mm256_set1_pd(-1.0 / 5040);
	const __m256d d1 = _mm256_set1_pd(-0.5), d2 = _mm256_set1_pd(1.0 / 24), d3 = _mm256_set1_pd(-1.0 / 720);
	const __m256i mask = _mm256_set1_epi64x(k->mask);
	for (long row = 0; row < n; row++) {
		double *cosv = dst + row * 2 * D, *sinv = cosv + D;
		double *theta = cosv; // the phases, read before the cosines overwrite them
		const double *xr = x + row * d;
		// Phases, 16 frequencies at a time in registers, summed over the
		// columns in order.
		long j0 = 0;
		for (; j0 + 16 <= D; j0 += 16) {
			__m256d t0 = _mm256_setzero_pd(), t1 = t0, t2 = t0, t3 = t0;
			for (long c = 0; c < d; c++) {
				double xc = xr[c];
				if (xc == 0) {
					continue;
				}
				const double *wc = w + c * D + j0;
				const __m256d vx = _mm256_set1_pd(xc);
				t0 = _mm256_fmadd_pd(vx, _mm256_loadu_pd(wc), t0);
				t1 = _mm256_fmadd_pd(vx, _mm256_loadu_pd(wc + 4), t1);
				t2 = _mm256_fmadd_pd(vx, _mm256_loadu_pd(wc + 8), t2);
				t3 = _mm256_fmadd_pd(vx, _mm256_loadu_pd(wc + 12), t3);
			}
			_mm256_storeu_pd(theta + j0, t0);
			_mm256_storeu_pd(theta + j0 + 4, t1);
			_mm256_storeu_pd(theta + j0 + 8, t2);
			_mm256_storeu_pd(theta + j0 + 12, t3);
		}
		for (; j0 < D; j0++) {
			double t = 0;
			for (long c = 0; c < d; c++) {
				if (xr[c] != 0) {
					t = fma(xr[c], w[c * D + j0], t);
				}
			}
			theta[j0] = t;
		}
		long j = 0;
		for (; j + 4 <= D; j += 4) {
			__m256d t = _mm256_loadu_pd(theta + j);
			if (_mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, t), maxArg, _CMP_NLT_UQ))) {
				for (long q = j; q < j + 4; q++) {
					dime_sincos1(k, sinTable, cosTable, theta[q], scale, cosv + q, sinv + q);
				}
				continue;
			}
			__m256d tt = _mm256_fmadd_pd(t, spr, magic);
			__m256i i = _mm256_and_si256(_mm256_castpd_si256(tt), mask);
			__m256d fk = _mm256_sub_pd(tt, magic);
			__m256d r = _mm256_fnmadd_pd(fk, s1, t);
			r = _mm256_fnmadd_pd(fk, s2, r);
			r = _mm256_fnmadd_pd(fk, s3, r);
			__m256d z = _mm256_mul_pd(r, r);
			__m256d sr = _mm256_fmadd_pd(_mm256_mul_pd(r, z), _mm256_fmadd_pd(z, _mm256_fmadd_pd(z, c3, c2), c1), r);
			__m256d cm = _mm256_mul_pd(z, _mm256_fmadd_pd(z, _mm256_fmadd_pd(z, d3, d2), d1));
			long ix[4];
			_mm256_storeu_si256((__m256i *)ix, i);
			__m256d sa = _mm256_set_pd(sinTable[ix[3]], sinTable[ix[2]], sinTable[ix[1]], sinTable[ix[0]]);
			__m256d ca = _mm256_set_pd(cosTable[ix[3]], cosTable[ix[2]], cosTable[ix[1]], cosTable[ix[0]]);
			__m256d s = _mm256_add_pd(sa, _mm256_fmadd_pd(sa, cm, _mm256_mul_pd(ca, sr)));
			__m256d co = _mm256_add_pd(ca, _mm256_fmsub_pd(ca, cm, _mm256_mul_pd(sa, sr)));
			_mm256_storeu_pd(cosv + j, _mm256_mul_pd(co, vscale));
			_mm256_storeu_pd(sinv + j, _mm256_mul_pd(s, vscale));
		}
		for (; j < D; j++) {
			dime_sincos1(k, sinTable, cosTable, theta[j], scale, cosv + j, sinv + j);
		}
		if (px) {
			const double *xc = px + row * 2 * D;
			double *oc = jdst + row * 2 * D;
			dime_joint_row(oc, oc + D, xc, xc + D, cosv, sinv, D, jscale);
		}
	}
}
// dst = joint features of px and py row by row, as Joint.
__attribute__((target("avx2,fma")))
static void dime_joint(double *dst, const double *px, const double *py, long n, long D, double scale) {
	for (long row = 0; row < n; row++) {
		const double *xc = px + row * 2 * D, *yc = py + row * 2 * D;
		double *oc = dst + row * 2 * D;
		dime_joint_row(oc, oc + D, xc, xc + D, yc, yc + D, D, scale);
	}
}

// The AVX-512 version of dime_transform: the same operations on eight
// phases at a time (32 frequencies in registers for the phases), so that
// its results are the same to the bit; the table entries read one by one.
__attribute__((target("avx512f,avx2,fma")))
static void dime_transform512(double *dst, const double *x, const double *w, long n, long d, long D,
		double scale, const dime_sincos_consts *k, const double *sinTable, const double *cosTable,
		const double *px, double *jdst, double jscale) {
	const __m512d spr = _mm512_set1_pd(k->stepsPerRadian), magic = _mm512_set1_pd(k->roundMagic);
	const __m512d s1 = _mm512_set1_pd(k->step1), s2 = _mm512_set1_pd(k->step2), s3 = _mm512_set1_pd(k->step3);
	const __m512d maxArg = _mm512_set1_pd(k->maxArg), vscale = _mm512_set1_pd(scale);
	const __m512d c1 = _mm512_set1_pd(-1.0 / 6), c2 = _mm512_set1_pd(1.0 / 120), c3 = _mm512_set1_pd(-1.0 / 5040);
	const __m512d d1 = _mm512_set1_pd(-0.5), d2 = _mm512_set1_pd(1.0 / 24), d3 = _mm512_set1_pd(-1.0 / 720);
	const __m512i mask = _mm512_set1_epi64(k->mask);
	for (long row = 0; row < n; row++) {
		double *cosv = dst + row * 2 * D, *sinv = cosv + D;
		double *theta = cosv; // the phases, read before the cosines overwrite them
		const double *xr = x + row * d;
		long j0 = 0;
		for (; j0 + 32 <= D; j0 += 32) {
			__m512d t0 = _mm512_setzero_pd(), t1 = t0, t2 = t0, t3 = t0;
			for (long c = 0; c < d; c++) {
				double xc = xr[c];
				if (xc == 0) {
					continue;
				}
				const double *wc = w + c * D + j0;
				const __m512d vx = _mm512_set1_pd(xc);
				t0 = _mm512_fmadd_pd(vx, _mm512_loadu_pd(wc), t0);
				t1 = _mm512_fmadd_pd(vx, _mm512_loadu_pd(wc + 8), t1);
				t2 = _mm512_fmadd_pd(vx, _mm512_loadu_pd(wc + 16), t2);
				t3 = _mm512_fmadd_pd(vx, _mm512_loadu_pd(wc + 24), t3);
			}
			_mm512_storeu_pd(theta + j0, t0);
			_mm512_storeu_pd(theta + j0 + 8, t1);
			_mm512_storeu_pd(theta + j0 + 16, t2);
			_mm512_storeu_pd(theta + j0 + 24, t3);
		}
		for (; j0 + 8 <= D; j0 += 8) {
			__m512d t0 = _mm512_setzero_pd();
			for (long c = 0; c < d; c++) {
				double xc = xr[c];
				if (xc == 0) {
					continue;
				}
				t0 = _mm512_fmadd_pd(_mm512_set1_pd(xc), _mm512_loadu_pd(w + c * D + j0), t0);
			}
			_mm512_storeu_pd(theta + j0, t0);
		}
		for (; j0 < D; j0++) {
			double t = 0;
			for (long c = 0; c < d; c++) {
				if (xr[c] != 0) {
					t = fma(xr[c], w[c * D + j0], t);
				}
			}
			theta[j0] = t;
		}
		long j = 0;
		for (; j + 8 <= D; j += 8) {
			__m512d t = _mm512_loadu_pd(theta + j);
			if (_mm512_cmp_pd_mask(_mm512_abs_pd(t), maxArg, _CMP_NLT_UQ)) {
				for (long q = j; q < j + 8; q++) {
					dime_sincos1(k, sinTable, cosTable, theta[q], scale, cosv + q, sinv + q);
				}
				continue;
			}
			__m512d tt = _mm512_fmadd_pd(t, spr, magic);
			__m512i i = _mm512_and_si512(_mm512_castpd_si512(tt), mask);
			__m512d fk = _mm512_sub_pd(tt, magic);
			__m512d r = _mm512_fnmadd_pd(fk, s1, t);
			r = _mm512_fnmadd_pd(fk, s2, r);
			r = _mm512_fnmadd_pd(fk, s3, r);
			__m512d z = _mm512_mul_pd(r, r);
			__m512d sr = _mm512_fmadd_pd(_mm512_mul_pd(r, z), _mm512_fmadd_pd(z, _mm512_fmadd_pd(z, c3, c2), c1), r);
			__m512d cm = _mm512_mul_pd(z, _mm512_fmadd_pd(z, _mm512_fmadd_pd(z, d3, d2), d1));
			long ix[8];
			_mm512_storeu_si512((void *)ix, i);
			__m512d sa = _mm512_set_pd(sinTable[ix[7]], sinTable[ix[6]], sinTable[ix[5]], sinTable[ix[4]],
				sinTable[ix[3]], sinTable[ix[2]], sinTable[ix[1]], sinTable[ix[0]]);
			__m512d ca = _mm512_set_pd(cosTable[ix[7]], cosTable[ix[6]], cosTable[ix[5]], cosTable[ix[4]],
				cosTable[ix[3]], cosTable[ix[2]], cosTable[ix[1]], cosTable[ix[0]]);
			__m512d s = _mm512_add_pd(sa, _mm512_fmadd_pd(sa, cm, _mm512_mul_pd(ca, sr)));
			__m512d co = _mm512_add_pd(ca, _mm512_fmsub_pd(ca, cm, _mm512_mul_pd(sa, sr)));
			_mm512_storeu_pd(cosv + j, _mm512_mul_pd(co, vscale));
			_mm512_storeu_pd(sinv + j, _mm512_mul_pd(s, vscale));
		}
		for (; j < D; j++) {
			dime_sincos1(k, sinTable, cosTable, theta[j], scale, cosv + j, sinv + j);
		}
		if (px) {
			const double *xc = px + row * 2 * D;
			double *oc = jdst + row * 2 * D;
			dime_joint_row(oc, oc + D, xc, xc + D, cosv, sinv, D, jscale);
		}
	}
}
*/
import "C"

import (
	"unsafe"

	"github.com/dime-project/dime/internal/linalg"
)

// nativeTransform reports whether the C version is available: AVX2 and FMA.
var nativeTransform = C.dime_has_avx2_fma() != 0

// native512 says whether the C version runs its AVX-512 code
// (dime_transform512), which gives the same results to the bit as the AVX2
// code with eight phases at a time (table entries read one by one, as in
// the AVX2 code: AVX-512 gathers were slower here). 512 features of 10
// columns on one core of the development machine (AMD EPYC, Zen 4,
// BenchmarkTransform, busy machine): at best 2.6 million rows/s against
// 2.3 million with AVX2 and 1.6 million with gathers. Tests turn it off to
// compare the two.
var native512 = nativeTransform && C.dime_has_avx512f() != 0

// nativeConsts are the constants of the table method, for C.
var nativeConsts = C.dime_sincos_consts{
	stepsPerRadian: stepsPerRadian, roundMagic: roundMagic,
	step1: step1, step2: step2, step3: step3, maxArg: sincosMaxArg,
	mask: sincosTableSize - 1,
}

// transformNative writes the features of the n rows of x to dst (both long
// enough) with the C version and reports true, or reports false if it is not
// available or the process uses the pure-Go backend (linalg.Use), whose
// results the tests compare with it. With px not nil it also writes the
// joint features of the rows of px with the new ones to joint, row by row
// while the new row is in the cache, as jointNative would with scale
// jscale.
func (m *Map) transformNative(dst, x []float64, n int, scale float64, px, joint []float64, jscale float64) bool {
	if !nativeTransform || n == 0 || linalg.Current() != linalg.OpenBLAS {
		return false
	}
	d, D := m.spec.InputDim, m.spec.Features
	var cpx, cjoint *C.double
	if px != nil {
		cpx, cjoint = (*C.double)(unsafe.Pointer(&px[0])), (*C.double)(unsafe.Pointer(&joint[0]))
	}
	cdst, cx, cw := (*C.double)(unsafe.Pointer(&dst[0])), (*C.double)(unsafe.Pointer(&x[0])), (*C.double)(unsafe.Pointer(&m.w[0]))
	sinT, cosT := (*C.double)(unsafe.Pointer(&sinTable[0])), (*C.double)(unsafe.Pointer(&cosTable[0]))
	if native512 {
		C.dime_transform512(cdst, cx, cw, C.long(n), C.long(d), C.long(D), C.double(scale), &nativeConsts, sinT, cosT, cpx, cjoint, C.double(jscale))
	} else {
		C.dime_transform(cdst, cx, cw, C.long(n), C.long(d), C.long(D), C.double(scale), &nativeConsts, sinT, cosT, cpx, cjoint, C.double(jscale))
	}
	return true
}

// jointNative writes the joint features of the n row pairs of px and py to
// dst (all long enough) with the C version and reports true, or reports
// false as transformNative does.
func jointNative(dst, px, py []float64, n, features int, scale float64) bool {
	if !nativeTransform || n == 0 || linalg.Current() != linalg.OpenBLAS {
		return false
	}
	C.dime_joint((*C.double)(unsafe.Pointer(&dst[0])), (*C.double)(unsafe.Pointer(&px[0])), (*C.double)(unsafe.Pointer(&py[0])),
		C.long(n), C.long(features), C.double(scale))
	return true
}
