// The quantized mat-mat of prompt batches: dst (batch x rows) = weights
// (rows x cols, a GGUF format) x activations (batch x cols, already Q8_1 in
// the mat-vec's workspace layout). A block of KP_QMM_BLOCK threads computes
// a tile of MR weight rows x NB activation rows (kp_quant_abi.h), walking
// the columns KP_QMM_ITEMS 32-element items a step, the copies of the next
// step's activations (asynchronous where the target can) overlapping the
// products of the current one. Each item's exact integer sums are scaled
// into f32 accumulators, as the mat-vec does.
//  - On int8 tensor cores (NVIDIA sm_80+), kp_qmatmul_mma.cuh: the raw
//    weight blocks are staged too, and the products are mma.sync.
//  - Elsewhere (below): each (row, item) of a step is decoded once, straight
//    from global memory (kp_qdecode::item), into registers while the step
//    before is multiplied, then stored in shared memory as 32 signed bytes
//    with the format's bias subtracted, beside its f32 scales and offsets;
//    a thread multiplies a few rows x a few batch rows with dp4a, or, on
//    AMD's matrix cores (CDNA), a wave multiplies 16 rows x the 16 batch
//    rows with MFMA (kp_qmm_waves).
#pragma once
#include "kp_async.cuh"
#include "kp_mma.cuh"
#include "kp_quant.cuh"
#include "kp_quant_abi.h"

// The kernels' launch bounds, by tile (KP_QMM_BOUNDS_<NB>) and format, on
// the mma path. The small tile states one block, without which ptxas kept
// it at 64 registers and spilled. Where a multiprocessor's shared memory
// holds four of the large tile's blocks (sm_80, sm_90, sm_100: 31-59 KB
// each), the formats whose decoding fits (KP_QMM_LEAN) are held to 128
// registers, four blocks, the others to 168, three. Measured on an H100
// (bf16, batch 512 and 2048): four blocks ran Q4_0 and Q8_0 1.04-1.27x
// faster than three, but Q6_K, spilling 92 bytes, 0.83-0.95x (0.66x at
// batch 64 on 14336 rows).
#define KP_QMM_LEAN(f)                                                                     \
    ((f) == KP_QF_Q4_0 || (f) == KP_QF_Q5_0 || (f) == KP_QF_Q8_0 || (f) == KP_QF_Q8_1 || \
     (f) == KP_QF_IQ4_NL || (f) == KP_QF_IQ4_XS)
#if KP_HAS_MMA_16
#define KP_QMM_BOUNDS_16(f) __launch_bounds__(KP_QMM_BLOCK, 1)
#if __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || __CUDA_ARCH__ == 1000
#define KP_QMM_BOUNDS_64(f) __launch_bounds__(KP_QMM_BLOCK, KP_QMM_LEAN(f) ? 4 : 3)
#else
#define KP_QMM_BOUNDS_64(f) __launch_bounds__(KP_QMM_BLOCK)
#endif
#else
#define KP_QMM_BOUNDS_16(f) __launch_bounds__(KP_QMM_BLOCK)
#define KP_QMM_BOUNDS_64(f) __launch_bounds__(KP_QMM_BLOCK)
#endif

// Which activation rows a tile's NB batch rows are, and where their results
// go: has(n) (the tile's batch row n exists), x_row(n) (its row of the Q8_1
// activations), dst_at(n) (the offset in elements of its dst row, to which
// the weight row times dst_row_stride adds).
struct kp_qmm_dense {  // batch rows b0 .. of a plain product
    kp_idx b0, batch;
    int64_t dst_batch_stride;
    KP_DEVICE bool has(int n) const { return b0 + (kp_idx)n < batch; }
    KP_DEVICE kp_idx x_row(int n) const { return b0 + (kp_idx)n; }
    KP_DEVICE int64_t dst_at(int n) const { return (int64_t)(b0 + (kp_idx)n) * dst_batch_stride; }
};

