/* Writes what tests/gpu/quant_ref.c computes, for tests/check_quant_ref.py
 * to compare with the gguf Python package:
 *
 *   quant_ref_dump OUTDIR [SEED]
 *
 * OUTDIR/manifest.txt has one line per check, with file names relative to
 * OUTDIR; every file is raw little-endian data:
 *   f16_to_f32 N IN.u16 OUT.f32      every binary16, converted
 *   f32_to_f16 N IN.f32 OUT.u16      rounding ties, edges and random f32
 *   dequant NAME QF N IN.bin OUT.f32 R
 *                                    N blocks and their f32 elements; the
 *                                    first R from quant_ref_random_blocks
 *   quantize NAME QF N IN.f32 OUT.bin E
 *                                    N blocks' worth of f32 and the blocks;
 *                                    the first E are edge cases
 * Dequantize inputs: blocks of quant_ref_random_blocks, then blocks of fully
 * random bytes (any scale bits), then blocks with special scales (signed
 * zeros, subnormals, the largest finite, infinities, NaNs). Quantize inputs:
 * random data at many magnitudes plus the edge cases listed at
 * quantize_input(). */
#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant_ref.h"

enum {
    RANDOM_BLOCKS = 2048, /* from quant_ref_random_blocks */
    RAW_BLOCKS = 512,     /* every byte random */
    QUANT_BLOCKS = 4096,  /* quantize inputs: edge cases first, then random */
    RANDOM_F32 = 200000,  /* random bit patterns for f32 -> f16 */
};

static uint64_t rng_state;

static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static float uniform(void) { return (float)(rng() >> 40) * 0x1p-24f; }

static float from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint32_t to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static const char *out_dir;
static FILE *manifest;

static void die(const char *what, const char *path)
{
    fprintf(stderr, "quant_ref_dump: %s %s: %s\n", what, path, strerror(errno));
    exit(1);
}

static void write_file(const char *name, const void *data, size_t bytes)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    FILE *f = fopen(path, "wb");
    if (!f)
        die("cannot create", path);
    if (bytes && fwrite(data, 1, bytes, f) != bytes)
        die("cannot write", path);
    if (fclose(f) != 0)
        die("cannot write", path);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "quant_ref_dump: out of memory\n");
        exit(1);
    }
    return p;
}

/* ------------------------------------------------------------ binary16 */

static void dump_f16(void)
{
    uint16_t *h = xmalloc(65536 * sizeof *h);
    float *f = xmalloc(65536 * sizeof *f);
    for (uint32_t i = 0; i < 65536; i++) {
        h[i] = (uint16_t)i;
        f[i] = quant_ref_f16_to_f32(h[i]);
    }
    write_file("f16_all.u16", h, 65536 * sizeof *h);
    write_file("f16_all.f32", f, 65536 * sizeof *f);
    fprintf(manifest, "f16_to_f32 65536 f16_all.u16 f16_all.f32\n");

    /* Every positive finite binary16, the midpoint to the next one (a tie),
     * and one f32 ulp either side of that midpoint; both signs. Then f32
     * specials and random bit patterns. */
    size_t cap = 2 * 0x7C00 * 4 + 64 + RANDOM_F32, n = 0;
    float *x = xmalloc(cap * sizeof *x);
    for (uint32_t hb = 0; hb < 0x7C00; hb++) {
        float lo = quant_ref_f16_to_f32((uint16_t)hb);
        float hi = hb + 1 < 0x7C00 ? quant_ref_f16_to_f32((uint16_t)(hb + 1)) : 65520.0f;
        float mid = lo + (hi - lo) / 2; /* exact: 12 significant bits */
        float v[4] = {lo, mid, from_bits(to_bits(mid) - 1), from_bits(to_bits(mid) + 1)};
        for (int k = 0; k < 4; k++) {
            x[n++] = v[k];
            x[n++] = -v[k];
        }
    }
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, FLT_MAX, -FLT_MAX,
        FLT_MIN, FLT_TRUE_MIN, -FLT_TRUE_MIN, 0x1p-25f, 0x1.000002p-25f, 0x1.fffffep-26f, 0x1p-24f,
        0x1.8p-24f, 0x1.8p-23f, 0x1.ffcp-15f, 0x1.ffep-15f, 65504.0f, 65519.996f, 65520.0f, 1e10f,
        from_bits(0x7F800001), from_bits(0xFFA00000), from_bits(0x7FC01234)};
    for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
        x[n++] = specials[k];
    for (int k = 0; k < RANDOM_F32; k++)
        x[n++] = from_bits((uint32_t)rng());
    uint16_t *y = xmalloc(n * sizeof *y);
    for (size_t k = 0; k < n; k++)
        y[k] = quant_ref_f32_to_f16(x[k]);
    write_file("f32_to_f16.f32", x, n * sizeof *x);
    write_file("f32_to_f16.u16", y, n * sizeof *y);
    fprintf(manifest, "f32_to_f16 %zu f32_to_f16.f32 f32_to_f16.u16\n", n);
    free(x);
    free(y);
    free(h);
    free(f);
}

