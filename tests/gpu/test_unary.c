/* kp_unary on the GPU against a CPU reference, for every op and dtype and
 * contiguous, strided, transposed, broadcast, offset, scalar and empty
 * layouts, special values (NaN, +-Inf, +-0, subnormals, extremes), the
 * parameters of elu and powf, in-place use, unsupported (op, dtype) pairs,
 * one tensor of more than 2^32 elements, every one of the 65536 inputs of
 * each op in f16 and bf16, f32 gelu and gelu_erf over 70 million inputs
 * spread across the whole range (the worst error per band of x is printed:
 * ops.h quotes it), f32 powf over 7 million at each of 11 exponents, and
 * f32 powf's exact cases, both contiguous and strided (two kernels where
 * the device has fast f64 arithmetic).
 *
 * Reference: computed in long double (at least double precision) from the
 * exact input element, then rounded to the dtype ("want"). Outputs are
 * poisoned first; every element of the view must be written and nothing
 * outside it.
 *
 * Tolerances, as the distance in units in the last place (ulp) of the dtype
 * between the result and want (+0 and -0 count as equal, an infinity is one
 * ulp above the largest finite value):
 *   copy, neg, abs, sign, ceil, floor, round, relu, and all integer ops:
 *     exact, bit for bit (the sign of a zero included; for a NaN result
 *     any NaN, except that copy keeps the bits).
 *   f16, bf16 (every other op): 1 ulp, as the op is computed in f32 and
 *     rounded once to 16 bits.
 *   f32, f64:
 *     sqr, recip, sqrt                        1 ulp
 *     rsqrt                                   2 ulp
 *     powf (f32)                              2 ulp
 *     exp, log, sin, cos, tanh, erf,
 *     powf (f64)                              4 ulp
 *     silu, sigmoid, elu                      6 ulp
 *     gelu       6 ulp + 8 |v| / (1 + exp(v)) ulp, v = 2u the argument of
 *                the sigmoid: the rounding of v in the dtype moves the
 *                result by that much (~700 ulp at x = -10 in f32, where the
 *                result is ~1e-37)
 *     gelu_erf   8 ulp + 2 x^2 ulp for x < 0: the rounding of x / sqrt(2),
 *                amplified by the slope of log(erfc)
 *     (the second terms are capped at 1024 ulp for f32, 8192 for f64)
 *   Besides, a result within an absolute distance of the smallest normal
 *   number of the compute type (f32 for f16/bf16) passes (intermediates may
 *   underflow), and sin, cos and log also pass within 2^-30 (f64: 2^-60) of
 *   want, for results near zero.
 *   NaN must give NaN; an infinite exact result must be that infinity.
 */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "operands.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))
#define N_OPS ((int)KP_UNARY_OP_COUNT)

/* Default parameters, exact in every float dtype. */
#define ELU_ALPHA 0.75
#define POWF_EXPONENT 1.75

static bool is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

/* The (op, dtype) pairs ops.h promises. */
static bool supported(kp_unary_op op, kp_dtype dt)
{
    if (is_float(dt))
        return true;
    switch (op) {
    case KP_UNARY_COPY: case KP_UNARY_ABS: case KP_UNARY_SIGN: case KP_UNARY_SQR: case KP_UNARY_RELU:
        return true;
    case KP_UNARY_NEG:
        return dt == KP_DTYPE_I64;
    default:
        return false;
    }
}

static bool exact_op(kp_unary_op op)
{
    switch (op) {
    case KP_UNARY_COPY: case KP_UNARY_NEG: case KP_UNARY_ABS: case KP_UNARY_SIGN:
    case KP_UNARY_CEIL: case KP_UNARY_FLOOR: case KP_UNARY_ROUND: case KP_UNARY_RELU:
        return true;
    default:
        return false;
    }
}

static double default_param(kp_unary_op op)
{
    return op == KP_UNARY_ELU ? ELU_ALPHA : op == KP_UNARY_POWF ? POWF_EXPONENT : 0.0;
}

/* ---- reference */

static bool is_neg_inf(long double x) { return isinf(x) && x < 0; }