// A step's activations in shared memory: their bytes, halves swapped per
// kp_qmm_half, and their kp_qmv_meta, an item's batch rows together.
template <int NB> struct kp_qmm_act_stage {
    uint4 x[KP_QMM_ITEMS][NB][2];
    uint2 x_meta[KP_QMM_ITEMS][NB];
};

// The activations' halves are swapped on rows 4..7 of each 8, so the 8 rows
// an ldmatrix reads hit distinct banks.
KP_DEVICE int kp_qmm_half(int row, int half) { return half ^ ((row >> 2) & 1); }

// q (bytes below 128) minus the format's bias, as signed bytes: adding 128
// first keeps every byte's subtraction from borrowing.
template <typename D> KP_DEVICE uint32_t kp_qmm_unbias(int q) {
    if (D::bias == 0)
        return (uint32_t)q;
    return (((uint32_t)q | 0x80808080u) - (uint32_t)D::bias * 0x01010101u) ^ 0x80808080u;
}

// A thread's share of a step's activation copies: the 16-byte halves of
// the step's items in one batch row, BLOCK / NB threads a row (piece k =
// thread % (BLOCK / NB) + j * (BLOCK / NB) of the row is half k % 2 of item
// k / 2), and the row's metadata for two items (8 bytes each) from threads
// 0 .. 2 NB - 1. The rows' sources at item 0 (NULL past the batch) are
// worked out once for the tile's whole walk along the columns.
template <int NB> struct kp_qmm_act_plan {
    static constexpr int per_row = KP_QMM_BLOCK / NB, per_thread = 2 * KP_QMM_ITEMS / per_row;
    static_assert(KP_QMM_BLOCK % NB == 0 && (2 * KP_QMM_ITEMS) % per_row == 0 && 2 * NB <= KP_QMM_BLOCK,
                  "a step's pieces split evenly over the threads");
    const int8_t *q;
    const kp_qmv_meta *meta;
    KP_DEVICE static int row() { return (int)threadIdx.x / per_row; }
    KP_DEVICE static int piece(int j) { return (int)threadIdx.x % per_row + j * per_row; }
    KP_DEVICE static int meta_row() { return (int)threadIdx.x / 2; }
    KP_DEVICE static int meta_item() { return 2 * (threadIdx.x % 2); }
};

template <int NB, typename B>
KP_DEVICE void kp_qmm_act_plan_init(kp_qmm_act_plan<NB> &ap, const kp_qmv_args &a, const int8_t *qs,
                                    const kp_qmv_meta *meta, const B &rows, kp_idx meta_stride) {
    typedef kp_qmm_act_plan<NB> P;
    ap.q = rows.has(P::row()) ? qs + rows.x_row(P::row()) * (kp_idx)a.cols : NULL;
    const int mn = P::meta_row();
    ap.meta = mn < NB && rows.has(mn) ? meta + rows.x_row(mn) * meta_stride + P::meta_item() : NULL;
}

template <int NB>
KP_DEVICE void kp_qmm_load_act(kp_qmm_act_stage<NB> &s, const kp_qmm_act_plan<NB> &ap, kp_idx i0,
                               kp_idx items_per_row) {
    typedef kp_qmm_act_plan<NB> P;
    const int n = P::row();
#pragma unroll
    for (int j = 0; j < P::per_thread; j++) {
        const int k = P::piece(j), i = k >> 1;
        uint4 *to = &s.x[i][n][kp_qmm_half(n, k & 1)];
        if (ap.q && i0 + (kp_idx)i < items_per_row)
            kp_async_copy16(to, ap.q + (i0 + (kp_idx)i) * 32 + 16 * (k & 1));
        else
            *to = make_uint4(0u, 0u, 0u, 0u);
    }
    if ((int)threadIdx.x < 2 * NB) {
        const int mn = P::meta_row(), mi = P::meta_item();
#pragma unroll
        for (int e = 0; e < 2; e++) {
            uint2 *to = &s.x_meta[mi + e][mn];
            if (ap.meta && i0 + (kp_idx)(mi + e) < items_per_row)
                kp_async_copy<8>(to, ap.meta + i0 + e);
            else
                *to = make_uint2(0u, 0u);
        }
    }
}

