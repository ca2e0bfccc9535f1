/* CPU reference of the GGUF block formats: see quant_ref.h.
 *
 * Bit-exactness with ggml needs every product and sum to be one rounded f32
 * operation, in ggml's order. A fused multiply-add would round once where
 * ggml rounds twice, so contraction is off: by the pragma for compilers that
 * honour it (clang), by -ffp-contract=off on the command line for gcc, which
 * ignores the pragma (and warns about it, hence the guard). The build
 * (tests/meson.build) passes the flag. */
#if !defined(__GNUC__) || defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

#include "quant_ref.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- formats */

int quant_ref_block_elems(int qf)
{
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: return elems;
        KP_QUANT_FORMATS(X)
#undef X
    default: return 0;
    }
}

int quant_ref_block_bytes(int qf)
{
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: return bytes;
        KP_QUANT_FORMATS(X)
#undef X
    default: return 0;
    }
}

const char *quant_ref_name(int qf)
{
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: return #name;
        KP_QUANT_FORMATS(X)
#undef X
    default: return NULL;
    }
}

int quant_ref_can_quantize(int qf)
{
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: return 1;
        KP_QUANTIZE_FORMATS(X)
#undef X
    default: return 0;
    }
}

/* ----------------------------------------------------------- binary16 */

static uint32_t f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* Exact. A NaN keeps its sign and payload bits (as numpy does); ggml's
 * conversions quiet a signalling NaN, which no arithmetic result can tell
 * apart since the first operation on it quiets it anyway. */
float quant_ref_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1F;
    uint32_t mant = h & 0x3FF;

    if (exp == 0x1F) /* inf, NaN */
        return f32_from_bits(sign | 0x7F800000 | (mant << 13));
    if (exp != 0) /* normal: rebias 15 -> 127 */
        return f32_from_bits(sign | ((exp + 112) << 23) | (mant << 13));
    if (mant == 0)
        return f32_from_bits(sign);
    /* subnormal mant * 2^-24: normalise so the leading one becomes implicit */
    exp = 113;
    while (!(mant & 0x400)) {
        mant <<= 1;
        exp--;
    }
    return f32_from_bits(sign | (exp << 23) | ((mant & 0x3FF) << 13));
}

/* Round to nearest, ties to even, as F16C's vcvtps2ph, CUDA's __float2half_rn
 * and numpy's astype(float16). A NaN becomes a quiet NaN with the top of its
 * payload. */
uint16_t quant_ref_f32_to_f16(float f)
{
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    uint32_t a = x & 0x7FFFFFFF;

    if (a > 0x7F800000)
        return (uint16_t)(sign | 0x7E00 | ((a >> 13) & 0x3FF));
    if (a >= 0x477FF000) /* >= 65520 = 65504 + half an ulp: rounds to inf */
        return (uint16_t)(sign | 0x7C00);
    if (a >= 0x38800000) { /* >= 2^-14: a normal binary16 */
        uint32_t r = a - ((uint32_t)112 << 23); /* rebias 127 -> 15 */
        r += 0xFFF + ((r >> 13) & 1);          /* carry may bump the exponent: right */
        return (uint16_t)(sign | (r >> 13));
    }
    if (a <= 0x33000000) /* <= 2^-25, half the smallest subnormal: ties to 0 */
        return sign;
    /* subnormal result: count units of 2^-24; value = m * 2^(e - 150) */
    uint32_t e = a >> 23;
    uint32_t m = (a & 0x7FFFFF) | 0x800000;
    uint32_t shift = 126 - e; /* 14..24 here */
    uint32_t q = m >> shift;
    uint32_t rem = m & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1)))
        q++; /* 0x400 = the smallest normal is the right encoding too */
    return (uint16_t)(sign | q);
}

static float h2f(uint16_t h) { return quant_ref_f16_to_f32(h); }

/* ------------------------------------------------------------ dequantize
 * One function per format, one block at a time. Blocks are copied out with
 * memcpy: a caller's byte buffer need not be aligned for the 16-bit fields.
 * The int-to-float conversions are exact; the comments give the f32
 * operations in ggml's order. */

#define LOAD_BLOCK(b, base, i) memcpy(&(b), (const unsigned char *)(base) + (size_t)(i) * sizeof(b), sizeof(b))

/* The 32 high bits of Q5_0/Q5_1, little endian whatever the host. */
static uint32_t load_qh32(const uint8_t qh[4])
{
    return (uint32_t)qh[0] | (uint32_t)qh[1] << 8 | (uint32_t)qh[2] << 16 | (uint32_t)qh[3] << 24;
}