static long double ref_float(kp_unary_op op, long double x, long double p)
{
    const long double pi = acosl(-1.0L);
    switch (op) {
    case KP_UNARY_COPY: return x;
    case KP_UNARY_NEG: return -x;
    case KP_UNARY_RECIP: return 1 / x;
    case KP_UNARY_ABS: return fabsl(x);
    case KP_UNARY_SIGN: return x > 0 ? 1 : x < 0 ? -1 : x;
    case KP_UNARY_SQR: return x * x;
    case KP_UNARY_SQRT: return sqrtl(x);
    case KP_UNARY_RSQRT: return 1 / sqrtl(x);
    case KP_UNARY_EXP: return expl(x);
    case KP_UNARY_LOG: return logl(x);
    case KP_UNARY_SIN: return sinl(x);
    case KP_UNARY_COS: return cosl(x);
    case KP_UNARY_TANH: return tanhl(x);
    case KP_UNARY_ERF: return erfl(x);
    case KP_UNARY_CEIL: return ceill(x);
    case KP_UNARY_FLOOR: return floorl(x);
    case KP_UNARY_ROUND: return roundl(x);
    case KP_UNARY_RELU: return x <= 0 ? 0 : x;
    case KP_UNARY_GELU: {
        /* 0.5 x (1 + tanh u) == x / (1 + exp(-2u)); the latter does not
         * cancel for negative x, even in long double. */
        if (is_neg_inf(x))
            return -0.0L;
        long double u = sqrtl(2 / pi) * (x + 0.044715L * x * x * x);
        return x / (1 + expl(-2 * u));
    }
    case KP_UNARY_GELU_ERF:  /* 0.5 x (1 + erf(x / sqrt 2)) == 0.5 x erfc(-x / sqrt 2) */
        return is_neg_inf(x) ? -0.0L : 0.5L * x * erfcl(-x / sqrtl(2.0L));
    case KP_UNARY_SILU: return is_neg_inf(x) ? -0.0L : x / (1 + expl(-x));
    case KP_UNARY_SIGMOID: return 1 / (1 + expl(-x));
    case KP_UNARY_ELU: return x > 0 ? x : p * expm1l(x);
    case KP_UNARY_POWF: return powl(x, p);
    default: break;
    }
    ck_abort_msg("no reference for op %d", (int)op);
    return 0;
}

/* Integer ops, wrapping; writes one element of dt to out. */
static void ref_int(kp_unary_op op, kp_dtype dt, const void *src, size_t si, void *out)
{
    if (dt == KP_DTYPE_I64) {
        int64_t x;
        memcpy(&x, (const int64_t *)src + si, 8);
        uint64_t u = (uint64_t)x, r = 0;
        switch (op) {
        case KP_UNARY_COPY: r = u; break;
        case KP_UNARY_NEG: r = 0 - u; break;
        case KP_UNARY_ABS: r = x < 0 ? 0 - u : u; break;
        case KP_UNARY_SIGN: r = (uint64_t)(int64_t)((x > 0) - (x < 0)); break;
        case KP_UNARY_SQR: r = u * u; break;
        case KP_UNARY_RELU: r = x < 0 ? 0 : u; break;
        default: ck_abort_msg("no i64 reference for %s", kp_unary_op_name(op));
        }
        memcpy(out, &r, 8);
        return;
    }
    uint64_t x = dt == KP_DTYPE_U8 ? ((const uint8_t *)src)[si] : ((const uint32_t *)src)[si], r = 0;
    switch (op) {
    case KP_UNARY_COPY: case KP_UNARY_ABS: case KP_UNARY_RELU: r = x; break;
    case KP_UNARY_SIGN: r = x != 0; break;
    case KP_UNARY_SQR: r = x * x; break;  /* truncated to the dtype below */
    default: ck_abort_msg("no %s reference for %s", kp_dtype_name(dt), kp_unary_op_name(op));
    }
    if (dt == KP_DTYPE_U8) {
        uint8_t b = (uint8_t)r;
        memcpy(out, &b, 1);
    } else {
        uint32_t w = (uint32_t)r;
        memcpy(out, &w, 4);
    }
}

/* ---- comparison */

static uint64_t raw_bits(kp_dtype dt, const void *elem)
{
    uint64_t bits = 0;
    memcpy(&bits, elem, kp_dtype_size(dt));  /* little-endian host */
    return bits;
}

/* Distance in ulps between two floats of dt, counting through the
 * integers their bits encode: +0 and -0 are 0 apart, the largest finite
 * value and infinity 1. */
static double ulp_distance(kp_dtype dt, const void *a, const void *b)
{
    unsigned width = (unsigned)kp_dtype_size(dt) * 8;
    uint64_t sign = 1ull << (width - 1);
    uint64_t x = raw_bits(dt, a), y = raw_bits(dt, b);
    uint64_t mx = x & (sign - 1), my = y & (sign - 1);
    if ((x & sign) != (y & sign))
        return (double)mx + (double)my;  /* through zero; large anyway */
    return (double)(mx > my ? mx - my : my - mx);
}

static double allowed_ulps(kp_unary_op op, kp_dtype dt, double x)
{
    if (dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16)
        return 1;
    /* Bound of the amplified terms: reached where the results leave the
     * normal range (|2u| ~ 104 in f32, ~745 in f64), so that a result that
     * should be 0 still has to be (nearly) 0. */
    const double cap = dt == KP_DTYPE_F64 ? 8192 : 1024;
    switch (op) {
    case KP_UNARY_SQR: case KP_UNARY_RECIP: case KP_UNARY_SQRT:
        return 1;
    case KP_UNARY_RSQRT:
        return 2;
    case KP_UNARY_POWF:
        return dt == KP_DTYPE_F32 ? 2 : 4;
    case KP_UNARY_EXP: case KP_UNARY_LOG: case KP_UNARY_SIN: case KP_UNARY_COS:
    case KP_UNARY_TANH: case KP_UNARY_ERF:
        return 4;
    case KP_UNARY_SILU: case KP_UNARY_SIGMOID: case KP_UNARY_ELU:
        return 6;
    case KP_UNARY_GELU: {
        double v = 1.5957691216057308 * (x + 0.044715 * x * x * x);
        return 6 + (v > 40 ? 0 : fmin(8 * fabs(v) / (1 + exp(v)), cap));
    }
    case KP_UNARY_GELU_ERF:
        return 8 + (x < 0 ? fmin(2 * x * x, cap) : 0);
    default:
        return 0;
    }
}

