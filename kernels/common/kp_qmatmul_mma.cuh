// The quantized mat-mat on int8 tensor cores (NVIDIA sm_80+; included by
// kp_qmatmul.cuh, which has the dp4a form of other targets and what both
// share). A block of KP_QMM_BLOCK threads walks its tile's columns
// KP_QMM_ITEMS items a step through two stages of dynamic shared memory
// (KP_QMM_SHARED_BYTES in kp_quant_abi.h):
//  - while step k is multiplied, step k + 1's activations and, where a new
//    unit starts, its raw weight blocks (KP_QMM_UNIT_BYTES of each of the
//    tile's rows: the step's blocks, or a 256-element format's super-block
//    every other step) are copied into the other stage: 16-byte pieces from
//    the 16-byte boundary at or before the unit, coalesced, asynchronous
//    (kp_qmm_stage_unit);
//  - lane (g, t) of a warp decodes, for each item, words t and 4 + t of its
//    rows g and g + 8 (kp_qdecode::quad: its A fragment) and their scales
//    straight from the stage; the B fragments come by ldmatrix;
//  - int8 mma.sync, each item's exact integer sums scaled into f32
//    accumulators, two fmas a result (kp_qmm_add_term).
// The warps split a 64-row tile 4 x 1 (16 rows and all the batch rows
// each), so no row is decoded twice, and a 32-row tile 2 x 2.
// The earlier form decoded each (row, item) of a step once, each thread its
// own straight from global memory, into shared memory for ldmatrix; its
// scattered loads kept L1 the busiest unit (ncu, H100, 80 %).
#pragma once

// A unit of a format: the raw bytes of a row staged at once.
template <typename D> struct kp_qmm_units {
    static constexpr int items = KP_QMM_ITEMS > D::items ? KP_QMM_ITEMS : D::items;
    static constexpr int steps = items / KP_QMM_ITEMS;  // that use one unit
    static constexpr int bytes = KP_QMM_UNIT_BYTES(D::elems, D::bytes);
    static constexpr int pieces = KP_QMM_WINDOW(bytes) / 16;  // copied a row
    static constexpr int pitch = KP_QMM_PITCH(bytes);         // a row's share of a stage
    static_assert(bytes == items / D::items * D::bytes && items % KP_QMM_ITEMS == 0 && bytes % 2 == 0,
                  "a unit is whole blocks and whole steps");
};

// Unit `at` (its first byte in a row) of rows 0 .. nrows - 1 (row r at w +
// r * stride, row_bytes long) into a stage's rows. vector (w and stride
// 16-byte aligned): 16-byte pieces from `mis` = at % 16 bytes before the
// unit, asynchronous, but a piece that would pass the row's end (perhaps
// the buffer's) is its bytes by 2-byte loads and zeros after them. Else
// (mis 0): the unit by 2-byte loads. So bytes past the row are zero: the
// items of a short last unit past the row decode to zero scales. Rows past
// the matrix keep stale bytes, whose sums land only in results that are
// not stored.
template <typename D, int MR>
KP_DEVICE void kp_qmm_stage_unit(uint8_t *stage, const uint8_t *w, kp_idx stride, int nrows, kp_idx at,
                                 kp_idx row_bytes, int mis, bool vector) {
    typedef kp_qmm_units<D> U;
    if (vector) {
        constexpr int per_thread = (MR * U::pieces + KP_QMM_BLOCK - 1) / KP_QMM_BLOCK;
        const kp_idx first = at - mis;  // of piece 0
#pragma unroll
        for (int j = 0; j < per_thread; j++) {
            const int c = (int)threadIdx.x + j * KP_QMM_BLOCK, r = c / U::pieces, k = c % U::pieces;
            if (c < MR * U::pieces && r < nrows && first + 16 * (k + 1) <= row_bytes)
                kp_async_copy16(stage + r * U::pitch + 16 * k, w + r * stride + first + 16 * k);
        }
        if (first + 16 * U::pieces <= row_bytes)
            return;
        // The row's last unit: the pieces past its end, in a loop of their
        // own (in the one above they took registers from every unit).
#pragma unroll 1
        for (int j = 0; j < per_thread; j++) {
            const int c = (int)threadIdx.x + j * KP_QMM_BLOCK, r = c / U::pieces, k = c % U::pieces;
            const int64_t n = (int64_t)row_bytes - (int64_t)(first + 16 * k);  // kp_idx is unsigned
            if (c >= MR * U::pieces || r >= nrows || n >= 16)
                continue;
            uint8_t *to = stage + r * U::pitch + 16 * k;
            const uint8_t *from = w + r * stride + first + 16 * k;
            for (int b = 0; b < 16; b += 2) *(uint16_t *)(to + b) = b < n ? *(const uint16_t *)(from + b) : 0;
        }
        return;
    }
    constexpr int halves = U::bytes / 2;
    for (int c = threadIdx.x; c < nrows * halves; c += KP_QMM_BLOCK) {
        const int r = c / halves, k = 2 * (c % halves);
        *(uint16_t *)(stage + r * U::pitch + k) =
            at + k < row_bytes ? *(const uint16_t *)(w + r * stride + at + k) : 0;
    }
}