/* ------------------------------------------------------------ dequantize */

/* binary16 scale bits for the special blocks */
static const uint16_t special_h[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x03FF, 0x0400, 0x3C00,
    0x7BFF, 0xFBFF, 0x7C00, 0xFC00, 0x7E00, 0xFE00, 0x7D55, 0x7C01};
enum { N_SPECIAL = sizeof special_h / sizeof special_h[0] };

/* Byte offsets of a block's 16-bit scale fields; -1 for none. */
static void scale_offsets(int qf, int *d_off, int *m_off)
{
    *d_off = *m_off = -1;
    switch (qf) {
    case KP_QF_Q4_0: case KP_QF_Q5_0: case KP_QF_Q8_0: case KP_QF_IQ4_NL: case KP_QF_IQ4_XS:
        *d_off = 0;
        break;
    case KP_QF_Q4_1: case KP_QF_Q5_1: case KP_QF_Q4_K: case KP_QF_Q5_K:
        *d_off = 0;
        *m_off = 2;
        break;
    case KP_QF_Q8_1:
        *d_off = 0; /* s is not read by dequantize */
        break;
    case KP_QF_Q2_K:
        *d_off = 80;
        *m_off = 82;
        break;
    case KP_QF_Q3_K:
        *d_off = 108;
        break;
    case KP_QF_Q6_K:
        *d_off = 208;
        break;
    default: /* Q8_K: f32 d, handled apart */
        break;
    }
}

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}

static void dump_dequant(int qf, uint64_t seed)
{
    const int bytes = quant_ref_block_bytes(qf), elems = quant_ref_block_elems(qf);
    const char *name = quant_ref_name(qf);
    const size_t n_special = 2 * N_SPECIAL;
    const size_t nb = RANDOM_BLOCKS + RAW_BLOCKS + n_special;
    unsigned char *blocks = xmalloc(nb * (size_t)bytes);
    float *out = xmalloc(nb * (size_t)elems * sizeof *out);

    quant_ref_random_blocks(qf, blocks, RANDOM_BLOCKS, &seed);
    unsigned char *p = blocks + (size_t)RANDOM_BLOCKS * bytes;
    for (size_t k = 0; k < (size_t)RAW_BLOCKS * bytes; k++)
        p[k] = (unsigned char)rng();
    /* Special blocks: random blocks whose scale (first N_SPECIAL) or min
     * (next N_SPECIAL, where the format has one) takes a special value. */
    p += (size_t)RAW_BLOCKS * bytes;
    quant_ref_random_blocks(qf, p, n_special, &seed);
    int d_off, m_off;
    scale_offsets(qf, &d_off, &m_off);
    for (size_t k = 0; k < n_special; k++, p += bytes) {
        const int which = (int)(k % N_SPECIAL), min_field = k >= N_SPECIAL;
        if (qf == KP_QF_Q8_K) {
            const float f32_special[N_SPECIAL] = {0.0f, -0.0f, FLT_TRUE_MIN, -FLT_TRUE_MIN, FLT_MIN,
                0x1p-130f, 1.0f, FLT_MAX, -FLT_MAX, INFINITY, -INFINITY, NAN, -NAN,
                from_bits(0x7F812345), 3e38f};
            if (!min_field)
                memcpy(p, &f32_special[which], 4);
        } else if (!min_field) {
            put16(p + d_off, special_h[which]);
        } else if (m_off >= 0) {
            put16(p + m_off, special_h[which]);
        }
    }

    quant_ref_dequantize_row(qf, blocks, out, (int64_t)(nb * (size_t)elems));
    char in_name[64], out_name[64];
    snprintf(in_name, sizeof in_name, "dequant_%s.bin", name);
    snprintf(out_name, sizeof out_name, "dequant_%s.f32", name);
    write_file(in_name, blocks, nb * (size_t)bytes);
    write_file(out_name, out, nb * (size_t)elems * sizeof *out);
    fprintf(manifest, "dequant %s %d %zu %s %s %d\n", name, qf, nb, in_name, out_name, RANDOM_BLOCKS);
    free(blocks);
    free(out);
}

