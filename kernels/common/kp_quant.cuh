// Device-side decoding of the GGUF block formats (kp_quant_blocks.h):
//   kp_qdecode<F>::dequant8  - 8 consecutive elements of a block as f32,
//                              bit-exact with ggml's dequantize_row_*;
//   kp_qdecode<F>::item      - one 32-element sub-block as 32 signed bytes
//                              plus f32 scale(s) and offset(s), for the
//                              integer dot products of the mat-vec;
//   kp_qdecode<F>::quad      - words t and 4 + t of item's bytes alone, and
//   kp_qdecode<F>::scales    - item's scales and offsets alone: what a lane
//                              of an int8 matrix product holds (kp_mma.cuh).
// Block pointers are only 2-byte aligned in general (18-byte blocks), so
// multi-byte fields are read with kp_qld32<A>, A the format's alignment.
#pragma once
#include "kp_device.cuh"
#include "kp_quant_blocks.h"

// One f32 operation each, never fused into an FMA: ggml's results are the
// rounded product and the rounded sum.
KP_DEVICE float kp_qmul(float a, float b) { return __fmul_rn(a, b); }
KP_DEVICE float kp_qadd(float a, float b) { return __fadd_rn(a, b); }
KP_DEVICE float kp_qsub(float a, float b) { return __fadd_rn(a, -b); }

KP_DEVICE float kp_qhalf(const uint8_t *p) {
    kp_f16 h;
    h.bits = *(const uint16_t *)p;
    return kp_f16_to_f32(h);
}

// 32 bits from a pointer aligned to A (2 or 4) bytes.
template <int A> KP_DEVICE uint32_t kp_qld32(const uint8_t *p) {
    if (A >= 4)
        return *(const uint32_t *)p;
    const uint16_t *h = (const uint16_t *)p;
    return (uint32_t)h[0] | ((uint32_t)h[1] << 16);
}

// N consecutive 32-bit words from p, aligned to A (2 or 4) bytes. For A = 2
// the aligned words around them are read and shifted into place (fewer
// loads than 2-byte pieces); a run that starts 2 bytes into a word ends with
// a 2-byte load, so no byte outside the run's own words is read and blocks
// may be decoded straight from global memory (the mat-mat does).
template <int A, int N> KP_DEVICE void kp_qld_run(const uint8_t *p, uint32_t *w) {
    if (A >= 4) {
#pragma unroll
        for (int k = 0; k < N; k++) w[k] = *(const uint32_t *)(p + 4 * k);
        return;
    }
    // Stepping back from p (rather than masking the address) keeps the
    // pointer's memory space known to the compiler: shared-memory loads, not
    // generic ones, where p points into shared memory.
    // The test of p's low bits forms p's generic address (S2R SR_SWINHI
    // and a 64-bit add in each item of the mat-vec's loop). Testing the
    // shared-memory offset instead (__isShared, __cvta_generic_to_shared)
    // took up to 24 instructions out of most mat-vec kernels and gained 1-2
    // points of copy on many (H200), but ptxas then gave qmatvec_q4_0_b1 68
    // registers for 60 (4096 x 14336: 77 -> 67 %) and qmatvec_q6_k_b4 96
    // for 128 (54 -> 42 %), so it is not used.
    const int misalign = (int)((uintptr_t)p & 2), off = 8 * misalign;
    const uint32_t *base = (const uint32_t *)(p - misalign);
    uint32_t u[N + 1];
#pragma unroll
    for (int k = 0; k < N; k++) u[k] = base[k];
    u[N] = misalign ? (uint32_t)*(const uint16_t *)(base + N) : 0u;
#pragma unroll
    for (int k = 0; k < N; k++) {
#if KP_HIP
        w[k] = (uint32_t)((((uint64_t)u[k + 1] << 32) | u[k]) >> off);
#else
        w[k] = __funnelshift_r(u[k], u[k + 1], off);
#endif
    }
}

