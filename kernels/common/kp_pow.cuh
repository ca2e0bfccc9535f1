// pow for the unary op powf: f32 (kp_f32_pow) and f16/bf16 (kp_lowp_pow).
// Both settle what depends on the exponent p alone once, when a thread
// builds the functor, and send every case outside their fast path (zeros,
// subnormal, infinite and NaN x or p, p = 0, |p| >= 2^24, results outside
// the normal f32 range) to libm's powf, called rather than inlined: a
// thread computes four vectors of elements (kp_unary_ops.h), and a copy of
// powf for each element made the kernels slower than their loads.
// Negative x stays on the fast path (the sign of an odd integer power, NaN
// for a non-integer one): a warp whose lanes split between the paths would
// run both.
#pragma once
#include "kp_unary_lowp.cuh"

__noinline__ __device__ float kp_powf_call(float x, float p) { return powf(x, p); }

// What kp_f32_pow and kp_lowp_pow know of p.
struct kp_pow_exponent {
    float p;
    bool fast;          // 0 < |p| < 2^24 (false for NaN)
    uint32_t odd_sign;  // the sign bit where p is an odd integer
    uint32_t nan_bits;  // where p is not an integer (a negative x gives NaN): a quiet NaN's bits
    KP_DEVICE explicit kp_pow_exponent(float p_) : p(p_) {
        fast = p != 0.0f && fabsf(p) < 16777216.0f;
        const bool fraction = p != truncf(p);
        odd_sign = fast && !fraction && ((int)p & 1) ? 0x80000000u : 0u;
        nan_bits = fraction ? 0x7fc00000u : 0u;
    }
    // 2^t (|t| < 128, the result normal) with the sign x gives it, or NaN.
    KP_DEVICE float signed_result(float x, float r) const {
        const uint32_t neg = (uint32_t)((int32_t)__float_as_uint(x) >> 31);  // x < 0 (or -0, -NaN)
        return __uint_as_float((__float_as_uint(r) ^ (neg & odd_sign)) | (neg & nan_bits));
    }
};

// 16 bits: exp2(p log2|x|) with the hardware log2 (2^-22 absolute in
// [0.5, 2], 2 f32 ulp elsewhere) where |p| <= 64, log2f (1 ulp, called)
// above: the exponent's error is |p| times log2's, so the result's relative
// error stays below 2^-15 while |p log2|x|| < 128, far under half a 16-bit
// ulp. Computed for every x, and replaced by powf's result where x is not
// normal and finite or the result would not be normal: both hardware
// approximations may flush, as only those cases would need. H100, 2^28
// elements: 85-86 % of copy as powf inline for one vector a thread -> 98 %
// with the fast path inside branches; H200: 79 % that way, 98 % like this
// (84.5 % with only exp2 flushing: the non-flushing log2's scaling and the
// branches around each element cost the rest).
__noinline__ __device__ float kp_log2f_call(float x) { return log2f(x); }
struct kp_lowp_pow : kp_pow_exponent {
    bool precise_log;
    KP_DEVICE explicit kp_lowp_pow(float p_) : kp_pow_exponent(p_), precise_log(fabsf(p_) > 64.0f) {}
    KP_DEVICE float operator()(float x) const {
        const float a = fabsf(x);
        const float t = p * (precise_log ? kp_log2f_call(a) : kp_fast_log2(a));
        const float r = signed_result(x, kp_fast_exp2(t));
        // |x| normal and finite (one unsigned compare), -126 < t < 128
        const bool normal = __float_as_uint(a) - 0x00800000u < 0x7f000000u;
        return fast && normal && fabsf(t - 1.0f) < 127.0f ? r : kp_powf_call(x, p);
    }
};