static void dequant_q4_0(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q4_0 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((b.qs[j] & 0xF) - 8) * d;
            y[j + 16] = (float)((b.qs[j] >> 4) - 8) * d;
        }
    }
}

static void dequant_q4_1(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q4_1 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d), m = h2f(b.m);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(b.qs[j] & 0xF) * d + m; /* (q*d) + m: two roundings */
            y[j + 16] = (float)(b.qs[j] >> 4) * d + m;
        }
    }
}

static void dequant_q5_0(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q5_0 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        const uint32_t qh = load_qh32(b.qh);
        for (int j = 0; j < 16; j++) {
            int lo = (b.qs[j] & 0xF) | (int)((qh >> j) & 1) << 4;
            int hi = (b.qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            y[j] = (float)(lo - 16) * d;
            y[j + 16] = (float)(hi - 16) * d;
        }
    }
}

static void dequant_q5_1(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q5_1 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d), m = h2f(b.m);
        const uint32_t qh = load_qh32(b.qh);
        for (int j = 0; j < 16; j++) {
            int lo = (b.qs[j] & 0xF) | (int)((qh >> j) & 1) << 4;
            int hi = (b.qs[j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            y[j] = (float)lo * d + m;
            y[j + 16] = (float)hi * d + m;
        }
    }
}

static void dequant_q8_0(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q8_0 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int j = 0; j < 32; j++)
            y[j] = (float)b.qs[j] * d;
    }
}

/* ggml has no dequantize_row_q8_1 (Q8_1 only feeds dot products); the value
 * of an element is qs*d as in Q8_0, and s (a derived sum) is not read. */
static void dequant_q8_1(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_q8_1 b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int j = 0; j < 32; j++)
            y[j] = (float)b.qs[j] * d;
    }
}

static void dequant_q2_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        kp_block_q2_k b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d), dmin = h2f(b.dmin);
        /* element 128n + 32j + l: bits 2j of qs[32n + l]; 16 elements per scale */
        for (int g = 0; g < 16; g++) {
            const int n = g / 8, j = (g / 2) % 4, l0 = (g % 2) * 16;
            const float dl = d * (float)(b.scales[g] & 0xF);
            const float ml = dmin * (float)(b.scales[g] >> 4);
            for (int l = l0; l < l0 + 16; l++)
                *y++ = dl * (float)((b.qs[32 * n + l] >> (2 * j)) & 3) - ml; /* (dl*q) - ml */
        }
    }
}

static void dequant_q3_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        kp_block_q3_k b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int g = 0; g < 16; g++) {
            const int n = g / 8, j = (g / 2) % 4, l0 = (g % 2) * 16;
            const float dl = d * (float)kp_q3_k_scale(g, b.scales);
            for (int l = l0; l < l0 + 16; l++) {
                int q = (b.qs[32 * n + l] >> (2 * j)) & 3;
                q -= (b.hmask[l] >> (4 * n + j)) & 1 ? 0 : 4; /* a clear high bit means -4 */
                *y++ = dl * (float)q;
            }
        }
    }
}

static void dequant_q4_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        kp_block_q4_k b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d), dmin = h2f(b.dmin);
        for (int s = 0; s < 8; s++) {
            int sc, m;
            kp_q_scale_min_k4(s, b.scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = dmin * (float)m;
            const uint8_t *q = b.qs + 32 * (s / 2);
            const int shift = 4 * (s % 2);
            for (int l = 0; l < 32; l++)
                *y++ = d1 * (float)((q[l] >> shift) & 0xF) - m1; /* (d1*q) - m1 */
        }
    }
}

static void dequant_q5_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        kp_block_q5_k b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d), dmin = h2f(b.dmin);
        for (int s = 0; s < 8; s++) {
            int sc, m;
            kp_q_scale_min_k4(s, b.scales, &sc, &m);
            const float d1 = d * (float)sc, m1 = dmin * (float)m;
            const uint8_t *q = b.qs + 32 * (s / 2);
            const int shift = 4 * (s % 2);
            for (int l = 0; l < 32; l++) {
                int v = ((q[l] >> shift) & 0xF) | ((b.qh[l] >> s) & 1) << 4;
                *y++ = d1 * (float)v - m1;
            }
        }
    }
}

