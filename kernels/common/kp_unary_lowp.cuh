// kp_lowp: the compute type of the unary ops on f16 and bf16. It is an f32
// whose transcendental functions are the hardware approximations (a few f32
// ulp, i.e. 1e-5 of a 16-bit ulp or less) instead of the exactly-rounded
// libm ones, which cost 10-30 instructions an element and made these ops
// compute-bound at 16 bits. Where an approximation loses relative accuracy
// (near zeros of the result, subnormal or huge arguments) the functions
// switch to a short polynomial or to libm, so every result stays within
// one 16-bit ulp of the exact value.
#pragma once
#include "kp_device.cuh"

struct kp_lowp {
    float v;
    kp_lowp() = default;
    // The ops write constants as F(0.5): exact for a float argument too.
    __device__ constexpr kp_lowp(double d) : v((float)d) {}
};

KP_DEVICE kp_lowp kp_lp(float v) { return kp_lowp(v); }
KP_DEVICE kp_lowp operator+(kp_lowp a, kp_lowp b) { return kp_lp(a.v + b.v); }
KP_DEVICE kp_lowp operator-(kp_lowp a, kp_lowp b) { return kp_lp(a.v - b.v); }
KP_DEVICE kp_lowp operator*(kp_lowp a, kp_lowp b) { return kp_lp(a.v * b.v); }
KP_DEVICE kp_lowp operator/(kp_lowp a, kp_lowp b) { return kp_lp(a.v / b.v); }
KP_DEVICE kp_lowp operator-(kp_lowp a) { return kp_lp(-a.v); }
KP_DEVICE bool operator<(kp_lowp a, kp_lowp b) { return a.v < b.v; }
KP_DEVICE bool operator>(kp_lowp a, kp_lowp b) { return a.v > b.v; }
KP_DEVICE bool operator<=(kp_lowp a, kp_lowp b) { return a.v <= b.v; }
KP_DEVICE bool operator>=(kp_lowp a, kp_lowp b) { return a.v >= b.v; }

KP_DEVICE bool kp_is_neg_inf(kp_lowp x) { return x.v == -INFINITY; }

KP_DEVICE kp_lowp kp_fabs(kp_lowp x) { return kp_lp(fabsf(x.v)); }
KP_DEVICE kp_lowp kp_ceil(kp_lowp x) { return kp_lp(ceilf(x.v)); }
KP_DEVICE kp_lowp kp_floor(kp_lowp x) { return kp_lp(floorf(x.v)); }
KP_DEVICE kp_lowp kp_round(kp_lowp x) { return kp_lp(roundf(x.v)); }
// exp: the hardware exp2 flushes subnormal results, which bf16 can hold, so
// arguments below -80 are raised by 24 ln 2 and the result scaled by 2^-24
// (two selects instead of a second, exact exp).
KP_DEVICE float kp_lowp_exp(float x) {
    const bool low = x < -80.0f;
    return __expf(low ? x + 16.6355324f : x) * (low ? 5.96046448e-8f : 1.0f);
}
KP_DEVICE kp_lowp kp_exp(kp_lowp x) { return kp_lp(kp_lowp_exp(x.v)); }