/* -------------------------------------------------------------- quantize */

/* The magnitude that makes the block's scale an exact power of two `p`
 * (|extreme| / divisor = p), for rounding ties. */
static float extreme_for(int qf)
{
    switch (qf) {
    case KP_QF_Q4_0: return 8.0f;
    case KP_QF_Q5_0: return 16.0f;
    case KP_QF_Q4_1: return 15.0f;
    case KP_QF_Q5_1: return 31.0f;
    default: return 127.0f; /* Q8_0, Q8_1 */
    }
}

static int has_min(int qf) { return qf == KP_QF_Q4_1 || qf == KP_QF_Q5_1; }

static float random_sign(void) { return rng() & 1 ? -1.0f : 1.0f; }

/* 2^k for a random k in [lo, hi]. */
static float random_pow2(int lo, int hi)
{
    return ldexpf(1.0f, lo + (int)(rng() % (uint64_t)(hi - lo + 1)));
}

static void random_block_values(float *x, int kind)
{
    switch (kind) {
    case 0: { /* roughly normal (sum of 4 uniforms), at a random magnitude */
        const float s = random_pow2(-24, 24);
        for (int j = 0; j < 32; j++)
            x[j] = (uniform() + uniform() + uniform() + uniform() - 2.0f) * s;
        break;
    }
    case 1: { /* uniform in [-s, s) */
        const float s = random_pow2(-30, 30);
        for (int j = 0; j < 32; j++)
            x[j] = (2.0f * uniform() - 1.0f) * s;
        break;
    }
    case 2: { /* random bits, exponents within 2^-20 of a random top */
        const uint32_t top = 100 + (uint32_t)(rng() % 60);
        for (int j = 0; j < 32; j++) {
            uint64_t r = rng();
            x[j] = from_bits((uint32_t)(r >> 63) << 31 | (top - (uint32_t)(r % 21)) << 23 |
                             ((uint32_t)r >> 9));
        }
        break;
    }
    default: { /* all of one sign, at an offset: Q4_1/Q5_1's min far from 0 */
        const float s = random_pow2(-10, 10), sign = random_sign();
        for (int j = 0; j < 32; j++)
            x[j] = sign * (3.0f + uniform()) * s;
        break;
    }
    }
}

/* Values whose scaled x * id lands on, or within an ulp of, the rounding
 * boundary of the format (k + 1/2 for Q8's roundf, the integers after the
 * +0.5/+8.5/+16.5 of the others) for a scale that is not a power of two, so
 * that the product rounds: a fused multiply-add, or x / d for x * id, gives
 * other quants here. */
static void near_ties(int qf, float *x)
{
    const float e = extreme_for(qf);
    const float m = (1.0f + uniform()) * random_pow2(-6, 6);
    float d, id;
    if (has_min(qf)) { /* min 0 (x[0]), max m (x[1]) */
        x[0] = 0.0f;
        x[1] = m;
        d = (m - 0.0f) / e;
    } else { /* extreme -+m at x[0] */
        x[0] = random_sign() * m;
        d = qf == KP_QF_Q8_0 || qf == KP_QF_Q8_1 ? m / e : x[0] / -e;
    }
    id = 1.0f / d;
    for (int j = has_min(qf) ? 2 : 1; j < 32; j++) {
        /* tie t = k + 1/2 of x * id: k in [0, e) with a min, [-e, e) without */
        const int span = has_min(qf) ? (int)e : 2 * (int)e;
        const float t = (float)((int)(rng() % (uint64_t)span) - (has_min(qf) ? 0 : (int)e)) + 0.5f;
        float v = t / id;
        const int step = (int)(rng() % 3) - 1; /* -1, 0, +1 ulp */
        if (step) v = nextafterf(v, step > 0 ? INFINITY : -INFINITY);
        x[j] = v;
    }
}

/* Fills block b (32 values) of the quantize input: edge cases for the first
 * blocks, random values after them. Each edge case keeps ggml's reference
 * defined: finite values, and a scale whose reciprocal is finite (a block of
 * only f32 subnormals would make it inf, and ggml's float-to-int8 cast of
 * inf or NaN undefined). Returns the number of edge blocks when b < 0. */