// Eight consecutive bytes of a block, as dequant8 reads them: two words
// read with the fewest aligned loads that stay inside the eight bytes (a
// byte load each was one memory instruction per element, which bounded
// dequantize by the rate memory instructions issue). p is aligned to A (2
// or more); at 2, a run that is not 4-byte aligned takes 2 + 4 + 2 bytes.
struct kp_qrun8 {
    uint32_t w[2];  // bytes 0-3, 4-7
};
template <int A> KP_DEVICE kp_qrun8 kp_qld8(const uint8_t *p) {
    kp_qrun8 r;
    if (A >= 4 || ((uintptr_t)p & 3) == 0) {
        r.w[0] = *(const uint32_t *)p;
        r.w[1] = *(const uint32_t *)(p + 4);
    } else {
        const uint32_t mid = *(const uint32_t *)(p + 2);
        r.w[0] = (uint32_t)*(const uint16_t *)p | mid << 16;
        r.w[1] = mid >> 16 | (uint32_t)*(const uint16_t *)(p + 6) << 16;
    }
    return r;
}

// The eight codes of a group (element i in byte i % 4 of c[i / 4], as
// unsigned bytes) minus BIAS, as exact floats: each byte permuted into the
// mantissa of 2^23, then 2^23 + BIAS subtracted. Extracting, biasing and
// converting each byte took four or five integer-pipe instructions an
// element, which bound the 16-bit dequantize (ncu, Q6_K to f16: integer
// pipe 85 % busy, DRAM 39 %); this takes a permute and an add.
template <int BIAS> KP_DEVICE void kp_qcodes8(const uint32_t c[2], float *v) {
#pragma unroll
    for (int i = 0; i < 8; i++)
        v[i] = __uint_as_float(__byte_perm(c[i / 4], 0x4b000000u, 0x7440u | (unsigned)(i % 4))) -
               (8388608.0f + (float)BIAS);
}

// Bits shift..shift + 3 of each byte of a run, the codes of the 4-bit formats.
KP_DEVICE void kp_qnibble_codes(const kp_qrun8 &q, int shift, uint32_t c[2]) {
#pragma unroll
    for (int k = 0; k < 2; k++) c[k] = (q.w[k] >> shift) & 0x0f0f0f0fu;
}

// A product's result to dst[at], dst of kp_qmv_args::dst_dtype.
KP_DEVICE void kp_qmv_store(void *dst, int dtype, kp_idx at, float v) {
    if (dtype == 0)
        ((float *)dst)[at] = v;
    else if (dtype == 1)
        ((kp_f16 *)dst)[at] = kp_f32_to_f16(v);
    else
        ((kp_bf16 *)dst)[at] = kp_f32_to_bf16(v);
}

// Byte k of v, as an unsigned value.
KP_DEVICE int kp_qbyte(uint32_t v, int k) { return (int)((v >> (8 * k)) & 0xffu); }

// Bits 0..3 of x to bit 4 of bytes 0..3.
KP_DEVICE uint32_t kp_qspread4(uint32_t x) {
    return ((x & 1u) << 4) | ((x & 2u) << 11) | ((x & 4u) << 18) | ((x & 8u) << 25);
}

// The IQ4_NL table (KP_IQ4NL_VALUES) as bytes, entries 0-3, 4-7, 8-11, 12-15.
#define KP_IQ4_T0 0xbfad9881u
#define KP_IQ4_T1 0xf6eaddcfu
#define KP_IQ4_T2 0x26190d01u
#define KP_IQ4_T3 0x71594535u