// f32: 2^(p log2|x|) with log2|x| carried in two floats (about 2^-29
// relative), so that t = p log2|x| has an absolute error of about |t| 2^-29
// and 2^t a relative one of ln 2 times that:
//   |x| = m 2^e, m in [sqrt(1/2), sqrt(2)); f = m - 1 (exact);
//   log2 m = (2 / ln 2) atanh(s), s = f / (2 + f) (|s| < 0.1716) in two
//   floats, atanh(s) = s (1 + s^2/3 + s^4/5 + ... + s^10/11) (the next term
//   is below 2^-34 of the sum); then 2^t = 2^k 2^g (1 + t_lo ln 2), k the
//   nearest integer to t_hi, |g| <= 1/2, 2^g = 1 + g ln 2 + g^2 c(g), c a
//   degree-5 polynomial fitted with float coefficients (relative error of
//   2^g 6e-10), the sum rounded once at the end.
// A model of this arithmetic on the host (exact reciprocal) saw at most
// 0.62 ulp for |t| < 16 and 1.2 ulp towards |t| = 128, over 4 million
// inputs at each of 14 exponents; tests/gpu/test_unary.c asserts 2 ulp.
// The products whose rounding errors are recovered (l_hi, a_hi) must not be
// fused into the sums that follow them (fused, a_hi's error was counted
// twice: up to half an ulp more): nvcc keeps __fmul_rn apart, and on HIP,
// where __fmul_rn is a plain product, contraction is off in the function
// (every multiply-add meant is an explicit fmaf).
// The arithmetic runs for every x and the one branch, to powf, comes after
// it: about 65 instructions an element, where powf's ~85 kept this op
// compute-bound at 87 % of the copy bandwidth (H100; 98 % now). An H200's
// 4.2 TB/s still outruns both forms: f32 62 -> 73.5 %, 16-bit 62-64 -> 79.
struct kp_f32_pow : kp_pow_exponent {
    KP_DEVICE explicit kp_f32_pow(float p_) : kp_pow_exponent(p_) {}
    KP_DEVICE float operator()(float x) const {
#if KP_HIP
#pragma clang fp contract(off)
#endif
        const uint32_t ia = __float_as_uint(x) & 0x7fffffffu;
        {  // computed for every x; used where |x| is normal and finite (below)
            const int e = ((int)ia - 0x3f3504f3) >> 23;  // 0x3f3504f3: sqrt(1/2)
            const float m = __uint_as_float(ia - ((uint32_t)e << 23));
            const float f = m - 1.0f;
            // s = f / (2 + f) = s_hi + s_lo: 2 + f exactly as u_hi + u_lo,
            // then the quotient and its remainder.
            const float u_hi = 2.0f + f, u_lo = f - (u_hi - 2.0f);
            const float r = kp_lowp_rcp(u_hi);
            const float s_hi = f * r;
            const float rem = fmaf(-s_hi, u_lo, fmaf(-s_hi, u_hi, f));
            const float s_lo = rem * r;
            const float z = fmaf(s_hi, s_hi, (s_hi + s_hi) * s_lo);  // s^2
            const float q =
                z * fmaf(z, fmaf(z, fmaf(z, fmaf(z, 1.0f / 11.0f, 1.0f / 9.0f), 1.0f / 7.0f), 1.0f / 5.0f),
                         1.0f / 3.0f);
            // log2 m = (2 / ln 2) s (1 + q) = l_hi + l_lo
            constexpr float c_hi = 2.88539004e+00f, c_lo = 3.85192607e-08f;  // 2 / ln 2
            const float l_hi = __fmul_rn(s_hi, c_hi);  // never fused: its rounding error is recovered below
            const float l_lo = fmaf(l_hi, q, fmaf(s_lo, c_hi, fmaf(s_hi, c_lo, fmaf(s_hi, c_hi, -l_hi))));
            // log2|x| = e + log2 m = z_hi + z_lo (|e| >= 1 > |l_hi| unless e
            // = 0); then t = p log2|x| = t_hi + t_lo, t_hi rounded once, so
            // that t_lo is below half an ulp of it
            const float ef = (float)e, z_hi = ef + l_hi;
            const float z_lo = ((ef - z_hi) + l_hi) + l_lo;
            const float w = p * z_lo, t_hi = fmaf(p, z_hi, w);
            const float t_lo = fmaf(p, z_hi, -t_hi) + w;
            if (fast && ia - 0x00800000u < 0x7f000000u && t_hi > -125.0f && t_hi < 128.0f) {
                // k = the nearest integer to t_hi, in the low bits of kk
                const float kk = t_hi + 12582912.0f, k = kk - 12582912.0f;
                const float g = t_hi - k;  // exact
                // 2^g = 1 + g ln 2 + g^2 c(g): g ln 2 in two floats, 1 added
                // last; then 2^(g + t_lo) = 2^g (1 + t_lo ln 2)
                constexpr float ln2_hi = 6.93147182e-01f, ln2_lo = -1.90465421e-09f;
                float c = fmaf(g, 1.35055589e-05f, 1.54539404e-04f);
                c = fmaf(c, g, 1.33401831e-03f);
                c = fmaf(c, g, 9.61808488e-03f);
                c = fmaf(c, g, 5.55040538e-02f);
                c = fmaf(c, g, 2.40226507e-01f);
                const float a_hi = __fmul_rn(g, ln2_hi), a_lo = fmaf(g, ln2_lo, fmaf(g, ln2_hi, -a_hi));
                const float tail = fmaf(g * g, c, a_lo);
                const float one = 1.0f + a_hi, one_err = (1.0f - one) + a_hi;  // exact
                const float y = one + fmaf(t_lo * ln2_hi, one + tail, one_err + tail);
                // times 2^k: k added to the exponent field (k << 23 is
                // kk's bits << 23, as 12582912's low 9 bits are 0)
                return signed_result(x, __uint_as_float(__float_as_uint(y) + (__float_as_uint(kk) << 23)));
            }
        }
        return kp_powf_call(x, p);
    }
};