static int quantize_input(int qf, int b, float *x)
{
    enum { N_EDGE = 64 };
    if (b < 0)
        return N_EDGE;
    const float e = extreme_for(qf);
    switch (b < N_EDGE ? b : -1) {
    case 0: /* all +0 */
        for (int j = 0; j < 32; j++) x[j] = 0.0f;
        break;
    case 1: /* all -0 */
        for (int j = 0; j < 32; j++) x[j] = -0.0f;
        break;
    case 2: /* zeros, first -0 */
        for (int j = 0; j < 32; j++) x[j] = j % 2 ? 0.0f : -0.0f;
        break;
    case 3: /* zeros, first +0 */
        for (int j = 0; j < 32; j++) x[j] = j % 2 ? -0.0f : 0.0f;
        break;
    case 4: case 5: case 6: case 7: { /* constant blocks */
        const float c[] = {1.0f, -3.25f, 1e-20f, -7e20f};
        for (int j = 0; j < 32; j++) x[j] = c[b - 4];
        break;
    }
    case 8: case 9: case 10: case 11: { /* one huge value among small ones */
        const float huge[] = {1e30f, -1e30f, 3e37f, -65504.0f * 64};
        random_block_values(x, 0);
        x[(b * 7) % 32] = huge[b - 8];
        break;
    }
    case 12: case 13: case 14: case 15: { /* scale just below/at f16 overflow */
        const float d[] = {65504.0f, 65519.0f, 65520.0f, -65536.0f};
        random_block_values(x, 1);
        for (int j = 0; j < 32; j++) x[j] = x[j] * 0x1p-40f;
        x[5] = d[b - 12] * e;
        if (has_min(qf)) x[6] = 0.0f;
        break;
    }
    case 16: case 17: case 18: case 19: case 20: case 21: { /* rounding ties */
        /* scale an exact power of two p, values on (k + 1/2) * p */
        const float p = random_pow2(-8, 8);
        const int q_range = (int)e;
        for (int j = 0; j < 32; j++) {
            const int k = (int)(rng() % (uint64_t)(2 * q_range + 1)) - q_range;
            x[j] = has_min(qf) ? ((float)(k + q_range) / 2.0f + 0.5f) * p
                               : ((float)k + (k < 0 ? -0.5f : 0.5f)) * p;
            if (fabsf(x[j]) > e * p) x[j] = copysignf(e * p - p / 2, x[j]);
        }
        if (has_min(qf)) {
            x[0] = 0.0f;          /* min = 0 */
            x[1] = e * p;         /* max: d = p */
        } else {
            x[0] = (b % 2 ? 1.0f : -1.0f) * e * p;  /* d = -+p */
        }
        break;
    }
    case 22: case 23: case 24: case 25: { /* f16 rounding ties of the scale */
        /* d = 1 + 2^-11 (tie to even: down), 1 + 3*2^-11 (up), subnormal ties */
        const float d[] = {1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 0x1.8p-24f, 0x1.4p-20f};
        random_block_values(x, 1);
        for (int j = 0; j < 32; j++) {
            x[j] = x[j] * d[b - 22] * (e / 2);
            if (has_min(qf)) x[j] = fabsf(x[j]);
        }
        if (has_min(qf)) {
            x[10] = 0.0f; /* min 0, max d*e: (max - min) / e = d */
            x[9] = d[b - 22] * e;
        } else {
            x[9] = -d[b - 22] * e; /* d = max / -e */
        }
        break;
    }
    case 26: case 27: case 28: case 29: { /* negative extreme */
        random_block_values(x, b - 26);
        int at = 0;
        for (int j = 1; j < 32; j++)
            if (fabsf(x[j]) > fabsf(x[at])) at = j;
        x[at] = -fabsf(x[at]);
        break;
    }
    case 30: case 31: case 32: case 33: { /* two extremes of equal magnitude, opposite signs */
        random_block_values(x, 0);
        float m = 0.0f;
        for (int j = 0; j < 32; j++) m = fmaxf(m, fabsf(x[j]));
        x[3 + b - 30] = (b % 2 ? 1.0f : -1.0f) * 2 * m;
        x[20 + b - 30] = -x[3 + b - 30];
        break;
    }
    case 34: case 35: case 36: case 37: { /* tiny: normal f32 scale, f16 scale underflows */
        random_block_values(x, 1);
        for (int j = 0; j < 32; j++) x[j] = ldexpf(x[j], -90 - (int)(rng() % 8) - ilogbf(x[j] == 0 ? 1 : x[j]));
        x[b - 34] = random_sign() * 0x1p-100f;
        break;
    }
    case 38: case 39: case 40: case 41: { /* f32 subnormals beside a normal extreme */
        for (int j = 0; j < 32; j++)
            x[j] = from_bits((uint32_t)(rng() & 1) << 31 | (uint32_t)(rng() & 0x7FFFFF));
        x[b - 30] = random_sign() * ldexpf(1.0f, -110 + 4 * (b - 38));
        break;
    }
    case 42: case 43: { /* values a hair off the ties of case 16 */
        const float p = random_pow2(-4, 4);
        for (int j = 0; j < 32; j++) {
            const int k = (int)(rng() % (uint64_t)(has_min(qf) ? e : 2 * e));
            const float t = ((float)k - (has_min(qf) ? 0.0f : e) + 0.5f) * p;
            x[j] = from_bits(to_bits(t) + (rng() & 1 ? 1u : -1u));
        }
        x[0] = has_min(qf) ? 0.0f : -e * p;
        if (has_min(qf)) x[1] = e * p;
        break;
    }
    case 44: case 45: { /* +0/-0 mixed with positive values: min is a zero */
        random_block_values(x, 1);
        for (int j = 0; j < 32; j++) x[j] = fabsf(x[j]);
        for (int j = b - 44; j < 32; j += 5) x[j] = j % 2 ? 0.0f : -0.0f;
        break;
    }
    case 46: case 47: { /* -0/+0 mixed with negative values: max is a zero */
        random_block_values(x, 1);
        for (int j = 0; j < 32; j++) x[j] = -fabsf(x[j]);
        for (int j = b - 46; j < 32; j += 5) x[j] = j % 2 ? 0.0f : -0.0f;
        break;
    }
    default:
        if (b >= 48 && b < N_EDGE) {
            near_ties(qf, x);
            break;
        }
        random_block_values(x, (int)(rng() % 4));
        break;
    }
    return 0;
}

