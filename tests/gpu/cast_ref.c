#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "cast_ref.h"
#include "harness.h"

/* A source element: NaN, a float value (exact in double), or an integer as
 * sign and magnitude (exact: |i64| <= 2^63). */
struct src_value {
    bool nan, neg, is_int;
    double f;      /* float sources: the value, sign included */
    uint64_t mag;  /* integer sources: |value| */
};

/* ---- 16-bit float formats, read as exact doubles */

struct format16 {
    int frac_bits, bias;
    unsigned inf;        /* bit pattern of +Inf; every lower pattern is finite */
    uint16_t quiet_nan;  /* the canonical quiet NaN kp_cast produces */
};
static const struct format16 f16_format = {10, 15, 0x7c00, 0x7e00};
static const struct format16 bf16_format = {7, 127, 0x7f80, 0x7fc0};

/* Value of a non-negative pattern; +Inf counts as 2^(emax + 1), the value an
 * unbounded exponent would give next, so overflow rounds like any tie. */
static double format16_value(const struct format16 *f, unsigned bits)
{
    if (bits >= f->inf)
        return ldexp(1.0, f->bias + 1);
    unsigned exp = bits >> f->frac_bits, man = bits & ((1u << f->frac_bits) - 1);
    if (exp == 0)
        return ldexp((double)man, 1 - f->bias - f->frac_bits);
    return ldexp((double)((1u << f->frac_bits) + man), (int)exp - f->bias - f->frac_bits);
}

static bool format16_is_nan(const struct format16 *f, uint16_t bits)
{
    return (bits & 0x7fffu) > f->inf;
}

/* -1, 0, 1 as |v| is below, equal to or above d (d >= 0, a dyadic double). */
static int compare_magnitude(const struct src_value *v, double d)
{
    if (!v->is_int) {
        double a = fabs(v->f);
        return (a > d) - (a < d);
    }
    if (d >= 0x1p64)
        return -1;
    double whole = floor(d);
    uint64_t w = (uint64_t)whole;
    if (v->mag != w)
        return v->mag < w ? -1 : 1;
    return d > whole ? -1 : 0;
}

/* Nearest pattern to |v|, ties to the even pattern: the largest pattern not
 * above |v| is found by bisection, then compared with the midpoint above it. */
static uint16_t round_to_format16(const struct format16 *f, const struct src_value *v)
{
    unsigned lo = 0, hi = f->inf;
    while (lo < hi) {
        unsigned mid = (lo + hi + 1) / 2;
        if (compare_magnitude(v, format16_value(f, mid)) >= 0)
            lo = mid;
        else
            hi = mid - 1;
    }
    unsigned bits = lo;
    if (bits < f->inf) {
        double midpoint = (format16_value(f, bits) + format16_value(f, bits + 1)) / 2;
        int c = compare_magnitude(v, midpoint);
        if (c > 0 || (c == 0 && (bits & 1)))
            bits++;
    }
    bool neg = v->is_int ? v->neg : signbit(v->f) != 0;
    return (uint16_t)(bits | (neg ? 0x8000u : 0));
}

/* ---- reading a source element */

static struct src_value read_src(kp_dtype src, const void *in)
{
    struct src_value v = {0};
    switch (src) {
    case KP_DTYPE_F32: {
        float x;
        memcpy(&x, in, 4);
        v.f = x;
        break;
    }
    case KP_DTYPE_F64:
        memcpy(&v.f, in, 8);
        break;
    case KP_DTYPE_F16:
    case KP_DTYPE_BF16: {
        const struct format16 *f = src == KP_DTYPE_F16 ? &f16_format : &bf16_format;
        uint16_t bits;
        memcpy(&bits, in, 2);
        unsigned mag = bits & 0x7fffu;
        if (format16_is_nan(f, bits))
            v.f = NAN;
        else
            v.f = mag == f->inf ? INFINITY : format16_value(f, mag);
        if (bits & 0x8000u)
            v.f = -v.f;
        break;
    }
    case KP_DTYPE_U8:
        v.is_int = true;
        v.mag = *(const uint8_t *)in;
        break;
    case KP_DTYPE_U32: {
        uint32_t x;
        memcpy(&x, in, 4);
        v.is_int = true;
        v.mag = x;
        break;
    }
    case KP_DTYPE_I64: {
        int64_t x;
        memcpy(&x, in, 8);
        v.is_int = true;
        v.neg = x < 0;
        v.mag = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
        break;
    }
    default:
        break;
    }
    if (!v.is_int) {
        v.nan = isnan(v.f);
        v.neg = signbit(v.f) != 0;
    }
    return v;
}

