// The quantized mat-mat of prompt batches: dst (batch x rows) = weights
// (rows x cols, a GGUF format) x activations (batch x cols, already Q8_1 in
// the mat-vec's workspace layout). A block of KP_QMM_BLOCK threads computes
// a tile of MR weight rows x NB activation rows (kp_quant_abi.h), walking
// the columns KP_QMM_ITEMS 32-element items (one K-quant block) a step:
//  1. each (row, item) of the step is decoded once, straight from global
//     memory (kp_qdecode::item), into shared memory as 32 signed bytes with
//     the format's bias already subtracted, beside its f32 scales/offsets;
//  2. the activations' bytes and metadata of the step are copied beside
//     them;
//  3. the products: int8 mma.sync on NVIDIA sm_80+ (2 x 2 warps, each a
//     (MR/2) x (NB/2) part of the tile), dp4a elsewhere (a thread a few rows
//     x a few batch rows). Each item's exact integer sums are scaled into
//     f32 accumulators, as the mat-vec does.
// Both halves of every 32-byte row in shared memory are swapped on rows
// 4..7 of each 8 (kp_qmm_half), so the 8 rows an ldmatrix reads hit
// distinct banks.
#pragma once
#include "kp_mma.cuh"
#include "kp_quant.cuh"
#include "kp_quant_abi.h"

#define KP_QMM_ITEMS 8

template <int MR, int NB> struct kp_qmm_smem {
    uint4 w[KP_QMM_ITEMS][MR][2];        // decoded weights, 16-byte halves swapped per kp_qmm_half
    float4 w_scale[KP_QMM_ITEMS][MR];    // scale_lo, scale_hi, offset_lo, offset_hi
    uint4 x[KP_QMM_ITEMS][NB][2];        // the activations' bytes, as w
    uint2 x_meta[KP_QMM_ITEMS][NB];      // their kp_qmv_meta
};

KP_DEVICE int kp_qmm_half(int row, int half) { return half ^ ((row >> 2) & 1); }

// q (bytes below 128) minus the format's bias, as signed bytes: adding 128
// first keeps every byte's subtraction from borrowing.
template <typename D> KP_DEVICE uint32_t kp_qmm_unbias(int q) {
    if (D::bias == 0)
        return (uint32_t)q;
    return (((uint32_t)q | 0x80808080u) - (uint32_t)D::bias * 0x01010101u) ^ 0x80808080u;
}

template <typename D, int MR, int NB>
KP_DEVICE void kp_qmm_load_weights(kp_qmm_smem<MR, NB> &s, const kp_qmv_args &a, const uint8_t *w,
                                   kp_idx r0, kp_idx i0, kp_idx items_per_row) {
    constexpr int per_thread = MR * KP_QMM_ITEMS / KP_QMM_BLOCK;
    const int i = threadIdx.x % KP_QMM_ITEMS;
    const kp_idx item = i0 + (kp_idx)i;
#pragma unroll
    for (int j = 0; j < per_thread; j++) {
        const int r = (int)threadIdx.x / KP_QMM_ITEMS + j * (KP_QMM_BLOCK / KP_QMM_ITEMS);
        kp_qitem it;
        if (r0 + (kp_idx)r < (kp_idx)a.rows && item < items_per_row) {
            D::item(w + (r0 + (kp_idx)r) * (kp_idx)a.w_row_stride + item / D::items * D::bytes,
                    (int)(item % D::items), it);
        } else {  // past the matrix: zero bytes and scales add nothing
#pragma unroll
            for (int k = 0; k < 8; k++) it.q[k] = D::bias * 0x01010101;
            it.scale_lo = it.scale_hi = it.offset_lo = it.offset_hi = 0.0f;
        }
        uint32_t q[8];
#pragma unroll
        for (int k = 0; k < 8; k++) q[k] = kp_qmm_unbias<D>(it.q[k]);
        s.w[i][r][kp_qmm_half(r, 0)] = make_uint4(q[0], q[1], q[2], q[3]);
        s.w[i][r][kp_qmm_half(r, 1)] = make_uint4(q[4], q[5], q[6], q[7]);
        s.w_scale[i][r] = make_float4(it.scale_lo, it.scale_hi, it.offset_lo, it.offset_hi);
    }
}

template <int MR, int NB>
KP_DEVICE void kp_qmm_load_act(kp_qmm_smem<MR, NB> &s, const kp_qmv_args &a, const int8_t *qs,
                               const kp_qmv_meta *meta, kp_idx b0, kp_idx i0, kp_idx items_per_row,
                               kp_idx meta_stride) {
    // 16-byte pieces, consecutive along each batch row (the step's 256 bytes)
    for (int p = threadIdx.x; p < KP_QMM_ITEMS * NB * 2; p += KP_QMM_BLOCK) {
        const int h = p & 1, i = (p >> 1) % KP_QMM_ITEMS, n = (p >> 1) / KP_QMM_ITEMS;
        const kp_idx item = i0 + (kp_idx)i, b = b0 + (kp_idx)n;
        uint4 v = make_uint4(0u, 0u, 0u, 0u);
        if (b < (kp_idx)a.batch && item < items_per_row)
            v = ((const uint4 *)(qs + b * (kp_idx)a.cols + item * 32))[h];
        s.x[i][n][kp_qmm_half(n, h)] = v;
    }
    for (int p = threadIdx.x; p < KP_QMM_ITEMS * NB; p += KP_QMM_BLOCK) {
        const int i = p % KP_QMM_ITEMS, n = p / KP_QMM_ITEMS;
        const kp_idx item = i0 + (kp_idx)i, b = b0 + (kp_idx)n;
        uint2 m = make_uint2(0u, 0u);
        if (b < (kp_idx)a.batch && item < items_per_row)
            m = *(const uint2 *)(meta + b * meta_stride + item);
        s.x_meta[i][n] = m;
    }
}