static void dump_quantize(int qf)
{
    const int bytes = quant_ref_block_bytes(qf);
    const char *name = quant_ref_name(qf);
    const size_t nb = QUANT_BLOCKS;
    float *x = xmalloc(nb * 32 * sizeof *x);
    unsigned char *blocks = xmalloc(nb * (size_t)bytes);

    for (size_t b = 0; b < nb; b++)
        quantize_input(qf, (int)b, x + 32 * b);
    quant_ref_quantize_row(qf, x, blocks, (int64_t)(nb * 32));

    char in_name[64], out_name[64];
    snprintf(in_name, sizeof in_name, "quantize_%s.f32", name);
    snprintf(out_name, sizeof out_name, "quantize_%s.bin", name);
    write_file(in_name, x, nb * 32 * sizeof *x);
    write_file(out_name, blocks, nb * (size_t)bytes);
    fprintf(manifest, "quantize %s %d %zu %s %s %d\n", name, qf, nb, in_name, out_name,
            quantize_input(qf, -1, NULL));
    free(x);
    free(blocks);
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s OUTDIR [SEED]\n", argv[0]);
        return 2;
    }
    out_dir = argv[1];
    uint64_t seed = argc == 3 ? strtoull(argv[2], NULL, 0) : 0x6B70717561ull;
    rng_state = seed ^ 0x5DEECE66Dull;

    char path[4096];
    snprintf(path, sizeof path, "%s/manifest.txt", out_dir);
    manifest = fopen(path, "w");
    if (!manifest)
        die("cannot create", path);
    fprintf(manifest, "seed %" PRIu64 "\n", seed);

    dump_f16();
    static const int formats[] = {
#define X(ID, name, elems, bytes, type) KP_QF_##ID,
        KP_QUANT_FORMATS(X)
#undef X
    };
    for (size_t k = 0; k < sizeof formats / sizeof formats[0]; k++) {
        dump_dequant(formats[k], seed + (uint64_t)formats[k]);
        if (quant_ref_can_quantize(formats[k]))
            dump_quantize(formats[k]);
    }
    if (fclose(manifest) != 0)
        die("cannot write", path);
    return 0;
}