// The table entries of the eight nibbles of v (bytes b0..b3): *lo gets those
// of the low nibbles of b0..b3, *hi those of the high nibbles, as signed
// bytes.
#if KP_HIP
// HIP's __byte_perm picks each byte out of a local array, which the
// compiler placed in scratch memory (16 bytes in every IQ4 kernel) or LDS.
// v_perm_b32 takes a selector byte (0-3: bytes of its second operand, 4-7:
// of its first) a result byte.
// The entries of four indices, one a byte (0-15).
KP_DEVICE uint32_t kp_qiq4_lookup4(uint32_t idx) {
    const uint32_t sel = idx & 0x07070707u;
    const uint32_t low = __builtin_amdgcn_perm(KP_IQ4_T1, KP_IQ4_T0, sel);   // entries 0-7
    const uint32_t high = __builtin_amdgcn_perm(KP_IQ4_T3, KP_IQ4_T2, sel);  // entries 8-15
    return __builtin_amdgcn_perm(high, low, 0x03020100u | ((idx & 0x08080808u) >> 1));
}
KP_DEVICE void kp_qiq4_lookup(uint32_t v, int *lo, int *hi) {
    *lo = (int)kp_qiq4_lookup4(v & 0x0f0f0f0fu);
    *hi = (int)kp_qiq4_lookup4((v >> 4) & 0x0f0f0f0fu);
}
#else
// __byte_perm reads the low three bits of each selector nibble.
KP_DEVICE void kp_qiq4_lookup(uint32_t v, int *lo, int *hi) {
    const uint32_t pick_high = 0x32103210u | ((v & 0x88888888u) >> 1);
    uint32_t t[2];
#pragma unroll
    for (int i = 0; i < 2; i++) {
        const uint32_t sel = v >> (16 * i);
        const uint32_t low = __byte_perm(KP_IQ4_T0, KP_IQ4_T1, sel);
        const uint32_t high = __byte_perm(KP_IQ4_T2, KP_IQ4_T3, sel);
        t[i] = __byte_perm(low, high, pick_high >> (16 * i));
    }
    *lo = (int)__byte_perm(t[0], t[1], 0x6420);
    *hi = (int)__byte_perm(t[0], t[1], 0x7531);
}
#endif

// Signed 8-bit dot product of four byte lanes, accumulated into c.
KP_DEVICE int kp_dp4a(int a, int b, int c) {
#if !KP_HIP
    return __dp4a(a, b, c);
#elif defined(__gfx906__) || defined(__gfx908__) || defined(__gfx90a__) || \
    defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__) || defined(__gfx1030__)
    return __builtin_amdgcn_sdot4(a, b, c, false);
#elif defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
    return __builtin_amdgcn_sudot4(true, a, true, b, c, false);
#else
    // No dot instruction (gfx900): four multiply-adds.
    for (int k = 0; k < 4; k++)
        c += (int)(int8_t)(a >> (8 * k)) * (int)(int8_t)(b >> (8 * k));
    return c;
#endif
}

// ---------------------------------------------------------------------------
// One 32-element sub-block ("item") in the form the mat-vec consumes:
//   w[e] = scale(e) * (q[e] - bias) + offset(e)     for e = 0..31,
// q as 32 bytes in 8 ints (element e in byte e%4 of q[e/4]), signed for
// Q8 and IQ4, otherwise unsigned below 128 so a signed dot product reads
// them right; bias a per-format constant, applied to the integer sums (as
// bias * sum(a)); scale and offset per 16 elements (lo: e < 16, hi: e >=
// 16). Formats whose scale and offset cover all 32 set lo == hi.
struct kp_qitem {
    int q[8];
    float scale_lo, scale_hi;
    float offset_lo, offset_hi;
};

template <int F> struct kp_qdecode;

// The shared half of the 32-element formats with 4-bit nibbles: element j
// and 16 + j in byte j of qs.
template <int A> KP_DEVICE void kp_qnibbles(const uint8_t *qs, int lo[4], int hi[4]) {
    uint32_t w[4];
    kp_qld_run<A, 4>(qs, w);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t v = w[k];
        lo[k] = (int)(v & 0x0f0f0f0fu);
        hi[k] = (int)((v >> 4) & 0x0f0f0f0fu);
    }
}

// Words t and 4 + t of kp_qnibbles' result: the nibbles of word t of qs.
template <int A> KP_DEVICE void kp_qnibble_quad(const uint8_t *qs, int t, int &lo, int &hi) {
    const uint32_t v = kp_qld32<A>(qs + 4 * t);
    lo = (int)(v & 0x0f0f0f0fu);
    hi = (int)((v >> 4) & 0x0f0f0f0fu);
}

template <> struct kp_qdecode<KP_QF_Q4_0> {
    static constexpr int elems = 32, bytes = (int)sizeof(kp_block_q4_0);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 8;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const float d = kp_qhalf(b);
        uint32_t c[2];
        kp_qnibble_codes(kp_qld8<align>(b + 2 + 8 * (g & 1)), g < 2 ? 0 : 4, c);
        float v[8];
        kp_qcodes8<8>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(v[i], d);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_qnibbles<align>(b + 2, it.q, it.q + 4);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_qnibble_quad<align>(b + 2, t, lo, hi);
    }
};