static void dequant_q6_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 256) {
        kp_block_q6_k b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int e = 0; e < 256; e++) {
            const int n = e / 128, j = (e / 32) % 4, l = e % 32;
            const uint8_t ql = b.ql[64 * n + l + 32 * (j & 1)];
            const int lo = j < 2 ? ql & 0xF : ql >> 4;
            const int hi = (b.qh[32 * n + l] >> (2 * j)) & 3;
            const int q = (lo | hi << 4) - 32;
            /* ggml writes d * sc * q, which C groups as (d*sc)*q */
            y[e] = (d * (float)b.scales[e / 16]) * (float)q;
        }
    }
}

static void dequant_q8_K(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 256) {
        kp_block_q8_k b;
        LOAD_BLOCK(b, blocks, i);
        for (int j = 0; j < 256; j++)
            y[j] = b.d * (float)b.qs[j];
    }
}

static const int8_t iq4nl_values[16] = KP_IQ4NL_VALUES;

static void dequant_iq4_nl(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, y += 32) {
        kp_block_iq4_nl b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int j = 0; j < 16; j++) {
            y[j] = d * (float)iq4nl_values[b.qs[j] & 0xF];
            y[j + 16] = d * (float)iq4nl_values[b.qs[j] >> 4];
        }
    }
}

static void dequant_iq4_xs(const void *blocks, float *y, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++) {
        kp_block_iq4_xs b;
        LOAD_BLOCK(b, blocks, i);
        const float d = h2f(b.d);
        for (int s = 0; s < 8; s++, y += 32) {
            const float dl = d * (float)kp_iq4_xs_scale(s, &b);
            const uint8_t *q = b.qs + 16 * s;
            for (int j = 0; j < 16; j++) {
                y[j] = dl * (float)iq4nl_values[q[j] & 0xF];
                y[j + 16] = dl * (float)iq4nl_values[q[j] >> 4];
            }
        }
    }
}

/* A misuse (unknown format, partial block) is a bug in the calling test:
 * stop at once rather than compare garbage. */
static int64_t blocks_in_row(int qf, int64_t cols)
{
    const int elems = quant_ref_block_elems(qf);
    if (elems == 0 || cols < 0 || cols % elems != 0)
        abort();
    return cols / elems;
}

void quant_ref_dequantize_row(int qf, const void *blocks, float *out, int64_t cols)
{
    const int64_t nb = blocks_in_row(qf, cols);
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: dequant_##name(blocks, out, nb); break;
        KP_QUANT_FORMATS(X)
#undef X
    default: abort();
    }
}

/* -------------------------------------------------------------- quantize
 * ggml's quantize_row_*_ref. The conversions of a float to int8_t/uint8_t
 * truncate toward zero like ggml's casts; for finite inputs whose scale's
 * reciprocal is finite they stay in range (ggml's own behaviour is
 * undefined otherwise, e.g. for a block of only f32 subnormals). */

/* The first element of largest magnitude, with its sign; +0 for a block of
 * zeros (ggml starts from 0.0f and only replaces on a strictly larger |v|). */