/* ---- writing a destination element */

/* Float to integer: truncate toward zero, saturate, NaN gives 0. */
static uint64_t float_to_integer(kp_dtype dst, double f)
{
    if (isnan(f))
        return 0;
    double t = trunc(f);
    if (dst == KP_DTYPE_I64) {
        if (t >= 0x1p63)
            return (uint64_t)INT64_MAX;
        if (t < -0x1p63)
            return (uint64_t)INT64_MIN;
        return (uint64_t)(int64_t)t;
    }
    double limit = dst == KP_DTYPE_U8 ? 0x1p8 : 0x1p32;
    if (t <= 0)
        return 0;
    if (t >= limit)
        return (uint64_t)limit - 1;
    return (uint64_t)t;
}

static void store_uint(kp_dtype dst, void *out, uint64_t u)
{
    switch (dst) {
    case KP_DTYPE_U8: *(uint8_t *)out = (uint8_t)u; break;
    case KP_DTYPE_U32: { uint32_t x = (uint32_t)u; memcpy(out, &x, 4); break; }
    default: memcpy(out, &u, 8); break;  /* i64: two's complement bits */
    }
}

void cast_ref(kp_dtype dst, void *out, kp_dtype src, const void *in)
{
    if (dst == src) {  /* same dtype: the bits, unchanged */
        memcpy(out, in, kp_dtype_size(dst));
        return;
    }
    struct src_value v = read_src(src, in);
    /* The integer source as two's complement bits, for integer destinations. */
    uint64_t as_bits = v.neg ? 0 - v.mag : v.mag;
    switch (dst) {
    case KP_DTYPE_U8:
    case KP_DTYPE_U32:
    case KP_DTYPE_I64:
        store_uint(dst, out, v.is_int ? as_bits : float_to_integer(dst, v.f));
        return;
    case KP_DTYPE_F64: {
        double d;
        if (v.nan) {
            uint64_t b = 0x7ff8000000000000ull | ((uint64_t)v.neg << 63);
            memcpy(&d, &b, 8);
        } else if (v.is_int) {
            d = v.neg ? -(double)v.mag : (double)v.mag;  /* RNE is symmetric */
        } else {
            d = v.f;
        }
        memcpy(out, &d, 8);
        return;
    }
    case KP_DTYPE_F32: {
        float x;
        if (v.nan) {
            uint32_t b = 0x7fc00000u | ((uint32_t)v.neg << 31);
            memcpy(&x, &b, 4);
        } else if (v.is_int) {
            x = v.neg ? -(float)v.mag : (float)v.mag;
        } else {
            x = (float)v.f;
        }
        memcpy(out, &x, 4);
        return;
    }
    case KP_DTYPE_F16:
    case KP_DTYPE_BF16: {
        const struct format16 *f = dst == KP_DTYPE_F16 ? &f16_format : &bf16_format;
        uint16_t bits = v.nan ? (uint16_t)(f->quiet_nan | (v.neg ? 0x8000u : 0))
                              : round_to_format16(f, &v);
        memcpy(out, &bits, 2);
        return;
    }
    default:
        return;
    }
}

/* ---- inputs */

uint64_t cast_bits(kp_dtype dtype, const void *base, size_t i)
{
    uint64_t b = 0;
    size_t es = kp_dtype_size(dtype);
    memcpy(&b, (const unsigned char *)base + i * es, es);  /* little-endian hosts */
    return b;
}

double cast_value(kp_dtype dtype, const void *base, size_t i)
{
    size_t es = kp_dtype_size(dtype);
    double d;
    cast_ref(KP_DTYPE_F64, &d, dtype, (const unsigned char *)base + i * es);
    return d;
}

static bool is_float(kp_dtype t)
{
    return t == KP_DTYPE_F32 || t == KP_DTYPE_F64 || t == KP_DTYPE_F16 || t == KP_DTYPE_BF16;
}

/* Element i of a `src` array := d, rounded as kp_cast rounds into src. */
static void put_double(kp_dtype src, void *out, size_t i, double d)
{
    cast_ref(src, (unsigned char *)out + i * kp_dtype_size(src), KP_DTYPE_F64, &d);
}

static void put_bits(kp_dtype src, void *out, size_t i, uint64_t bits)
{
    size_t es = kp_dtype_size(src);
    memcpy((unsigned char *)out + i * es, &bits, es);
}