// One item's term for one (weight row, batch row): the exact sums of the
// two 16-element halves (dot_hi unused, 0, for formats with one scale).
template <typename D>
KP_DEVICE float kp_qmm_term(const float4 &ws, uint2 meta, int dot_lo, int dot_hi) {
    const float d = __uint_as_float(meta.x);
    const int sum_lo = (int)(int16_t)(meta.y & 0xffffu), sum_hi = (int)(int16_t)(meta.y >> 16);
    float v;
    if (D::split) {
        v = ws.x * (float)dot_lo + ws.y * (float)dot_hi;
        if (D::has_offset)
            v += ws.z * (float)sum_lo + ws.w * (float)sum_hi;
    } else {
        v = ws.x * (float)(dot_lo + dot_hi);
        if (D::has_offset)
            v += ws.z * (float)(sum_lo + sum_hi);
    }
    return d * v;
}

#if KP_HAS_MMA_16
// The warp's (MR/2) x (NB/2) part: MT x NT fragments of 16 x 8.
template <int MR, int NB> struct kp_qmm_warp {
    static constexpr int MT = MR / 32, NT = NB / 16;
    float acc[MT][NT][4];
};

template <typename D, int MR, int NB>
KP_DEVICE void kp_qmm_products(const kp_qmm_smem<MR, NB> &s, kp_qmm_warp<MR, NB> &c) {
    constexpr int MT = kp_qmm_warp<MR, NB>::MT, NT = kp_qmm_warp<MR, NB>::NT;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int m0 = (warp % 2) * (MR / 2), n0 = (warp / 2) * (NB / 2);
#pragma unroll 2
    for (int i = 0; i < KP_QMM_ITEMS; i++) {
        uint32_t af[MT][4], bf[NT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            // matrices: rows 0-7 / 8-15 of the first 16 bytes, then of the last 16
            const int r = m0 + 16 * mt + (lane & 7) + 8 * ((lane >> 3) & 1);
            kp_ldmatrix_x4(af[mt], &s.w[i][r][kp_qmm_half(r, lane >> 4)]);
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
            if (nt + 1 < NT) {  // matrices: rows 0-7 first / last 16 bytes, then rows 8-15
                const int n = n0 + 8 * nt + (lane & 7) + 8 * (lane >> 4);
                uint32_t r[4];
                kp_ldmatrix_x4(r, &s.x[i][n][kp_qmm_half(n, (lane >> 3) & 1)]);
                bf[nt][0] = r[0];
                bf[nt][1] = r[1];
                bf[nt + 1][0] = r[2];
                bf[nt + 1][1] = r[3];
            } else {
                const int n = n0 + 8 * nt + (lane & 7);
                kp_ldmatrix_x2(bf[nt], &s.x[i][n][kp_qmm_half(n, (lane >> 3) & 1)]);
            }
        }
        float4 ws[MT][2];
#pragma unroll
        for (int mt = 0; mt < MT; mt++) {
            ws[mt][0] = s.w_scale[i][m0 + 16 * mt + g];
            ws[mt][1] = s.w_scale[i][m0 + 16 * mt + g + 8];
        }
        uint4 meta[NT];  // batch rows 2t and 2t + 1 of each fragment
#pragma unroll
        for (int nt = 0; nt < NT; nt++) meta[nt] = *(const uint4 *)&s.x_meta[i][n0 + 8 * nt + 2 * t];
#pragma unroll
        for (int mt = 0; mt < MT; mt++)
#pragma unroll
            for (int nt = 0; nt < NT; nt++) {
                int lo[4], hi[4] = {0, 0, 0, 0};
                if (D::split) {
                    kp_mma_s8_k16(lo, af[mt][0], af[mt][1], bf[nt][0]);
                    kp_mma_s8_k16(hi, af[mt][2], af[mt][3], bf[nt][1]);
                } else {
                    kp_mma_s8_k32(lo, af[mt], bf[nt]);
                }
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const uint2 m = e & 1 ? make_uint2(meta[nt].z, meta[nt].w)
                                          : make_uint2(meta[nt].x, meta[nt].y);
                    c.acc[mt][nt][e] += kp_qmm_term<D>(ws[mt][e >> 1], m, lo[e], hi[e]);
                }
            }
    }
}