static float signed_absmax(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (amax < fabsf(x[j])) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

/* ggml's `if (v < min) min = v; if (v > max) max = v;` from +-FLT_MAX: the
 * first of equal values wins, which decides the sign of a zero min/max. */
static void min_max(const float *x, int n, float *min, float *max)
{
    float lo = FLT_MAX, hi = -FLT_MAX;
    for (int j = 0; j < n; j++) {
        if (x[j] < lo) lo = x[j];
        if (x[j] > hi) hi = x[j];
    }
    *min = lo;
    *max = hi;
}

static void quant_q4_0(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q4_0 b;
        const float d = signed_absmax(x, 32) / -8.0f; /* the extreme maps to -8 */
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = quant_ref_f32_to_f16(d);
        for (int j = 0; j < 16; j++) {
            /* +8.5 then truncation: round half up around the offset 8 */
            int8_t q0 = (int8_t)(x[j] * id + 8.5f);
            int8_t q1 = (int8_t)(x[j + 16] * id + 8.5f);
            uint8_t lo = (uint8_t)(q0 < 15 ? q0 : 15);
            uint8_t hi = (uint8_t)(q1 < 15 ? q1 : 15);
            b.qs[j] = (uint8_t)(lo | hi << 4);
        }
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

static void quant_q4_1(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q4_1 b;
        float min, max;
        min_max(x, 32, &min, &max);
        const float d = (max - min) / 15.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = quant_ref_f32_to_f16(d);
        b.m = quant_ref_f32_to_f16(min);
        for (int j = 0; j < 16; j++) {
            int8_t q0 = (int8_t)((x[j] - min) * id + 0.5f);
            int8_t q1 = (int8_t)((x[j + 16] - min) * id + 0.5f);
            uint8_t lo = (uint8_t)(q0 < 15 ? q0 : 15);
            uint8_t hi = (uint8_t)(q1 < 15 ? q1 : 15);
            b.qs[j] = (uint8_t)(lo | hi << 4);
        }
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

static void store_qh32(uint8_t qh[4], uint32_t v)
{
    for (int k = 0; k < 4; k++)
        qh[k] = (uint8_t)(v >> (8 * k));
}

static void quant_q5_0(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q5_0 b;
        const float d = signed_absmax(x, 32) / -16.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b.d = quant_ref_f32_to_f16(d);
        for (int j = 0; j < 16; j++) {
            int8_t q0 = (int8_t)(x[j] * id + 16.5f);
            int8_t q1 = (int8_t)(x[j + 16] * id + 16.5f);
            uint8_t lo = (uint8_t)(q0 < 31 ? q0 : 31);
            uint8_t hi = (uint8_t)(q1 < 31 ? q1 : 31);
            b.qs[j] = (uint8_t)((lo & 0xF) | (hi & 0xF) << 4);
            qh |= (uint32_t)(lo >> 4) << j;
            qh |= (uint32_t)(hi >> 4) << (j + 16);
        }
        store_qh32(b.qh, qh);
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

static void quant_q5_1(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q5_1 b;
        float min, max;
        min_max(x, 32, &min, &max);
        const float d = (max - min) / 31.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        b.d = quant_ref_f32_to_f16(d);
        b.m = quant_ref_f32_to_f16(min);
        for (int j = 0; j < 16; j++) {
            /* no clamp here in ggml: (max - min)*id + 0.5 stays below 32 */
            uint8_t lo = (uint8_t)((x[j] - min) * id + 0.5f);
            uint8_t hi = (uint8_t)((x[j + 16] - min) * id + 0.5f);
            b.qs[j] = (uint8_t)((lo & 0xF) | (hi & 0xF) << 4);
            qh |= (uint32_t)((lo >> 4) & 1) << j;
            qh |= (uint32_t)((hi >> 4) & 1) << (j + 16);
        }
        store_qh32(b.qh, qh);
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

/* amax/127 with amax from +0 by MAX(): a block of zeros has d = +0. */
static float q8_scale(const float *x)
{
    float amax = 0.0f;
    for (int j = 0; j < 32; j++) {
        const float a = fabsf(x[j]);
        amax = amax > a ? amax : a;
    }
    return amax / 127.0f;
}

static void quant_q8_0(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q8_0 b;
        const float d = q8_scale(x);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        b.d = quant_ref_f32_to_f16(d);
        for (int j = 0; j < 32; j++)
            b.qs[j] = (int8_t)roundf(x[j] * id); /* ties away from zero */
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

static void quant_q8_1(const float *x, void *blocks, int64_t nb)
{
    for (int64_t i = 0; i < nb; i++, x += 32) {
        kp_block_q8_1 b;
        const float d = q8_scale(x);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        b.d = quant_ref_f32_to_f16(d);
        for (int j = 0; j < 32; j++) {
            b.qs[j] = (int8_t)roundf(x[j] * id);
            sum += b.qs[j];
        }
        /* from the unrounded f32 d, as ggml */
        b.s = quant_ref_f32_to_f16((float)sum * d);
        memcpy((unsigned char *)blocks + (size_t)i * sizeof b, &b, sizeof b);
    }
}

void quant_ref_quantize_row(int qf, const float *x, void *blocks, int64_t cols)
{
    const int64_t nb = blocks_in_row(qf, cols);
    switch (qf) {
#define X(ID, name, elems, bytes, type) case KP_QF_##ID: quant_##name(x, blocks, nb); break;
        KP_QUANTIZE_FORMATS(X)
#undef X
    default: abort();
    }
}

/* ---------------------------------------------------------- random blocks */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A binary16 in [2^-10, 2^-2) with a random mantissa: exponent fields
 * 5..12; negative when `sign` (0 or 1). */
static uint16_t random_scale16(uint64_t *seed, int sign)
{
    uint64_t r = splitmix64(seed);
    uint16_t exp = (uint16_t)(5 + r % 8);
    uint16_t mant = (uint16_t)((r >> 8) & 0x3FF);
    return (uint16_t)((sign ? 0x8000 : 0) | exp << 10 | mant);
}

static int random_sign(uint64_t *seed)
{
    return (int)(splitmix64(seed) >> 63);
}

/* dmin of Q2_K/Q4_K/Q5_K: positive in ggml's quantizers (it is subtracted),
 * but one block in eight negative so that the sign path is exercised. */
static int random_dmin_sign(uint64_t *seed)
{
    return (splitmix64(seed) & 7) == 0;
}

static void random_bytes(void *p, size_t n, uint64_t *seed)
{
    unsigned char *c = p;
    for (size_t k = 0; k < n; k += 8) {
        uint64_t r = splitmix64(seed);
        for (size_t b = 0; b < 8 && k + b < n; b++)
            c[k + b] = (unsigned char)(r >> (8 * b));
    }
}

/* Any block, aligned for its fields. */
union any_block {
#define X(ID, name, elems, size, type) type name;
    KP_QUANT_FORMATS(X)
#undef X
    unsigned char raw[sizeof(kp_block_q8_k)]; /* the largest */
};

/* A random scale, and a random dmin (see random_dmin_sign). */
static uint16_t random_d(uint64_t *seed) { return random_scale16(seed, random_sign(seed)); }
static uint16_t random_dmin(uint64_t *seed) { return random_scale16(seed, random_dmin_sign(seed)); }

/* Random quant bits everywhere, then the scales overwritten and the derived
 * fields (Q8_1 s, Q8_K bsums) made consistent. */
static void random_block(int qf, union any_block *u, uint64_t *seed)
{
    random_bytes(u->raw, (size_t)quant_ref_block_bytes(qf), seed);
    switch (qf) {
    case KP_QF_Q4_0: u->q4_0.d = random_d(seed); break;
    case KP_QF_Q5_0: u->q5_0.d = random_d(seed); break;
    case KP_QF_Q8_0: u->q8_0.d = random_d(seed); break;
    case KP_QF_Q3_K: u->q3_K.d = random_d(seed); break;
    case KP_QF_Q6_K: u->q6_K.d = random_d(seed); break;
    case KP_QF_IQ4_NL: u->iq4_nl.d = random_d(seed); break;
    case KP_QF_IQ4_XS: u->iq4_xs.d = random_d(seed); break;
    case KP_QF_Q4_1:
        u->q4_1.d = random_d(seed);
        u->q4_1.m = random_d(seed);
        break;
    case KP_QF_Q5_1:
        u->q5_1.d = random_d(seed);
        u->q5_1.m = random_d(seed);
        break;
    case KP_QF_Q2_K:
        u->q2_K.d = random_d(seed);
        u->q2_K.dmin = random_dmin(seed);
        break;
    case KP_QF_Q4_K:
        u->q4_K.d = random_d(seed);
        u->q4_K.dmin = random_dmin(seed);
        break;
    case KP_QF_Q5_K:
        u->q5_K.d = random_d(seed);
        u->q5_K.dmin = random_dmin(seed);
        break;
    case KP_QF_Q8_1: {
        kp_block_q8_1 *b = &u->q8_1;
        int sum = 0;
        b->d = random_d(seed);
        for (int j = 0; j < 32; j++)
            sum += b->qs[j];
        b->s = quant_ref_f32_to_f16((float)sum * h2f(b->d));
        break;
    }
    case KP_QF_Q8_K: {
        kp_block_q8_k *b = &u->q8_K;
        /* f32 in [2^-10, 2^-2): exponent fields 117..124 */
        uint64_t r = splitmix64(seed);
        uint32_t bits = (uint32_t)(r >> 63) << 31 | (uint32_t)(117 + r % 8) << 23 | ((uint32_t)(r >> 8) & 0x7FFFFF);
        b->d = f32_from_bits(bits);
        for (int g = 0; g < 16; g++) {
            int sum = 0;
            for (int l = 0; l < 16; l++)
                sum += b->qs[16 * g + l];
            b->bsums[g] = (int16_t)sum;
        }
        break;
    }
    default: abort();
    }
}

void quant_ref_random_blocks(int qf, void *blocks, size_t nblocks, uint64_t *seed)
{
    const int bytes = quant_ref_block_bytes(qf);
    if (bytes == 0)
        abort();
    /* Built in an aligned local block, then copied: `blocks` may be bytes. */
    union any_block tmp;
    for (size_t i = 0; i < nblocks; i++) {
        random_block(qf, &tmp, seed);
        memcpy((unsigned char *)blocks + i * (size_t)bytes, tmp.raw, (size_t)bytes);
    }
}
