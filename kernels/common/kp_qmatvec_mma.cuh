// The batch-8 mat-vec on int8 tensor cores (NVIDIA sm_80+; every other
// target runs the dp4a kernel of quantized.cu). A block of KP_QMV_MMA_BLOCK
// threads computes KP_QMV_MMA_ROWS = 16 weight rows, the M of m16n8k32
// products whose N is the (up to) 8 batch rows:
//  - tiles of KP_QMV_MMA_ITEMS items of the 16 rows are copied into a ring
//    of shared-memory stages (asynchronous 16- or 8-byte copies, coalesced),
//    a few tiles ahead;
//  - each warp takes KP_QMV_MMA_ITEMS / KP_QMV_MMA_WARPS consecutive items
//    of a tile; for one item, lane (g, t) decodes words t and 4 + t of rows
//    g and g + 8 (kp_qdecode::quad), its A fragment, straight from the
//    stage, whose rows sit a bank-spreading pitch apart;
//  - its B fragment is 8 bytes of the interleaved activations
//    (kp_qmv_act_args::interleave), one coalesced load, issued for the next
//    tile while the block waits for that tile's weights;
//  - the mma adds KP_QMM_MAGIC minus the format's bias times the
//    activations' sums, so each item's exact integer sums come out as f32
//    bits ready to scale; the warps' accumulators are added through shared
//    memory at the end of the row group.
// An earlier form with 2 warps per 16 rows and weights decoded into a
// buffer for ldmatrix ran 1.5-3.6x slower than dp4a (too few warps, and as
// many instructions a (row, item)). This one (H100, 4096 x 14336, % of copy)
// took Q4_0 from 38 to 61, Q8_0 48 -> 81, Q4_K 37 -> 48, Q6_K 39 -> 55; it
// is issue-bound (some 100 instructions a warp and item, 16 warps a
// multiprocessor) and as much latency-bound: on an H200 (ncu, 4096 x 14336)
// Q4_0 / Q4_K / Q6_K keep the issue slots 47 / 54 / 57 % busy, with no
// eligible warp in 45 / 39 / 36 % of cycles at 3.8 warps a scheduler (two
// blocks a multiprocessor by registers), 5.5 / 8.3 / 10 instructions a
// weight (thread instructions). Q3_K stays on dp4a (quantized.cu).
#pragma once

#include "kp_async.cuh"
#include "kp_mma.cuh"
#include "kp_qmatmul.cuh"
#include "kp_quant.cuh"
#include "kp_quant_abi.h"

#if KP_HAS_MMA_16
#define KP_QMV_MMA_WARPS (KP_QMV_MMA_BLOCK / 32)

// Bytes added to a row's share of a stage so that its pitch in 32-bit words
// is 4 times an odd number: the 8 rows g of a warp's read, 4 consecutive
// words each, then fall on 32 distinct banks. A multiple of the copy size.
constexpr int kp_qmvm_pad(int row_bytes, int piece) {
    return (row_bytes / 4) % 8 == 4 ? 0 : piece + kp_qmvm_pad(row_bytes + piece, piece);
}

template <typename D> struct kp_qmvm_shape {
    static constexpr int row_bytes = KP_QMV_MMA_ITEMS / D::items * D::bytes;  // a row's share of a tile
    static constexpr int piece = row_bytes % 16 == 0 ? 16 : 8;                  // Q3_K, Q6_K: 8
    static constexpr int pitch = row_bytes + kp_qmvm_pad(row_bytes, piece);
    static constexpr int stage_bytes = KP_QMV_MMA_ROWS * pitch;
    static constexpr int stages = 3 * stage_bytes <= 46 * 1024 ? 3 : 2;
    static constexpr int per_warp = KP_QMV_MMA_ITEMS / KP_QMV_MMA_WARPS;  // items of a tile a warp takes
    static constexpr int pieces = row_bytes / piece;                       // of a row of a whole tile
    static constexpr int copiers = KP_QMV_MMA_BLOCK / KP_QMV_MMA_ROWS;     // threads copying a row
    static_assert(row_bytes % 8 == 0, "a tile is whole 8-byte pieces of a row");
    static_assert(KP_QMV_MMA_ITEMS % D::items == 0, "tiles hold whole blocks");
    static_assert(KP_QMV_MMA_WARPS * 32 * 16 <= stages * stage_bytes, "the warps' sums fit the stages");
    static_assert(per_warp == KP_QMV_ACT_GROUP, "a warp's items of a tile are a group of the activations");
};

