// indexing: index_select, gather, scatter, scatter_add and index_add along
// one dimension, with ids of u8, u32 or i64.
//
// An id outside 0 .. size-1 of the indexed dimension (negative i64 ids
// included) is never followed: the element it would read becomes 0, the
// update it would make is skipped, and its position in ids is reported in
// the optional 64-bit status word as max(word, ~position), so a zeroed word
// means "all ids valid" and ~word is the first offending position.
//
// Kernels that only move bits exist per element size (x8 .. x64); the
// adding kernels exist per dtype. Strided kernels iterate over one shape
// with four operands: 0 = dst, 1 = ids, 2 = src, 3 = position in ids; the
// indexed operand's `dim` stride is zero there and comes from kp_index_dim.
#include "kp_elementwise.cuh"
#include "kp_atomics.cuh"
#include "kp_indexing_abi.h"

typedef unsigned long long kp_status_word;

// True for 0 <= id < size. A negative i64 id converts to a huge unsigned one.
template <typename I> KP_DEVICE bool kp_id_valid(I id, int64_t size) {
    return (kp_idx)id < (kp_idx)size;
}

KP_DEVICE void kp_report_bad_id(kp_status_word *status, kp_idx position) {
    if (status)
        kp_atomic_max_u64(status, ~(kp_status_word)position);
}

typedef kp_vec<uint32_t, 4> kp_v16;  // one 16-byte access

KP_DEVICE bool kp_aligned16(const void *p) { return (uintptr_t)p % 16 == 0; }

// Copies len elements from s to d with `lanes` threads (this one is `lane`),
// in 16-byte accesses when both rows are 16-byte aligned. Up to four loads
// are in flight per thread before their stores, also in a row's last
// vectors: rows of 4096 16-bit elements (two vectors a thread of 256),
// copied a vector at a time, gathered at 85 % of the copy bandwidth and now
// at 86.5-88.5 (H200; scatter 82.5-83.5 -> 84-85.5, f32 level).
template <typename T>
KP_DEVICE void kp_copy_row(T *d, const T *s, kp_idx len, kp_idx lane, kp_idx lanes) {
    kp_idx done = 0;
    if (kp_aligned16(d) && kp_aligned16(s)) {
        const kp_idx nv = len * sizeof(T) / 16;
        const kp_v16 *sv = reinterpret_cast<const kp_v16 *>(s);
        kp_v16 *dv = reinterpret_cast<kp_v16 *>(d);
        for (kp_idx v = lane; v < nv; v += 4 * lanes) {
            // Held as plain words: four live kp_v16 copies end up on the stack with hipcc.
            uint32_t w[4][4];
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (v + k * lanes < nv) {
                    const kp_v16 a = sv[v + k * lanes];
#pragma unroll
                    for (int j = 0; j < 4; j++) w[k][j] = a.v[j];
                }
            }
#pragma unroll
            for (int k = 0; k < 4; k++) {
                if (v + k * lanes < nv) {
                    kp_v16 a;
#pragma unroll
                    for (int j = 0; j < 4; j++) a.v[j] = w[k][j];
                    dv[v + k * lanes] = a;
                }
            }
        }
        done = nv * (16 / sizeof(T));
    }
    for (kp_idx k = done + lane; k < len; k += lanes)
        d[k] = s[k];
}

template <typename T>
KP_DEVICE void kp_zero_row(T *d, kp_idx len, kp_idx lane, kp_idx lanes) {
    kp_idx done = 0;
    if (kp_aligned16(d)) {
        const kp_idx nv = len * sizeof(T) / 16;
        kp_v16 zero;
#pragma unroll
        for (int k = 0; k < 4; k++) zero.v[k] = 0;
        kp_v16 *dv = reinterpret_cast<kp_v16 *>(d);
        for (kp_idx v = lane; v < nv; v += lanes)
            dv[v] = zero;
        done = nv * (16 / sizeof(T));
    }
    for (kp_idx k = done + lane; k < len; k += lanes)
        d[k] = T();
}