// Batch rows n0 .. of another policy's.
template <typename B> struct kp_qmm_sub {
    const B &base;
    int n0;
    KP_DEVICE bool has(int n) const { return base.has(n0 + n); }
    KP_DEVICE kp_idx x_row(int n) const { return base.x_row(n0 + n); }
    KP_DEVICE int64_t dst_at(int n) const { return base.dst_at(n0 + n); }
};

#if KP_HAS_MMA_16
// Integer to f32 without a conversion instruction (those issue at a
// fraction of the f32 rate, and every result takes one): the mma adds
// KP_QMM_MAGIC, whose bits are the f32 1.5 * 2^23, to each exact sum n,
// |n| < 2^22, giving the bits of the f32 1.5 * 2^23 + n, from which one
// exact subtraction leaves n. Measured no faster on an H100, whose mat-mat
// is bound elsewhere; it costs nothing.
#define KP_QMM_MAGIC 0x4B400000
#define KP_QMM_MAGIC_F 12582912.0f  // the same as an f32
KP_DEVICE float kp_qmm_unmagic(int v) { return __int_as_float(v) - KP_QMM_MAGIC_F; }
KP_DEVICE float kp_qmm_i2f(int n) { return kp_qmm_unmagic(n + KP_QMM_MAGIC); }

// One item's term from the mma's biased sums (dot_hi unused for formats
// with one scale) and the batch row's d and f32 sums of q.
template <typename D>
KP_DEVICE float kp_qmm_term_mma(const float4 &ws, float d, float sum_lo, float sum_hi, int dot_lo,
                                int dot_hi) {
    float v;
    if (D::split) {
        v = ws.x * kp_qmm_unmagic(dot_lo) + ws.y * kp_qmm_unmagic(dot_hi);
        if (D::has_offset)
            v += ws.z * sum_lo + ws.w * sum_hi;
    } else {
        v = ws.x * kp_qmm_unmagic(dot_lo);
        if (D::has_offset)
            v += ws.z * (sum_lo + sum_hi);
    }
    return d * v;
}

#include "kp_qmatmul_mma.cuh"
#else
// A stage of the dp4a path: a step's decoded weights and their scales
// beside its activations.
template <int MR, int NB> struct kp_qmm_smem {
    uint4 w[MR][2 * KP_QMM_ITEMS];          // decoded weights, a row's items together (kp_qmm_wslot)
    float4 w_scale[KP_QMM_ITEMS][MR + 2];   // scale_lo, scale_hi, offset_lo, offset_hi; 2 spare rows
                                            // shift each item 32 bytes of banks from the last
    kp_qmm_act_stage<NB> act;
};

// Where half h of item i of decoded weight row r sits in s.w[r]: a row's 8
// pieces of 16 bytes permuted by the row's low three bits, so the same piece
// of 8 rows lands in 8 different banks, and so do a row pair's pieces of
// one half.
KP_DEVICE int kp_qmm_wslot(int r, int i, int h) { return (2 * i + h) ^ (r & 7); }

// A thread's share of a step's weights, decoded and waiting in registers.
template <int MR> struct kp_qmm_pending {
    static constexpr int per_thread = MR * KP_QMM_ITEMS / KP_QMM_BLOCK;
    uint32_t q[per_thread][8];
    float4 scale[per_thread];
};

// Thread t takes item t % KP_QMM_ITEMS of each step in rows t / KP_QMM_ITEMS
// + j * (the rows per pass): a warp's loads cover a few rows' consecutive
// items. Its first row's first byte and how many of its rows are in the
// matrix are worked out once for the tile's whole walk along the columns,
// so a step's decoding only adds its item's offset.
struct kp_qmm_weight_rows {
    static constexpr int per_pass = KP_QMM_BLOCK / KP_QMM_ITEMS;
    const uint8_t *row0;
    kp_idx pass_stride;  // bytes from one of the thread's rows to the next
    int n;               // of the thread's rows, how many are in the matrix
};