template <int MR, int NB>
KP_DEVICE void kp_qmm_write(const kp_qmm_warp<MR, NB> &c, const kp_qmv_args &a, void *dst, kp_idx r0,
                            kp_idx b0) {
    constexpr int MT = kp_qmm_warp<MR, NB>::MT, NT = kp_qmm_warp<MR, NB>::NT;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int m0 = (warp % 2) * (MR / 2), n0 = (warp / 2) * (NB / 2);
#pragma unroll
    for (int mt = 0; mt < MT; mt++)
#pragma unroll
        for (int nt = 0; nt < NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const kp_idx r = r0 + (kp_idx)(m0 + 16 * mt + g + 8 * (e >> 1));
                const kp_idx b = b0 + (kp_idx)(n0 + 8 * nt + 2 * t + (e & 1));
                if (r < (kp_idx)a.rows && b < (kp_idx)a.batch)
                    kp_qmv_store(dst, a.dst_dtype,
                                 b * (kp_idx)a.dst_batch_stride + r * (kp_idx)a.dst_row_stride,
                                 c.acc[mt][nt][e]);
            }
}
#else
// A thread's RJ rows (tr + j MR/RJ) x NK batch rows (tn + k NB/NK).
template <int MR, int NB> struct kp_qmm_warp {
    static constexpr int RJ = MR / 16, NK = NB * 16 / KP_QMM_BLOCK;
    float acc[RJ][NK];
};

template <typename D, int MR, int NB>
KP_DEVICE void kp_qmm_products(const kp_qmm_smem<MR, NB> &s, kp_qmm_warp<MR, NB> &c) {
    constexpr int RJ = kp_qmm_warp<MR, NB>::RJ, NK = kp_qmm_warp<MR, NB>::NK;
    const int tr = threadIdx.x % 16, tn = threadIdx.x / 16;
    for (int i = 0; i < KP_QMM_ITEMS; i++) {
        uint4 wq[RJ][2];
        float4 ws[RJ];
#pragma unroll
        for (int j = 0; j < RJ; j++) {
            const int r = tr + 16 * j;
            wq[j][0] = s.w[i][r][kp_qmm_half(r, 0)];
            wq[j][1] = s.w[i][r][kp_qmm_half(r, 1)];
            ws[j] = s.w_scale[i][r];
        }
#pragma unroll
        for (int k = 0; k < NK; k++) {
            const int n = tn + (KP_QMM_BLOCK / 16) * k;
            const uint4 lo = s.x[i][n][kp_qmm_half(n, 0)], hi = s.x[i][n][kp_qmm_half(n, 1)];
            const uint2 m = s.x_meta[i][n];
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
                c.acc[j][k] += D::split ? kp_qmm_term<D>(ws[j], m, dl, dh)
                                        : kp_qmm_term<D>(ws[j], m, dl + dh, 0);
            }
        }
    }
}

template <int MR, int NB>
KP_DEVICE void kp_qmm_write(const kp_qmm_warp<MR, NB> &c, const kp_qmv_args &a, void *dst, kp_idx r0,
                            kp_idx b0) {
    constexpr int RJ = kp_qmm_warp<MR, NB>::RJ, NK = kp_qmm_warp<MR, NB>::NK;
    const int tr = threadIdx.x % 16, tn = threadIdx.x / 16;
#pragma unroll
    for (int j = 0; j < RJ; j++)
#pragma unroll
        for (int k = 0; k < NK; k++) {
            const kp_idx r = r0 + (kp_idx)(tr + 16 * j), b = b0 + (kp_idx)(tn + (KP_QMM_BLOCK / 16) * k);
            if (r < (kp_idx)a.rows && b < (kp_idx)a.batch)
                kp_qmv_store(dst, a.dst_dtype, b * (kp_idx)a.dst_batch_stride + r * (kp_idx)a.dst_row_stride,
                             c.acc[j][k]);
        }
}
#endif

template <int F, int NB>
KP_DEVICE void kp_qmatmul(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                          const kp_qmv_meta *act_meta, void *dst) {
    typedef kp_qdecode<F> D;
    constexpr int MR = KP_QMM_ROWS(NB);
    static_assert(MR * KP_QMM_ITEMS % KP_QMM_BLOCK == 0 && MR % 32 == 0 && NB % 8 == 0,
                  "the tile splits evenly over the threads and the 2 x 2 warps");
    __shared__ kp_qmm_smem<MR, NB> s;
    const kp_idx r0 = (kp_idx)blockIdx.x * MR, b0 = (kp_idx)blockIdx.y * NB;
    const kp_idx items_per_row = (kp_idx)a.cols / 32, meta_stride = KP_QMV_META_STRIDE(items_per_row);
    kp_qmm_warp<MR, NB> c = {};
    for (kp_idx i0 = 0; i0 < items_per_row; i0 += KP_QMM_ITEMS) {
        kp_qmm_load_weights<D>(s, a, w, r0, i0, items_per_row);
        kp_qmm_load_act(s, a, act_qs, act_meta, b0, i0, items_per_row, meta_stride);
        __syncthreads();
        kp_qmm_products<D>(s, c);
        __syncthreads();  // the step is consumed before the next one overwrites it
    }
    kp_qmm_write(c, a, dst, r0, b0);
}
