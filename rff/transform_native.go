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

// dst = joint features of px and py row by row, as Joint.
__attribute__((target("avx2,fma")))
static void dime_joint(double *dst, const double *px, const double *py, long n, long D, double scale) {
	for (long row = 0; row < n; row++) {
		const double *xc = px + row * 2 * D, *yc = py + row * 2 * D;
		double *oc = dst + row * 2 * D;
		dime_joint_row(oc, oc + D, xc, xc + D, yc, yc + D, D, scale);
	}
}

// dime_transform (AVX2) and dime_transform512 (AVX-512), written by
// gen_native.go from one template (go generate ./rff).
#include "transform_native.h"
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
// available or the process uses the pure-Go backend (linalg.Current: a
// program that did not install OpenBLAS, or tests that chose Gonum with
// linalg.Use to compare the two). With px not nil it also writes the
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