// Queues the copy of `bytes` bytes of each of nrows rows (row r at src + r *
// stride) into a stage: pieces of S::piece bytes where the rows allow
// (vector), the rest (a short last tile's end, or every byte of unaligned
// weights) in 2-byte loads and stores. A whole tile's pieces go to fixed
// threads (S::copiers a row), without the divisions of the general case.
// A short tile's rows are zero past `bytes`: the items there decode to
// zero scales, which the products use without a test.
template <typename S>
KP_DEVICE void kp_qmvm_issue(uint8_t *stage, const uint8_t *src, kp_idx stride, int nrows, int bytes,
                             bool vector) {
    if (vector && bytes == S::row_bytes) {
        const int r = threadIdx.x / S::copiers, k0 = threadIdx.x % S::copiers;
        if (r >= nrows)
            return;
        uint8_t *to = stage + r * S::pitch + k0 * S::piece;
        const uint8_t *from = src + r * stride + k0 * S::piece;
#pragma unroll 1
        for (int k = k0; k < S::pieces; k += S::copiers) {
            kp_async_copy<S::piece>(to, from);
            to += S::copiers * S::piece;
            from += S::copiers * S::piece;
        }
        return;
    }
    const int pieces = vector ? bytes / S::piece : 0;
    for (int c = threadIdx.x; c < nrows * pieces; c += KP_QMV_MMA_BLOCK) {
        const int r = c / pieces, k = (c - r * pieces) * S::piece;
        kp_async_copy<S::piece>(stage + r * S::pitch + k, src + r * stride + k);
    }
    const int done = pieces * S::piece, halves = (S::row_bytes - done) / 2;
    for (int c = threadIdx.x; c < nrows * halves; c += KP_QMV_MMA_BLOCK) {
        const int r = c / halves, k = done + 2 * (c - r * halves);
        *(uint16_t *)(stage + r * S::pitch + k) = k < bytes ? *(const uint16_t *)(src + r * stride + k) : 0;
    }
}

// A lane's activations for one item: its B fragment and the metadata of
// its result columns 2t and 2t + 1 (zero past the batch).
struct kp_qmvm_act {
    uint2 x;
    uint2 meta[2];
};

// A lane's view of the interleaved activations (kp_qmv_act_args): where
// its share of its warp's group of items of the current tile starts (the
// warp's items of a tile are one group), and which of its batch rows exist.
struct kp_qmvm_act_src {
    const uint8_t *q, *meta;
    int nb;
    bool has_q, has_meta[2];
    KP_DEVICE void next_tile() {
        q += KP_QMV_MMA_WARPS * KP_QMV_ACT_GROUP * 32 * nb;
        meta += KP_QMV_MMA_WARPS * KP_QMV_ACT_GROUP * nb * (int)sizeof(kp_qmv_meta);
    }
    // The group's first r items (up to KP_QMV_ACT_GROUP).
    KP_DEVICE void load(int r, kp_qmvm_act (&v)[KP_QMV_ACT_GROUP]) const {
        const int lane = threadIdx.x % 32, t = lane % 4;
#pragma unroll
        for (int j = 0; j < KP_QMV_ACT_GROUP; j++) {
            const bool in = j < r;
            v[j].x = in && has_q ? *(const uint2 *)(q + lane * 8 * r + 8 * j) : make_uint2(0u, 0u);
#pragma unroll
            for (int h = 0; h < 2; h++)
                v[j].meta[h] = in && has_meta[h]
                                   ? *(const uint2 *)(meta + ((2 * t + h) * r + j) * (int)sizeof(kp_qmv_meta))
                                   : make_uint2(0u, 0u);
        }
    }
};

