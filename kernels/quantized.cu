// quantized: GGUF block formats. dequantize and get_rows (one kernel per
// format and destination dtype, ids optional), quantize (the Q4/Q5/Q8
// formats from f32/f16/bf16), and the mat-vec of token generation:
// activations quantized to Q8_1 into a workspace (qmatvec_act_*), then
// integer dot products against the weights (qmatvec_<format>_b<batch>);
// the mat-mat of larger batches takes the same activations
// (qmatmul_<format>_n<tile>, kp_qmatmul.cuh), and so do the
// mixture-of-experts products (qmoe_*: a mat-vec per (token, slot) pair, or
// each expert's pairs listed and multiplied as a mat-mat).
//
// Kernel families by name:
//   dequantize_<fmt>_<f32|f16|bf16>   quantize_<fmt>_<f32|f16|bf16>
//   qmatvec_act_<f32|f16|bf16>        qmatvec_<fmt>_b<1|2|4|8>
//   qmatmul_<fmt>_n<16|64>             qmoe_<fmt>   qmoe_group   qmoe_mm_<fmt>_n<16|64>
#include "kp_elementwise.cuh"
#include "kp_async.cuh"
#include "kp_atomics.cuh"
#include "kp_quant.cuh"
#include "kp_quant_abi.h"
#include "kp_qmatmul.cuh"
#include "kp_qmatvec_mma.cuh"

typedef unsigned long long kp_status_word;

// ------------------------------------------------------------ dequantize

// Eight consecutive elements (a group) at a time: all formats keep 8-element
// groups inside one scale group, and dst gets 16- or 32-byte stores,
// coalesced across a warp. A quantized group is only a few bytes, so a
// thread takes U groups per step: one grid stride apart for f32 dst; for
// 16-bit dst, each block's U x blockDim groups of a step are consecutive
// (H100, 4096 x 14336: 1 to 4 points of copy more for most formats, e.g.
// Q8_0 88 -> 91, IQ4_NL 84 -> 88; that order took f32 dst of Q5_1, Q8_1
// and Q8_K from 87 to 70, and a grid of one resident wave lost 4 to 8
// points everywhere). The branches in
// each group (the tail, ids, the dst layout) keep a group's loads behind
// the previous group's stores; a straight-line step with non-coherent loads,
// which issues all U groups' loads first, measured no faster for f16 dst
// and 20 points of copy slower for f32 (its stores then come in bursts).
// The group index is split into row and column in the narrowest type that
// holds it (a 64-bit division per group costs more than the memory traffic).

// A wave's f32 stores of its lanes' groups (see kp_dequant_store_wave): in
// pass `pass`, this lane writes half lane % 2 of the group that lane
// kp_dequant_wave_from(pass) holds (its eight values y there).
KP_DEVICE int kp_dequant_wave_from(int pass) {
    return pass * (KP_WAVE_SIZE / 2) + (int)(threadIdx.x % KP_WAVE_SIZE) / 2;
}
KP_DEVICE float4 kp_dequant_wave_half(const float *y, int pass) {
    const int from = kp_dequant_wave_from(pass), odd = (int)threadIdx.x & 1;
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const float lo = kp_shfl(y[k], from), hi = kp_shfl(y[4 + k], from);
        v[k] = odd ? hi : lo;
    }
    return make_float4(v[0], v[1], v[2], v[3]);
}

// f32 dst with dense rows, where a wave's lanes hold the consecutive groups
// i - lane .. (lane = the lane's index; all of them below total): stores
// them in two passes of 16 bytes a lane, each pass W / 2 whole groups that
// lie contiguous across the lanes, as a 16-bit dst's single pass does (lane
// t writes half t % 2 of the pass's group t / 2, fetched with shuffles).
// Each lane storing its own 32 bytes as two 16-byte halves left every store
// instruction's span half written and took 70-92 % of copy on an H100
// (4096 x 14336, by format); this takes 89-93 % in kernels bounded to
// their 256-thread blocks (86-92 % unbounded, at 52 registers). (Pairs of
// lanes swapping halves, so each instruction writes whole 32-byte sectors
// 64 bytes apart, took 56-62 %.) r and c are the lane's own group's row and
// first column; a pass fetches those of the group it writes. Returns false,
// storing nothing, where the wave's groups run past total.
template <typename T, typename I>
KP_DEVICE bool kp_dequant_store_wave(const kp_qdequant_args &a, T *dst, I i, I total, I r, I c,
                                     const float *y) {
    if constexpr (sizeof(T) != 4)
        return false;
    const int lane = (int)(threadIdx.x % KP_WAVE_SIZE);
    const I first = i - (I)lane;
    if (first + KP_WAVE_SIZE > total)
        return false;
#pragma unroll
    for (int pass = 0; pass < 2; pass++) {
        const int from = kp_dequant_wave_from(pass);
        const float4 v = kp_dequant_wave_half(y, pass);
        const I row = kp_shfl(r, from), col = kp_shfl(c, from) + (I)(4 * (lane & 1));
        T *o = dst + (kp_idx)row * (kp_idx)a.dst_row_stride + (kp_idx)col;
        *reinterpret_cast<float4 *>(o) = v;
    }
    return true;
}

// A group's eight values to o (16-byte aligned) in 16-byte stores.
template <typename T> KP_DEVICE void kp_dequant_store_vec(T *o, const float *y) {
    constexpr int N = 16 / (int)sizeof(T);
#pragma unroll
    for (int h = 0; h < 8 / N; h++) {
        kp_vec<T, N> v;
#pragma unroll
        for (int k = 0; k < N; k += 2) kp_store2<T>(y[h * N + k], y[h * N + k + 1], v.v + k);
        reinterpret_cast<kp_vec<T, N> *>(o)[h] = v;
    }
}

template <int F, typename T, typename I>
KP_DEVICE void kp_dequant_groups(const kp_qdequant_args &a, const uint8_t *__restrict__ src,
                                 T *__restrict__ dst, const void *__restrict__ ids,
                                 kp_status_word *status, I total, I groups) {
    typedef kp_qdecode<F> D;
    constexpr int U = 4;
    constexpr bool block_runs = sizeof(T) == 2;
    const I stride = (I)kp_thread_count();
    const I first = block_runs ? (I)blockIdx.x * U * (I)blockDim.x + (I)threadIdx.x
                               : (I)kp_thread_index();
    const I step = block_runs ? (I)blockDim.x : stride;  // between a thread's U groups
    for (I base = first; base < total; base += U * stride) {
#pragma unroll
        for (int u = 0; u < U; u++) {
            const I i = base + (I)u * step;
            if (i >= total)
                break;
            const I r = i / groups, c = (i - r * groups) * 8;
            kp_idx sr = r;
            bool valid = true;
            if (a.ids_kind) {
                const kp_idx at = (kp_idx)r * (kp_idx)a.ids_stride;
                const kp_idx id = a.ids_kind == 1 ? (kp_idx)((const uint32_t *)ids)[at]
                                                  : (kp_idx)((const int64_t *)ids)[at];
                valid = id < (kp_idx)a.src_rows;  // a negative i64 id wraps to a huge one
                if (!valid && c == 0 && status)
                    kp_atomic_max_u64(status, ~(kp_status_word)r);
                sr = id;
            }
            float y[8];
            if (valid) {
                const uint8_t *b = src + sr * (kp_idx)a.src_row_stride + c / D::elems * D::bytes;
                D::dequant8(b, (int)(c % D::elems) / 8, y);
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++) y[k] = 0.0f;
            }
            if (!block_runs && a.dst_vector && kp_dequant_store_wave(a, dst, i, total, r, c, y))
                continue;
            T *o = dst + (kp_idx)r * (kp_idx)a.dst_row_stride + (kp_idx)c * (kp_idx)a.dst_col_stride;
            if (a.dst_vector) {
                kp_dequant_store_vec(o, y);
            } else {
#pragma unroll
                for (int k = 0; k < 8; k++) o[k * (kp_idx)a.dst_col_stride] = kp_store<T>(y[k]);
            }
        }
    }
}