KP_DEVICE void kp_qmm_weight_rows_init(kp_qmm_weight_rows &wr, const kp_qmv_args &a, const uint8_t *w,
                                       kp_idx r0) {
    typedef kp_qmm_weight_rows W;
    const kp_idx r = r0 + (kp_idx)threadIdx.x / KP_QMM_ITEMS;
    wr.row0 = w + r * (kp_idx)a.w_row_stride;
    wr.pass_stride = (kp_idx)W::per_pass * (kp_idx)a.w_row_stride;
    wr.n = r < (kp_idx)a.rows ? (int)(((kp_idx)a.rows - r + W::per_pass - 1) / W::per_pass) : 0;
}

template <typename D, int MR>
KP_DEVICE void kp_qmm_decode(kp_qmm_pending<MR> &p, const kp_qmm_weight_rows &wr, kp_idx i0,
                             kp_idx items_per_row) {
    const kp_idx item = i0 + (kp_idx)(threadIdx.x % KP_QMM_ITEMS);
    const bool in_row = item < items_per_row;
    const kp_idx at = item / D::items * D::bytes;
#pragma unroll
    for (int j = 0; j < kp_qmm_pending<MR>::per_thread; j++) {
        kp_qitem it;
        if (j < wr.n && in_row) {
            D::item(wr.row0 + j * wr.pass_stride + at, (int)(item % D::items), it);
        } else {  // past the matrix: zero bytes and scales add nothing
#pragma unroll
            for (int k = 0; k < 8; k++) it.q[k] = D::bias * 0x01010101;
            it.scale_lo = it.scale_hi = it.offset_lo = it.offset_hi = 0.0f;
        }
#pragma unroll
        for (int k = 0; k < 8; k++) p.q[j][k] = kp_qmm_unbias<D>(it.q[k]);
        p.scale[j] = make_float4(it.scale_lo, it.scale_hi, it.offset_lo, it.offset_hi);
    }
}

template <int MR, int NB>
KP_DEVICE void kp_qmm_store_weights(kp_qmm_smem<MR, NB> &s, const kp_qmm_pending<MR> &p) {
    const int i = threadIdx.x % KP_QMM_ITEMS;
#pragma unroll
    for (int j = 0; j < kp_qmm_pending<MR>::per_thread; j++) {
        const int r = (int)threadIdx.x / KP_QMM_ITEMS + j * (KP_QMM_BLOCK / KP_QMM_ITEMS);
        s.w[r][kp_qmm_wslot(r, i, 0)] = make_uint4(p.q[j][0], p.q[j][1], p.q[j][2], p.q[j][3]);
        s.w[r][kp_qmm_wslot(r, i, 1)] = make_uint4(p.q[j][4], p.q[j][5], p.q[j][6], p.q[j][7]);
        s.w_scale[i][r] = p.scale[j];
    }
}

// A thread's RJ rows (tr + j MR/RJ) x NK batch rows (tn + k NB/NK).
template <int MR, int NB> struct kp_qmm_warp {
    static constexpr int RJ = MR / 16, NK = NB * 16 / KP_QMM_BLOCK;
    float acc[RJ][NK];
};