// The mma's addend for one result column: KP_QMM_MAGIC (the sums come out as
// f32 bits, kp_qmm_unmagic) minus the format's bias times the sum of the
// column's activations over the k the product covers.
template <typename D> KP_DEVICE int kp_qmvm_addend(int sum) { return KP_QMM_MAGIC - D::bias * sum; }

// Item `it` of a stage (rows g and g + 8 of lane (g, t)) against the
// lane's activations x, into its accumulators. Rows past the matrix hold
// stale bytes, whose sums land only in results that are not stored.
template <typename D, typename S>
KP_DEVICE void kp_qmvm_item(const uint8_t *stage, int it, const kp_qmvm_act &x, float acc[4]) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const uint8_t *b0 = stage + g * S::pitch + it / D::items * D::bytes;
    const uint8_t *b1 = b0 + 8 * S::pitch;
    const int s = it % D::items;
    int q[4];  // the A fragment
    D::quad(b0, s, t, q[0], q[2]);
    D::quad(b1, s, t, q[1], q[3]);
    const uint32_t af[4] = {(uint32_t)q[0], (uint32_t)q[1], (uint32_t)q[2], (uint32_t)q[3]};
    kp_qitem w0, w1;
    D::scales(b0, s, w0);
    D::scales(b1, s, w1);
    // Per result column h: d and the sums of q over each half.
    float d[2], sum_lo[2], sum_hi[2];
    int c_lo[4], c_hi[4];
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const uint2 m = x.meta[h];
        const int lo = (int)(int16_t)(m.y & 0xffffu), hi = (int)(int16_t)(m.y >> 16);
        d[h] = __uint_as_float(m.x);
        sum_lo[h] = (float)lo;
        sum_hi[h] = (float)hi;
        c_lo[h] = c_lo[h + 2] = kp_qmvm_addend<D>(D::split ? lo : lo + hi);
        c_hi[h] = c_hi[h + 2] = kp_qmvm_addend<D>(hi);
    }
    int lo[4], hi[4] = {0, 0, 0, 0};
    if (D::split) {
        kp_mma_s8_k16_c(lo, af[0], af[1], x.x.x, c_lo);
        kp_mma_s8_k16_c(hi, af[2], af[3], x.x.y, c_hi);
    } else {
        const uint32_t bf[2] = {x.x.x, x.x.y};
        kp_mma_s8_k32_c(lo, af, bf, c_lo);
    }
    const float4 ws[2] = {make_float4(w0.scale_lo, w0.scale_hi, w0.offset_lo, w0.offset_hi),
                          make_float4(w1.scale_lo, w1.scale_hi, w1.offset_lo, w1.offset_hi)};
#pragma unroll
    for (int e = 0; e < 4; e++) {
        const int h = e & 1;
        acc[e] += kp_qmm_term_mma<D>(ws[e >> 1], d[h], sum_lo[h], sum_hi[h], lo[e], hi[e]);
    }
}