// A whole matrix with dense rows on both sides (kp_qdequant_args::tiled):
// a block takes KP_DEQUANT_TILE consecutive elements, copies their
// quantized bytes into shared memory in 16-byte pieces (a tile's last bytes
// in 2-byte ones), then decodes four groups a thread from there, lanes on
// consecutive groups. Decoding straight from global memory (kp_dequant_groups)
// reads each group's few bytes with several narrow loads, each waited on in
// turn; here a tile's loads are all in flight at once and coalesced.
template <int F, typename T>
KP_DEVICE void kp_dequant_tiles(const kp_qdequant_args &a, const uint8_t *__restrict__ src,
                                T *__restrict__ dst) {
    typedef kp_qdecode<F> D;
    constexpr int per_tile = KP_DEQUANT_TILE / D::elems;  // quantized blocks
    constexpr int tile_bytes = KP_DEQUANT_TILE_BYTES(D::elems, D::bytes);
    constexpr int groups = D::elems / 8, U = KP_DEQUANT_TILE / 8 / KP_QUANT_BLOCK;
    static_assert(tile_bytes % 16 == 0 && D::bytes % 2 == 0, "a tile is whole 16-byte pieces");
    extern __shared__ __align__(16) uint8_t kp_dequant_stage[];
    const kp_idx nblocks = (kp_idx)a.rows * ((kp_idx)a.cols / D::elems);
    const int lane = (int)(threadIdx.x % KP_WAVE_SIZE);
    // A thread's groups are the same group `sub` of blocks first, first +
    // KP_QUANT_BLOCK / groups, ...: what dequant8 derives from the group
    // (shifts, scale indices, offsets in the block) is the same at every step
    // (and unsigned, so the compiler's divisions are shifts).
    static_assert(KP_QUANT_BLOCK % groups == 0, "a thread keeps its group of a block");
    const int sub = (int)(threadIdx.x % (unsigned)groups), first = (int)(threadIdx.x / (unsigned)groups);
    for (kp_idx k0 = (kp_idx)blockIdx.x * per_tile; k0 < nblocks; k0 += (kp_idx)gridDim.x * per_tile) {
        const int n = nblocks - k0 < per_tile ? (int)(nblocks - k0) : per_tile;
        const int n_bytes = n * D::bytes, whole = n_bytes / 16 * 16;
        const uint8_t *from = src + k0 * D::bytes;
#pragma unroll
        for (int u = 0; u < (tile_bytes / 16 + KP_QUANT_BLOCK - 1) / KP_QUANT_BLOCK; u++) {
            const int p = 16 * ((int)threadIdx.x + u * KP_QUANT_BLOCK);
            if (p < whole) kp_async_copy16(kp_dequant_stage + p, from + p);
        }
        kp_async_commit();
        if (2 * (int)threadIdx.x < n_bytes - whole) {  // under 16 bytes, in 2-byte pieces
            const int p = whole + 2 * (int)threadIdx.x;
            *(uint16_t *)(kp_dequant_stage + p) = *(const uint16_t *)(from + p);
        }
        kp_async_wait<0>();
        __syncthreads();
        T *out = dst + k0 * D::elems;
        const int live = n * groups;  // groups of this tile
        auto group = [&](int u) {
            const int g = (int)threadIdx.x + u * KP_QUANT_BLOCK;
            // f32: a wave whose groups all exist stores them in whole
            // 16-byte runs across its lanes (every lane takes part).
            const bool wave = sizeof(T) == 4 && g - lane + KP_WAVE_SIZE <= live;
            if (!wave && g >= live)
                return;
            float y[8];
            D::dequant8(kp_dequant_stage + (first + u * (KP_QUANT_BLOCK / groups)) * D::bytes, sub, y);
            if constexpr (sizeof(T) == 4) {
                if (wave) {
                    // the wave's groups are contiguous: no rows and columns
                    // to fetch as kp_dequant_store_wave does (H200: 10 points
                    // of copy faster)
#pragma unroll
                    for (int pass = 0; pass < 2; pass++)
                        *reinterpret_cast<float4 *>(out + 8 * (kp_idx)(g - lane + kp_dequant_wave_from(pass)) +
                                                    4 * (lane & 1)) = kp_dequant_wave_half(y, pass);
                    return;
                }
            }
            kp_dequant_store_vec(out + 8 * (kp_idx)g, y);
        };
        // H200, kp-bench, 4096 x 14336, % of copy: f32 dst with the groups
        // unrolled (their stores then leave in bursts) 46-88 by format, one
        // group at a time 89-94; 16-bit dst unrolled 60-95, one at a time
        // 1-5 points lower for most formats (up to 2 higher for Q5_*)
        // (measured before kp_qcodes8).
        if constexpr (sizeof(T) == 4) {
#pragma unroll 1
            for (int u = 0; u < U; u++) group(u);
        } else if (n == per_tile && F != KP_QF_IQ4_NL) {
            // Every group exists: no branch between them, so the four share
            // what dequant8 derives from `sub` (H200, f16, % of copy: Q3_K
            // 79 -> 92, IQ4_XS 83 -> 91, Q6_K 88 -> 93; IQ4_NL took 37
            // registers and went from 90.5 to 86, so it keeps the other form).
#pragma unroll
            for (int u = 0; u < U; u++) {
                float y[8];
                D::dequant8(kp_dequant_stage + (first + u * (KP_QUANT_BLOCK / groups)) * D::bytes, sub, y);
                kp_dequant_store_vec(out + 8 * (kp_idx)((int)threadIdx.x + u * KP_QUANT_BLOCK), y);
            }
        } else {
#pragma unroll
            for (int u = 0; u < U; u++) group(u);
        }
        __syncthreads();  // the tile is decoded before the next one's copies land
    }
}

template <int F, typename T>
KP_DEVICE void kp_dequant_rows(const kp_qdequant_args &a, const uint8_t *src, T *dst,
                               const void *ids, kp_status_word *status) {
    if (a.tiled) {
        kp_dequant_tiles<F, T>(a, src, dst);
        return;
    }
    const kp_idx groups = (kp_idx)a.cols / 8, total = (kp_idx)a.rows * groups;
    // 32-bit indices while every index a thread forms (up to total + 4 grid strides) fits
    if (total + 4 * kp_thread_count() <= 0xffffffffull)
        kp_dequant_groups<F, T, uint32_t>(a, src, dst, ids, status, (uint32_t)total, (uint32_t)groups);
    else
        kp_dequant_groups<F, T, kp_idx>(a, src, dst, ids, status, total, groups);
}

#define KP_DEQUANT(ID, NAME, TNAME, T)                                                            \
    KP_KERNEL void __launch_bounds__(KP_QUANT_BLOCK)                                              \
        dequantize_##NAME##_##TNAME(kp_qdequant_args a, const uint8_t *src, T *dst,               \
                                    const void *ids, kp_status_word *status) {                   \
        kp_dequant_rows<KP_QF_##ID, T>(a, src, dst, ids, status);                                \
    }
#define KP_DEQUANT_ALL(ID, NAME)        \
    KP_DEQUANT(ID, NAME, f32, float)    \
    KP_DEQUANT(ID, NAME, f16, kp_f16)   \
    KP_DEQUANT(ID, NAME, bf16, kp_bf16)
KP_QFORMAT_SUFFIXES(KP_DEQUANT_ALL)

// -------------------------------------------------------------- quantize
//
// Eight threads per 32-element block, four elements each (thread k holds
// elements 4k .. 4k+3); the block's statistics are combined with shuffles
// inside the group of eight. Loops run uniformly over the thread block so
// that every lane of a wave takes part in every shuffle.

#define KP_QGROUP 8

template <typename T> KP_DEVICE float kp_qload(const T *p) { return (float)kp_load(*p); }

// The first element (in block order) of largest magnitude, as ggml picks it:
// `better` prefers a strictly larger |v|, and on equal |v| the lower index.
struct kp_qpick {
    float mag, value;
    int index;
};
KP_DEVICE kp_qpick kp_qpick_max_abs(kp_qpick p) {
#pragma unroll
    for (int m = 1; m < KP_QGROUP; m <<= 1) {
        kp_qpick o;
        o.mag = kp_shfl_xor(p.mag, m, KP_QGROUP);
        o.value = kp_shfl_xor(p.value, m, KP_QGROUP);
        o.index = kp_shfl_xor(p.index, m, KP_QGROUP);
        if (o.mag > p.mag || (o.mag == p.mag && o.index < p.index))
            p = o;
    }
    return p;
}
// The first element of smallest (sign < 0) or largest (sign > 0) value:
// ggml's strict comparisons keep the first of equal values (so -0 vs +0).
KP_DEVICE kp_qpick kp_qpick_extreme(kp_qpick p, bool largest) {
#pragma unroll
    for (int m = 1; m < KP_QGROUP; m <<= 1) {
        kp_qpick o;
        o.value = kp_shfl_xor(p.value, m, KP_QGROUP);
        o.index = kp_shfl_xor(p.index, m, KP_QGROUP);
        o.mag = 0.0f;
        const bool beats = largest ? o.value > p.value : o.value < p.value;
        if (beats || (o.value == p.value && o.index < p.index))
            p = o;
    }
    return p;
}
KP_DEVICE uint32_t kp_qor_group(uint32_t v) {
#pragma unroll
    for (int m = 1; m < KP_QGROUP; m <<= 1) v |= kp_shfl_xor(v, m, KP_QGROUP);
    return v;
}
KP_DEVICE int kp_qsum_group(int v, int width) {
    for (int m = 1; m < width; m <<= 1) v += kp_shfl_xor(v, m, width);
    return v;
}
KP_DEVICE uint16_t kp_qto_half(float f) { return kp_f32_to_f16(f).bits; }
KP_DEVICE float kp_qround_half(float f) {
    kp_f16 h;
    h.bits = kp_qto_half(f);
    return kp_f16_to_f32(h);
}
KP_DEVICE void kp_qstore16(uint8_t *p, uint16_t v) { *(uint16_t *)p = v; }
// 32 bits to a 2-byte aligned address.
KP_DEVICE void kp_qstore32_a2(uint8_t *p, uint32_t v) {
    ((uint16_t *)p)[0] = (uint16_t)v;
    ((uint16_t *)p)[1] = (uint16_t)(v >> 16);
}
KP_DEVICE uint32_t kp_qpack4(const int *q, int shift) {
    return (uint32_t)(q[0] & 0xff) << shift | (uint32_t)(q[1] & 0xff) << (shift + 8) |
           (uint32_t)(q[2] & 0xff) << (shift + 16) | (uint32_t)(q[3] & 0xff) << (shift + 24);
}

// Q8_0 / Q8_1 and the activations: d = max|x| / 127, q = round(x * (1/d)).
KP_DEVICE float kp_q8_scale(const float *x, int *q) {
    float amax = 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) amax = fmaxf(amax, fabsf(x[k]));
