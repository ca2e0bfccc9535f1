/* The GGUF block formats, byte for byte as ggml defines them
 * (ggml-common.h): the one description of each layout, included by the
 * kernels (CUDA/HIP C++), the launchers (C11) and the host reference of the
 * tests. 16-bit scales are IEEE binary16 bits. Multi-byte fields are little
 * endian, as GGUF files and every supported GPU are.
 *
 * Element order inside a block (what dequantize writes):
 *   Q4_0/Q4_1/Q5_0/Q5_1/IQ4_NL: element j < 16 is the low nibble of qs[j],
 *     element 16 + j the high nibble; Q5 adds bit j of qh as bit 4.
 *   Q8_0/Q8_1/Q8_K: element j is qs[j].
 *   Q4_K/Q5_K/IQ4_XS: sub-block s (32 elements) reads qs[32*(s/2) ..] low
 *     nibbles for even s, high nibbles for odd s (IQ4_XS: qs[16*s ..] like
 *     IQ4_NL); Q5_K adds bit s of qh[l].
 *   Q2_K/Q3_K: element e = 128*n + 32*j + l reads bits 2j..2j+1 of
 *     qs[32*n + l]; Q3_K adds bit 4n + j of hmask[l] (set: +0, clear: -4).
 *   Q6_K: element e = 128*n + 32*j + l takes 4 bits of ql[64*n + l + 32*(j&1)]
 *     (low nibble for j < 2, high for j >= 2) and bits 2j..2j+1 of qh[32*n + l].
 * Scales: Q2_K/Q3_K/Q6_K have one per 16 elements, Q4_K/Q5_K/IQ4_XS one
 * per 32 (see kp_q_scale_min_k4 for the 6-bit packing of Q4_K/Q5_K, and
 * kp_q3_k_scale for Q3_K's). */
#ifndef KP_QUANT_BLOCKS_H
#define KP_QUANT_BLOCKS_H

#include <stdint.h>

#define KP_QK 32     /* elements per block of the 32-element formats */
#define KP_QK_K 256  /* elements per super-block of the K and IQ4_XS formats */

typedef struct kp_block_q4_0 { uint16_t d; uint8_t qs[16]; } kp_block_q4_0;
typedef struct kp_block_q4_1 { uint16_t d, m; uint8_t qs[16]; } kp_block_q4_1;
typedef struct kp_block_q5_0 { uint16_t d; uint8_t qh[4]; uint8_t qs[16]; } kp_block_q5_0;
typedef struct kp_block_q5_1 { uint16_t d, m; uint8_t qh[4]; uint8_t qs[16]; } kp_block_q5_1;
typedef struct kp_block_q8_0 { uint16_t d; int8_t qs[32]; } kp_block_q8_0;
/* s = d * sum(qs), rounded to binary16 */
typedef struct kp_block_q8_1 { uint16_t d, s; int8_t qs[32]; } kp_block_q8_1;
typedef struct kp_block_q2_k {
    uint8_t scales[16];  /* low nibble: scale, high nibble: min, per 16 elements */
    uint8_t qs[64];
    uint16_t d, dmin;
} kp_block_q2_k;
typedef struct kp_block_q3_k {
    uint8_t hmask[32];
    uint8_t qs[64];
    uint8_t scales[12];  /* 16 six-bit scales, biased by 32 */
    uint16_t d;
} kp_block_q3_k;
typedef struct kp_block_q4_k {
    uint16_t d, dmin;
    uint8_t scales[12];  /* 8 six-bit scales and 8 six-bit mins */
    uint8_t qs[128];
} kp_block_q4_k;
typedef struct kp_block_q5_k {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
} kp_block_q5_k;
typedef struct kp_block_q6_k {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
} kp_block_q6_k;
typedef struct kp_block_q8_k {
    float d;
    int8_t qs[256];
    int16_t bsums[16];   /* sums of qs per 16 elements */
} kp_block_q8_k;
typedef struct kp_block_iq4_nl { uint16_t d; uint8_t qs[16]; } kp_block_iq4_nl;
typedef struct kp_block_iq4_xs {
    uint16_t d;
    uint16_t scales_h;   /* bits 2s..2s+1: high bits of sub-block s's scale */
    uint8_t scales_l[4]; /* nibble s: low bits of sub-block s's scale; scale biased by 32 */
    uint8_t qs[128];
} kp_block_iq4_xs;

#ifdef __cplusplus
#define KP_QUANT_ASSERT(c, m) static_assert(c, m)
#else
#define KP_QUANT_ASSERT(c, m) _Static_assert(c, m)
#endif
KP_QUANT_ASSERT(sizeof(kp_block_q4_0) == 18, "q4_0 is 18 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q4_1) == 20, "q4_1 is 20 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q5_0) == 22, "q5_0 is 22 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q5_1) == 24, "q5_1 is 24 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q8_0) == 34, "q8_0 is 34 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q8_1) == 36, "q8_1 is 36 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_q2_k) == 84, "q2_K is 84 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_q3_k) == 110, "q3_K is 110 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_q4_k) == 144, "q4_K is 144 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_q5_k) == 176, "q5_K is 176 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_q6_k) == 210, "q6_K is 210 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_q8_k) == 292, "q8_K is 292 bytes per 256");
KP_QUANT_ASSERT(sizeof(kp_block_iq4_nl) == 18, "iq4_nl is 18 bytes per 32");
KP_QUANT_ASSERT(sizeof(kp_block_iq4_xs) == 136, "iq4_xs is 136 bytes per 256");