// dst rows r0 .. r0 + 15 (those below a.rows) for batch rows 0 .. a.batch - 1
// (at most 8), from act_qs / act_meta interleaved.
template <int F>
KP_DEVICE void kp_qmatvec_mma(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                              const kp_qmv_meta *act_meta, void *dst) {
    typedef kp_qdecode<F> D;
    typedef kp_qmvm_shape<D> S;
    constexpr int R = KP_QMV_MMA_ROWS, T = KP_QMV_MMA_ITEMS, STAGES = S::stages;
    __shared__ __align__(16) uint8_t stages[STAGES * S::stage_bytes];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int nb = (int)a.batch;
    const kp_idx items_per_row = (kp_idx)a.cols / 32, w_stride = (kp_idx)a.w_row_stride;
    const kp_idx tiles = (items_per_row + T - 1) / T;
    kp_qmvm_act_src x0;
    x0.nb = nb;
    x0.has_q = g < nb;
    x0.has_meta[0] = 2 * t < nb;
    x0.has_meta[1] = 2 * t + 1 < nb;
    x0.q = (const uint8_t *)act_qs + warp * KP_QMV_ACT_GROUP * 32 * nb;
    x0.meta = (const uint8_t *)act_meta + warp * KP_QMV_ACT_GROUP * nb * (int)sizeof(kp_qmv_meta);
    auto tile_items = [&](kp_idx tt) {
        return items_per_row - tt * T < (kp_idx)T ? (int)(items_per_row - tt * T) : T;
    };
    // Tile tt of the row group at r0 into stage `slot`.
    auto issue = [&](kp_idx r0, int nrows, kp_idx tt, int slot) {
        kp_qmvm_issue<S>(stages + slot * S::stage_bytes, w + r0 * w_stride + tt * T / D::items * D::bytes,
                         w_stride, nrows, tile_items(tt) / D::items * D::bytes, a.vector == 16);
    };
    // The items of the warp's group in a tile with n items.
    auto group_items = [&](int n) {
        const int r = n - warp * S::per_warp;
        return r < 0 ? 0 : r < S::per_warp ? r : S::per_warp;
    };
    for (kp_idx r0 = (kp_idx)blockIdx.x * R; r0 < (kp_idx)a.rows; r0 += (kp_idx)gridDim.x * R) {
        const int nrows = (kp_idx)a.rows - r0 < (kp_idx)R ? (int)((kp_idx)a.rows - r0) : R;
#pragma unroll
        for (int s = 0; s < STAGES - 1; s++) {
            if ((kp_idx)s < tiles)
                issue(r0, nrows, s, s);
            kp_async_commit();  // empty groups too: the wait below counts groups
        }
        kp_wait_prior_grids();
        kp_qmvm_act_src x = x0;
        kp_qmvm_act cur[S::per_warp];  // the activations of the tile computed next
        x.load(group_items(tile_items(0)), cur);
        float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
        // Tile tt is computed from stage `slot` while tile tt + STAGES - 1 is
        // copied into the stage before it (the one tile tt - 1 used).
        int slot = 0;
        for (kp_idx tt = 0; tt < tiles; tt++) {
            kp_async_wait<STAGES - 2>();  // this thread's copies of tile tt are done
            __syncthreads();              // everyone's are, and tile tt - 1 is consumed
            if (tt + STAGES - 1 < tiles)
                issue(r0, nrows, tt + STAGES - 1, slot == 0 ? STAGES - 1 : slot - 1);
            kp_async_commit();
            const uint8_t *stage = stages + slot * S::stage_bytes;
            slot = slot + 1 == STAGES ? 0 : slot + 1;
            // Every item of the group, without branches between them: those
            // past a short tile's end have zero weight bytes and activations.
#pragma unroll
            for (int j = 0; j < S::per_warp; j++) kp_qmvm_item<D, S>(stage, warp * S::per_warp + j, cur[j], acc);
            // The next tile's activations load while this block waits for its weights.
            if (tt + 1 < tiles) {
                x.next_tile();
                x.load(group_items(tile_items(tt + 1)), cur);
            }
        }
        // The warps' sums: lane (g, t)'s acc[e] is row g + 8 (e / 2), batch
        // row 2t + e % 2.
        __syncthreads();  // every warp is done with the stages
        float4 *sums = (float4 *)stages;
        sums[warp * 32 + lane] = make_float4(acc[0], acc[1], acc[2], acc[3]);
        __syncthreads();
        if ((int)threadIdx.x < R * 8) {
            const int r = threadIdx.x / 8, c = threadIdx.x % 8;
            const int from = (r % 8) * 4 + c / 2, e = 2 * (r / 8) + c % 2;
            float sum = 0.0f;
#pragma unroll
            for (int k = 0; k < KP_QMV_MMA_WARPS; k++) sum += ((const float *)&sums[k * 32 + from])[e];
            if (r < nrows && c < nb)
                kp_qmv_store(dst, a.dst_dtype,
                             (kp_idx)c * (kp_idx)a.dst_batch_stride + (r0 + r) * (kp_idx)a.dst_row_stride, sum);
        }
        __syncthreads();  // the sums are read before the next row group's copies
    }
}
#endif