#pragma unroll
    for (int m = 1; m < KP_QGROUP; m <<= 1) amax = fmaxf(amax, kp_shfl_xor(amax, m, KP_QGROUP));
    const float d = __fdiv_rn(amax, 127.0f);
    const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) q[k] = (int)roundf(kp_qmul(x[k], id));
    return d;
}

// Writes this thread's part of block `b` (lane k of the group of eight).
template <int F> struct kp_qencode;

template <> struct kp_qencode<KP_QF_Q8_0> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        const float d = kp_q8_scale(x, q);
        if (!active) return;
        if (lane == 0) kp_qstore16(b, kp_qto_half(d));
        kp_qstore32_a2(b + 2 + 4 * lane, kp_qpack4(q, 0));
    }
};
template <> struct kp_qencode<KP_QF_Q8_1> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        const float d = kp_q8_scale(x, q);
        const int sum = kp_qsum_group(q[0] + q[1] + q[2] + q[3], KP_QGROUP);
        if (!active) return;
        if (lane == 0) {
            kp_qstore16(b, kp_qto_half(d));
            kp_qstore16(b + 2, kp_qto_half(kp_qmul((float)sum, d)));
        }
        *(uint32_t *)(b + 4 + 4 * lane) = kp_qpack4(q, 0);
    }
};

// Q4_0 / Q5_0: d = m / -levels where m is the first element of largest
// magnitude; q = min(top, trunc(x * (1/d) + levels + 0.5)).
KP_DEVICE float kp_qsym_scale(const float *x, int lane, float levels, int top, int *q) {
    kp_qpick p = {0.0f, 0.0f, 1 << 30};
#pragma unroll
    for (int k = 0; k < 4; k++)
        if (p.mag < fabsf(x[k])) p = {fabsf(x[k]), x[k], 4 * lane + k};
    p = kp_qpick_max_abs(p);
    const float d = __fdiv_rn(p.value, -levels);
    const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int v = (int)kp_qadd(kp_qmul(x[k], id), levels + 0.5f);
        q[k] = v < top ? v : top;
    }
    return d;
}
// Q4_1 / Q5_1: d = (max - min) / top, q = trunc((x - min) * (1/d) + 0.5),
// capped at top for Q4_1 (`cap`).
KP_DEVICE void kp_qasym_scale(const float *x, int lane, float top, bool cap, int *q, float *d_out,
                              float *min_out) {
    kp_qpick lo = {0.0f, 3.40282347e38f, 1 << 30}, hi = {0.0f, -3.40282347e38f, 1 << 30};
#pragma unroll
    for (int k = 0; k < 4; k++) {
        if (x[k] < lo.value) lo = {0.0f, x[k], 4 * lane + k};
        if (x[k] > hi.value) hi = {0.0f, x[k], 4 * lane + k};
    }
    lo = kp_qpick_extreme(lo, false);
    hi = kp_qpick_extreme(hi, true);
    const float d = __fdiv_rn(kp_qsub(hi.value, lo.value), top);
    const float id = d != 0.0f ? __fdiv_rn(1.0f, d) : 0.0f;
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const int v = (int)kp_qadd(kp_qmul(kp_qsub(x[k], lo.value), id), 0.5f);
        q[k] = cap && v > (int)top ? (int)top : v;
    }
    *d_out = d;
    *min_out = lo.value;
}

// Nibble-packed formats: byte j (< 16) = element j | element j + 16 << 4.
// Lanes 0-3 hold elements 0..15 and take the high nibbles from lane + 4.
KP_DEVICE uint32_t kp_qnibble_bytes(const int *q) {
    int hi[4];
#pragma unroll
    for (int k = 0; k < 4; k++) hi[k] = kp_shfl_xor(q[k], 4, KP_QGROUP);
    return (kp_qpack4(q, 0) & 0x0f0f0f0fu) | ((kp_qpack4(hi, 0) & 0x0f0f0f0fu) << 4);
}
// Q5: bit 4 of element e goes to bit e of qh.
KP_DEVICE uint32_t kp_qhigh_bits(const int *q, int lane) {
    uint32_t bits = 0;
#pragma unroll
    for (int k = 0; k < 4; k++) bits |= (uint32_t)((q[k] >> 4) & 1) << (4 * lane + k);
    return kp_qor_group(bits);
}

template <> struct kp_qencode<KP_QF_Q4_0> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        const float d = kp_qsym_scale(x, lane, 8.0f, 15, q);
        const uint32_t bytes = kp_qnibble_bytes(q);
        if (!active) return;
        if (lane == 0) kp_qstore16(b, kp_qto_half(d));
        if (lane < 4) kp_qstore32_a2(b + 2 + 4 * lane, bytes);
    }
};
template <> struct kp_qencode<KP_QF_Q5_0> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        const float d = kp_qsym_scale(x, lane, 16.0f, 31, q);
        const uint32_t qh = kp_qhigh_bits(q, lane), bytes = kp_qnibble_bytes(q);
        if (!active) return;
        if (lane == 0) {
            kp_qstore16(b, kp_qto_half(d));
            kp_qstore32_a2(b + 2, qh);
        }
        if (lane < 4) kp_qstore32_a2(b + 6 + 4 * lane, bytes);
    }
};
template <> struct kp_qencode<KP_QF_Q4_1> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        float d, m;
        kp_qasym_scale(x, lane, 15.0f, true, q, &d, &m);
        const uint32_t bytes = kp_qnibble_bytes(q);
        if (!active) return;
        if (lane == 0) *(uint32_t *)b = kp_qto_half(d) | (uint32_t)kp_qto_half(m) << 16;
        if (lane < 4) *(uint32_t *)(b + 4 + 4 * lane) = bytes;
    }
};
template <> struct kp_qencode<KP_QF_Q5_1> {
    KP_DEVICE static void run(const float *x, int lane, uint8_t *b, bool active) {
        int q[4];
        float d, m;
        kp_qasym_scale(x, lane, 31.0f, false, q, &d, &m);
        const uint32_t qh = kp_qhigh_bits(q, lane), bytes = kp_qnibble_bytes(q);
        if (!active) return;
        if (lane == 0) {
            *(uint32_t *)b = kp_qto_half(d) | (uint32_t)kp_qto_half(m) << 16;
            *(uint32_t *)(b + 4) = qh;
        }
        if (lane < 4) *(uint32_t *)(b + 8 + 4 * lane) = bytes;
    }
};

// Loads this thread's four elements (row r, columns c .. c+3) as f32.
template <typename T>
KP_DEVICE void kp_qload4(const T *src, kp_idx r, kp_idx c, int64_t row_stride, int64_t col_stride,
                         bool active, float *x) {
#pragma unroll
    for (int k = 0; k < 4; k++)
        x[k] = active ? kp_qload(src + r * (kp_idx)row_stride + (c + k) * (kp_idx)col_stride) : 0.0f;
}

template <int F, typename T>
KP_DEVICE void kp_quantize_rows(const kp_quantize_args &a, const T *src, uint8_t *dst) {
    constexpr int per_block = KP_QUANT_BLOCK / KP_QGROUP, bytes = kp_qdecode<F>::bytes;
    const kp_idx blocks_per_row = (kp_idx)a.cols / 32, total = (kp_idx)a.rows * blocks_per_row;
    const int lane = threadIdx.x % KP_QGROUP;
    for (kp_idx base = (kp_idx)blockIdx.x * per_block; base < total;
         base += (kp_idx)gridDim.x * per_block) {
        const kp_idx blk = base + threadIdx.x / KP_QGROUP;
        const bool active = blk < total;
        const kp_idx r = active ? blk / blocks_per_row : 0, cb = active ? blk - r * blocks_per_row : 0;
        float x[4];
        kp_qload4(src, r, cb * 32 + 4 * lane, a.src_row_stride, a.src_col_stride, active, x);
        kp_qencode<F>::run(x, lane, dst + r * (kp_idx)a.dst_row_stride + cb * bytes, active);
    }
}

#define KP_QUANTIZE(ID, NAME, TNAME, T)                                                     \
    KP_KERNEL void quantize_##NAME##_##TNAME(kp_quantize_args a, const T *src, uint8_t *dst) { \
        kp_quantize_rows<KP_QF_##ID, T>(a, src, dst);                                       \
    }
#define KP_QUANTIZE_ALL(ID, NAME)          \
    KP_QUANTIZE(ID, NAME, f32, float)      \
    KP_QUANTIZE(ID, NAME, f16, kp_f16)     \
    KP_QUANTIZE(ID, NAME, bf16, kp_bf16)
KP_QUANTIZE_SUFFIXES(KP_QUANTIZE_ALL)

