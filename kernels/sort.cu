// sort: stable argsort along the last dimension, rows of any length.
//
// Each key becomes an unsigned integer whose order is the sort order (floats:
// sign-magnitude flipped, every NaN above +Inf, -0 equal to +0; descending:
// all bits inverted), and items are (key, column) pairs compared
// lexicographically. The column breaks ties, so the order is total and the
// sort is stable for both directions.
//
// Rows of up to KP_SORT_TILE keys: one block sorts whole rows (several short
// rows per block) with a bitonic network in shared memory. Longer rows: the
// tiles kernel sorts KP_SORT_TILE-key tiles into a scratch array, then merge
// passes double the sorted run length (one launch each, ping-ponging between
// two scratch arrays); the last pass writes the columns to dst.
//
// Everything is block-wide (__syncthreads only): no wave-size assumption.
#include "kp_elementwise.cuh"
#include "kp_sort_abi.h"

template <typename T> struct kp_sort_key;

template <> struct kp_sort_key<float> {
    typedef uint32_t type;
    static KP_DEVICE uint32_t of(float v) {
        uint32_t u = __float_as_uint(v);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            return 0xffffffffu;  // every NaN: one key, above +Inf
        if (u == 0x80000000u)
            u = 0;  // -0 == +0
        return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
    }
};
template <> struct kp_sort_key<double> {
    typedef uint64_t type;
    static KP_DEVICE uint64_t of(double v) {
        uint64_t u = (uint64_t)__double_as_longlong(v);
        const uint64_t sign = 0x8000000000000000ull;
        if ((u & ~sign) > 0x7ff0000000000000ull)
            return ~0ull;
        if (u == sign)
            u = 0;
        return (u & sign) ? ~u : (u | sign);
    }
};
KP_DEVICE uint16_t kp_half_key(uint16_t u, uint16_t inf) {
    if ((u & 0x7fffu) > inf)
        return 0xffffu;
    if (u == 0x8000u)
        u = 0;
    return (u & 0x8000u) ? (uint16_t)~u : (uint16_t)(u | 0x8000u);
}
template <> struct kp_sort_key<kp_f16> {
    typedef uint16_t type;
    static KP_DEVICE uint16_t of(kp_f16 v) { return kp_half_key(v.bits, 0x7c00u); }
};
template <> struct kp_sort_key<kp_bf16> {
    typedef uint16_t type;
    static KP_DEVICE uint16_t of(kp_bf16 v) { return kp_half_key(v.bits, 0x7f80u); }
};
template <> struct kp_sort_key<uint8_t> {
    typedef uint8_t type;
    static KP_DEVICE uint8_t of(uint8_t v) { return v; }
};
template <> struct kp_sort_key<uint32_t> {
    typedef uint32_t type;
    static KP_DEVICE uint32_t of(uint32_t v) { return v; }
};
template <> struct kp_sort_key<int64_t> {
    typedef uint64_t type;
    static KP_DEVICE uint64_t of(int64_t v) { return (uint64_t)v ^ 0x8000000000000000ull; }
};

template <typename K> KP_DEVICE bool kp_item_less(K ka, uint32_t ia, K kb, uint32_t ib) {
    return ka < kb || (ka == kb && ia < ib);
}

// Padding items sort after every real one (real columns are < UINT32_MAX).
#define KP_SORT_PAD_INDEX 0xffffffffu
template <typename K> KP_DEVICE K kp_all_ones() { return (K)~(K)0; }

// Sorts each run of 2^seg_log2 items of the KP_SORT_TILE items in shared
// memory ascending. Callers synchronise before (items loaded) and after.
template <typename K>
KP_DEVICE void kp_bitonic_sort(K *keys, uint32_t *idx, int seg_log2) {
    const unsigned seg = 1u << seg_log2;
    for (unsigned k = 2; k <= seg; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            for (unsigned t = threadIdx.x; t < KP_SORT_TILE / 2; t += blockDim.x) {
                const unsigned a = 2 * t - (t & (j - 1)), b = a + j;
                // The last stage sorts every run ascending; earlier stages build
                // bitonic sequences alternating with bit k of the position.
                const bool up = k == seg || (a & k) == 0;
                const K ka = keys[a], kb = keys[b];
                const uint32_t ia = idx[a], ib = idx[b];
                if (kp_item_less(kb, ib, ka, ia) == up) {
                    keys[a] = kb;
                    keys[b] = ka;
                    idx[a] = ib;
                    idx[b] = ia;
                }
            }
            __syncthreads();
        }
    }
}