template <> struct kp_qdecode<KP_QF_Q4_1> {
    static constexpr int elems = 32, bytes = (int)sizeof(kp_block_q4_1);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = true;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const float d = kp_qhalf(b), m = kp_qhalf(b + 2);
        uint32_t c[2];
        kp_qnibble_codes(kp_qld8<align>(b + 4 + 8 * (g & 1)), g < 2 ? 0 : 4, c);
        float v[8];
        kp_qcodes8<0>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qadd(kp_qmul(v[i], d), m);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = kp_qhalf(b + 2);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_qnibbles<align>(b + 4, it.q, it.q + 4);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_qnibble_quad<align>(b + 4, t, lo, hi);
    }
};

// Q5_0/Q5_1: nibbles plus bit e of the 32-bit qh as bit 4 of element e.
template <int A> KP_DEVICE void kp_q5_item(const uint8_t *qh_p, const uint8_t *qs, int *q) {
    const uint32_t qh = kp_qld32<A>(qh_p);
    kp_qnibbles<A>(qs, q, q + 4);
#pragma unroll
    for (int k = 0; k < 4; k++) {
        q[k] |= (int)kp_qspread4(qh >> (4 * k));
        q[4 + k] |= (int)kp_qspread4(qh >> (16 + 4 * k));
    }
}
template <int A> KP_DEVICE void kp_q5_quad(const uint8_t *qh_p, const uint8_t *qs, int t, int &lo, int &hi) {
    const uint32_t qh = kp_qld32<A>(qh_p);
    kp_qnibble_quad<A>(qs, t, lo, hi);
    lo |= (int)kp_qspread4(qh >> (4 * t));
    hi |= (int)kp_qspread4(qh >> (16 + 4 * t));
}
// Group g's codes (kp_qcodes8) of Q5_0/Q5_1.
template <int A> KP_DEVICE void kp_q5_codes(const uint8_t *qh_p, const uint8_t *qs_p, int g, uint32_t c[2]) {
    const uint32_t qh = kp_qld32<A>(qh_p);
    kp_qnibble_codes(kp_qld8<A>(qs_p + 8 * (g & 1)), g < 2 ? 0 : 4, c);
#pragma unroll
    for (int k = 0; k < 2; k++) c[k] |= kp_qspread4(qh >> (8 * g + 4 * k));
}

template <> struct kp_qdecode<KP_QF_Q5_0> {
    static constexpr int elems = 32, bytes = (int)sizeof(kp_block_q5_0);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 16;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const float d = kp_qhalf(b);
        uint32_t c[2];
        kp_q5_codes<align>(b + 2, b + 6, g, c);
        float v[8];
        kp_qcodes8<16>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(v[i], d);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_q5_item<align>(b + 2, b + 6, it.q);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_q5_quad<align>(b + 2, b + 6, t, lo, hi);
    }
};

template <> struct kp_qdecode<KP_QF_Q5_1> {
    static constexpr int elems = 32, bytes = (int)sizeof(kp_block_q5_1);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = true;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const float d = kp_qhalf(b), m = kp_qhalf(b + 2);
        uint32_t c[2];
        kp_q5_codes<align>(b + 4, b + 8, g, c);
        float v[8];
        kp_qcodes8<0>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qadd(kp_qmul(v[i], d), m);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = kp_qhalf(b + 2);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_q5_item<align>(b + 4, b + 8, it.q);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_q5_quad<align>(b + 4, b + 8, t, lo, hi);
    }
};

// Formats with 32 int8 q per item: qs at byte `at` of the item.
template <int A> KP_DEVICE void kp_q8_item(const uint8_t *qs, int *q) {
#pragma unroll
    for (int k = 0; k < 8; k++) q[k] = 0;
    kp_qld_run<A, 8>(qs, (uint32_t *)q);
}
template <int A> KP_DEVICE void kp_q8_quad(const uint8_t *qs, int t, int &lo, int &hi) {
    lo = (int)kp_qld32<A>(qs + 4 * t);
    hi = (int)kp_qld32<A>(qs + 16 + 4 * t);
}
template <int A> KP_DEVICE void kp_q8_dequant8(const uint8_t *p, float d, float *y) {
    const kp_qrun8 qs = kp_qld8<A>(p);
    const uint32_t c[2] = {qs.w[0] ^ 0x80808080u, qs.w[1] ^ 0x80808080u};  // int8 + 128
    float v[8];
    kp_qcodes8<128>(c, v);
#pragma unroll
    for (int i = 0; i < 8; i++) y[i] = kp_qmul(v[i], d);
}