// The warps' split of the tile: WM x WN warps of 16 rows x NB / WN batch
// rows (NT fragments of 16 x 8).
template <int MR, int NB> struct kp_qmm_warp {
    static constexpr int WM = MR / 16 < 4 ? MR / 16 : 4, WN = KP_QMM_BLOCK / 32 / WM, NT = NB / WN / 8;
    static_assert(WM * 16 == MR && WM * WN * 32 == KP_QMM_BLOCK && NT * 8 * WN == NB,
                  "the tile splits evenly over the warps");
    float acc[NT][4];
    KP_DEVICE static int m0() { return (int)(threadIdx.x / 32) % WM * 16; }
    KP_DEVICE static int n0() { return (int)(threadIdx.x / 32) / WM * (NB / WN); }
};

// One row's weights of an item, ready for the products: the scales s and
// offsets o of its halves, and c = s * -1.5 * 2^23. The mma's sums come out
// as the f32 bits of 1.5 * 2^23 + n (KP_QMM_MAGIC), so fma(s, bits, c) is
// s * n rounded once, as s * kp_qmm_unmagic(bits) is, one instruction
// fewer a result, where c is exact: scales of at most 23 significant bits
// (a binary16 times a small integer; every format but Q8_K, whose f32
// scale keeps kp_qmm_term_mma).
struct kp_qmm_wterm {
    float s_lo, s_hi, c_lo, c_hi, o_lo, o_hi;
};

template <typename D> struct kp_qmm_short_scales {
    static constexpr bool value = true;
};
template <> struct kp_qmm_short_scales<kp_qdecode<KP_QF_Q8_K>> {
    static constexpr bool value = false;
};

KP_DEVICE kp_qmm_wterm kp_qmm_weights(const kp_qitem &it) {
    return {it.scale_lo, it.scale_hi, it.scale_lo * -KP_QMM_MAGIC_F, it.scale_hi * -KP_QMM_MAGIC_F,
            it.offset_lo, it.offset_hi};
}

// acc plus one item's term for one result: row weights w, the batch row's
// d and f32 sums of q, the mma's biased sums (dot_hi unused for formats
// with one scale).
template <typename D>
KP_DEVICE float kp_qmm_add_term(float acc, const kp_qmm_wterm &w, float d, float sum_lo, float sum_hi,
                                int dot_lo, int dot_hi) {
    if (!kp_qmm_short_scales<D>::value)
        return acc + kp_qmm_term_mma<D>(make_float4(w.s_lo, w.s_hi, w.o_lo, w.o_hi), d, sum_lo, sum_hi,
                                        dot_lo, dot_hi);
    float v = fmaf(w.s_lo, __int_as_float(dot_lo), w.c_lo);
    if (D::split) {
        v += fmaf(w.s_hi, __int_as_float(dot_hi), w.c_hi);
        if (D::has_offset)
            v = fmaf(w.o_lo, sum_lo, fmaf(w.o_hi, sum_hi, v));
    } else if (D::has_offset) {
        v = fmaf(w.o_lo, sum_lo + sum_hi, v);
    }
    return fmaf(d, v, acc);
}