// 1 / x by the hardware approximation (1 f32 ulp). On CUDA a result below
// 2^-126 flushes to 0: that saves the four instructions that __fdividef and
// 1.0f / x spend on subnormal scaling, so callers keep their divisors below
// 2^126 where a result matters.
KP_DEVICE float kp_lowp_rcp(float x) {
#if KP_HIP
    return __builtin_amdgcn_rcpf(x);
#else
    float y;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

// log2(x) by the hardware approximation, for normal positive x (CUDA
// flushes subnormal x to 0: -inf); for math whose results are rounded to
// 16 bits.
KP_DEVICE float kp_fast_log2(float x) {
#if KP_HIP
    return __log2f(x);
#else
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

// x / (1 + 2^s), the sigmoid family's quotient, in five instructions (the
// caller's s - 8 fuses into its own multiply): as (x 2^-8) / (2^(s-8) +
// 2^-8), so that the flushing exp2 and reciprocal only lose results below
// |x| 2^-134, under the smallest normal f32 for |x| < 256, which are the
// only ones these ops produce (for larger |x| the result is 0 or x anyway).
// exp2 overflowing to infinity gives 0, with the sign of x.
KP_DEVICE float kp_lowp_div_1p_exp2(float x, float s) {
    const float e = kp_fast_exp2(s - 8.0f);
    return x * 0x1p-8f * kp_lowp_rcp(e + 0x1p-8f);
}

// x sigmoid(t) = x / (1 + exp(-t)) (sigmoid, silu). The f32 and f64 version
// (unary.cu) needs selects to keep exp from overflowing; here the overflow is
// harmless (see above). The f16 kernels' loops went from 21 (sigmoid) and 25
// (silu) instructions an element, 16-bit conversions included, to 8 and 11.
KP_DEVICE kp_lowp kp_mul_sigmoid(kp_lowp x, kp_lowp t) {
    return kp_lp(kp_lowp_div_1p_exp2(x.v, t.v * -1.44269504f));
}

// gelu (tanh form) = x sigmoid(2u) = x / (1 + 2^s), s = -2u log2(e) =
// x (c1 + c2 x^2): 12 instructions an element in the f16 kernel's loop,
// where the generic form over kp_lowp took 33 (gelu then ran at 94 % of the
// copy bandwidth on an H100). -inf would give -inf * 0, so x is clamped to
// the finite range (NaN still gives NaN, through s).
KP_DEVICE kp_lowp kp_lowp_gelu(kp_lowp xl) {
    const float x = xl.v, s = x * fmaf(x * x, -0.102943242f, -2.30220819f);
    return kp_lp(kp_lowp_div_1p_exp2(fmaxf(x, -3.40282347e38f), s));
}

// expm1: exp(x) - 1 cancels near 0, where a Taylor polynomial takes over
// (its first omitted term, x^5/120, is below 1e-8 of the result there).
KP_DEVICE kp_lowp kp_expm1(kp_lowp x) {
    const float a = x.v;
    if (fabsf(a) < 0.0625f)
        return kp_lp(a * (1.0f + a * (0.5f + a * (1.0f / 6.0f + a * (1.0f / 24.0f)))));
    return kp_lp(kp_lowp_exp(a) - 1.0f);
}

// log: the approximation is good to 2^-21 absolute near 1 (under half an
// f16 ulp of the smallest result there); it flushes subnormal input, so that
// is scaled by 2^24 first. 0, infinity, negatives and NaN come out right.
KP_DEVICE kp_lowp kp_log(kp_lowp x) {
    const bool tiny = x.v < 1.17549435e-38f;
    return kp_lp(__logf(tiny ? x.v * 16777216.0f : x.v) - (tiny ? 16.6355324f : 0.0f));
}

// sqrt and rsqrt through the hardware reciprocal square root (2 f32 ulp);
// 0 and infinity keep their exact results.
KP_DEVICE kp_lowp kp_rsqrt(kp_lowp x) { return kp_lp(rsqrtf(x.v)); }
KP_DEVICE kp_lowp kp_sqrt(kp_lowp x) {
    const float a = x.v, r = a * rsqrtf(a);
    return kp_lp(a == 0.0f || a == INFINITY ? a : r);
}

// tanh = sign(x) (1 - 2 / (exp(2|x|) + 1)); below |x| = 1/16, where that
// cancels, its Taylor polynomial (next term 17 x^7 / 315).
KP_DEVICE kp_lowp kp_tanh(kp_lowp x) {
    const float a = fabsf(x.v);
    if (a < 0.0625f) {
        const float x2 = x.v * x.v;
        return kp_lp(x.v * (1.0f + x2 * (-1.0f / 3.0f + x2 * (2.0f / 15.0f))));
    }
    // exp(2a) overflowing to infinity (or its reciprocal flushing) gives 1.
    const float t = fmaf(-2.0f, kp_lowp_rcp(kp_fast_exp2(a * 2.88539004f) + 1.0f), 1.0f);
    return kp_lp(copysignf(t, x.v));
}

// sin and cos: x = k pi + r (sin) or (k + 1/2) pi + r (cos), |r| <= pi/2,
// then (-1)^k sin(r) or (-1)^(k+1) sin(r), with sin(r) an odd polynomial:
//   k: the nearest integer (to x / pi, or x / pi - 1/2) in the low bits of
//     t = that + 1.5 2^23, so k's parity is t's lowest bit;
//   r: x - m pi with pi in three parts (Cody-Waite), each step one fma, so
//     r keeps its relative accuracy near a zero of the function (|x| <
//     2^17; larger and non-finite arguments take libm's sinf / cosf,
//     called, not inlined).
//     Every part is below its share of pi, so for k = 0 each product is -0
//     and x = -0 keeps its sign;
//   sin(r) = r (1 + c3 r^2 + c5 r^4 + c7 r^6), a fit of the relative error
//     over |r| <= pi/2: 1.2e-6 (0.0025 ulp of f16) in f32 arithmetic.
// Every f16 and bf16 input within 0.7 ulp of the exact result (a host
// model of this arithmetic). Replaces the hardware __sinf, a Taylor
// polynomial near zero, a select between them and an inlined sinf for
// large arguments (H200, kp-bench: 86.5-91.4 -> 98.1-99.0 % of copy; the
// call alone, 89.2-94.3; the sin_f16 kernel's code a quarter the size).
__noinline__ __device__ float kp_sinf_call(float x) { return sinf(x); }
__noinline__ __device__ float kp_cosf_call(float x) { return cosf(x); }
// (-1)^parity sin(r), parity the lowest bit of t's bits (flip: one more).
KP_DEVICE float kp_lowp_signed_sin(float x, float t, float m, uint32_t flip) {
    float r = fmaf(m, -3.14159250e+00f, x);  // pi1: 0x1.921fb4p+1, m pi1 exact
    r = fmaf(m, -1.50995788e-07f, r);        // pi2: 0x1.4442d0p-23
    r = fmaf(m, -1.07806059e-14f, r);        // pi3
    const float z = r * r;
    const float p = fmaf(fmaf(fmaf(z, -1.85405734e-04f, 8.31422582e-03f), z, -1.66658506e-01f), z, 1.0f);
    const float y = r * p;  // (r + r^3 ... would turn r = -0 into +0)
    return __uint_as_float(__float_as_uint(y) ^ (__float_as_uint(t) << 31) ^ flip);
}
KP_DEVICE kp_lowp kp_sin(kp_lowp x) {
    if (!(fabsf(x.v) < 131072.0f))
        return kp_lp(kp_sinf_call(x.v));
    const float t = fmaf(x.v, 0.318309873f, 12582912.0f), k = t - 12582912.0f;
    return kp_lp(kp_lowp_signed_sin(x.v, t, k, 0u));
}
KP_DEVICE kp_lowp kp_cos(kp_lowp x) {
    if (!(fabsf(x.v) < 131072.0f))
        return kp_lp(kp_cosf_call(x.v));
    const float t = fmaf(x.v, 0.318309873f, -0.5f) + 12582912.0f, k = t - 12582912.0f;
    return kp_lp(kp_lowp_signed_sin(x.v, t, k + 0.5f, 0x80000000u));
}

// 0.5 erfc(a / sqrt 2) for a >= 0 (NaN for NaN), as t 2^(q(t) - w^2), with
// w^2 = (a / sqrt 2)^2 log2(e) and t = 1 / (4 + 4 p a / sqrt 2), p = 0.49:
// q is a degree-5 minimax fit of log2(0.5 erfc(z) 2^(w^2) / t) over z in
// [0, 9.6], good to 9.7e-6 (log2 units), so the result is within 6.7e-6 of
// 0.5 erfc relatively, plus what rounding w in f32 moves it by (2 w^2 ln 2
// f32 ulps: 1e-5 at a = 12, where it nears the smallest normal f32): a
// 16-bit result needs no more. (Degree 7, good to 3.7e-7, took two
// instructions more an element; a host model puts gelu_erf within the same
// 0.94 ulp with either over every f16 and bf16 input; H200: 95.6-96.6 ->
// 97.5-97.6 % of copy.) The 4 in t lifts 2^(q - w^2) by 2^2, so that exp2
// only flushes where a 0.5 erfc(a / sqrt 2) is below the smallest normal
// f32. Replaces Numerical Recipes' erfcc (degree 9, a division and an exp
// with range handling).
KP_DEVICE float kp_lowp_half_erfc(float a) {
    const float w = a * 0.849321783f;  // sqrt(log2(e) / 2)
    const float t = kp_lowp_rcp(fmaf(w, 1.63180709f, 4.0f));
    float q = 339.644775f;
    q = fmaf(q, t, -272.582336f);
    q = fmaf(q, t, 49.7783661f);
    q = fmaf(q, t, 5.36232853f);
    q = fmaf(q, t, 5.90887690f);
    q = fmaf(q, t, -0.857062399f);
    return t * kp_fast_exp2(q - w * w);
}
// gelu_erf = x Phi(x), Phi(x) = 0.5 erfc(-x / sqrt 2): with h = Phi(-|x|),
// y = max(x, 0) - |x| h, whose sign is always that of x (copysign keeps it
// for zero results: -0 from -0, underflows below 0 and -inf). |x| is clamped
// so that +-inf give inf * 0 nowhere. 18 instructions an element in the f16
// kernel's loop, where 0.5 x erfc(-x / sqrt 2) over kp_lowp took 50 and held
// gelu_erf to 78 % of the copy bandwidth on an H100. Each result is one
// rounding of x (1 - h) or -|x| h, so its relative error is h's: under
// 1.7e-5 (2^-15.8) over every f16 and bf16 input in an f32 emulation that
// moves rcp and exp2 by their error bounds, far inside the half 16-bit ulp
// (2^-12 or more) that a result within one ulp needs.
KP_DEVICE kp_lowp kp_lowp_gelu_erf(kp_lowp xl) {
    const float x = xl.v, h = kp_lowp_half_erfc(fabsf(x));
    const float y = fmaf(-fminf(fabsf(x), 3.40282347e38f), h, fmaxf(x, 0.0f));
    return kp_lp(copysignf(y, x));
}
// erf = 1 - erfc(a), a = |x|, erfc(a) = 2^(a S(a)) with S a degree-4 fit
// of log2(erfc(a)) / a over [2^-7, 4] (relative error of erf below 8e-7
// there, in f32 arithmetic; erfc(4) = 1.5e-8 leaves 1 in f32, so a is
// clamped to 4); below 2^-7, where 1 - erfc cancels, erf = a 2 / sqrt(pi)
// (the next term is a^2 / 3 = 2e-5 of it). NaN takes that form (and
// stays NaN); the sign is x's. Every f16 and bf16 input within 0.62 ulp of
// the exact result (a host model of this arithmetic, exp2 off by 2^-22).
// The f16 kernel (32 elements a thread) is 688 instructions where libm's
// erff, with its two polynomials, made it 1112 and held the op to 88-90 %
// of the copy bandwidth on an H200 (now 99.3-99.6 %).
KP_DEVICE kp_lowp kp_erf(kp_lowp x) {
    const float a = fabsf(x.v), b = fminf(a, 4.0f);
    float s = fmaf(b, -2.99609965e-03f, 2.97972653e-02f);
    s = fmaf(s, b, -1.48936957e-01f);
    s = fmaf(s, b, -9.18376505e-01f);
    s = fmaf(s, b, -1.62790823e+00f);
    // exp2 for every element, ahead of the select: written inside it, the
    // select became a branch (the asm is not moved past a condition).
    const float e = kp_fast_exp2(b * s);
    const float y = !(a >= 0.0078125f) ? a * 1.12837917f : 1.0f - e;
    return kp_lp(copysignf(y, x.v));
}