// Q8_0 and Q8_1: an f16 scale, then 32 int8 quants at QS (Q8_1 keeps its
// derived sum between them, which dequantization does not read).
template <typename Block, int QS> struct kp_q8_32_decode {
    static constexpr int elems = 32, bytes = (int)sizeof(Block);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        kp_q8_dequant8<align>(b + QS + 8 * g, kp_qhalf(b), y);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_q8_item<align>(b + QS, it.q);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_q8_quad<align>(b + QS, t, lo, hi);
    }
};
template <> struct kp_qdecode<KP_QF_Q8_0> : kp_q8_32_decode<kp_block_q8_0, 2> {};
template <> struct kp_qdecode<KP_QF_Q8_1> : kp_q8_32_decode<kp_block_q8_1, 4> {};

template <> struct kp_qdecode<KP_QF_Q8_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q8_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        kp_q8_dequant8<align>(b + 4 + 8 * g, *(const float *)b, y);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = *(const float *)b;
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        kp_q8_item<align>(b + 4 + 32 * s, it.q);
        scales(b, s, it);
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        kp_q8_quad<align>(b + 4 + 32 * s, t, lo, hi);
    }
};

// The IQ4 codes (table entries + 128, kp_qcodes8) of the nibbles at bit
// `shift` (0 or 4) of each byte of a run. The eight nibbles are gathered
// into one word first (the run's first word's in its low nibbles, the
// second's in its high ones), so one lookup gives them all; a lookup of
// each word used half of what it derived.
KP_DEVICE void kp_qiq4_codes(const kp_qrun8 &q, int shift, uint32_t c[2]) {
    const uint32_t n = ((q.w[0] >> shift) & 0x0f0f0f0fu) | (((q.w[1] >> shift) & 0x0f0f0f0fu) << 4);
    int lo, hi;
    kp_qiq4_lookup(n, &lo, &hi);
    c[0] = (uint32_t)lo ^ 0x80808080u;
    c[1] = (uint32_t)hi ^ 0x80808080u;
}

template <> struct kp_qdecode<KP_QF_IQ4_NL> {
    static constexpr int elems = 32, bytes = (int)sizeof(kp_block_iq4_nl);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const float d = kp_qhalf(b);
        uint32_t c[2];
        kp_qiq4_codes(kp_qld8<align>(b + 2 + 8 * (g & 1)), g < 2 ? 0 : 4, c);
        float v[8];
        kp_qcodes8<128>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(d, v[i]);
    }
    KP_DEVICE static void item(const uint8_t *b, int, kp_qitem &it) {
        uint32_t w[4];
        kp_qld_run<align, 4>(b + 2, w);
#pragma unroll
        for (int k = 0; k < 4; k++) kp_qiq4_lookup(w[k], &it.q[k], &it.q[4 + k]);
        scales(b, 0, it);
    }
    KP_DEVICE static void scales(const uint8_t *b, int, kp_qitem &it) {
        it.scale_lo = it.scale_hi = kp_qhalf(b);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void quad(const uint8_t *b, int, int t, int &lo, int &hi) {
        kp_qiq4_lookup(kp_qld32<align>(b + 2 + 4 * t), &lo, &hi);
    }
};

template <> struct kp_qdecode<KP_QF_IQ4_XS> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_iq4_xs);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = false;
    static constexpr int bias = 0;
    KP_DEVICE static float scale(const uint8_t *b, int s) {
        const int low = (b[4 + s / 2] >> (4 * (s % 2))) & 0xf;
        const int high = (*(const uint16_t *)(b + 2) >> (2 * s)) & 3;
        return kp_qmul(kp_qhalf(b), (float)((low | (high << 4)) - 32));
    }
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int s = g / 4, e = 8 * (g % 4);  // sub-block, element in it
        const float dl = scale(b, s);
        uint32_t c[2];
        kp_qiq4_codes(kp_qld8<align>(b + 8 + 16 * s + (e & 15)), e < 16 ? 0 : 4, c);
        float v[8];
        kp_qcodes8<128>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(dl, v[i]);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