// The leading part of a row added several elements per atomic: 16 bytes
// per sm_90 vector reduction (kp_red16) where both rows are 16-byte
// aligned, else, for 16-bit floats, pairs (kp_atomic_add_pair) where both
// are 4-byte aligned. Returns the elements done (none for other types).
template <typename T> KP_DEVICE kp_idx kp_add_vectors(T *, const T *, kp_idx, kp_idx, kp_idx) { return 0; }
template <typename T>
KP_DEVICE kp_idx kp_add_wide(T *d, const T *s, kp_idx len, kp_idx lane, kp_idx lanes) {
#if KP_HAS_ATOMIC_ADD16
    if (kp_aligned16(d) && kp_aligned16(s)) {
        constexpr int N = 16 / (int)sizeof(T);
        const kp_idx nv = len / N;
        // Loading four vectors before their reductions (whose memory
        // clobber otherwise orders each load after the reduction before)
        // changed nothing: H200, scatter_add / index_add of 8192 rows of
        // 4096 into 4096, 78 % of copy either way.
        for (kp_idx v = lane; v < nv; v += lanes)
            kp_red16<T>::add(d + N * v, reinterpret_cast<const uint4 *>(s)[v]);
        return nv * N;
    }
#endif
    if constexpr (sizeof(T) == 2) {
        if ((uintptr_t)d % 4 == 0 && (uintptr_t)s % 4 == 0) {
            const kp_idx pairs = len / 2;
            for (kp_idx k = lane; k < pairs; k += lanes)
                kp_atomic_add_pair(d + 2 * k, s[2 * k], s[2 * k + 1]);
            return 2 * pairs;
        }
    }
    return 0;
}
KP_DEVICE kp_idx kp_add_vectors(float *d, const float *s, kp_idx len, kp_idx lane, kp_idx lanes) {
    return kp_add_wide(d, s, len, lane, lanes);
}
KP_DEVICE kp_idx kp_add_vectors(kp_f16 *d, const kp_f16 *s, kp_idx len, kp_idx lane, kp_idx lanes) {
    return kp_add_wide(d, s, len, lane, lanes);
}
KP_DEVICE kp_idx kp_add_vectors(kp_bf16 *d, const kp_bf16 *s, kp_idx len, kp_idx lane, kp_idx lanes) {
    return kp_add_wide(d, s, len, lane, lanes);
}

// d[k] += s[k] for len elements with `lanes` threads (this one is `lane`),
// atomically: rows may repeat in ids.
template <typename T>
KP_DEVICE void kp_add_row(T *d, const T *s, kp_idx len, kp_idx lane, kp_idx lanes,
                          const kp_byte_span &span) {
    for (kp_idx k = kp_add_vectors(d, s, len, lane, lanes) + lane; k < len; k += lanes)
        kp_atomic_add(d + k, s[k], span);
}

// Row copies (Add: additions) through ids (kp_index_rows): 2^lanes_log2
// threads per row, grid-stride over rows. Reading, a bad id's row of dst
// becomes zeros; scattering, it is skipped. `span` is dst's buffer (Add).
template <bool Add, typename I, typename T>
KP_DEVICE void kp_copy_rows(const kp_index_rows &p, T *dst, const T *src, const I *ids,
                            kp_status_word *status, const kp_byte_span &span) {
    const kp_idx lanes = (kp_idx)1 << p.lanes_log2;
    const kp_idx lane = threadIdx.x & (lanes - 1);
    const kp_idx per_block = blockDim.x >> p.lanes_log2;
    const kp_idx step = (kp_idx)gridDim.x * per_block;
    const kp_idx rows = (kp_idx)p.rows, count = (kp_idx)p.count;
    const bool scatter = p.flags & KP_INDEX_ROWS_SCATTER;
    for (kp_idx row = blockIdx.x * per_block + (threadIdx.x >> p.lanes_log2); row < rows; row += step) {
        const kp_idx outer = row / count, i = row - outer * count;
        const I id = ids[outer * (kp_idx)p.ids_outer_stride + i * (kp_idx)p.ids_stride];
        const bool valid = kp_id_valid(id, p.dim_size);
        const kp_idx at_dst = scatter ? (kp_idx)id : i, at_src = scatter ? i : (kp_idx)id;
        T *d = dst + outer * (kp_idx)p.dst_outer_stride + at_dst * (kp_idx)p.dst_dim_stride;
        if (valid) {
            const T *s = src + outer * (kp_idx)p.src_outer_stride + at_src * (kp_idx)p.src_dim_stride;
            if constexpr (Add)
                kp_add_row(d, s, (kp_idx)p.row_len, lane, lanes, span);
            else
                kp_copy_row(d, s, (kp_idx)p.row_len, lane, lanes);
        } else {
            if (!scatter)
                kp_zero_row(d, (kp_idx)p.row_len, lane, lanes);
            if (lane == 0)
                kp_report_bad_id(status, p.flags & KP_INDEX_ROWS_REPORT_ROWS ? row * (kp_idx)p.row_len : i);
        }
    }
}