// Rows of up to KP_SORT_TILE keys, 2^(log2(TILE) - seg_log2) rows per tile.
template <typename T>
KP_DEVICE void kp_argsort_rows(const kp_sort_rows &p, const kp_strided &outer, const T *src,
                               uint32_t *dst) {
    typedef typename kp_sort_key<T>::type K;
    __shared__ K keys[KP_SORT_TILE];
    __shared__ uint32_t idx[KP_SORT_TILE];
    const int seg_log2 = p.seg_log2;
    const kp_idx seg_mask = ((kp_idx)1 << seg_log2) - 1;
    const kp_idx rows = (kp_idx)p.rows, ncols = (kp_idx)p.ncols;
    const kp_idx rows_per_tile = (kp_idx)KP_SORT_TILE >> seg_log2;
    const kp_idx tiles = (rows + rows_per_tile - 1) / rows_per_tile;
    const K flip = p.descending ? kp_all_ones<K>() : (K)0;
    for (kp_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            const kp_idx row = tile * rows_per_tile + (i >> seg_log2), col = i & seg_mask;
            K key = kp_all_ones<K>();
            uint32_t column = KP_SORT_PAD_INDEX;
            if (row < rows && col < ncols) {
                kp_idx off[2];
                kp_strided_offsets<2>(outer, row, off);
                key = (K)(kp_sort_key<T>::of(src[off[1] + col * (kp_idx)p.src_col_stride]) ^ flip);
                column = (uint32_t)col;
            }
            keys[i] = key;
            idx[i] = column;
        }
        __syncthreads();
        kp_bitonic_sort(keys, idx, seg_log2);
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            const kp_idx row = tile * rows_per_tile + (i >> seg_log2), col = i & seg_mask;
            if (row < rows && col < ncols) {
                kp_idx off[2];
                kp_strided_offsets<2>(outer, row, off);
                dst[off[0] + col * (kp_idx)p.dst_col_stride] = idx[i];
            }
        }
        __syncthreads();  // the next tile reuses shared memory
    }
}

// Rows longer than KP_SORT_TILE: sorts each KP_SORT_TILE-key tile of each
// row into the dense rows x ncols scratch arrays.
template <typename T>
KP_DEVICE void kp_argsort_tiles(const kp_sort_rows &p, const kp_strided &outer, const T *src,
                                typename kp_sort_key<T>::type *keys_out, uint32_t *idx_out) {
    typedef typename kp_sort_key<T>::type K;
    __shared__ K keys[KP_SORT_TILE];
    __shared__ uint32_t idx[KP_SORT_TILE];
    const kp_idx rows = (kp_idx)p.rows, ncols = (kp_idx)p.ncols;
    const kp_idx tiles_per_row = (ncols + KP_SORT_TILE - 1) / KP_SORT_TILE;
    const kp_idx tiles = rows * tiles_per_row;
    const K flip = p.descending ? kp_all_ones<K>() : (K)0;
    int tile_log2 = 0;
    while ((1 << tile_log2) < KP_SORT_TILE)
        tile_log2++;
    for (kp_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const kp_idx row = tile / tiles_per_row;
        const kp_idx base = (tile - row * tiles_per_row) * KP_SORT_TILE;
        kp_idx off[2];
        kp_strided_offsets<2>(outer, row, off);
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            const kp_idx col = base + i;
            K key = kp_all_ones<K>();
            uint32_t column = KP_SORT_PAD_INDEX;
            if (col < ncols) {
                key = (K)(kp_sort_key<T>::of(src[off[1] + col * (kp_idx)p.src_col_stride]) ^ flip);
                column = (uint32_t)col;
            }
            keys[i] = key;
            idx[i] = column;
        }
        __syncthreads();
        kp_bitonic_sort(keys, idx, tile_log2);
        // Padding sorted last, so the first ncols - base items are the real ones.
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            if (base + i < ncols) {
                keys_out[row * ncols + base + i] = keys[i];
                idx_out[row * ncols + base + i] = idx[i];
            }
        }
        __syncthreads();
    }
}

// Output of a merge pass into the other scratch arrays.
template <typename K> struct kp_merge_to_scratch {
    K *keys;
    uint32_t *idx;
    kp_idx ncols;
    kp_idx base;
    KP_DEVICE void row(kp_idx r) { base = r * ncols; }
    KP_DEVICE void put(kp_idx col, K key, uint32_t column) {
        keys[base + col] = key;
        idx[base + col] = column;
    }
};