/* Values that sit on, or just beside, the rounding decisions and range
 * limits of every destination. Into f32 or f16/bf16 sources they are
 * rounded first, which gives the ties of those types in turn. */
static const double float_specials[] = {
    0.0, -0.0, INFINITY, -INFINITY, 1.0, -1.0, 0.5, -0.5, 0.99999, -0.99999, 1.5, -1.5, 2.5, -2.5,
    -3.75, 123.456, 255.0, 255.9, 256.0, 256.5, -255.9, -256.0,
    65504.0, 65519.99, 65520.0, -65520.0, 65536.0, 65535.0,
    /* f16 ties at 1 (ulp 2^-10): exact, and a hair either side (only f64 has the hair) */
    1 + 0x1p-11, 1 + 3 * 0x1p-11, 1 + 0x1p-11 + 0x1p-40, 1 + 0x1p-11 - 0x1p-40,
    -(1 + 0x1p-11 + 0x1p-40),
    /* bf16 ties at 1 (ulp 2^-7) */
    1 + 0x1p-8, 1 + 3 * 0x1p-8, 1 + 0x1p-8 + 0x1p-30, 1 + 0x1p-8 - 0x1p-30, -(1 + 3 * 0x1p-8),
    /* f32 ties (ulp 2^-23 at 1) from f64 */
    1 + 0x1p-24, 1 + 3 * 0x1p-24, 1 + 0x1p-24 + 0x1p-50, 16777217.0, 16777219.0,
    /* f16 subnormals and underflow: smallest 2^-24 */
    0x1p-24, -0x1p-24, 0x1p-25, 0x1p-25 + 0x1p-40, 3 * 0x1p-25, 0x1p-26, 0x1p-14 - 0x1p-25,
    0x1p-14 - 0x1p-24, 0x1p-14, 1023 * 0x1p-24 + 0x1p-25,
    /* bf16/f32 subnormals and underflow: smallest bf16 2^-133, f32 2^-149 */
    0x1p-126, 0x1p-127, 0x1p-133, 0x1p-134, 0x1p-134 + 0x1p-150, 3 * 0x1p-134, 1e-40, -1e-40,
    0x1p-149, 0x1p-150, 3 * 0x1p-150, 0x1p-151,
    /* overflow edges: bf16 max 0x1.fep127, its overflow tie 0x1.ffp127, f32 max */
    0x1.fep127, 0x1.ffp127, 0x1.ffp127 - 0x1p90, -0x1.ffp127, 0x1.fffffep127,
    0x1.fffffep127 + 0x1p102, 0x1.ffffffp127, 3.5e38, 1e300, -1e300, 4.9e-324, -4.9e-324,
    /* integer range limits */
    4294967295.0, 4294967295.5, 4294967296.0, -4294967296.0, 2147483648.0,
    0x1p63, -0x1p63, 0x1p63 - 1024, -0x1p63 - 2048, 0x1p64, -1e20, 1e10, -1e10,
    9007199254740993.0, 0x1p62 + 0x1p38,
};

static const uint64_t int_specials[] = {
    0, 1, 2, 3, 127, 128, 255, 256, 257, 65504, 65519, 65520, 65535, 65536,
    (1u << 24) + 1, (1u << 24) + 3, (1u << 30) + (1u << 22), (1u << 30) + (1u << 22) + 1,
    (1u << 30) + 3 * (1u << 22), 0x12345678, 0x7fffffff, 0x80000000, 0xffffffff,
    0x100000001ull, (1ull << 53) + 1, (1ull << 53) + 3, (1ull << 62) + (1ull << 38),
    (1ull << 62) + (1ull << 38) + 1, (1ull << 63) - (1ull << 39), (1ull << 63) - 1,
};

