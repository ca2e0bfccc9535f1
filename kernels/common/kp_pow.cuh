// pow for the unary op powf: f32 (kp_f32_pow, and kp_f32_pow_dp in f64
// arithmetic for devices with fast f64) and f16/bf16 (kp_lowp_pow).
// All settle what depends on the exponent p alone once, when a thread
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

// f32 through f64 arithmetic (powf_f64math_f32), for devices whose f64
// units run at half the f32 rate or better, which the host picks it for:
// |x| = 2^k z, z in [0.7, 1.4); the bits under z's exponent pick one of 16
// intervals, whose c (1 for the one that holds 1) a table gives with log2 c,
// so that log2|x| = k + log2 c + log2(1 + r), r = z / c - 1 (|r| < 0.0297,
// one multiply-add), log2(1 + r) = r A(r), A of degree 5 (relative error
// 2^-36); then t = p log2|x| and 2^t = 2^(n / 32) 2^u, n the nearest
// integer to 32 t, |u| <= 1/64, 2^(n / 32) from a table (its exponent raised
// by n's high bits) and 2^u - 1 = u C(u), C of degree 3 (2^-36). One
// rounding to f32 at the end: a host model of this arithmetic was within
// 0.5008 ulp of powl over 6 million inputs at 15 exponents. Where the
// result is below 2^-126 or 2^126 and more, or |x| is not normal and finite,
// powf is called (as in kp_f32_pow).
// H200, kp-bench, 2^28 elements: 73.5-73.9 -> 81.6-83.2 % of the copy
// bandwidth (two runs); ncu counts 59 instructions an element where
// kp_f32_pow takes 78, and finds the L1 cache as busy as the issue slots
// (the tables' scattered loads: six passes a warp's 16-byte lookup).
// Tables of 32-bit words, a pass a lookup but five lookups, measured slower
// (78.5 %), as did z and k built by integer operations instead of
// conversions (78 %).
struct __align__(16) kp_pow_log2_entry {
    double invc, logc;  // 1 / c rounded, -log2 of that
};
__device__ const kp_pow_log2_entry kp_pow_log2_table[16] = {
    {0x1.661ec6a5122f9p+0, -0x1.efec61b011f85p-2}, {0x1.571ed3c506b3ap+0, -0x1.b0b67f4f46812p-2},
    {0x1.49539e3b2d067p+0, -0x1.7418acebbf18fp-2}, {0x1.3c995a47babe7p+0, -0x1.39de8e1559f6ep-2},
    {0x1.30d190130d190p+0, -0x1.01d9bbcfa61d4p-2}, {0x1.25e22708092f1p+0, -0x1.97c1cb13c7ec0p-3},
    {0x1.1bb4a4046ed29p+0, -0x1.2f9e32d5bfdd1p-3}, {0x1.12358e75d3033p+0, -0x1.960caf9abb7c1p-4},
    {0x1.0953f39010954p+0, -0x1.a6f9c377dd31dp-5}, {0x1.0000000000000p+0, 0.0},
    {0x1.e573ac901e574p-1, 0x1.3aa2fdd27f1bfp-4},  {0x1.ca4b3055ee191p-1, 0x1.476a9f983f74dp-3},
    {0x1.b2036406c80d9p-1, 0x1.e840be74e6a4dp-3},  {0x1.9c2d14ee4a102p-1, 0x1.406463b1b0448p-2},
    {0x1.886e5f0abb04ap-1, 0x1.88e9c72e0b224p-2},  {0x1.767dce434a9b1p-1, 0x1.ce0a4923a587dp-2},
};
// The bits of 2^(j / 32) less j << 47, so that adding n << 47 (n = 32 m +
// j) also adds m to the exponent.
__device__ const unsigned long long kp_pow_exp2_table[32] = {
    0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull,
    0x3fef72b83c7d517bull, 0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull,
    0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, 0x3feedea64c123422ull, 0x3feece086061892dull,
    0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, 0x3feea47eb03a5585ull,
    0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull,
    0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull,
    0x3feee89f995ad3adull, 0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull,
    0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, 0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull,
};
// A(r) from r^5 down, C(u) from u^3 down, and 1.5 2^47 (n's rounding
// constant), read from the constant bank as operands (as literals, each
// cost two moves an element).
__constant__ double kp_pow_dp_coef[11] = {
    -0x1.ecea479bf4f31p-3, 0x1.27bdfc656b85cp-2, -0x1.7154717c655d5p-2, 0x1.ec7097c2764fcp-2,
    -0x1.71547652bd964p-1, 0x1.71547652bcfc8p+0, 0x1.3b2aa2ca08887p-7,  0x1.c6b13c3d2915bp-5,
    0x1.ebfbdff86dfd7p-3,  0x1.62e42fef8dc45p-1, 0x1.8p47,
};
struct kp_f32_pow_dp : kp_pow_exponent {
    double pd;
    KP_DEVICE explicit kp_f32_pow_dp(float p_) : kp_pow_exponent(p_), pd(p_) {}
    KP_DEVICE float operator()(float x) const {
        const double *k = kp_pow_dp_coef;
        const uint32_t ia = __float_as_uint(x) & 0x7fffffffu;
        const int32_t tmp = (int32_t)(ia - 0x3f330000u);  // 0x3f330000: 0.69921875
        const kp_pow_log2_entry e = kp_pow_log2_table[(tmp >> 19) & 15];
        const double z = (double)__uint_as_float(ia - ((uint32_t)tmp & 0xff800000u));
        const double r = fma(z, e.invc, -1.0);
        double a = fma(k[0], r, k[1]);
        a = fma(a, r, k[2]);
        a = fma(a, r, k[3]);
        a = fma(a, r, k[4]);
        a = fma(a, r, k[5]);
        const double t = fma(r, a, (double)(tmp >> 23) + e.logc) * pd;
        // n in kd's low word (|32 t| < 2^31 wherever the result is used)
        const double kd = t + k[10];
        const int n = __double2loint(kd);
        const double u = t - (kd - k[10]);
        const unsigned long long b = kp_pow_exp2_table[n & 31];
        const double s = __hiloint2double((int)(b >> 32) + (n << 15), (int)(uint32_t)b);
        double c = fma(k[6], u, k[7]);
        c = fma(c, u, k[8]);
        c = fma(c, u, k[9]);
        const float y = (float)fma(s, c * u, s);
        // |t| < 126 (its high word), |x| normal and finite
        const bool ok = fast && ((uint32_t)__double2hiint(t) & 0x7fffffffu) < 0x405f8000u &&
                        ia - 0x00800000u < 0x7f000000u;
        return ok ? signed_result(x, y) : kp_powf_call(x, p);
    }
};