// Output of the last merge pass: the columns, into dst.
template <typename K> struct kp_merge_to_dst {
    const kp_strided *outer;
    uint32_t *dst;
    kp_idx col_stride;
    kp_idx base;
    KP_DEVICE void row(kp_idx r) {
        kp_idx off[2];
        kp_strided_offsets<2>(*outer, r, off);
        base = off[0];
    }
    KP_DEVICE void put(kp_idx col, K, uint32_t column) { dst[base + col * col_stride] = column; }
};

// One merge pass: each thread finds where its KP_SORT_MERGE_ITEMS outputs
// start in the two input runs (merge path binary search) and merges them.
template <typename K, typename Out>
KP_DEVICE void kp_merge_pass(const kp_sort_merge &m, const K *keys, const uint32_t *idx, Out out) {
    const kp_idx ncols = (kp_idx)m.ncols, w = (kp_idx)m.width;
    const kp_idx chunks_per_row = (ncols + KP_SORT_MERGE_ITEMS - 1) / KP_SORT_MERGE_ITEMS;
    const kp_idx chunks = (kp_idx)m.rows * chunks_per_row;
    for (kp_idx c = kp_thread_index(); c < chunks; c += kp_thread_count()) {
        const kp_idx row = c / chunks_per_row;
        const kp_idx start = (c - row * chunks_per_row) * KP_SORT_MERGE_ITEMS;
        const kp_idx end = start + KP_SORT_MERGE_ITEMS < ncols ? start + KP_SORT_MERGE_ITEMS : ncols;
        // The pair of runs holding this chunk (a chunk never straddles two pairs).
        const kp_idx a0 = start / (2 * w) * (2 * w);
        const kp_idx la = ncols - a0 < w ? ncols - a0 : w;
        const kp_idx rest = ncols - a0 - la;
        const kp_idx lb = rest < w ? rest : w;
        const K *ka = keys + row * ncols + a0, *kb = ka + la;
        const uint32_t *ia = idx + row * ncols + a0, *ib = ia + la;
        const kp_idx diag = start - a0;
        kp_idx lo = diag > lb ? diag - lb : 0, hi = diag < la ? diag : la;
        while (lo < hi) {
            const kp_idx mid = (lo + hi) / 2;
            if (kp_item_less(ka[mid], ia[mid], kb[diag - mid - 1], ib[diag - mid - 1]))
                lo = mid + 1;
            else
                hi = mid;
        }
        kp_idx i = lo, j = diag - lo;
        out.row(row);
        for (kp_idx o = start; o < end; o++) {
            if (j >= lb || (i < la && kp_item_less(ka[i], ia[i], kb[j], ib[j]))) {
                out.put(o, ka[i], ia[i]);
                i++;
            } else {
                out.put(o, kb[j], ib[j]);
                j++;
            }
        }
    }
}

#define KP_ARGSORT(NAME, T)                                                                      \
    KP_KERNEL void argsort_rows_##NAME(kp_sort_rows p, kp_strided outer, const T *src,          \
                                       uint32_t *dst) {                                          \
        kp_argsort_rows(p, outer, src, dst);                                                     \
    }                                                                                            \
    KP_KERNEL void argsort_tiles_##NAME(kp_sort_rows p, kp_strided outer, const T *src,         \
                                        kp_sort_key<T>::type *keys, uint32_t *idx) {             \
        kp_argsort_tiles(p, outer, src, keys, idx);                                              \
    }

KP_FOR_EACH_DTYPE(KP_ARGSORT)

// Merge passes depend only on the key width.
#define KP_MERGE(NAME, K)                                                                        \
    KP_KERNEL void argsort_merge_##NAME(kp_sort_merge m, const K *keys, const uint32_t *idx,    \
                                        K *keys_out, uint32_t *idx_out) {                        \
        kp_merge_pass(m, keys, idx, kp_merge_to_scratch<K>{keys_out, idx_out, (kp_idx)m.ncols, 0}); \
    }                                                                                            \
    KP_KERNEL void argsort_merge_final_##NAME(kp_sort_merge m, kp_strided outer, const K *keys, \
                                              const uint32_t *idx, uint32_t *dst) {              \
        kp_merge_pass(m, keys, idx,                                                              \
                      kp_merge_to_dst<K>{&outer, dst, (kp_idx)m.dst_col_stride, 0});             \
    }

KP_FOR_EACH_SIZE(KP_MERGE)