#pragma unroll
        for (int k = 0; k < 4; k++)
            kp_qiq4_lookup(kp_qld32<align>(b + 8 + 16 * s + 4 * k), &it.q[k], &it.q[4 + k]);
        scales(b, s, it);
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        it.scale_lo = it.scale_hi = scale(b, s);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        kp_qiq4_lookup(kp_qld32<align>(b + 8 + 16 * s + 4 * t), &lo, &hi);
    }
};

// Q2_K and Q3_K share the bit layout of q: element 32 s + l of the block
// (s = 4 n + j) is bits 2j..2j+1 of qs[32 n + l].
template <> struct kp_qdecode<KP_QF_Q2_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q2_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = true, has_offset = true;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int e = 8 * g, n = e / 128, j = (e % 128) / 32, l = e % 32;
        const float d = kp_qhalf(b + 80), dmin = kp_qhalf(b + 82);
        const int sc = b[e / 16];
        const float dl = kp_qmul(d, (float)(sc & 0xf)), ml = kp_qmul(dmin, (float)(sc >> 4));
        const kp_qrun8 q = kp_qld8<align>(b + 16 + 32 * n + l);
        const uint32_t c[2] = {(q.w[0] >> (2 * j)) & 0x03030303u, (q.w[1] >> (2 * j)) & 0x03030303u};
        float v[8];
        kp_qcodes8<0>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qsub(kp_qmul(dl, v[i]), ml);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            it.q[k] = word(b, s, k);
        scales(b, s, it);
    }
    KP_DEVICE static int word(const uint8_t *b, int s, int k) {
        return (int)((kp_qld32<align>(b + 16 + 32 * (s / 4) + 4 * k) >> (2 * (s % 4))) & 0x03030303u);
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        const float d = kp_qhalf(b + 80), dmin = kp_qhalf(b + 82);
        const int lo = b[2 * s], hi = b[2 * s + 1];
        it.scale_lo = kp_qmul(d, (float)(lo & 0xf));
        it.scale_hi = kp_qmul(d, (float)(hi & 0xf));
        it.offset_lo = -kp_qmul(dmin, (float)(lo >> 4));
        it.offset_hi = -kp_qmul(dmin, (float)(hi >> 4));
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        lo = word(b, s, t);
        hi = word(b, s, 4 + t);
    }
};

template <> struct kp_qdecode<KP_QF_Q3_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q3_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = true, has_offset = false;
    static constexpr int bias = 4;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int e = 8 * g, n = e / 128, j = (e % 128) / 32, l = e % 32;
        const float d = kp_qhalf(b + 108);
        const float dl = kp_qmul(d, (float)kp_q3_k_scale(e / 16, b + 96));
        const kp_qrun8 q = kp_qld8<align>(b + 32 + 32 * n + l), hm = kp_qld8<align>(b + l);
        uint32_t c[2];
#pragma unroll
        for (int k = 0; k < 2; k++) c[k] = (uint32_t)bits(q.w[k], hm.w[k], n, j);
        float v[8];
        kp_qcodes8<4>(c, v);  // q - (h ? 0 : 4) = (q | h << 2) - 4
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(dl, v[i]);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        const int n = s / 4, j = s % 4;
        uint32_t qw[8], hw[8];
        kp_qld_run<align, 8>(b + 32 + 32 * n, qw);
        kp_qld_run<align, 8>(b, hw);
#pragma unroll
        for (int k = 0; k < 8; k++) it.q[k] = bits(qw[k], hw[k], n, j);
        scales(b, s, it);
    }
    // Word k of sub-block s = 4n + j from word k of its 2-bit run and of the
    // high-bit mask.
    KP_DEVICE static int bits(uint32_t qw, uint32_t hw, int n, int j) {
        return (int)(((qw >> (2 * j)) & 0x03030303u) | (((hw >> (4 * n + j)) & 0x01010101u) << 2));
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        const float d = kp_qhalf(b + 108);
        it.scale_lo = kp_qmul(d, (float)kp_q3_k_scale(2 * s, b + 96));
        it.scale_hi = kp_qmul(d, (float)kp_q3_k_scale(2 * s + 1, b + 96));
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static int word(const uint8_t *b, int s, int k) {
        const int n = s / 4, j = s % 4;
        return bits(kp_qld32<align>(b + 32 + 32 * n + 4 * k), kp_qld32<align>(b + 4 * k), n, j);
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        lo = word(b, s, t);
        hi = word(b, s, 4 + t);
    }
};