// One step: items s0 .. s0 + KP_QMM_ITEMS - 1 of the staged unit (rows at
// `raw`, the unit's first byte of row 0) against the step's activations;
// S0 >= 0 is s0 known at compile time (kp_qmm_fixed_steps).
template <typename D, int MR, int NB, int S0 = -1>
KP_DEVICE void kp_qmm_products(const uint8_t *raw, int s0, const kp_qmm_act_stage<NB> &x,
                               kp_qmm_warp<MR, NB> &c) {
    typedef kp_qmm_warp<MR, NB> W;
    typedef kp_qmm_units<D> U;
    constexpr int NT = W::NT;
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, n0 = W::n0();
    const uint8_t *row0 = raw + (W::m0() + g) * U::pitch, *row1 = row0 + 8 * U::pitch;
#pragma unroll  // one block of code: the copies' waits and the loads can fill its gaps
    for (int i = 0; i < KP_QMM_ITEMS; i++) {
        const int s = U::steps == 1 ? i : (S0 >= 0 ? S0 : s0) + i, at = s / D::items * D::bytes,
                  si = s % D::items;
        int q[4];  // words t and 4 + t of rows g and g + 8, as the A fragment takes them
        D::quad(row0 + at, si, t, q[0], q[2]);
        D::quad(row1 + at, si, t, q[1], q[3]);
        const uint32_t af[4] = {kp_qmm_unbias<D>(q[0]), kp_qmm_unbias<D>(q[1]), kp_qmm_unbias<D>(q[2]),
                                kp_qmm_unbias<D>(q[3])};
        kp_qitem w0, w1;
        D::scales(row0 + at, si, w0);
        D::scales(row1 + at, si, w1);
        const kp_qmm_wterm ws[2] = {kp_qmm_weights(w0), kp_qmm_weights(w1)};
        uint32_t bf[NT][2];
#pragma unroll
        for (int nt = 0; nt < NT; nt += 2) {
            if (nt + 1 < NT) {  // matrices: rows 0-7 first / last 16 bytes, then rows 8-15
                const int n = n0 + 8 * nt + (lane & 7) + 8 * (lane >> 4);
                uint32_t r[4];
                kp_ldmatrix_x4(r, &x.x[i][n][kp_qmm_half(n, (lane >> 3) & 1)]);
                bf[nt][0] = r[0];
                bf[nt][1] = r[1];
                bf[nt + 1][0] = r[2];
                bf[nt + 1][1] = r[3];
            } else {
                const int n = n0 + 8 * nt + (lane & 7);
                kp_ldmatrix_x2(bf[nt], &x.x[i][n][kp_qmm_half(n, (lane >> 3) & 1)]);
            }
        }
#pragma unroll
        for (int nt = 0; nt < NT; nt++) {
            // batch rows 2t and 2t + 1: d and sums each; the sums only where the format has an offset
            const uint2 *meta = &x.x_meta[i][n0 + 8 * nt + 2 * t];
            const uint4 m2 = D::has_offset ? kp_lds_u32x4(meta)
                                           : make_uint4(kp_lds_u32(meta), 0u, kp_lds_u32(meta + 1), 0u);
            int lo[4], hi[4] = {0, 0, 0, 0};
            if (D::split) {
                kp_mma_s8_k16(lo, af[0], af[1], bf[nt][0], KP_QMM_MAGIC);
                kp_mma_s8_k16(hi, af[2], af[3], bf[nt][1], KP_QMM_MAGIC);
            } else {
                kp_mma_s8_k32(lo, af, bf[nt], KP_QMM_MAGIC);
            }
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const uint32_t mx = e & 1 ? m2.z : m2.x, my = e & 1 ? m2.w : m2.y;
                const float xs_lo = D::has_offset ? kp_qmm_i2f((int)(int16_t)(my & 0xffffu)) : 0.0f;
                const float xs_hi = D::has_offset ? kp_qmm_i2f((int)(int16_t)(my >> 16)) : 0.0f;
                c.acc[nt][e] = kp_qmm_add_term<D>(c.acc[nt][e], ws[e >> 1], __uint_as_float(mx), xs_lo, xs_hi,
                                                  lo[e], hi[e]);
            }
        }
    }
}

template <int MR, int NB, typename B>
KP_DEVICE void kp_qmm_write(const kp_qmm_warp<MR, NB> &c, const kp_qmv_args &a, void *dst, kp_idx r0,
                            const B &rows) {
    typedef kp_qmm_warp<MR, NB> W;
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, m0 = W::m0(), n0 = W::n0();
#pragma unroll
    for (int nt = 0; nt < W::NT; nt++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            const kp_idx r = r0 + (kp_idx)(m0 + g + 8 * (e >> 1));
            const int n = n0 + 8 * nt + 2 * t + (e & 1);
            if (r < (kp_idx)a.rows && rows.has(n))
                kp_qmv_store(dst, a.dst_dtype, (kp_idx)rows.dst_at(n) + r * (kp_idx)a.dst_row_stride,
                             c.acc[nt][e]);
        }
}