// -------------------------------------------------- mat-vec: activations
//
// Each 32-element block of each batch row becomes 32 int8 (qs) and a
// kp_qmv_meta: the binary16-rounded scale and the exact sums of q over
// each half, which the formats with offsets need.
template <typename T>
KP_DEVICE void kp_qmv_quantize_act(const kp_qmv_act_args &a, const T *x, int8_t *qs,
                                   kp_qmv_meta *meta) {
    constexpr int per_block = KP_QUANT_BLOCK / KP_QGROUP;
    const kp_idx blocks_per_row = (kp_idx)a.cols / 32, total = (kp_idx)a.batch * blocks_per_row;
    const int lane = threadIdx.x % KP_QGROUP;
    kp_allow_dependent_grids();  // the products kernel queues its first weight copies meanwhile
    for (kp_idx base = (kp_idx)blockIdx.x * per_block; base < total;
         base += (kp_idx)gridDim.x * per_block) {
        const kp_idx blk = base + threadIdx.x / KP_QGROUP;
        const bool active = blk < total;
        const kp_idx b = active ? blk / blocks_per_row : 0, cb = active ? blk - b * blocks_per_row : 0;
        float v[4];
        kp_qload4(x, b, cb * 32 + 4 * lane, a.x_batch_stride, a.x_col_stride, active, v);
        int q[4];
        const float d = kp_q8_scale(v, q);
        // Lanes 0-3 hold elements 0..15, lanes 4-7 elements 16..31.
        const int half = kp_qsum_group(q[0] + q[1] + q[2] + q[3], KP_QGROUP / 2);
        const int other = kp_shfl_xor(half, 4, KP_QGROUP);
        if (!active) continue;
        const kp_idx meta_stride = KP_QMV_META_STRIDE(blocks_per_row);
        const kp_idx chunk = b / 8, g = b % 8;
        const kp_idx nb = a.batch - 8 * chunk < 8 ? a.batch - 8 * chunk : 8;
        const bool interleaved = a.interleave && nb > 4;
        // Interleaved (kp_qmv_act_args): group G, item j of its r, lane 4g + lane % 4.
        const kp_idx G = cb / KP_QMV_ACT_GROUP, j = cb % KP_QMV_ACT_GROUP;
        const kp_idx r = blocks_per_row - G * KP_QMV_ACT_GROUP < KP_QMV_ACT_GROUP
                             ? blocks_per_row - G * KP_QMV_ACT_GROUP : KP_QMV_ACT_GROUP;
        const kp_idx q_at = interleaved ? 8 * chunk * a.cols + G * nb * 32 * KP_QMV_ACT_GROUP +
                                              (4 * g + lane % 4) * 8 * r + 8 * j + 4 * (lane / 4)
                                        : blk * 32 + 4 * lane;
        *(uint32_t *)(qs + q_at) = kp_qpack4(q, 0);
        if (lane == 0) {
            kp_qmv_meta m;
            m.d = kp_qround_half(d);
            m.sum_lo = (int16_t)half;
            m.sum_hi = (int16_t)other;
            meta[interleaved ? 8 * chunk * meta_stride + G * nb * KP_QMV_ACT_GROUP + g * r + j
                             : b * meta_stride + cb] = m;
            if (!interleaved && cb + 1 == blocks_per_row && blocks_per_row % 2) {  // the row's padding entry
                const kp_qmv_meta zero = {0.0f, 0, 0};
                meta[b * meta_stride + cb + 1] = zero;
            }
        }
    }
}

#define KP_QMV_ACT(TNAME, T)                                                                  \
    KP_KERNEL void qmatvec_act_##TNAME(kp_qmv_act_args a, const T *x, int8_t *qs,             \
                                       kp_qmv_meta *meta) {                                   \
        kp_qmv_quantize_act(a, x, qs, meta);                                                  \
    }
KP_QMV_ACT(f32, float)
KP_QMV_ACT(f16, kp_f16)
KP_QMV_ACT(bf16, kp_bf16)

// ----------------------------------------------------- mat-vec: products
//
// A thread block computes R weight rows (KP_QMV_ROWS_FOR, KP_QMOE_ROWS)
// against every batch row, walking the columns in tiles of IPT x
// KP_QMV_ITEMS 32-element items: thread t takes items t, t + KP_QMV_BLOCK,
// ... of each tile (kp_qmv_ipt), for all the block's rows. The tile's weight
// bytes arrive with coalesced 16-byte copies into shared memory (items are
// 18, 22, ... bytes, so a thread's own loads would be neither aligned nor
// coalesced), several tiles ahead of the one being computed; its
// activations come straight from the workspace.
// Each item is decoded once per row and used for every batch row with
// integer dot products; the f32 sums are reduced across the block at the
// end of each row group.
template <typename D, int R, int IPT = 1, bool COPY_BY_ROW = false> struct kp_qmv_shape {
    static constexpr int items = IPT * KP_QMV_ITEMS;                   // per row
    static constexpr int tile_bytes = items / D::items * D::bytes;     // per row
    // The tile's weights are copied in 16-byte pieces (kp_qmv_piece): with
    // COPY_BY_ROW, a row's by one group of 32 threads, group g taking rows g,
    // g + KP_QMV_BLOCK / 32, ... (rows_per_group of them), each in row_steps
    // steps; otherwise piece c of the tile's w_chunks (row-major) by thread
    // c % KP_QMV_BLOCK.
    static constexpr bool copy_by_row = COPY_BY_ROW;
    static constexpr int w_chunks = R * tile_bytes / 16;
    static constexpr int rows_per_group = COPY_BY_ROW ? R / (KP_QMV_BLOCK / 32) : 1;
    static constexpr int row_steps = (tile_bytes / 16 + 31) / 32;
    static constexpr int w_per_thread = COPY_BY_ROW ? rows_per_group * row_steps
                                               : (w_chunks + KP_QMV_BLOCK - 1) / KP_QMV_BLOCK;
    static_assert(tile_bytes % 16 == 0, "tiles are whole 16-byte pieces of a row");
    static_assert(!COPY_BY_ROW || R % (KP_QMV_BLOCK / 32) == 0,
                  "every group of 32 threads copies as many rows");
};

