/* fastmath.h: exp, tanh and sigmoid for float arrays, written without branches or
 * library calls so that the compiler turns loops over them into SIMD code (libm's
 * expf and tanhf are function calls, one value at a time). Accuracy: a few ulp
 * (tests/train/test_optim.c measures it against libm). Only the float build uses them;
 * the double build, which the gradient checks run on, keeps libm.
 *
 * exp: Cody-Waite reduction x = n ln2 + r with |r| <= ln2/2, a degree-6 polynomial for
 * e^r (the coefficients of Cephes' expf), and 2^n put into the exponent bits; inputs are
 * clamped to [-87.3, 88.7], so e^x never overflows and the smallest result is ~1e-38.
 * tanh: x + x^3 P(x^2) for |x| < 0.625 (Cephes' tanhf polynomial), else
 * 1 - 2 / (e^(2|x|) + 1) with the sign of x.
 *
 * fast_exp, in double (beam search's log-sum-exp over a vocabulary at every step): the
 * same reduction with ln2 in fdlibm's two parts (its first part times any n of the
 * range is exact), e^r by its Taylor series to r^13 (the first term left out is below
 * 2^-62 for |r| <= ln2/2), inputs clamped to [-708, 709], so that 2^n stays a normal
 * number. Within 2 ulp of libm's exp. */
#ifndef S2S_FASTMATH_H
#define S2S_FASTMATH_H

#include <stdint.h>
#include <string.h>

/* SIMD_CLONES marks the hot element-wise loops: GCC compiles them three times, for
 * AVX-512, for AVX2 and for the x86-64 baseline (SSE2), and picks the one the CPU runs
 * at load time (valgrind's CPU has no AVX-512: it runs the AVX2 one). All compute the
 * same IEEE operations element by element (no reassociation, and ISO C mode forbids
 * contracting into FMA), so results are bit for bit the same. On the bench machine (AMD
 * EPYC) the AVX-512 clone of the attention's tanh(k + q) runs 2.5x faster than the AVX2
 * one (issue 46). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
#define SIMD_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SIMD_CLONES
#endif

static inline float fast_expf(float x)
{
    x = x < -87.3f ? -87.3f : x;
    x = x > 88.7f ? 88.7f : x;
    /* round x / ln2 to the nearest integer with the 1.5 * 2^23 trick (no rounding
     * instruction needed) */
    const float shift = 12582912.0f;
    float n = (x * 1.44269504088896341f + shift) - shift;
    float r = x - n * 0.693359375f;   /* ln2 split in two: the first part is exact */
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    int32_t bits;
    memcpy(&bits, &p, 4);
    bits += (int32_t)n * (1 << 23); /* times 2^n */
    memcpy(&p, &bits, 4);
    return p;
}

static inline double fast_exp(double x)
{
    x = x < -708.0 ? -708.0 : x;
    x = x > 709.0 ? 709.0 : x;
    /* n = x / ln2 rounded, by the 1.5 * 2^52 trick: t's last bits are n itself */
    const double shift = 6755399441055744.0;
    const double t = x * 1.4426950408889634 + shift, n = t - shift;
    double r = x - n * 6.93147180369123816490e-01;
    r = r - n * 1.90821492927058770002e-10;
    double p = 1.0 / 6227020800.0; /* 1/13! */
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r * r + r + 1.0;
    int64_t tbits, pbits;
    memcpy(&tbits, &t, 8);
    memcpy(&pbits, &p, 8);
    pbits += (tbits - INT64_C(0x4338000000000000)) * (INT64_C(1) << 52); /* times 2^n */
    memcpy(&p, &pbits, 8);
    return p;
}

static inline float fast_tanhf(float x)
{
    float a = x < 0 ? -x : x;
    float z = x * x;
    float small = (((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
                   1.33314422036e-1f) * z - 3.33332819422e-1f;
    small = x + x * z * small;
    float big = 1.0f - 2.0f / (fast_expf(2.0f * a) + 1.0f);
    big = x < 0 ? -big : big;
    return a < 0.625f ? small : big;
}

static inline float fast_sigmoidf(float x)
{
    return 1.0f / (1.0f + fast_expf(-x));
}

#endif