// Whether the steps of a two-step unit (the 256-element formats) are
// compiled apart, each with its items' sub-blocks, scales and their bit
// positions as constants, at the cost of the loop's code twice (a few more
// registers). Measured on an H100 (kp-bench, bf16, 4096 x 4096 and 14336 x
// 4096 at batch 24-2048, MoE 2 of 8 experts of 16 and 512 tokens): Q4_K
// 1.05-1.28x, Q3_K 1.09-1.31x, Q5_K 1.03-1.34x, IQ4_XS 1.03-1.09x, Q6_K
// 0.99-1.05x; Q8_K (0.98-1.03x) and Q2_K (0.81-1.03x) keep one loop.
template <int F> struct kp_qmm_fixed_steps {
    static constexpr bool value =
        kp_qmm_units<kp_qdecode<F>>::steps == 2 && F != KP_QF_Q2_K && F != KP_QF_Q8_K;
};

// The tile of weight rows r0 .. x the batch rows `rows`.
template <int F, int NB, typename B>
KP_DEVICE void kp_qmatmul_tile_staged(const kp_qmv_args &a, const uint8_t *w, const int8_t *act_qs,
                                      const kp_qmv_meta *act_meta, void *dst, const B &rows, kp_idx r0) {
    typedef kp_qdecode<F> D;
    typedef kp_qmm_units<D> U;
    constexpr int MR = KP_QMM_ROWS(NB);
    static_assert(sizeof(kp_qmm_act_stage<NB>) == KP_QMM_ACT_STAGE_BYTES(NB), "the host's stage size");
    extern __shared__ __align__(16) uint8_t kp_qmm_shared[];  // KP_QMM_SHARED_BYTES
    kp_qmm_act_stage<NB> *act = (kp_qmm_act_stage<NB> *)kp_qmm_shared;
    uint8_t *raw = kp_qmm_shared + 2 * sizeof(kp_qmm_act_stage<NB>);
    const kp_idx items_per_row = (kp_idx)a.cols / 32, meta_stride = KP_QMV_META_STRIDE(items_per_row);
    const kp_idx steps = (items_per_row + KP_QMM_ITEMS - 1) / KP_QMM_ITEMS;
    const kp_idx row_bytes = items_per_row / D::items * D::bytes, stride = (kp_idx)a.w_row_stride;
    const bool vector = a.vector == 16;
    const int nrows = (kp_idx)a.rows - r0 < (kp_idx)MR ? (int)((kp_idx)a.rows - r0) : MR;
    const uint8_t *w0 = w + r0 * stride;
    auto stage_unit = [&](kp_idx u) {  // into raw stage u % 2
        const kp_idx at = u * U::bytes;
        kp_qmm_stage_unit<D, MR>(raw + (u & 1) * (MR * U::pitch), w0, stride, nrows, at, row_bytes,
                                 vector ? (int)(at & 15) : 0, vector);
    };
    kp_qmm_warp<MR, NB> c = {};
    kp_qmm_act_plan<NB> ap;
    kp_qmm_act_plan_init(ap, a, act_qs, act_meta, rows, meta_stride);
    stage_unit(0);
    kp_qmm_load_act(act[0], ap, 0, items_per_row);
    kp_async_commit();
    // The barrier at the top of step k orders both: step k's copies are
    // complete, and step k - 1's reads of the stages step k overwrites are
    // over (a unit's stage was last read two units before).
    for (kp_idx k = 0; k < steps; k++) {
        kp_async_wait<0>();
        __syncthreads();
        if (k + 1 < steps) {
            if ((k + 1) % U::steps == 0)
                stage_unit((k + 1) / U::steps);
            kp_qmm_load_act(act[(k + 1) & 1], ap, (k + 1) * KP_QMM_ITEMS, items_per_row);
            kp_async_commit();
        }
        const kp_idx u = k / U::steps;
        const int mis = vector ? (int)((u * U::bytes) & 15) : 0;
        const uint8_t *unit = raw + (u & 1) * (MR * U::pitch) + mis;
        if constexpr (kp_qmm_fixed_steps<F>::value) {
            if (k & 1)
                kp_qmm_products<D, MR, NB, KP_QMM_ITEMS>(unit, 0, act[k & 1], c);
            else
                kp_qmm_products<D, MR, NB, 0>(unit, 0, act[k & 1], c);
        } else {
            kp_qmm_products<D>(unit, (int)(k % U::steps) * KP_QMM_ITEMS, act[k & 1], c);
        }
    }
    kp_qmm_write(c, a, dst, r0, rows);
}