static double allowed_abs(kp_unary_op op, kp_dtype dt)
{
    bool f64 = dt == KP_DTYPE_F64;
    if (op == KP_UNARY_SIN || op == KP_UNARY_COS || op == KP_UNARY_LOG)
        return f64 ? 0x1p-60 : 0x1p-30;
    return f64 ? DBL_MIN : FLT_MIN;
}

/* The parameter as the kernel receives it (f32 for f32/f16/bf16). */
static long double kernel_param(kp_dtype dt, double param)
{
    return dt == KP_DTYPE_F64 ? (long double)param : (long double)(float)param;
}

static void format_elem(kp_dtype dt, const void *elem, char *out, size_t size)
{
    switch (dt) {
    case KP_DTYPE_U8: snprintf(out, size, "%u", *(const uint8_t *)elem); break;
    case KP_DTYPE_U32: snprintf(out, size, "%u", (unsigned)raw_bits(dt, elem)); break;
    case KP_DTYPE_I64: snprintf(out, size, "%lld", (long long)raw_bits(dt, elem)); break;
    default:
        snprintf(out, size, "%.17g [0x%0*llx]", host_get(dt, elem, 0), (int)kp_dtype_size(dt) * 2,
                 (unsigned long long)raw_bits(dt, elem));
        break;
    }
}

/* Checks element di of dst against op(element si of src). On a mismatch
 * writes got/want/x to msg and returns false. *ulps_out (if not NULL)
 * receives the ulp distance of a float result checked within a tolerance,
 * else 0. */
static bool check_element_ulps(kp_unary_op op, kp_dtype dt, double param, const void *src,
                               size_t si, const void *dst, size_t di, char *msg, size_t size,
                               double *ulps_out)
{
    size_t es = kp_dtype_size(dt);
    const unsigned char *x = (const unsigned char *)src + si * es;
    const unsigned char *got = (const unsigned char *)dst + di * es;
    unsigned char want[8] = {0};
    long double exact = 0;
    double tol = 0, ulps = 0;
    bool ok;
    if (!is_float(dt)) {
        ref_int(op, dt, src, si, want);
        ok = memcmp(got, want, es) == 0;
    } else if (op == KP_UNARY_COPY) {
        memcpy(want, x, es);  /* bits, NaN payloads included */
        ok = memcmp(got, want, es) == 0;
    } else {
        exact = ref_float(op, host_get(dt, x, 0), kernel_param(dt, param));
        host_set(dt, want, 0, (double)exact);
        double g = host_get(dt, got, 0), w = host_get(dt, want, 0);
        if (isnan(w) || isnan(g)) {
            ok = isnan(w) && isnan(g);
        } else if (exact_op(op) || isinf(exact)) {
            ok = memcmp(got, want, es) == 0;
        } else {
            tol = allowed_ulps(op, dt, host_get(dt, x, 0));
            ulps = ulp_distance(dt, got, want);
            ok = ulps <= tol || fabs(g - w) <= allowed_abs(op, dt);
        }
    }
    if (!ok) {
        char gs[64], ws[64], xs[64];
        format_elem(dt, got, gs, sizeof(gs));
        format_elem(dt, want, ws, sizeof(ws));
        format_elem(dt, x, xs, sizeof(xs));
        if (tol > 0)
            snprintf(msg, size, "x = %s: got %s, want %s (exact %.21Lg): %.0f ulp apart, %.1f allowed",
                     xs, gs, ws, exact, ulps, tol);
        else
            snprintf(msg, size, "x = %s: got %s, want %s exactly", xs, gs, ws);
    }
    if (ulps_out)
        *ulps_out = ulps;
    return ok;
}

static bool check_element(kp_unary_op op, kp_dtype dt, double param, const void *src, size_t si,
                          const void *dst, size_t di, char *msg, size_t size)
{
    return check_element_ulps(op, dt, param, src, si, dst, di, msg, size, NULL);
}

/* ---- inputs */

/* Ops whose interesting domain is x >= 0: most inputs made positive. */
static bool positive_domain(kp_unary_op op)
{
    return op == KP_UNARY_LOG || op == KP_UNARY_SQRT || op == KP_UNARY_RSQRT || op == KP_UNARY_POWF;
}

/* n random elements (floats in [-8, 8), see host_random), 7 of 8 made
 * non-negative for ops defined on x >= 0. */