// The first `valid` bytes (even, fewer than 16) at p: a row's last piece of
// a tile, read in 2-byte loads.
KP_DEVICE uint4 kp_qmv_load_tail(const uint8_t *p, int valid) {
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        const uint32_t lo = 4 * k < valid ? *(const uint16_t *)(p + 4 * k) : 0u;
        const uint32_t hi = 4 * k + 2 < valid ? *(const uint16_t *)(p + 4 * k + 2) : 0u;
        w[k] = lo | hi << 16;
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// One tile's sources.
struct kp_qmv_tile {
    const uint8_t *w;       // row r0's first byte of the tile
    int w_bytes;            // bytes per row in this tile
    int item;               // this thread's first item (column / 32), or -1
    int n;                  // items in this tile
};

static_assert(sizeof(kp_qmv_meta) == 8 && offsetof(kp_qmv_meta, sum_lo) == 4,
              "kp_qmv_meta is read as two 32-bit words");

// The activations of one item for every batch row.
template <int B> struct kp_qmv_act {
    uint4 qs[B][2];
    uint2 meta[B];          // a kp_qmv_meta as two words: 16-bit fields stay out of registers
};

template <int B>
KP_DEVICE void kp_qmv_load_act(const kp_qmv_args &a, const int8_t *act_qs, const kp_qmv_meta *act_meta,
                               kp_idx meta_stride, int item, kp_qmv_act<B> &v) {
    const uint4 *q = (const uint4 *)act_qs + 2 * (kp_idx)item;
    const kp_qmv_meta *m = act_meta + item;
    const kp_idx q_step = (kp_idx)a.cols / 16;
#pragma unroll
    for (int b = 0; b < B; b++) {
        if (b == 0 || b < a.batch) {  // batch row 0 always exists
            v.qs[b][0] = q[b * q_step];
            v.qs[b][1] = q[b * q_step + 1];
            v.meta[b] = *(const uint2 *)(m + b * meta_stride);
        }
    }
}

// Activations are loaded a tile ahead for small batches; for larger ones
// they would take too many registers, and are loaded when the tile is
// computed, all batch rows at once. At batch 8 that takes some 166
// registers: 6 blocks of 64 threads per SM, so 4096 rows take 1.3 waves.
// Formats under 6 bits per weight instead decode the item of every row
// first and load one batch row's activations at a time
// (kp_qmv_items_by_row: at most 128 registers, one wave, 2 to 7 points of
// copy more on sm_90); the wider formats' stages leave less L1 for the
// activations, whose loads one row at a time then wait on L2 (up to 17
// points fewer). sm_100's register allocation spills this form (8 to 12
// bytes for Q4_0, Q4_K, IQ4_NL), so it keeps the other there.
// At batch 1 the activation load a tile ahead is still the kernel's
// longest wait (ncu, Q4_0 4096 x 14336: a fifth of the stall samples at
// its first use). Copying each tile's activations into shared memory with
// its weights instead (H200, % of copy, 4096 x 14336 / 14336 x 4096):
// Q4_0 77 -> 69 / 71 -> 67, Q4_K 74 -> 64 / 67 -> 62, Q6_K 66 -> 73 / 69 ->
// 64, qmoe 5-9 points lower, with 14 blocks a multiprocessor for 16 (the
// stages' shared memory). Those copies must go through L1 (cp.async.ca):
// bypassing it (.cg) sent every block's copy of the same lines to L2,
// 13-31 % of copy for every such kernel.
#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
#define KP_QMV_ACT_BY_ROW 0
#else
#define KP_QMV_ACT_BY_ROW 1
#endif
template <int B> struct kp_qmv_prefetch_act { static constexpr bool value = B <= 2; };
template <typename D, int B> struct kp_qmv_act_by_row {
    static constexpr bool value = KP_QMV_ACT_BY_ROW && B > 4 && 8 * D::bytes < 6 * D::elems;
};

// Weight tiles pass through a ring of shared-memory stages: with
// asynchronous copies, the tiles of the next STAGES - 1 steps are in flight
// while one is computed. Without them (AMD, NVIDIA before sm_80) the next
// tile's 16-byte pieces wait in registers (kp_qmv_pending) while one is
// computed, and land in their stage at the start of the next step.
// Four stages measured slower (H200, kp-bench f32, % of copy, two rounds):
// given to kernels whose stage is at most 4 KB (the 4-bit formats' two-row
// batch-1 tiles), 4096 x 14336 b1 Q4_0 76 -> 73, Q4_1 83 -> 68 (64 -> 72
// registers), Q4_K 74 -> 69 (registers and blocks unchanged); at most
// 8 KB, also Q2_K, Q3_K, Q5_*, Q6_K, IQ4_* b1 and the 4-bit formats' b2 /
// b4: most lost 2-8 points (Q4_0 b2 72 -> 64, Q3_K b1 47 -> 40), Q6_K b1
// and Q4_K, Q5_K b2 gained 3-4.
#define KP_QMV_STAGES (KP_HAS_ASYNC_COPY ? 3 : 2)

template <typename S> struct kp_qmv_pending {
#if !KP_HAS_ASYNC_COPY
    uint4 w[S::w_per_thread];
    uint8_t *stage;
    int nrows, w_bytes;  // which pieces were loaded
#endif
};

// With S::copy_by_row (kp_qmv_shape), row j of the S::rows_per_group rows
// of a tile whose pieces this thread copies.
KP_DEVICE int kp_qmv_piece_row(int j) {
    return (int)threadIdx.x / 32 + j * (KP_QMV_BLOCK / 32);
}

// This thread's piece u: row r of the tile, byte k of the row, and whether
// it is copied in 16 bytes (a tile of w_bytes bytes per row, nrows rows).
template <typename S> KP_DEVICE bool kp_qmv_piece(int u, int nrows, int w_bytes, int &r, int &k) {
    if constexpr (S::copy_by_row) {
        r = kp_qmv_piece_row(u / S::row_steps);
        k = ((int)threadIdx.x % 32 + u % S::row_steps * 32) * 16;
        return r < nrows && k + 16 <= w_bytes;
    } else {
        constexpr int w_row = S::tile_bytes / 16;
        const int c = threadIdx.x + u * KP_QMV_BLOCK;
        r = c / w_row;
        k = (c - r * w_row) * 16;
        return c < S::w_chunks && r < nrows && k + 16 <= w_bytes;
    }
}

// Queues the copy of a tile's weights into a stage: 16-byte pieces, and a
// row's last piece of under 16 bytes (a short last tile) read here; weights
// not 16-byte aligned are copied here in 2-byte pieces. With
// S::copy_by_row the pieces come from src[j]: row kp_qmv_piece_row(j) at
// the tile's first byte, which saves a 64-bit product a piece.
template <typename S>
KP_DEVICE void kp_qmv_issue(uint8_t *stage, const kp_qmv_args &a, const kp_qmv_tile &t, int nrows,
                            kp_idx w_stride, const uint8_t *const (&src)[S::rows_per_group],
                            kp_qmv_pending<S> &p) {
    if (a.vector == 16) {
#pragma unroll
        for (int u = 0; u < S::w_per_thread; u++) {
            int r, k;
            if (kp_qmv_piece<S>(u, nrows, t.w_bytes, r, k)) {
                const uint8_t *from =
                    S::copy_by_row ? src[u / S::row_steps] + k : t.w + r * w_stride + k;
#if KP_HAS_ASYNC_COPY
                kp_async_copy16(stage + r * S::tile_bytes + k, from);
#else
                p.w[u] = *(const uint4 *)from;
#endif
            }
        }
#if !KP_HAS_ASYNC_COPY
        p.stage = stage;
        p.nrows = nrows;
        p.w_bytes = t.w_bytes;
#endif
        const int done = t.w_bytes / 16 * 16;
        if (done < t.w_bytes && (int)threadIdx.x < nrows)
            *(uint4 *)(stage + threadIdx.x * S::tile_bytes + done) =
                kp_qmv_load_tail(t.w + threadIdx.x * w_stride + done, t.w_bytes - done);
    } else {
        const int halves = t.w_bytes / 2;
#pragma unroll 1
        for (int i = threadIdx.x; i < nrows * halves; i += KP_QMV_BLOCK) {
            const int r = i / halves, k = 2 * (i - r * halves);
            *(uint16_t *)(stage + r * S::tile_bytes + k) = *(const uint16_t *)(t.w + r * w_stride + k);
        }
#if !KP_HAS_ASYNC_COPY
        p.stage = NULL;
#endif
    }
}

// kp_qmv_issue for a whole tile (S::items items of every row) of weights
// 16-byte aligned, with S::copy_by_row and asynchronous copies: no bounds to
// test but the pieces `live` (kp_qmv_live) marks, and every address an
// immediate offset from the row's pointer (src[j] + at, at already holding
// this thread's byte of the row) or from this thread's first byte of the
// stage (kp_qmv_whole_dst).
template <typename S>
KP_DEVICE void kp_qmv_issue_whole(uint8_t *stage, const uint8_t *const (&src)[S::rows_per_group], kp_idx at,
                                  unsigned live) {
#if KP_HAS_ASYNC_COPY
#pragma unroll
    for (int j = 0; j < S::rows_per_group; j++) {
        const uint8_t *from = src[j] + at;
        uint8_t *to = stage + j * (KP_QMV_BLOCK / 32) * S::tile_bytes;
#pragma unroll
        for (int s = 0; s < S::row_steps; s++)
            if (live >> (j * S::row_steps + s) & 1u) kp_async_copy16(to + s * 512, from + s * 512);
    }
#else
    (void)stage, (void)src, (void)at, (void)live;
#endif
}

// This thread's first byte of a stage in kp_qmv_issue_whole.
template <typename S> KP_DEVICE int kp_qmv_whole_dst() {
    return kp_qmv_piece_row(0) * S::tile_bytes + (int)threadIdx.x % 32 * 16;
}

// Which of this thread's pieces of a whole tile exist (bit j * row_steps +
// s: row kp_qmv_piece_row(j), step s), for a row group of nrows rows.
template <typename S> KP_DEVICE unsigned kp_qmv_live(int nrows) {
    static_assert(S::rows_per_group * S::row_steps <= 32, "the pieces fit a mask");
    unsigned live = 0;
#pragma unroll
    for (int j = 0; j < S::rows_per_group; j++)
#pragma unroll
        for (int s = 0; s < S::row_steps; s++)
            if (kp_qmv_piece_row(j) < nrows && ((int)threadIdx.x % 32 + s * 32) * 16 + 16 <= S::tile_bytes)
                live |= 1u << (j * S::row_steps + s);
    return live;
}

// Stores the pieces kp_qmv_issue left in registers (none with asynchronous
// copies, or after the 2-byte path).
template <typename S> KP_DEVICE void kp_qmv_land(kp_qmv_pending<S> &p) {
#if !KP_HAS_ASYNC_COPY
    if (!p.stage)
        return;
#pragma unroll
    for (int u = 0; u < S::w_per_thread; u++) {
        int r, k;
        if (kp_qmv_piece<S>(u, p.nrows, p.w_bytes, r, k))
            *(uint4 *)(p.stage + r * S::tile_bytes + k) = p.w[u];
    }
    p.stage = NULL;
#else
    (void)p;
#endif
}

// One item of one weight row against one batch row: kp_qitem_dot.
template <typename D>
KP_DEVICE float kp_qmv_item_dot(const kp_qitem &w, int dot_lo, int dot_hi, uint2 meta) {
    return kp_qitem_dot<D>(w.scale_lo, w.scale_hi, w.offset_lo, w.offset_hi, dot_lo, dot_hi, meta);
}

// One item of one weight row against one batch row's activations x.
template <typename D> KP_DEVICE float kp_qmv_dot(const kp_qitem &w, const uint4 x[2], uint2 meta) {
    int lo = kp_dp4a(w.q[0], (int)x[0].x, 0);
    lo = kp_dp4a(w.q[1], (int)x[0].y, lo);
    lo = kp_dp4a(w.q[2], (int)x[0].z, lo);
    lo = kp_dp4a(w.q[3], (int)x[0].w, lo);
    int hi = kp_dp4a(w.q[4], (int)x[1].x, 0);
    hi = kp_dp4a(w.q[5], (int)x[1].y, hi);
    hi = kp_dp4a(w.q[6], (int)x[1].z, hi);
    hi = kp_dp4a(w.q[7], (int)x[1].w, hi);
    return kp_qmv_item_dot<D>(w, lo, hi, meta);
}

// Item `item` of the R rows (in the tile) against every batch row, with
// one batch row's activations loaded at a time (kp_qmv_act_by_row).
template <typename D, typename S, int R, int B>
KP_DEVICE void kp_qmv_items_by_row(const kp_qmv_args &a, const uint8_t *tile, int item, int nrows,
                                   const int8_t *act_qs, const kp_qmv_meta *act_meta, kp_idx meta_stride,
                                   float (&acc)[R][B]) {
    const int it = (int)threadIdx.x;  // item % S::items: tiles start at multiples of S::items
    kp_qitem wi[R];
#pragma unroll
    for (int k = 0; k < R; k++)
        if (k < nrows)
            D::item(tile + k * S::tile_bytes + it / D::items * D::bytes, it % D::items, wi[k]);
    const uint4 *q = (const uint4 *)act_qs + 2 * (kp_idx)item;
    const kp_qmv_meta *m = act_meta + item;
    const kp_idx q_step = (kp_idx)a.cols / 16;
#pragma unroll
    for (int b = 0; b < B; b++) {
        if (b > 0 && b >= a.batch) continue;  // batch row 0 always exists
        const uint4 x[2] = {q[b * q_step], q[b * q_step + 1]};
        const uint2 meta = *(const uint2 *)(m + b * meta_stride);
#pragma unroll
        for (int k = 0; k < R; k++)
            if (k < nrows) acc[k][b] += kp_qmv_dot<D>(wi[k], x, meta);
    }
}

// Whether a tile's rows are copied one by each group of 32 threads
// (kp_qmv_shape) rather than in the block-wide order: wherever tiles are
// copied asynchronously, whole tiles then take kp_qmv_issue_whole. An
// earlier session measured the order alone (H200, kp-bench, % of copy,
// 4096 x 14336 / 14336 x 4096): batch 1's two-row tiles and batch 2 of
// Q4_0, Q4_K, Q6_K, Q8_0 gained 1-10 points, batch 1's four-row tiles lost
// 7-10 on the long rows. With kp_qmv_issue_whole (one H200 run, base and
// this interleaved twice) every format took it at batches 1, 2 and 4 and
// in qmoe, at 4096 x 14336 / 14336 x 4096 from base to here: b1 Q4_0 72 ->
// 76 / 69 -> 70, Q4_K 65 -> 73 / 66, Q5_K 62 -> 68 / 68 -> 67, Q6_K 67 ->
// 66.5 / 64 -> 68, IQ4_* +2-4, Q5_0 66 -> 62.5 / 63.5 -> 64.5, Q5_1 70.5 ->
// 67.5 / 67 -> 68; b2 -2.5..+12 (Q8_K 69 -> 81), b4 +0..+2, qmoe Q4_0 71
// -> 75, Q6_K 66 -> 72. Two keep the block-wide order: Q5_0 at batch 2,
// which with the other spilled on sm_90 and lost 5 points (59 -> 54), and
// Q5_1 at batch 1, which lost 4 / 0.5 (72 -> 68 / 68 -> 67.5) where the
// block-wide order with whole tiles' 32-bit indices gained 1-3 (two runs).
template <int F, int B, int R> struct kp_qmv_copy_by_row {
    static constexpr bool value =
        KP_HAS_ASYNC_COPY && !(F == KP_QF_Q5_0 && B == 2) && !(F == KP_QF_Q5_1 && B == 1);
};

// Items a thread takes from each tile (IPT): thread t takes items t,
// t + KP_QMV_BLOCK, ... of it, so that a tile's fixed costs (queueing its
// copies, the waits, the block barrier, the index arithmetic) are shared by
// IPT items of every row. Two at batch 1 measured faster for these formats
// on an H100 (kp-bench, % of copy, 4096 x 14336 / 14336 x 4096, mean of 3
// runs): Q8_0 87 -> 85 / 87 -> 91, Q8_1 90 -> 89 / 91 -> 92, Q8_K 87 -> 85
// / 88 -> 91, Q3_K 49 -> 53 / 56 -> 58, Q2_K 59 -> 63 / 63. The others keep
// one: IQ4_XS gained 1-2 points with two but spilled on sm_100; two doubled
// the registers of the 4-bit formats' two-row kernels (64 -> 122), halving
// the blocks a multiprocessor (Q4_0 80 -> 73, Q4_K 79 -> 71; capping the
// registers instead spilled or lost as much); and batch 4 (Q4_0, Q4_K) and
// the four-row tiles of Q5_* and Q6_K lost 8-18. Only measured there, so
// only where tiles are copied asynchronously (elsewhere a tile's next
// pieces wait in registers, twice as many with two).
template <int F, int B> constexpr int kp_qmv_ipt() {
    return KP_HAS_ASYNC_COPY && B == 1 &&
                   (F == KP_QF_Q8_0 || F == KP_QF_Q8_1 || F == KP_QF_Q8_K || F == KP_QF_Q2_K ||
                    F == KP_QF_Q3_K)
               ? 2
               : 1;
}

// The activations come from the kernel queued just before this one
// (qmatvec_act_*), which this one may overlap (KP_LAUNCH_OVERLAP_PRIOR):
// the first weight tiles are queued before waiting for it. Asking L2 for
// more of the block's first rows as well (prefetch.L2, a line or two a
// thread, 8 or 16 KB a block) lost ground (H200, % of copy, 4096 x 14336):
// batch 1 Q4_0 76 -> 65, Q4_K 72 -> 58, Q8_0 77 -> 71; batch 8 1-7 points;
// 14336 x 4096 (more blocks than one wave) level to 2 points lower.
// That wait is the op's largest cost after the weights (H200): the
// activation kernel takes 2.75-2.85 us (ncu) where a one-block fill takes
// 1.7-1.95, and skipping it (stale activations, for the measurement only)
// took b1 4096 x 14336 from 76.7 to 86.6 % of copy for Q4_0, 82 -> 92 Q4_1,
// 68 -> 80 Q5_K, 54 -> 65 IQ4_*; b8 1-5 points. Without the overlap the op
// loses up to 8 points more (Q4_0 b1 77 -> 70). Measured level: that
// kernel with a (groups, batch rows) grid and vector loads instead of a
// 64-bit division and four scalar loads (2.75 us), and launched overlapped
// with the kernel before it. Quantizing the activations here instead, each
// block of a cluster of 8 one tile's worth in shared memory that its peers
// read, ran every b1 case 3-7x slower (Q4_0 77 -> 20 %), registers capped
// or not: ncu gave the kernel 57 us for 12.5, with at most 124 clusters
// (992 of its 2048 blocks) resident; clusters of 2 (half the activations a
// block) 49 us. Where the time goes there was not profiled further.
template <int F, int B, int R = KP_QMV_ROWS_FOR(F, B), int IPT = kp_qmv_ipt<F, B>()>
KP_DEVICE void kp_qmatvec(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                          const kp_qmv_meta *act_meta, void *dst) {
    typedef kp_qdecode<F> D;
    constexpr int WAVES = KP_QMV_BLOCK / 32, STAGES = KP_QMV_STAGES;
    typedef kp_qmv_shape<D, R, IPT, kp_qmv_copy_by_row<F, B, R>::value> S;
    constexpr bool by_row = kp_qmv_act_by_row<D, B>::value, prefetch = kp_qmv_prefetch_act<B>::value;
    static_assert(IPT == 1 || !by_row, "one batch row at a time takes one item a tile");
    constexpr int stage_bytes = R * S::tile_bytes + 16;  // + the slack kp_qld_run reads
    __shared__ __align__(16) uint8_t stages[STAGES * stage_bytes];
    __shared__ float partial[WAVES][R * B];
    const kp_idx items_per_row = (kp_idx)a.cols / 32, w_stride = (kp_idx)a.w_row_stride;
    const kp_idx meta_stride = KP_QMV_META_STRIDE(items_per_row);
    // Tile counts and item indices fit an int (the host keeps columns / 32
    // below 2^31); 64-bit ones cost the loop compares and products.
    const int tiles = (int)((items_per_row + S::items - 1) / S::items);
    const int whole = (int)(items_per_row / S::items);  // tiles of S::items items
    // With `fast`, whole tiles are copied by kp_qmv_issue_whole.
    const bool fast = S::copy_by_row && KP_HAS_ASYNC_COPY && a.vector == 16;
    const kp_idx lane_byte = (int)threadIdx.x % 32 * 16;
    const int last_n = (int)(items_per_row - whole * S::items);  // items of a short last tile
    auto tile_at = [&](kp_idx r0, int t) {
        const kp_idx i0 = (kp_idx)t * S::items;
        const int n = t < whole ? S::items : (int)(items_per_row - i0);
        kp_qmv_tile s;
        s.w = w + r0 * w_stride + i0 / D::items * D::bytes;
        s.w_bytes = n / D::items * D::bytes;
        s.item = (int)threadIdx.x < n ? (int)(i0 + threadIdx.x) : -1;
        s.n = n;
        return s;
    };
    // Whether this thread has item j of tile s. With one item, here and
    // below, the kernel keeps the forms it had before it took several: the
    // general ones gave its kernels other registers and spills on sm_100.
    auto has = [](const kp_qmv_tile &s, int j) {
        return IPT == 1 ? s.item >= 0 : (int)threadIdx.x + j * KP_QMV_BLOCK < s.n;
    };
    for (kp_idx r0 = (kp_idx)blockIdx.x * R; r0 < (kp_idx)a.rows; r0 += (kp_idx)gridDim.x * R) {
        const int nrows = (kp_idx)a.rows - r0 < (kp_idx)R ? (int)((kp_idx)a.rows - r0) : R;
        float acc[R][B];
#pragma unroll
        for (int k = 0; k < R; k++)
#pragma unroll
            for (int b = 0; b < B; b++) acc[k][b] = 0.0f;
        // With S::copy_by_row, the rows whose tiles this thread copies
        // (kp_qmv_piece_row; a row past the last copies nothing).
        // They advance a tile at each issue, so no 64-bit product is left in
        // the loop for the compiler to recompute there.
        const uint8_t *row_src[S::rows_per_group];
#pragma unroll
        for (int j = 0; j < S::rows_per_group; j++) {
            const int r = S::copy_by_row ? kp_qmv_piece_row(j) : 0;
            row_src[j] = w + (r0 + (r < nrows ? r : nrows - 1)) * w_stride;
        }
        auto advance = [&]() {
#pragma unroll
            for (int j = 0; j < S::rows_per_group; j++) row_src[j] += S::tile_bytes;
        };
        const unsigned live = S::copy_by_row ? kp_qmv_live<S>(nrows) : 0u;
        uint8_t *const stages_whole = stages + (S::copy_by_row ? kp_qmv_whole_dst<S>() : 0);
        kp_qmv_pending<S> pending{};
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if (fast && s < whole)
                kp_qmv_issue_whole<S>(stages_whole + s * stage_bytes, row_src, lane_byte, live);
            else if (s < tiles)
                kp_qmv_issue<S>(stages + s * stage_bytes, a, tile_at(r0, s), nrows, w_stride, row_src,
                                pending);
            advance();
            kp_qmv_land(pending);
            kp_async_commit();  // empty groups too: the wait below counts groups
        }
        kp_wait_prior_grids();
        kp_qmv_act<prefetch ? B : 1> next[prefetch ? IPT : 1];
        if (prefetch && tiles && (IPT > 1 || tile_at(r0, 0).item >= 0)) {
            const kp_qmv_tile first = tile_at(r0, 0);
#pragma unroll
            for (int j = 0; j < IPT; j++)
                if (has(first, j))
                    kp_qmv_load_act(a, act_qs, act_meta, meta_stride, first.item + j * KP_QMV_BLOCK, next[j]);
        }
        // Tile t is computed from stage t % STAGES while tile t + STAGES - 1
        // is copied into the stage before it (the one tile t - 1 used).
        int stage = 0;
        for (int t = 0; t < tiles; t++) {
            kp_qmv_land(pending);         // tile t, from registers
            kp_async_wait<STAGES - 2>();  // this thread's copies of tile t are done
            __syncthreads();              // everyone's are, and tile t - 1 is consumed
            const int fill = stage == 0 ? STAGES - 1 : stage - 1;
            if (fast && t + STAGES - 1 < whole)
                kp_qmv_issue_whole<S>(stages_whole + fill * stage_bytes, row_src, lane_byte, live);
            else if (t + STAGES - 1 < tiles)
                kp_qmv_issue<S>(stages + fill * stage_bytes, a, tile_at(r0, t + STAGES - 1), nrows,
                                w_stride, row_src, pending);
            advance();
            kp_async_commit();
            const uint8_t *tile = stages + stage * stage_bytes;
            stage = stage + 1 == STAGES ? 0 : stage + 1;
            const kp_qmv_tile cur = tile_at(r0, t);
            // this thread's (first) item of tile t, or -1
            const int item = t < whole || (int)threadIdx.x < last_n ? t * S::items + (int)threadIdx.x : -1;
            if constexpr (by_row) {
                if (item >= 0)
                    kp_qmv_items_by_row<D, S>(a, tile, item, nrows, act_qs, act_meta, meta_stride, acc);
            } else {
                kp_qmv_act<B> act[IPT];
                if constexpr (prefetch) {
#pragma unroll
                    for (int j = 0; j < IPT; j++) act[j] = next[j];
                    if constexpr (IPT == 1) {
                        const int later = t + 1 < whole || (t + 1 < tiles && (int)threadIdx.x < last_n)
                                              ? item + S::items
                                              : -1;
                        if (later >= 0)
                            kp_qmv_load_act(a, act_qs, act_meta, meta_stride, later, next[0]);
                    } else if (t + 1 < tiles) {
                        const kp_qmv_tile later = tile_at(r0, t + 1);
#pragma unroll
                        for (int j = 0; j < IPT; j++)
                            if (has(later, j))
                                kp_qmv_load_act(a, act_qs, act_meta, meta_stride,
                                                later.item + j * KP_QMV_BLOCK, next[j]);
                    }
                }
#pragma unroll
                for (int j = 0; j < IPT; j++) {
                    if (!has(cur, j)) continue;
                    if constexpr (!prefetch)
                        kp_qmv_load_act(a, act_qs, act_meta, meta_stride, item + j * KP_QMV_BLOCK, act[j]);
                    const int it = (int)threadIdx.x + j * KP_QMV_BLOCK;  // within the tile
#pragma unroll
                    for (int k = 0; k < R; k++) {
                        if (k >= nrows) continue;
                        kp_qitem wi;
                        D::item(tile + k * S::tile_bytes + it / D::items * D::bytes, it % D::items, wi);
#pragma unroll
                        for (int b = 0; b < B; b++) {
                            if (b > 0 && b >= a.batch) continue;  // batch row 0 always exists
                            acc[k][b] += kp_qmv_dot<D>(wi, act[j].qs[b], act[j].meta[b]);
                        }
                    }
                }
            }
        }
        // Sums over the block: within each group of 32 threads, then of the groups.
#pragma unroll
        for (int k = 0; k < R; k++)
#pragma unroll
            for (int b = 0; b < B; b++) {
#pragma unroll
                for (int m = 1; m < 32; m <<= 1) acc[k][b] += kp_shfl_xor(acc[k][b], m, 32);
                if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32][k * B + b] = acc[k][b];
            }
        __syncthreads();
        if ((int)threadIdx.x < R * B) {
            const int k = threadIdx.x / B, b = threadIdx.x % B;
            float sum = 0.0f;
#pragma unroll
            for (int g = 0; g < WAVES; g++) sum += partial[g][threadIdx.x];
            if (k < nrows && b < a.batch)
                kp_qmv_store(dst, a.dst_dtype,
                             (kp_idx)b * (kp_idx)a.dst_batch_stride + (r0 + k) * (kp_idx)a.dst_row_stride,
                             sum);
        }
        __syncthreads();  // partial and the stages are read before the next row group writes them
    }
}