size_t cast_special_inputs(kp_dtype src, void *out, size_t max)
{
    size_t n = 0;
    if (is_float(src)) {
        /* NaNs with payloads and both signs, as raw bits. */
        static const uint64_t nan_f32[] = {0x7fc00000, 0xffc00000, 0x7fc00001, 0xff800001, 0x7fffffff};
        static const uint64_t nan_f64[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                                           0x7ff0000000000001ull, 0xfff4000000000abcull};
        static const uint64_t nan_f16[] = {0x7e00, 0xfe00, 0x7c01, 0xfd55, 0x7fff};
        static const uint64_t nan_bf16[] = {0x7fc0, 0xffc0, 0x7f81, 0xff95, 0x7fff};
        const uint64_t *nans = src == KP_DTYPE_F32 ? nan_f32 : src == KP_DTYPE_F64 ? nan_f64
                               : src == KP_DTYPE_F16 ? nan_f16 : nan_bf16;
        size_t count = src == KP_DTYPE_F64 ? 4 : 5;
        for (size_t i = 0; i < count && n < max; i++)
            put_bits(src, out, n++, nans[i]);
        for (size_t i = 0; i < sizeof(float_specials) / sizeof(float_specials[0]) && n < max; i++)
            put_double(src, out, n++, float_specials[i]);
        /* Every subnormal and boundary pattern of the 16-bit types. */
        if (src == KP_DTYPE_F16 || src == KP_DTYPE_BF16) {
            static const uint64_t edges[] = {0x0001, 0x8001, 0x0002, 0x0003, 0x03ff, 0x0400,
                                             0x7bff, 0xfbff, 0x7f7f, 0xff7f, 0x0080, 0x007f};
            for (size_t i = 0; i < sizeof(edges) / sizeof(edges[0]) && n < max; i++)
                put_bits(src, out, n++, edges[i]);
        }
        return n;
    }
    for (size_t i = 0; i < sizeof(int_specials) / sizeof(int_specials[0]) && n < max; i++) {
        uint64_t u = int_specials[i];
        if (src == KP_DTYPE_U8 && u > 255)
            continue;
        if (src == KP_DTYPE_U32 && u > 0xffffffffull)
            continue;
        put_bits(src, out, n++, u);
        if (src == KP_DTYPE_I64 && n < max)
            put_bits(src, out, n++, 0 - u);  /* the negative too (0 - (2^63 - 1) etc.) */
    }
    if (src == KP_DTYPE_I64 && n < max)
        put_bits(src, out, n++, 1ull << 63);  /* INT64_MIN */
    return n;
}

/* A random value near a rounding tie of format f: the midpoint between two
 * neighbouring finite patterns, sometimes nudged by a relative 2^-40. */
static double random_tie(const struct format16 *f)
{
    unsigned bits = (unsigned)(rng_next() % (f->inf - 1));
    double mid = (format16_value(f, bits) + format16_value(f, bits + 1)) / 2;
    switch (rng_next() % 3) {
    case 0: return mid;
    case 1: return mid * (1 + 0x1p-40);
    default: return mid * (1 - 0x1p-40);
    }
}

void cast_random_inputs(kp_dtype src, void *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t r = rng_next();
        double sign = (r >> 63) ? -1.0 : 1.0;
        if (is_float(src)) {
            switch (r % 6) {
            case 0:  /* any pattern: NaNs, infinities, subnormals, huge and tiny */
                put_bits(src, out, i, rng_next());
                break;
            case 1:  /* around the u8 range, with fractions */
                put_double(src, out, i, rng_uniform(-300.0, 300.0));
                break;
            case 2:  /* any magnitude from 2^-30 to 2^70: the integer ranges and beyond */
                put_double(src, out, i, sign * ldexp(rng_uniform(1.0, 2.0), (int)(rng_next() % 101) - 30));
                break;
            case 3:
                put_double(src, out, i, sign * random_tie(&f16_format));
                break;
            case 4:
                put_double(src, out, i, sign * random_tie(&bf16_format));
                break;
            default:  /* whole numbers and halves of every size up to 2^64 */
                put_double(src, out, i, sign * ldexp((double)(rng_next() >> (rng_next() % 64)), -(int)((r >> 8) % 2)));
                break;
            }
            continue;
        }
        uint64_t u;
        switch (r % 3) {
        case 0:  /* random bits of a random length */
            u = rng_next() >> (rng_next() % 64);
            break;
        case 1: {  /* a tie of f16/bf16/f32 at a random power of two, +-1 */
            static const int frac_bits[] = {10, 7, 23};
            int p = frac_bits[rng_next() % 3];
            int top = src == KP_DTYPE_U32 ? 31 : src == KP_DTYPE_I64 ? 62 : 7;
            if (top <= p) {  /* u8: no ties in range */
                u = rng_next();
                break;
            }
            int k = p + 1 + (int)(rng_next() % (uint64_t)(top - p));  /* 2^k, k in (p, top] */
            u = (1ull << k) + (1ull << (k - p - 1)) + (uint64_t)((int)(rng_next() % 3) - 1);
            break;
        }
        default:
            u = rng_next();
            break;
        }
        if (src == KP_DTYPE_I64 && (r >> 62) & 1)
            u = 0 - u;
        put_bits(src, out, i, u);  /* put_bits keeps the low bytes for u8/u32 */
    }
}