static void random_inputs(kp_unary_op op, kp_dtype dt, void *base, size_t n)
{
    host_random(dt, base, n);
    if (is_float(dt) && positive_domain(op))
        for (size_t i = 0; i < n; i++)
            if (i % 8)
                host_set(dt, base, i, fabs(host_get(dt, base, i)));
}

/* Writes the special values of dt into base (room for 64); returns how many. */
static size_t special_inputs(kp_dtype dt, void *base)
{
    size_t n = 0;
    if (dt == KP_DTYPE_U8) {
        static const uint8_t v[] = {0, 1, 2, 15, 16, 17, 127, 128, 129, 254, 255};
        memcpy(base, v, sizeof(v));
        return sizeof(v);
    }
    if (dt == KP_DTYPE_U32) {
        static const uint32_t v[] = {0, 1, 2, 65535, 65536, 65537, 0x7fffffffu, 0x80000000u,
                                     0xfffffffeu, 0xffffffffu};
        memcpy(base, v, sizeof(v));
        return sizeof(v) / sizeof(v[0]);
    }
    if (dt == KP_DTYPE_I64) {
        static const int64_t v[] = {0, 1, -1, 2, -2, 3037000499ll, -3037000500ll, 4294967296ll,
                                    -4294967297ll, INT64_MAX, INT64_MIN, INT64_MIN + 1};
        memcpy(base, v, sizeof(v));
        return sizeof(v) / sizeof(v[0]);
    }
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1, -1, 0.5, -0.5, 1.5, -1.5,
                               2.5, -2.5, 3, -3, 0.25, -0.75, 1e-3, -1e-3, 4.5, -5.5, 10, -10,
                               30, -30, 100, -100, 1e4, -1e4, 1e30, -1e30, 1e300, -1e300,
                               3.141592653589793, -1.5707963267948966, 0.7071067811865476,
                               0.49999997019767761, -0.49999997019767761};  /* 0.5 - 2^-25 */
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        host_set(dt, base, n++, v[i]);
    /* smallest subnormal, smallest normal, largest finite, each with both signs */
    static const uint16_t f16[] = {0x0001, 0x0400, 0x7bff}, bf16[] = {0x0001, 0x0080, 0x7f7f};
    const double f32[] = {FLT_TRUE_MIN, FLT_MIN, FLT_MAX}, f64[] = {DBL_TRUE_MIN, DBL_MIN, DBL_MAX};
    for (int i = 0; i < 3; i++) {
        for (int sign = 0; sign < 2; sign++) {
            switch (dt) {
            case KP_DTYPE_F16: ((uint16_t *)base)[n++] = (uint16_t)(f16[i] | (sign << 15)); break;
            case KP_DTYPE_BF16: ((uint16_t *)base)[n++] = (uint16_t)(bf16[i] | (sign << 15)); break;
            case KP_DTYPE_F32: host_set(dt, base, n++, sign ? -f32[i] : f32[i]); break;
            default: host_set(dt, base, n++, sign ? -f64[i] : f64[i]); break;
            }
        }
    }
    return n;
}

/* ---- layouts */