// dst[i] = src[i, with the indexed dim at ids[i]], or 0 for a bad id.
template <typename I, typename T>
KP_DEVICE void kp_gather_strided(kp_idx n, const kp_strided &L, kp_index_dim dim, T *dst,
                                 const T *src, const I *ids, kp_status_word *status) {
    kp_for_each_strided<4>(n, L, [&](const kp_idx (&off)[4]) {
        const I id = ids[off[1]];
        T v = T();
        if (kp_id_valid(id, dim.dim_size))
            v = src[off[2] + (kp_idx)id * (kp_idx)dim.dim_stride];
        else
            kp_report_bad_id(status, off[3]);
        dst[off[0]] = v;
    });
}

// dst[i, with the indexed dim at ids[i]] = src[i] (or += with Add), skipped for a bad id.
// `span` is dst's buffer (used by Add only).
template <bool Add, typename I, typename T>
KP_DEVICE void kp_scatter_strided(kp_idx n, const kp_strided &L, kp_index_dim dim, T *dst,
                                  const T *src, const I *ids, kp_status_word *status,
                                  const kp_byte_span &span) {
    kp_for_each_strided<4>(n, L, [&](const kp_idx (&off)[4]) {
        const I id = ids[off[1]];
        if (!kp_id_valid(id, dim.dim_size)) {
            kp_report_bad_id(status, off[3]);
            return;
        }
        T *target = dst + off[0] + (kp_idx)id * (kp_idx)dim.dim_stride;
        if constexpr (Add)
            kp_atomic_add(target, src[off[2]], span);
        else
            *target = src[off[2]];
    });
}

#define KP_INDEX_MOVE(INAME, I, TNAME, T)                                                         \
    KP_KERNEL void copy_rows_##INAME##_##TNAME(kp_index_rows p, T *dst, const T *src,             \
                                               const I *ids, kp_status_word *status) {            \
        kp_copy_rows<false>(p, dst, src, ids, status, kp_byte_span{});                            \
    }                                                                                             \
    KP_KERNEL void gather_##INAME##_##TNAME(kp_idx n, kp_strided layout, kp_index_dim dim,        \
                                            T *dst, const T *src, const I *ids,                   \
                                            kp_status_word *status) {                             \
        kp_gather_strided(n, layout, dim, dst, src, ids, status);                                 \
    }                                                                                             \
    KP_KERNEL void scatter_##INAME##_##TNAME(kp_idx n, kp_strided layout, kp_index_dim dim,       \
                                             T *dst, const T *src, const I *ids,                  \
                                             kp_status_word *status) {                            \
        kp_scatter_strided<false>(n, layout, dim, dst, src, ids, status, kp_byte_span{});         \
    }

#define KP_INDEX_ADD(INAME, I, TNAME, T)                                                          \
    KP_KERNEL void add_rows_##INAME##_##TNAME(kp_index_rows p, T *dst, const T *src, const I *ids, \
                                              kp_status_word *status, kp_byte_span span) {       \
        kp_copy_rows<true>(p, dst, src, ids, status, span);                                       \
    }                                                                                             \
    KP_KERNEL void scatter_add_##INAME##_##TNAME(kp_idx n, kp_strided layout, kp_index_dim dim,   \
                                                 T *dst, const T *src, const I *ids,              \
                                                 kp_status_word *status, kp_byte_span span) {     \
        kp_scatter_strided<true>(n, layout, dim, dst, src, ids, status, span);                    \
    }

#define KP_MOVE_U8(TNAME, T) KP_INDEX_MOVE(u8, uint8_t, TNAME, T)
#define KP_MOVE_U32(TNAME, T) KP_INDEX_MOVE(u32, uint32_t, TNAME, T)
#define KP_MOVE_I64(TNAME, T) KP_INDEX_MOVE(i64, int64_t, TNAME, T)
KP_FOR_EACH_SIZE(KP_MOVE_U8)
KP_FOR_EACH_SIZE(KP_MOVE_U32)
KP_FOR_EACH_SIZE(KP_MOVE_I64)

#define KP_ADD_U8(TNAME, T) KP_INDEX_ADD(u8, uint8_t, TNAME, T)
#define KP_ADD_U32(TNAME, T) KP_INDEX_ADD(u32, uint32_t, TNAME, T)
#define KP_ADD_I64(TNAME, T) KP_INDEX_ADD(i64, int64_t, TNAME, T)
KP_FOR_EACH_DTYPE(KP_ADD_U8)
KP_FOR_EACH_DTYPE(KP_ADD_U32)
KP_FOR_EACH_DTYPE(KP_ADD_I64)