// Q4_K/Q5_K: sub-block s holds the low (even s) or high (odd s) nibbles of
// qs[32 (s/2) .. 32 (s/2) + 31]; scale d * sc(s), offset -(dmin * m(s)).
KP_DEVICE void kp_qk4_scales(const uint8_t *b, int s, float *scale, float *offset) {
    int sc, m;
    kp_q_scale_min_k4(s, b + 4, &sc, &m);
    *scale = kp_qmul(kp_qhalf(b), (float)sc);
    *offset = kp_qmul(kp_qhalf(b + 2), (float)m);
}

template <> struct kp_qdecode<KP_QF_Q4_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q4_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = true;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int e = 8 * g, s = e / 32, l = e % 32;
        float d1, m1;
        kp_qk4_scales(b, s, &d1, &m1);
        uint32_t c[2];
        kp_qnibble_codes(kp_qld8<align>(b + 16 + 32 * (s / 2) + l), 4 * (s & 1), c);
        float v[8];
        kp_qcodes8<0>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qsub(kp_qmul(d1, v[i]), m1);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            it.q[k] = word(b, s, k);
        scales(b, s, it);
    }
    KP_DEVICE static int word(const uint8_t *b, int s, int k) {
        return (int)((kp_qld32<align>(b + 16 + 32 * (s / 2) + 4 * k) >> (4 * (s & 1))) & 0x0f0f0f0fu);
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        float m1;
        kp_qk4_scales(b, s, &it.scale_lo, &m1);
        it.scale_hi = it.scale_lo;
        it.offset_lo = it.offset_hi = -m1;
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        lo = word(b, s, t);
        hi = word(b, s, 4 + t);
    }
};

template <> struct kp_qdecode<KP_QF_Q5_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q5_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = false, has_offset = true;
    static constexpr int bias = 0;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int e = 8 * g, s = e / 32, l = e % 32;
        float d1, m1;
        kp_qk4_scales(b, s, &d1, &m1);
        const kp_qrun8 qh = kp_qld8<align>(b + 16 + l);
        uint32_t c[2];
        kp_qnibble_codes(kp_qld8<align>(b + 48 + 32 * (s / 2) + l), 4 * (s & 1), c);
#pragma unroll
        for (int k = 0; k < 2; k++) c[k] |= ((qh.w[k] >> s) & 0x01010101u) << 4;
        float v[8];
        kp_qcodes8<0>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qsub(kp_qmul(d1, v[i]), m1);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
#pragma unroll
        for (int k = 0; k < 8; k++) it.q[k] = word(b, s, k);
        scales(b, s, it);
    }
    KP_DEVICE static int word(const uint8_t *b, int s, int k) {
        const uint32_t lo =
            (kp_qld32<align>(b + 48 + 32 * (s / 2) + 4 * k) >> (4 * (s & 1))) & 0x0f0f0f0fu;
        const uint32_t h = (kp_qld32<align>(b + 16 + 4 * k) >> s) & 0x01010101u;
        return (int)(lo | (h << 4));
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        float m1;
        kp_qk4_scales(b, s, &it.scale_lo, &m1);
        it.scale_hi = it.scale_lo;
        it.offset_lo = it.offset_hi = -m1;
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        lo = word(b, s, t);
        hi = word(b, s, 4 + t);
    }
};