static const struct dst_src_case cases[] = {
    {"contiguous odd", 1, {100003}, {0}, {0}, 0, 0},
    {"contiguous offset", 2, {33, 65}, {0}, {0}, 3, 1},
    {"transposed src", 2, {37, 53}, {0}, {1, 37}, 0, 5},
    {"strided dst", 2, {19, 23}, {47, 2}, {0}, 1, 0},
    {"broadcast src", 3, {4, 5, 129}, {0}, {0, 129, 1}, 0, 0},
    {"column broadcast src", 2, {37, 72}, {0}, {1, 0}, 0, 3},
    {"row gaps both", 3, {3, 7, 9}, {100, 12, 1}, {70, 10, 1}, 2, 7},
    {"scalar", 0, {0}, {0}, {0}, 4, 9},
    {"empty", 2, {0, 17}, {0}, {0}, 0, 0},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Runs op on one layout case and checks every element of the view. */
static void run_layout_case(kp_unary_op op, kp_dtype dt, const struct dst_src_case *c, double param)
{
    size_t es = kp_dtype_size(dt);
    struct gpu_buf none = {0}, src, dst;
    kp_tensor shape_d = case_dst_tensor(&none, dt, c), shape_s = case_src_tensor(&none, dt, c);
    size_t dst_elems = (size_t)tensor_extent(&shape_d), src_elems = (size_t)tensor_extent(&shape_s);
    gpu_buf_alloc(&src, src_elems * es);
    gpu_buf_alloc(&dst, dst_elems * es);
    random_inputs(op, dt, src.host, src_elems);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    kp_tensor s = case_src_tensor(&src, dt, c);
    kp_tensor d = case_dst_tensor(&dst, dt, c);
    char what[128];
    snprintf(what, sizeof(what), "%s %s, %s", kp_unary_op_name(op), kp_dtype_name(dt), c->name);

    kp_status st = kp_unary(gpu_stream, op, &d, &s, param);
    if (!supported(op, dt)) {
        ck_assert_msg(st == KP_ERR_UNSUPPORTED, "%s: got status %s, want unsupported", what,
                      kp_status_string(st));
        gpu_buf_download(&dst);
        check_untouched(&dst, NULL, es, POISON, what);
    } else {
        ck_assert_msg(st == KP_OK, "%s: %s: %s", what, kp_status_string(st), kp_last_error_message());
        gpu_buf_download(&dst);
        unsigned char *written = calloc(dst_elems ? dst_elems : 1, 1);
        ck_assert_ptr_nonnull(written);
        uint64_t n = tensor_numel(&d);
        char msg[512];
        for (uint64_t i = 0; i < n; i++) {
            size_t di = tensor_offset(&d, i), si = tensor_offset(&s, i);
            written[di] = 1;
            if (!check_element(op, dt, param, src.host, si, dst.host, di, msg, sizeof(msg)))
                ck_abort_msg("%s, element #%llu: %s", what, (unsigned long long)i, msg);
        }
        check_untouched(&dst, written, es, POISON, what);
        free(written);
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}

/* _i = (op * N_DTYPES + dtype) * N_CASES + case */
START_TEST(test_layouts)
{
    kp_unary_op op = (kp_unary_op)(_i / (int)(N_DTYPES * N_CASES));
    kp_dtype dt = all_dtypes[(_i / N_CASES) % N_DTYPES];
    size_t c = (size_t)_i % N_CASES;
    if (!supported(op, dt) && c != 0)
        return;  /* unsupported pairs: checked once, on the first case */
    rng_seed(5000 + (uint64_t)_i);
    run_layout_case(op, dt, &cases[c], default_param(op));
}
END_TEST

/* Special values, then random ones, through one contiguous call per
 * parameter value (several for elu and powf). */
START_TEST(test_special_values_and_params)
{
    kp_unary_op op = (kp_unary_op)(_i / (int)N_DTYPES);
    kp_dtype dt = all_dtypes[_i % N_DTYPES];
    if (!supported(op, dt))
        return;
    static const double alphas[] = {ELU_ALPHA, 0, 0.5, 1, 2.5};
    /* 16-bit powf takes the hardware log2 up to |p| = 64, log2f above */
    static const double exponents[] = {POWF_EXPONENT, 0, 1, 2, 3, -1, 0.5, -2.5, 7.25, 64, -64.5, 100, -70.5};
    const double *params = op == KP_UNARY_ELU ? alphas : op == KP_UNARY_POWF ? exponents : NULL;
    size_t n_params = op == KP_UNARY_ELU ? sizeof(alphas) / sizeof(alphas[0])
                      : op == KP_UNARY_POWF ? sizeof(exponents) / sizeof(exponents[0]) : 1;
    const size_t n_random = 300;
    size_t es = kp_dtype_size(dt);
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, (64 + n_random) * es);
    gpu_buf_alloc(&dst, (64 + n_random) * es);
    rng_seed(7000 + (uint64_t)_i);
    size_t n = special_inputs(dt, src.host);
    random_inputs(op, dt, (unsigned char *)src.host + n * es, n_random);
    n += n_random;
    gpu_buf_upload(&src);
    for (size_t k = 0; k < n_params; k++) {
        double param = params ? params[k] : 0.0;
        memset(dst.host, POISON, dst.bytes);
        gpu_buf_upload(&dst);
        kp_tensor s = gpu_tensor(&src, dt, 1, (int64_t[]){(int64_t)n}, NULL, 0);
        kp_tensor d = gpu_tensor(&dst, dt, 1, (int64_t[]){(int64_t)n}, NULL, 0);
        CK_OK(kp_unary(gpu_stream, op, &d, &s, param));
        gpu_buf_download(&dst);
        char msg[512];
        for (size_t i = 0; i < n; i++)
            if (!check_element(op, dt, param, src.host, i, dst.host, i, msg, sizeof(msg)))
                ck_abort_msg("%s %s, special values, param %g, element #%zu: %s", kp_unary_op_name(op),
                             kp_dtype_name(dt), param, i, msg);
        char what[64];
        snprintf(what, sizeof(what), "%s %s special", kp_unary_op_name(op), kp_dtype_name(dt));
        unsigned char *written = calloc(dst.bytes / es, 1);
        ck_assert_ptr_nonnull(written);
        memset(written, 1, n);
        check_untouched(&dst, written, es, POISON, what);
        free(written);
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}
END_TEST

/* dst == src, the identical view: contiguous, and a transposed view. */
START_TEST(test_in_place)
{
    static const kp_unary_op ops[] = {KP_UNARY_EXP, KP_UNARY_GELU, KP_UNARY_NEG, KP_UNARY_SQR};
    kp_unary_op op = ops[_i % 4];
    kp_dtype dt = all_dtypes[(_i / 4) % N_DTYPES];
    bool transposed = _i / (4 * (int)N_DTYPES);
    if (!supported(op, dt))
        return;
    const int64_t rows = 40, cols = 30;
    size_t es = kp_dtype_size(dt), n = (size_t)(rows * cols);
    struct gpu_buf b;
    gpu_buf_alloc(&b, n * es);
    rng_seed(9000 + (uint64_t)_i);
    random_inputs(op, dt, b.host, n);
    unsigned char *before = malloc(n * es);
    memcpy(before, b.host, n * es);
    gpu_buf_upload(&b);
    kp_tensor t = transposed ? gpu_tensor(&b, dt, 2, (int64_t[]){cols, rows}, (int64_t[]){1, cols}, 0)
                             : gpu_tensor(&b, dt, 2, (int64_t[]){rows, cols}, NULL, 0);
    CK_OK(kp_unary(gpu_stream, op, &t, &t, 0));
    gpu_buf_download(&b);
    char msg[512];
    for (size_t i = 0; i < n; i++)
        if (!check_element(op, dt, 0, before, i, b.host, i, msg, sizeof(msg)))
            ck_abort_msg("%s %s in place%s, element %zu: %s", kp_unary_op_name(op), kp_dtype_name(dt),
                         transposed ? " (transposed view)" : "", i, msg);
    free(before);
    gpu_buf_free(&b);
}
END_TEST

/* ---- sweeps: every 16-bit input, and f32 inputs across the whole range */

/* The worst error is reported per band of x: the amplified tails of gelu
 * and gelu_erf lie below x = -3. */
#define N_BANDS 6
static const double band_upper[N_BANDS - 1] = {-10, -5, -3, -1, 0};
static const char *const band_names[N_BANDS] = {"x < -10", "-10 <= x < -5", "-5 <= x < -3",
                                                "-3 <= x < -1", "-1 <= x < 0", "x >= 0"};

static int band_of(double x)
{
    int b = 0;
    while (b < N_BANDS - 1 && !(x < band_upper[b]))
        b++;
    return b;
}

#define SWEEP_CHUNK (1u << 24)  /* elements per call */

/* Runs op on the inputs whose raw bits are k * step for k < n (wrapping at
 * the dtype's width), one call per SWEEP_CHUNK, checks each result as the
 * other tests do, and prints the worst ulp distance per band of x (ops
 * checked bit for bit print 0: their distance is asserted, not measured).
 * With stride > 1 the tensors are views of every stride-th element, which
 * the strided kernels take. */
static void sweep_strided(kp_unary_op op, kp_dtype dt, double param, uint64_t n, uint64_t step,
                          int64_t stride)
{
    size_t es = kp_dtype_size(dt), chunk = n < SWEEP_CHUNK ? (size_t)n : SWEEP_CHUNK;
    double worst[N_BANDS] = {0};
    double worst_x[N_BANDS] = {0};
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, chunk * es * (size_t)stride);
    gpu_buf_alloc(&dst, chunk * es * (size_t)stride);
    char msg[512];
    for (uint64_t base = 0; base < n; base += chunk) {
        size_t m = n - base < chunk ? (size_t)(n - base) : chunk;
        for (size_t i = 0; i < m; i++) {
            uint32_t bits = (uint32_t)((base + i) * step);
            memcpy((unsigned char *)src.host + i * (size_t)stride * es, &bits, es);  /* little-endian host */
        }
        gpu_buf_upload(&src);
        const int64_t shape[] = {(int64_t)m}, strides[] = {stride};
        kp_tensor s = gpu_tensor(&src, dt, 1, shape, stride > 1 ? strides : NULL, 0);
        kp_tensor d = gpu_tensor(&dst, dt, 1, shape, stride > 1 ? strides : NULL, 0);
        CK_OK(kp_unary(gpu_stream, op, &d, &s, param));
        gpu_buf_download(&dst);
        for (size_t j = 0; j < m; j++) {
            const size_t i = j * (size_t)stride;
            double ulps = 0;
            if (!check_element_ulps(op, dt, param, src.host, i, dst.host, i, msg, sizeof(msg), &ulps))
                ck_abort_msg("%s %s sweep: %s", kp_unary_op_name(op), kp_dtype_name(dt), msg);
            double x = host_get(dt, src.host, i);
            int b = band_of(x);
            if (ulps > worst[b]) {
                worst[b] = ulps;
                worst_x[b] = x;
            }
        }
    }
    printf("%s %s%s (param %g) over %llu inputs, worst ulp distance per band:", kp_unary_op_name(op),
           kp_dtype_name(dt), stride > 1 ? " strided" : "", param, (unsigned long long)n);
    for (int b = 0; b < N_BANDS; b++)
        printf(" [%s] %.0f (x = %.9g)", band_names[b], worst[b], worst_x[b]);
    printf("\n");
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}

static void sweep(kp_unary_op op, kp_dtype dt, double param, uint64_t n, uint64_t step)
{
    sweep_strided(op, dt, param, n, step, 1);
}

/* _i = op * 2 + (0: f16, 1: bf16): every one of the 65536 inputs. */
START_TEST(test_sweep_16bit)
{
    kp_unary_op op = (kp_unary_op)(_i / 2);
    kp_dtype dt = _i % 2 ? KP_DTYPE_BF16 : KP_DTYPE_F16;
    sweep(op, dt, default_param(op), 1u << 16, 1);
}
END_TEST

/* 16-bit powf over every input at exponents through both of its log2
 * paths (|p| <= 64 and above), odd and even integers and fractions. */
static const double sweep_exponents[] = {-1, 2, 3, 0.5, -2.5, 64, -64.5, 100, -70.5, 1e6};
#define N_SWEEP_EXPONENTS (int)(sizeof(sweep_exponents) / sizeof(sweep_exponents[0]))

START_TEST(test_sweep_16bit_powf_exponents)
{
    kp_dtype dt = _i % 2 ? KP_DTYPE_BF16 : KP_DTYPE_F16;
    sweep(KP_UNARY_POWF, dt, sweep_exponents[_i / 2], 1u << 16, 1);
}
END_TEST

/* ops.h's f32 accuracy statement for gelu and gelu_erf, over the whole
 * range: bit patterns 61 apart (an odd step, so the low mantissa bits
 * vary), 70 million inputs from every binade of both signs, NaNs and
 * infinities included. The sanitizer runs (KP_TEST_SKIP_BIG) take every
 * 6101st: 700 thousand, for the memory checks alone. */
START_TEST(test_sweep_f32_gelu)
{
    kp_unary_op op = _i ? KP_UNARY_GELU_ERF : KP_UNARY_GELU;
    const uint64_t step = getenv("KP_TEST_SKIP_BIG") ? 6101 : 61;
    sweep(op, KP_DTYPE_F32, default_param(op), ((1ull << 32) + step - 1) / step, step);
}
END_TEST

/* f32 powf (ops.h states its bound) over inputs from every binade of both
 * signs, bit patterns 613 apart (7 million; 61001 apart, 70 thousand, for
 * the sanitizer runs), at the 16-bit sweep's exponents and the default;
 * contiguous and strided, which on devices with fast f64 arithmetic are
 * two kernels (powf_f64math_f32 and powf_strided_f32's f32 arithmetic). */
START_TEST(test_sweep_f32_powf)
{
    const int e = _i / 2;
    const double p = e < N_SWEEP_EXPONENTS ? sweep_exponents[e] : POWF_EXPONENT;
    const uint64_t step = getenv("KP_TEST_SKIP_BIG") ? 61001 : 613;
    sweep_strided(KP_UNARY_POWF, KP_DTYPE_F32, p, ((1ull << 32) + step - 1) / step, step, _i % 2 ? 2 : 1);
}
END_TEST

/* f32 powf is exact where the exact result is a float: integer powers of
 * integers (negative powers: of powers of two), and square roots and their
 * cubes of squares, both signs where the power is an integer, up to 2^24;
 * _i = 1: through views of every other element (the strided kernel). */
START_TEST(test_f32_powf_exact)
{
    enum { N = 4096 };
    static const double exponents[] = {2, 3, 0.5, 1.5, -1, -2};
    const int64_t stride = _i ? 2 : 1;
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, 2 * N * sizeof(float) * (size_t)stride);
    gpu_buf_alloc(&dst, 2 * N * sizeof(float) * (size_t)stride);
    for (size_t e = 0; e < sizeof(exponents) / sizeof(exponents[0]); e++) {
        const double p = exponents[e];
        const bool root = p != floor(p);
        float *in = src.host;
        size_t n = 0;
        for (int k = 1; k <= N; k++) {
            const double x = root ? (double)k * k : k;
            if (fabs(pow(x, p)) > 16777216.0 || x > 16777216.0)
                break;
            in[(size_t)stride * n++] = (float)x;
            if (!root)
                in[(size_t)stride * n++] = (float)-x;
        }
        gpu_buf_upload(&src);
        const int64_t shape[] = {(int64_t)n}, strides[] = {stride};
        kp_tensor s = gpu_tensor(&src, KP_DTYPE_F32, 1, shape, _i ? strides : NULL, 0);
        kp_tensor d = gpu_tensor(&dst, KP_DTYPE_F32, 1, shape, _i ? strides : NULL, 0);
        CK_OK(kp_unary(gpu_stream, KP_UNARY_POWF, &d, &s, p));
        gpu_buf_download(&dst);
        const float *out = dst.host;
        size_t checked = 0;
        for (size_t j = 0; j < n; j++) {
            const size_t i = j * (size_t)stride;
            const double want = pow((double)in[i], p);
            if ((double)(float)want != want)
                continue;  /* 1/k and 1/k^2 are exact only for powers of two */
            checked++;
            if ((double)out[i] != want)
                ck_abort_msg("powf f32%s (%g)^%g = %.9g, want %.9g exactly", _i ? " strided" : "", in[i], p,
                             out[i], want);
        }
        ck_assert_msg(checked >= 16, "powf exact cases: only %zu checked at p = %g", checked, p);
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}
END_TEST

/* BIG: 2^32 + 4099 one-byte elements in and out, so this test allocates
 * ~8.6 GB of GPU memory. It checks that the contiguous path indexes past
 * 2^32 elements: the input is a pattern whose period (a prime) does not
 * divide 2^32, so an index truncated to 32 bits reads the wrong byte.
 * Sampled windows across the tensor, around 2^31 and 2^32 and at the end
 * are compared, and 64 bytes after the end must keep their poison. Skipped
 * (with a note) when the device has too little memory or KP_TEST_SKIP_BIG
 * is set. */
START_TEST(test_big_u8_copy_past_2pow32)
{
    const uint64_t n = (1ull << 32) + 4099;
    const size_t period = 1000003, reps = 64, chunk = period * reps, canary = 64;
    if (gpu_skip_big("test_big_u8_copy_past_2pow32", 2 * n + (1ull << 30)))
        return;
    printf("test_big_u8_copy_past_2pow32: allocating 2 x %llu bytes of GPU memory\n",
           (unsigned long long)n);
    kp_buffer *in = NULL, *out = NULL;
    CK_OK(kp_buffer_alloc(gpu_dev, n, &in));
    CK_OK(kp_buffer_alloc(gpu_dev, n + canary, &out));
    unsigned char *host = malloc(chunk);
    ck_assert_ptr_nonnull(host);
    rng_seed(424242);
    for (size_t i = 0; i < period; i++)
        host[i] = (unsigned char)rng_next();
    for (size_t i = period; i < chunk; i++)
        host[i] = host[i - period];
    /* chunk is a multiple of the period: byte i of the input is host[i % period]. */
    for (uint64_t pos = 0; pos < n; pos += chunk)
        CK_OK(kp_memcpy_h2d(gpu_stream, in, pos, host, n - pos < chunk ? n - pos : chunk));
    CK_OK(kp_memset(gpu_stream, out, 0, POISON, n + canary));
    kp_tensor src = {in, KP_DTYPE_U8, {0}}, dst = {out, KP_DTYPE_U8, {0}};
    int64_t shape[1] = {(int64_t)n};
    CK_OK(kp_layout_contiguous(&src.layout, 1, shape));
    CK_OK(kp_layout_contiguous(&dst.layout, 1, shape));
    CK_OK(kp_unary(gpu_stream, KP_UNARY_COPY, &dst, &src, 0));
    CK_OK(kp_stream_synchronize(gpu_stream));

    enum { WINDOW = 4096, SAMPLES = 509 };
    uint64_t starts[SAMPLES + 4];
    for (int k = 0; k < SAMPLES; k++)
        starts[k] = (uint64_t)k * ((n - WINDOW) / (SAMPLES - 1));
    starts[SAMPLES] = (1ull << 31) - WINDOW / 2;
    starts[SAMPLES + 1] = (1ull << 32) - WINDOW / 2;
    starts[SAMPLES + 2] = n - WINDOW;        /* the tail, last element included */
    starts[SAMPLES + 3] = n + canary - WINDOW;  /* the canary after the end */
    unsigned char window[WINDOW];
    for (size_t k = 0; k < sizeof(starts) / sizeof(starts[0]); k++) {
        CK_OK(kp_memcpy_d2h(gpu_stream, window, out, starts[k], WINDOW));
        CK_OK(kp_stream_synchronize(gpu_stream));
        for (uint64_t j = 0; j < WINDOW; j++) {
            uint64_t i = starts[k] + j;
            unsigned want = i < n ? host[i % period] : POISON;
            ck_assert_msg(window[j] == want, "big u8 copy: byte %llu%s: got 0x%02x, want 0x%02x",
                          (unsigned long long)i, i < n ? "" : " (after the end)", window[j], want);
        }
    }
    free(host);
    kp_buffer_destroy(&in);
    kp_buffer_destroy(&out);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "unary"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("unary");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_layouts, 0, N_OPS * (int)(N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_special_values_and_params, 0, N_OPS * (int)N_DTYPES);
    tcase_add_loop_test(tc, test_in_place, 0, 2 * 4 * (int)N_DTYPES);
    tcase_add_loop_test(tc, test_sweep_16bit, 0, 2 * N_OPS);
    tcase_add_loop_test(tc, test_sweep_16bit_powf_exponents, 0, 2 * N_SWEEP_EXPONENTS);
    tcase_add_loop_test(tc, test_sweep_f32_gelu, 0, 2);
    tcase_add_loop_test(tc, test_sweep_f32_powf, 0, 2 * (N_SWEEP_EXPONENTS + 1));
    tcase_add_loop_test(tc, test_f32_powf_exact, 0, 2);
    suite_add_tcase(s, tc);
    /* Separate so that its size shows in the log: ~8.6 GB of GPU memory. */
    TCase *big = tcase_create("big (allocates ~8.6 GB of GPU memory)");
    tcase_set_timeout(big, 600);
    tcase_add_test(big, test_big_u8_copy_past_2pow32);
    suite_add_tcase(s, big);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