template <typename D, int MR, int NB>
KP_DEVICE void kp_qmm_products(const kp_qmm_smem<MR, NB> &s, kp_qmm_warp<MR, NB> &c) {
    constexpr int RJ = kp_qmm_warp<MR, NB>::RJ, NK = kp_qmm_warp<MR, NB>::NK;
    const int tr = threadIdx.x % 16, tn = threadIdx.x / 16;
    // Not unrolled: the body is RJ x NK x 8 dot products (four multiply-adds
    // each on gfx900), and unrolled it multiplied the module's compile time.
#pragma unroll 1
    for (int i = 0; i < KP_QMM_ITEMS; i++) {
        uint4 wq[RJ][2];
        float4 ws[RJ];
#pragma unroll
        for (int j = 0; j < RJ; j++) {
            const int r = tr + 16 * j;
            wq[j][0] = s.w[r][kp_qmm_wslot(r, i, 0)];
            wq[j][1] = s.w[r][kp_qmm_wslot(r, i, 1)];
            ws[j] = s.w_scale[i][r];
        }
#pragma unroll
        for (int k = 0; k < NK; k++) {
            const int n = tn + (KP_QMM_BLOCK / 16) * k;
            const uint4 lo = s.act.x[i][n][kp_qmm_half(n, 0)], hi = s.act.x[i][n][kp_qmm_half(n, 1)];
            const uint2 m = s.act.x_meta[i][n];
#pragma unroll
            for (int j = 0; j < RJ; j++) {
                int dl = kp_dp4a((int)wq[j][0].x, (int)lo.x, 0);
                dl = kp_dp4a((int)wq[j][0].y, (int)lo.y, dl);
                dl = kp_dp4a((int)wq[j][0].z, (int)lo.z, dl);
                dl = kp_dp4a((int)wq[j][0].w, (int)lo.w, dl);
                int dh = kp_dp4a((int)wq[j][1].x, (int)hi.x, 0);
                dh = kp_dp4a((int)wq[j][1].y, (int)hi.y, dh);
                dh = kp_dp4a((int)wq[j][1].z, (int)hi.z, dh);
                dh = kp_dp4a((int)wq[j][1].w, (int)hi.w, dh);
                // the bias is already out of the stored weights
                c.acc[j][k] += kp_qitem_dot<D, false>(ws[j].x, ws[j].y, ws[j].z, ws[j].w, dl, dh, m);
            }
        }
    }
}

template <int MR, int NB, typename B>
KP_DEVICE void kp_qmm_write(const kp_qmm_warp<MR, NB> &c, const kp_qmv_args &a, void *dst, kp_idx r0,
                            const B &rows) {
    constexpr int RJ = kp_qmm_warp<MR, NB>::RJ, NK = kp_qmm_warp<MR, NB>::NK;
    const int tr = threadIdx.x % 16, tn = threadIdx.x / 16;
#pragma unroll
    for (int j = 0; j < RJ; j++)
#pragma unroll
        for (int k = 0; k < NK; k++) {
            const kp_idx r = r0 + (kp_idx)(tr + 16 * j);
            const int n = tn + (KP_QMM_BLOCK / 16) * k;
            if (r < (kp_idx)a.rows && rows.has(n))
                kp_qmv_store(dst, a.dst_dtype, (kp_idx)rows.dst_at(n) + r * (kp_idx)a.dst_row_stride,
                             c.acc[j][k]);
        }
}

#if KP_HAS_MFMA_I8
// On AMD matrix cores the products of a step are wave-wide 16 x 16 integer
// products instead (kp_mma.cuh): wave v of the block's two multiplies rows
// 16v .. 16v + 15 of the tile by its 16 batch rows, an item at a time, from
// the same decoded weights and activations in shared memory; lane l reads
// word KP_MFMA_WORD(l) of each half of row 16v + KP_MFMA_IN(l) and of batch
// row KP_MFMA_IN(l), and scales the sums of rows 16v + KP_MFMA_OUT_ROW(l, r)
// x batch row KP_MFMA_OUT_COL(l). The sums are the dp4a products' exactly,
// scaled by the same code in the same order, so the two give the same
// results bit for bit.
template <int MR, int NB> struct kp_qmm_waves {
    static_assert(NB == 16 && MR == 16 * (KP_QMM_BLOCK / KP_MFMA_WAVE), "a wave's 16 x 16 per 16 rows");
    float acc[4];
};