// Batch 8 runs on int8 tensor cores where the target has them
// (kp_qmatvec_mma.cuh), in blocks of KP_QMV_MMA_BLOCK threads, two a
// multiprocessor (at most 128 registers; left to itself the compiler gave
// Q3_K 194 and one block), for every format but Q3_K, which measured 3
// points of copy slower there than with dp4a (H100).
#if KP_HAS_MMA_16
#define KP_QMV_B8_MMA true
#define KP_QMV_B8_BOUNDS KP_QMV_MMA_BLOCK, 2
#else
#define KP_QMV_B8_MMA false
#define KP_QMV_B8_BOUNDS KP_QMV_BLOCK
#endif
template <int F, int B, bool MMA>
KP_DEVICE void kp_qmatvec_batch(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                                const kp_qmv_meta *act_meta, void *dst) {
#if KP_HAS_MMA_16
    if constexpr (MMA)
        kp_qmatvec_mma<F>(a, w, act_qs, act_meta, dst);
    else
#endif
        kp_qmatvec<F, B>(a, w, act_qs, act_meta, dst);
}

#define KP_QMV(ID, NAME, B, BOUNDS, MMA)                                                         \
    KP_KERNEL void __launch_bounds__(BOUNDS)                                                     \
        qmatvec_##NAME##_b##B(kp_qmv_args a, const uint8_t *w, const int8_t *act_qs,            \
                              const kp_qmv_meta *act_meta, void *dst) {                          \
        kp_qmatvec_batch<KP_QF_##ID, B, MMA>(a, w, act_qs, act_meta, dst);                       \
    }