// Q6_K: element 128 n + 32 j + l: low 4 bits from ql[64 n + 32 (j & 1) + l]
// (low nibble for j < 2), high 2 bits = bits 2j..2j+1 of qh[32 n + l].
template <> struct kp_qdecode<KP_QF_Q6_K> {
    static constexpr int elems = 256, bytes = (int)sizeof(kp_block_q6_k);
    static constexpr int align = KP_QBLOCK_ALIGN(bytes), items = elems / 32;
    static constexpr bool split = true, has_offset = false;
    static constexpr int bias = 32;
    KP_DEVICE static void dequant8(const uint8_t *b, int g, float *y) {
        const int e = 8 * g, n = e / 128, j = (e % 128) / 32, l = e % 32;
        const float d = kp_qhalf(b + 208);
        const float dsc = kp_qmul(d, (float)(int8_t)b[192 + e / 16]);
        const kp_qrun8 ql = kp_qld8<align>(b + 64 * n + 32 * (j & 1) + l),
                       qh = kp_qld8<align>(b + 128 + 32 * n + l);
        uint32_t c[2];
#pragma unroll
        for (int k = 0; k < 2; k++) c[k] = (uint32_t)bits(ql.w[k], qh.w[k], j);
        float v[8];
        kp_qcodes8<32>(c, v);
#pragma unroll
        for (int i = 0; i < 8; i++) y[i] = kp_qmul(dsc, v[i]);
    }
    KP_DEVICE static void item(const uint8_t *b, int s, kp_qitem &it) {
        const int n = s / 4, j = s % 4;
        uint32_t lw[8], hw[8];
        kp_qld_run<align, 8>(b + 64 * n + 32 * (j & 1), lw);
        kp_qld_run<align, 8>(b + 128 + 32 * n, hw);
#pragma unroll
        for (int k = 0; k < 8; k++) it.q[k] = bits(lw[k], hw[k], j);
        scales(b, s, it);
    }
    // Word k of sub-block s = 4n + j from word k of its ql run and of its qh run.
    KP_DEVICE static int bits(uint32_t lw, uint32_t hw, int j) {
        return (int)(((lw >> (j < 2 ? 0 : 4)) & 0x0f0f0f0fu) | (((hw >> (2 * j)) & 0x03030303u) << 4));
    }
    KP_DEVICE static void scales(const uint8_t *b, int s, kp_qitem &it) {
        const float d = kp_qhalf(b + 208);
        it.scale_lo = kp_qmul(d, (float)(int8_t)b[192 + 2 * s]);
        it.scale_hi = kp_qmul(d, (float)(int8_t)b[192 + 2 * s + 1]);
        it.offset_lo = it.offset_hi = 0.0f;
    }
    KP_DEVICE static int word(const uint8_t *b, int s, int k) {
        const int n = s / 4, j = s % 4;
        return bits(kp_qld32<align>(b + 64 * n + 32 * (j & 1) + 4 * k), kp_qld32<align>(b + 128 + 32 * n + 4 * k), j);
    }
    KP_DEVICE static void quad(const uint8_t *b, int s, int t, int &lo, int &hi) {
        lo = word(b, s, t);
        hi = word(b, s, 4 + t);
    }
};

// scale * sum(q * a) + offset * sum(a) over one item, from the two halves'
// integer dot products and the activations' metadata (a kp_qmv_meta as two
// words: binary16-rounded d, then the sums of a's halves). With BIAS the q
// still hold the format's bias, which is subtracted here, exactly.
template <typename D, bool BIAS = true>
KP_DEVICE float kp_qitem_dot(float scale_lo, float scale_hi, float offset_lo, float offset_hi,
                             int dot_lo, int dot_hi, uint2 meta) {
    const float d = __uint_as_float(meta.x);
    const int sum_lo = (int)(int16_t)(meta.y & 0xffffu), sum_hi = (int)(int16_t)(meta.y >> 16);
    float v;
    if (BIAS && D::bias) {  // exact: sum((q - bias) * a) = sum(q * a) - bias * sum(a)
        dot_lo -= D::bias * sum_lo;
        dot_hi -= D::bias * sum_hi;
    }
    if (D::split) {
        v = scale_lo * (float)dot_lo + scale_hi * (float)dot_hi;
        if (D::has_offset)
            v += offset_lo * (float)sum_lo + offset_hi * (float)sum_hi;
    } else {
        v = scale_lo * (float)(dot_lo + dot_hi);
        if (D::has_offset)
            v += offset_lo * (float)(sum_lo + sum_hi);
    }
    return d * v;
}