template <typename D, int MR, int NB>
KP_DEVICE void kp_qmm_products(const kp_qmm_smem<MR, NB> &s, kp_qmm_waves<MR, NB> &c) {
    const int lane = threadIdx.x % KP_MFMA_WAVE, r16 = 16 * (threadIdx.x / KP_MFMA_WAVE);
    const int ra = r16 + KP_MFMA_IN(lane), n = KP_MFMA_IN(lane), word = KP_MFMA_WORD(lane);
    const kp_mfma_i32x4 zero = {0, 0, 0, 0};
    // Not unrolled, as the dp4a form: unrolled, the items' loads and sums
    // live together (up to 228 registers, Q2_K's large tile on gfx940).
#pragma unroll 1
    for (int i = 0; i < KP_QMM_ITEMS; i++) {
        const int a_lo = ((const int *)&s.w[ra][kp_qmm_wslot(ra, i, 0)])[word];
        const int a_hi = ((const int *)&s.w[ra][kp_qmm_wslot(ra, i, 1)])[word];
        const int b_lo = ((const int *)&s.act.x[i][n][kp_qmm_half(n, 0)])[word];
        const int b_hi = ((const int *)&s.act.x[i][n][kp_qmm_half(n, 1)])[word];
        const uint2 m = s.act.x_meta[i][KP_MFMA_OUT_COL(lane)];  // its results' batch row
        kp_mfma_i32x4 lo, hi = zero;  // formats with one scale: lo is the whole item's sum
        if (D::split) {
            lo = kp_mfma_s8_k16(a_lo, b_lo, zero);
            hi = kp_mfma_s8_k16(a_hi, b_hi, zero);
        } else {
            lo = kp_mfma_s8_k32(a_lo, a_hi, b_lo, b_hi, zero);
        }
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const float4 ws = s.w_scale[i][r16 + KP_MFMA_OUT_ROW(lane, r)];
            c.acc[r] += kp_qitem_dot<D, false>(ws.x, ws.y, ws.z, ws.w, lo[r], hi[r], m);
        }
    }
}

template <int MR, int NB, typename B>
KP_DEVICE void kp_qmm_write(const kp_qmm_waves<MR, NB> &c, const kp_qmv_args &a, void *dst, kp_idx r0,
                            const B &rows) {
    const int lane = threadIdx.x % KP_MFMA_WAVE, n = KP_MFMA_OUT_COL(lane);
#pragma unroll
    for (int r = 0; r < 4; r++) {
        const kp_idx row = r0 + (kp_idx)(16 * (threadIdx.x / KP_MFMA_WAVE) + KP_MFMA_OUT_ROW(lane, r));
        if (row < (kp_idx)a.rows && rows.has(n))
            kp_qmv_store(dst, a.dst_dtype, (kp_idx)rows.dst_at(n) + row * (kp_idx)a.dst_row_stride,
                         c.acc[r]);
    }
}

// A tile's accumulators: on matrix cores, or a thread's dp4a results.
template <int MR, int NB> using kp_qmm_acc = kp_qmm_waves<MR, NB>;
#else
template <int MR, int NB> using kp_qmm_acc = kp_qmm_warp<MR, NB>;
#endif
template <int F, int NB, typename B>
KP_DEVICE void kp_qmatmul_tile(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                               const kp_qmv_meta *act_meta, void *dst, const B &rows, kp_idx r0);

// The large tile where there is no mma (dp4a path): its small tiles one
// after the other. At 64 x 64 a thread's 32 results with four multiply-adds
// a dp4a (gfx900) spilled kilobytes and took minutes to compile.
template <int F, int NB, typename B>
KP_DEVICE void kp_qmatmul_by_small_tiles(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                                         const kp_qmv_meta *act_meta, void *dst, const B &rows,
                                         kp_idx r0) {
    constexpr int SR = KP_QMM_ROWS(KP_QMM_NB_SMALL);
#pragma unroll 1
    for (int rs = 0; rs < KP_QMM_ROWS(NB) / SR; rs++)
#pragma unroll 1
        for (int bs = 0; bs < NB / KP_QMM_NB_SMALL; bs++) {
            const kp_qmm_sub<B> sub = {rows, bs * KP_QMM_NB_SMALL};
            kp_qmatmul_tile<F, KP_QMM_NB_SMALL>(a, w, act_qs, act_meta, dst, sub, r0 + (kp_idx)(rs * SR));
            __syncthreads();  // the small tile's shared memory is read before the next one writes it
        }
}