#define KP_QMV_SMALL(ID, NAME)                                                             \
    KP_QMV(ID, NAME, 1, KP_QMV_BLOCK, false) KP_QMV(ID, NAME, 2, KP_QMV_BLOCK, false)      \
    KP_QMV(ID, NAME, 4, KP_QMV_BLOCK, false)
#define KP_QMV_B8(ID, NAME) KP_QMV(ID, NAME, 8, KP_QMV_B8_BOUNDS, KP_QMV_B8_MMA)
KP_QFORMAT_SUFFIXES(KP_QMV_SMALL)
KP_QMV_B8(Q4_0, q4_0)
KP_QMV_B8(Q4_1, q4_1)
KP_QMV_B8(Q5_0, q5_0)
KP_QMV_B8(Q5_1, q5_1)
KP_QMV_B8(Q8_0, q8_0)
KP_QMV_B8(Q8_1, q8_1)
KP_QMV_B8(Q2_K, q2_k)
KP_QMV(Q3_K, q3_k, 8, KP_QMV_BLOCK, false)
KP_QMV_B8(Q4_K, q4_k)
KP_QMV_B8(Q5_K, q5_k)
KP_QMV_B8(Q6_K, q6_k)
KP_QMV_B8(Q8_K, q8_k)
KP_QMV_B8(IQ4_NL, iq4_nl)
KP_QMV_B8(IQ4_XS, iq4_xs)

// ---------------------------------------------------- mixture of experts
//
// The expert of pair p, or experts (none) for an id out of range.
KP_DEVICE kp_idx kp_qmoe_expert(const kp_qmoe_args &m, const void *ids, kp_idx p) {
    const int64_t t = (int64_t)(p / (kp_idx)m.k), j = (int64_t)p - t * m.k;
    const int64_t at = t * m.ids_token_stride + j * m.ids_slot_stride;
    const kp_idx id = m.ids_kind == 1 ? (kp_idx)((const uint32_t *)ids)[at]
                                      : (kp_idx)((const int64_t *)ids)[at];  // < 0 wraps high
    return id < (kp_idx)m.experts ? id : (kp_idx)m.experts;
}