#if defined(__CUDACC__) || defined(__HIPCC__)
#define KP_QUANT_FN __host__ __device__ static inline
#else
#define KP_QUANT_FN static inline
#endif

/* Q4_K/Q5_K: scale and min of sub-block j (0..7), six bits each. */
KP_QUANT_FN void kp_q_scale_min_k4(int j, const uint8_t *s, int *scale, int *min)
{
    if (j < 4) {
        *scale = s[j] & 63;
        *min = s[j + 4] & 63;
    } else {
        *scale = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

/* Q3_K: signed scale of 16-element group j (0..15), in -32..31. */
KP_QUANT_FN int kp_q3_k_scale(int j, const uint8_t *s)
{
    int low = j < 8 ? s[j] & 0xF : s[j - 8] >> 4;
    int high = (s[8 + (j & 3)] >> (2 * (j / 4))) & 3;
    return (low | (high << 4)) - 32;
}

/* IQ4_XS: signed scale of sub-block s (0..7), in -32..31. */
KP_QUANT_FN int kp_iq4_xs_scale(int sub, const kp_block_iq4_xs *b)
{
    int low = (b->scales_l[sub / 2] >> (4 * (sub % 2))) & 0xF;
    int high = (b->scales_h >> (2 * sub)) & 3;
    return (low | (high << 4)) - 32;
}

/* The 16 values of IQ4_NL and IQ4_XS nibbles. */
#define KP_IQ4NL_VALUES {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

/* Format ids: GGUF's tensor type numbers (ggml_type), so a GGUF reader can
 * pass its type field through. The public kp_qformat enum uses the same. */
#define KP_QF_Q4_0 2
#define KP_QF_Q4_1 3
#define KP_QF_Q5_0 6
#define KP_QF_Q5_1 7
#define KP_QF_Q8_0 8
#define KP_QF_Q8_1 9
#define KP_QF_Q2_K 10
#define KP_QF_Q3_K 11
#define KP_QF_Q4_K 12
#define KP_QF_Q5_K 13
#define KP_QF_Q6_K 14
#define KP_QF_Q8_K 15
#define KP_QF_IQ4_NL 20
#define KP_QF_IQ4_XS 23

/* Expands X(ID, name, block elements, block bytes, block struct) per format. */
#define KP_QUANT_FORMATS(X)                                   \
    X(Q4_0, q4_0, 32, 18, kp_block_q4_0)                      \
    X(Q4_1, q4_1, 32, 20, kp_block_q4_1)                      \
    X(Q5_0, q5_0, 32, 22, kp_block_q5_0)                      \
    X(Q5_1, q5_1, 32, 24, kp_block_q5_1)                      \
    X(Q8_0, q8_0, 32, 34, kp_block_q8_0)                      \
    X(Q8_1, q8_1, 32, 36, kp_block_q8_1)                      \
    X(Q2_K, q2_K, 256, 84, kp_block_q2_k)                     \
    X(Q3_K, q3_K, 256, 110, kp_block_q3_k)                    \
    X(Q4_K, q4_K, 256, 144, kp_block_q4_k)                    \
    X(Q5_K, q5_K, 256, 176, kp_block_q5_k)                    \
    X(Q6_K, q6_K, 256, 210, kp_block_q6_k)                    \
    X(Q8_K, q8_K, 256, 292, kp_block_q8_k)                    \
    X(IQ4_NL, iq4_nl, 32, 18, kp_block_iq4_nl)                \
    X(IQ4_XS, iq4_xs, 256, 136, kp_block_iq4_xs)

/* The formats kp_quantize writes. */
#define KP_QUANTIZE_FORMATS(X)                                \
    X(Q4_0, q4_0, 32, 18, kp_block_q4_0)                      \
    X(Q4_1, q4_1, 32, 20, kp_block_q4_1)                      \
    X(Q5_0, q5_0, 32, 22, kp_block_q5_0)                      \
    X(Q5_1, q5_1, 32, 24, kp_block_q5_1)                      \
    X(Q8_0, q8_0, 32, 34, kp_block_q8_0)                      \
    X(Q8_1, q8_1, 32, 36, kp_block_q8_1)

/* Kernel name suffixes, X(ID, suffix): every format, and the formats
 * kp_quantize writes. The kernels are instantiated from these lists and
 * the launchers build kernel names from them. */
#define KP_QFORMAT_SUFFIXES(X) \
    X(Q4_0, q4_0)              \
    X(Q4_1, q4_1)              \
    X(Q5_0, q5_0)              \
    X(Q5_1, q5_1)              \
    X(Q8_0, q8_0)              \
    X(Q8_1, q8_1)              \
    X(Q2_K, q2_k)              \
    X(Q3_K, q3_k)              \
    X(Q4_K, q4_k)              \
    X(Q5_K, q5_k)              \
    X(Q6_K, q6_k)              \
    X(Q8_K, q8_k)              \
    X(IQ4_NL, iq4_nl)          \
    X(IQ4_XS, iq4_xs)
#define KP_QUANTIZE_SUFFIXES(X) \
    X(Q4_0, q4_0)               \
    X(Q4_1, q4_1)               \
    X(Q5_0, q5_0)               \
    X(Q5_1, q5_1)               \
    X(Q8_0, q8_0)               \
    X(Q8_1, q8_1)

/* What offsets and row strides of a format must be multiples of, and so the
 * widest load the kernels use on its fields: 4 where the block's size is a
 * multiple of 4 (its 32-bit fields are then aligned), else 2. */
#define KP_QBLOCK_ALIGN(bytes) ((bytes) % 4 == 0 ? 4 : 2)

#endif