// The tile of weight rows r0 .. x the batch rows `rows`.
template <int F, int NB, typename B>
KP_DEVICE void kp_qmatmul_tile_steps(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                                     const kp_qmv_meta *act_meta, void *dst, const B &rows, kp_idx r0) {
    typedef kp_qdecode<F> D;
    constexpr int MR = KP_QMM_ROWS(NB);
    static_assert(MR * KP_QMM_ITEMS % KP_QMM_BLOCK == 0, "the tile's items split evenly over the threads");
    __shared__ kp_qmm_smem<MR, NB> s[2];
    const kp_idx items_per_row = (kp_idx)a.cols / 32, meta_stride = KP_QMV_META_STRIDE(items_per_row);
    const kp_idx steps = (items_per_row + KP_QMM_ITEMS - 1) / KP_QMM_ITEMS;
    kp_qmm_acc<MR, NB> c = {};
    kp_qmm_weight_rows wr;
    kp_qmm_weight_rows_init(wr, a, w, r0);
    kp_qmm_act_plan<NB> ap;
    kp_qmm_act_plan_init(ap, a, act_qs, act_meta, rows, meta_stride);
    kp_qmm_pending<MR> next;
    kp_qmm_decode<D>(next, wr, 0, items_per_row);
    kp_qmm_store_weights(s[0], next);
    kp_qmm_load_act(s[0].act, ap, 0, items_per_row);
    kp_async_commit();
    // Step k is multiplied from stage k % 2 while step k + 1's activations
    // are copied into the other stage and its weights decoded into
    // registers, stored there once step k is done. The barrier at the top
    // orders both: step k's stage is complete, and step k - 1's reads of the
    // other stage are over.
    for (kp_idx k = 0; k < steps; k++) {
        kp_async_wait<0>();
        __syncthreads();
        const bool more = k + 1 < steps;
        kp_qmm_smem<MR, NB> &cur = s[k & 1], &other = s[(k & 1) ^ 1];
        if (more) {
            kp_qmm_load_act(other.act, ap, (k + 1) * KP_QMM_ITEMS, items_per_row);
            kp_async_commit();
            kp_qmm_decode<D>(next, wr, (k + 1) * KP_QMM_ITEMS, items_per_row);
        }
        kp_qmm_products<D>(cur, c);
        if (more)
            kp_qmm_store_weights(other, next);
    }
    kp_qmm_write(c, a, dst, r0, rows);
}

#endif

template <int F, int NB, typename B>
KP_DEVICE void kp_qmatmul_tile(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                               const kp_qmv_meta *act_meta, void *dst, const B &rows, kp_idx r0) {
#if KP_HAS_MMA_16
    kp_qmatmul_tile_staged<F, NB>(a, w, act_qs, act_meta, dst, rows, r0);
#else
    if constexpr (NB != KP_QMM_NB_SMALL)
        kp_qmatmul_by_small_tiles<F, NB>(a, w, act_qs, act_meta, dst, rows, r0);
    else
        kp_qmatmul_tile_steps<F, NB>(a, w, act_qs, act_meta, dst, rows, r0);
#endif
}

// A plain product: batch tile blockIdx.y.
template <int F, int NB>
KP_DEVICE void kp_qmatmul(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                          const kp_qmv_meta *act_meta, void *dst) {
    const kp_qmm_dense rows = {(kp_idx)blockIdx.y * NB, (kp_idx)a.batch, a.dst_batch_stride};
    kp_qmatmul_tile<F, NB>(a, w, act_qs, act_meta, dst, rows, (kp_idx)blockIdx.x * KP_QMM_ROWS(NB));
}