// Pair (token, slot) blockIdx.y: the batch-1 mat-vec of its expert's matrix
// with its activations row (one pair a block row: looping over pairs made
// the mat-vec spill). A pair whose id names no expert gets a row of zeros
// and is recorded in status at its position t * k + j.
template <int F>
KP_DEVICE void kp_qmoe(const kp_qmoe_args &m, const uint8_t *w, const int8_t *act_qs,
                       const kp_qmv_meta *act_meta, const void *ids, void *dst, kp_status_word *status) {
    const kp_idx meta_stride = KP_QMV_META_STRIDE((kp_idx)m.mv.cols / 32);
    const int64_t esize = m.mv.dst_dtype == 0 ? 4 : 2;
    const kp_idx p = blockIdx.y;
    const int64_t t = (int64_t)(p / (kp_idx)m.k), j = (int64_t)p - t * m.k;
    const kp_idx id = kp_qmoe_expert(m, ids, p);
    char *y = (char *)dst + (t * m.dst_token_stride + j * m.dst_slot_stride) * esize;
    if (id >= (kp_idx)m.experts) {
        if (blockIdx.x == 0 && threadIdx.x == 0 && status)
            kp_atomic_max_u64(status, ~(kp_status_word)p);
        for (kp_idx r = (kp_idx)blockIdx.x * blockDim.x + threadIdx.x; r < (kp_idx)m.mv.rows;
             r += (kp_idx)gridDim.x * blockDim.x)
            kp_qmv_store(y, m.mv.dst_dtype, r * (kp_idx)m.mv.dst_row_stride, 0.0f);
        return;
    }
    const kp_idx xr = m.x_per_slot ? p : (kp_idx)t;
    // One item a thread a tile whatever kp_qmv_ipt says: with two (and four
    // rows a block) Q4_K went from 82 to 69 % of copy, Q8_0 stayed level.
    kp_qmatvec<F, 1, KP_QMOE_ROWS, 1>(m.mv, w + id * (kp_idx)m.expert_stride,
                                      act_qs + xr * (kp_idx)m.mv.cols, act_meta + xr * meta_stride, y);
}

#define KP_QMOE(ID, NAME)                                                                        \
    KP_KERNEL void __launch_bounds__(KP_QMV_BLOCK)                                               \
        qmoe_##NAME(kp_qmoe_args m, const uint8_t *w, const int8_t *act_qs,                     \
                    const kp_qmv_meta *act_meta, const void *ids, void *dst,                     \
                    kp_status_word *status) {                                                    \
        kp_qmoe<KP_QF_##ID>(m, w, act_qs, act_meta, ids, dst, status);                           \
    }
KP_QFORMAT_SUFFIXES(KP_QMOE)

// One block: counts each expert's pairs, lays out their lists (in the order
// the atomics give; a pair's result does not depend on its place) and the
// tiles of tile_batch pairs each expert's list takes; records invalid ids
// and zeroes their dst rows.
KP_KERNEL void __launch_bounds__(KP_QMOE_GROUP_BLOCK)
    qmoe_group(kp_qmoe_args m, const void *ids, int32_t *group, void *dst, kp_status_word *status) {
    const kp_idx experts = (kp_idx)m.experts, pairs = (kp_idx)m.pairs;
    int32_t *count = group, *cursor = group + experts, *start = cursor + experts;
    int32_t *tiles = start + experts + 1, *list = tiles + experts + 1;
    __shared__ int invalid;  // ids naming no expert: their dst rows are zeroed below
    for (kp_idx e = threadIdx.x; e < experts; e += blockDim.x) count[e] = 0;
    if (threadIdx.x == 0)
        invalid = 0;
    __syncthreads();
    for (kp_idx p = threadIdx.x; p < pairs; p += blockDim.x) {
        const kp_idx e = kp_qmoe_expert(m, ids, p);
        if (e < experts) {
            atomicAdd(&count[e], 1);
        } else {
            atomicOr(&invalid, 1);
            if (status)
                kp_atomic_max_u64(status, ~(kp_status_word)p);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        int32_t at = 0, tile = 0;
        for (kp_idx e = 0; e < experts; e++) {
            start[e] = cursor[e] = at;
            tiles[e] = tile;
            at += count[e];
            tile += (int32_t)((count[e] + m.tile_batch - 1) / m.tile_batch);
        }
        start[experts] = at;
        tiles[experts] = tile;
    }
    __syncthreads();
    for (kp_idx p = threadIdx.x; p < pairs; p += blockDim.x) {
        const kp_idx e = kp_qmoe_expert(m, ids, p);
        if (e < experts)
            list[atomicAdd(&cursor[e], 1)] = (int32_t)p;
    }
    if (!invalid)  // read after the barriers above
        return;
    const int64_t esize = m.mv.dst_dtype == 0 ? 4 : 2;
    for (kp_idx p = 0; p < pairs; p++) {  // uniform: every thread reads the same id
        if (kp_qmoe_expert(m, ids, p) < experts)
            continue;
        const int64_t t = (int64_t)(p / (kp_idx)m.k), j = (int64_t)p - t * m.k;
        char *y = (char *)dst + (t * m.dst_token_stride + j * m.dst_slot_stride) * esize;
        for (kp_idx r = threadIdx.x; r < (kp_idx)m.mv.rows; r += blockDim.x)
            kp_qmv_store(y, m.mv.dst_dtype, r * (kp_idx)m.mv.dst_row_stride, 0.0f);
    }
}

// The batch rows of one tile of an expert's pairs (kp_qmm_dense's
// interface), from the rows and dst offsets the block worked out once.
struct kp_qmm_pairs {
    const kp_idx *x_rows;
    const int64_t *dst_offsets;
    int n;
    KP_DEVICE bool has(int i) const { return i < n; }
    KP_DEVICE kp_idx x_row(int i) const { return x_rows[i]; }
    KP_DEVICE int64_t dst_at(int i) const { return dst_offsets[i]; }
};

// Block row y is tile y of all experts' tiles (qmoe_group's tile starts):
// found by bisection, then the tile's pairs times its expert's rows. One
// tile a block row: a loop over tiles made the Q2_K kernel spill.
template <int F, int NB>
KP_DEVICE void kp_qmoe_mm(const kp_qmoe_args &m, const uint8_t *w, const int8_t *act_qs,
                          const kp_qmv_meta *act_meta, const int32_t *group, void *dst) {
    __shared__ kp_idx x_rows[NB];
    __shared__ int64_t dst_offsets[NB];
    const int64_t experts = m.experts;
    const int32_t *count = group, *start = group + 2 * experts, *tiles = start + experts + 1;
    const int32_t *list = tiles + experts + 1;
    const int64_t y = blockIdx.y;  // the grid covers every expert's tiles at most
    if (y >= tiles[experts])
        return;
    int64_t lo = 0, hi = experts;  // tiles[lo] <= y < tiles[hi]
    while (hi - lo > 1) {
        const int64_t mid = (lo + hi) / 2;
        if (tiles[mid] <= y) lo = mid;
        else hi = mid;
    }
    const int64_t first = (y - tiles[lo]) * NB, left = count[lo] - first;
    const int n = left < NB ? (int)left : NB;
    if ((int)threadIdx.x < n) {
        const int64_t p = list[start[lo] + first + threadIdx.x], t = p / m.k;
        x_rows[threadIdx.x] = (kp_idx)(m.x_per_slot ? p : t);
        dst_offsets[threadIdx.x] = t * m.dst_token_stride + (p - t * m.k) * m.dst_slot_stride;
    }
    __syncthreads();
    const kp_qmm_pairs rows = {x_rows, dst_offsets, n};
    kp_qmatmul_tile<F, NB>(m.mv, w + lo * m.expert_stride, act_qs, act_meta, dst, rows,
                           (kp_idx)blockIdx.x * KP_QMM_ROWS(NB));
}

// Three blocks a multiprocessor for every format (KP_QMM_BOUNDS_64 of a
// format not lean): at 128 registers the pair lists made the lean ones
// spill 4-36 bytes.
#define KP_QMOE_MM(ID, NAME, NB)                                                                 \
    KP_KERNEL void KP_QMM_BOUNDS_##NB(-1)                                                        \
        qmoe_mm_##NAME##_n##NB(kp_qmoe_args m, const uint8_t *w, const int8_t *act_qs,          \
                               const kp_qmv_meta *act_meta, const int32_t *group, void *dst) {   \
        kp_qmoe_mm<KP_QF_##ID, NB>(m, w, act_qs, act_meta, group, dst);                          \
    }
#define KP_QMOE_MM_ALL(ID, NAME) KP_QMOE_MM(ID, NAME, 16) KP_QMOE_MM(ID, NAME, 64)
KP_QFORMAT_SUFFIXES(KP_QMOE_MM_ALL)

// ------------------------------------------------------------- mat-mat

static_assert(KP_QMM_NB_SMALL == 16 && KP_QMM_NB_LARGE == 64, "the kernel names below");
#define KP_QMM(ID, NAME, NB)                                                                     \
    KP_KERNEL void KP_QMM_BOUNDS_##NB(KP_QF_##ID)                                                \
        qmatmul_##NAME##_n##NB(kp_qmv_args a, const uint8_t *w, const int8_t *act_qs,           \
                               const kp_qmv_meta *act_meta, void *dst) {                         \
        kp_qmatmul<KP_QF_##ID, NB>(a, w, act_qs, act_meta, dst);                                 \
    }
#define KP_QMM_ALL(ID, NAME) KP_QMM(ID, NAME, 16) KP_QMM(ID, NAME, 64)
KP_QFORMAT_SUFFIXES(KP_QMM_ALL)
