// sort: stable argsort along the last dimension, rows of any length.
//
// Each key becomes an unsigned integer whose order is the sort order (floats:
// sign-magnitude flipped, every NaN above +Inf, -0 equal to +0; descending:
// all bits inverted), and items are (key, column) pairs compared
// lexicographically. The column breaks ties, so the order is total and the
// sort is stable for both directions.
//
// Rows of up to KP_SORT_TILE keys: one block sorts whole rows (several short
// rows per block) with a bitonic network over the block's registers: each
// thread holds KP_SORT_ITEMS consecutive positions, partners in the same
// wave trade through shuffles and only the widest strides go through shared
// memory. Longer rows: the tiles kernel sorts KP_SORT_TILE-key tiles into a
// scratch array, then merge passes double the sorted run length (one launch
// each, ping-ponging between two scratch arrays); the last pass writes the
// columns to dst. A merge block stages its inputs in shared memory, so
// global reads and writes stay coalesced.
//
// Shuffles stay inside a wave of KP_WAVE_SIZE lanes, whatever that is.
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

// Shared-memory slot of tile position q: one pad word every 32 keeps the
// blocked reads (KP_SORT_ITEMS consecutive positions a thread) free of bank
// conflicts. The arrays also hold KP_SORT_ITEMS spare slots past the tile.
#define KP_SORT_SMEM (KP_SORT_TILE + KP_SORT_TILE / 32 + KP_SORT_ITEMS)
KP_DEVICE unsigned kp_sort_slot(unsigned q) { return q + (q >> 5); }

// A key from lane (lane ^ m): shuffles move 32-bit words.
template <typename K> KP_DEVICE K kp_sort_shfl(K v, int m) {
    if (sizeof(K) == 8) {
        const uint64_t u = (uint64_t)v;
        const uint32_t lo = kp_shfl_xor((uint32_t)u, m, KP_WAVE_SIZE);
        const uint32_t hi = kp_shfl_xor((uint32_t)(u >> 32), m, KP_WAVE_SIZE);
        return (K)(((uint64_t)hi << 32) | lo);
    }
    return (K)kp_shfl_xor((uint32_t)v, m, KP_WAVE_SIZE);
}

// The items of one thread: tile positions tid * KP_SORT_ITEMS + r.
template <typename K> struct kp_sort_items {
    K key[KP_SORT_ITEMS];
    uint32_t idx[KP_SORT_ITEMS];
};

// Bitonic stage (k, j) with j < KP_SORT_ITEMS: both items in this thread.
// `up`: the pair's run of 2k sorts ascending (the last merge, k == seg,
// sorts every run ascending; earlier ones alternate with bit k).
template <typename K, int J>
KP_DEVICE void kp_bitonic_in_thread(kp_sort_items<K> &it, unsigned k, unsigned seg) {
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        if (r & J)
            continue;
        const unsigned p = threadIdx.x * KP_SORT_ITEMS + r;
        const bool up = k == seg || (p & k) == 0;
        const K ka = it.key[r], kb = it.key[r + J];
        const uint32_t ia = it.idx[r], ib = it.idx[r + J];
        if (kp_item_less(kb, ib, ka, ia) == up) {
            it.key[r] = kb;
            it.key[r + J] = ka;
            it.idx[r] = ib;
            it.idx[r + J] = ia;
        }
    }
}

// Stage (k, j) whose partner is thread tid ^ m: the lower position keeps
// the smaller item of an ascending pair.
template <typename K>
KP_DEVICE void kp_bitonic_keep(kp_sort_items<K> &it, int r, K pk, uint32_t pi, unsigned m, unsigned k,
                               unsigned seg) {
    const unsigned p = threadIdx.x * KP_SORT_ITEMS + r;
    const bool up = k == seg || (p & k) == 0;
    const bool lower = (threadIdx.x & m) == 0;
    if (kp_item_less(pk, pi, it.key[r], it.idx[r]) == (lower == up)) {
        it.key[r] = pk;
        it.idx[r] = pi;
    }
}

// Sorts each run of 2^seg_log2 tile positions ascending. Partners within a
// thread swap in registers, within a wave by shuffles, across waves through
// shared memory (sk/si, KP_SORT_TILE slots). Every thread of the block calls it.
template <typename K>
KP_DEVICE void kp_bitonic_sort(kp_sort_items<K> &it, int seg_log2, K *sk, uint32_t *si) {
    const unsigned seg = 1u << seg_log2;
    for (unsigned k = 2; k <= seg; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            if (j == 1) {
                kp_bitonic_in_thread<K, 1>(it, k, seg);
            } else if (j == 2) {
                kp_bitonic_in_thread<K, 2>(it, k, seg);
            } else if (j == 4) {
                kp_bitonic_in_thread<K, 4>(it, k, seg);
            } else if (j < KP_SORT_ITEMS * KP_WAVE_SIZE) {
                const unsigned m = j / KP_SORT_ITEMS;
#pragma unroll
                for (int r = 0; r < KP_SORT_ITEMS; r++) {
                    const K pk = kp_sort_shfl(it.key[r], (int)m);
                    const uint32_t pi = kp_shfl_xor(it.idx[r], (int)m, KP_WAVE_SIZE);
                    kp_bitonic_keep(it, r, pk, pi, m, k, seg);
                }
            } else {
                const unsigned m = j / KP_SORT_ITEMS;
                __syncthreads();  // the previous use of sk/si is over
#pragma unroll
                for (int r = 0; r < KP_SORT_ITEMS; r++) {
                    sk[r * KP_SORT_BLOCK + threadIdx.x] = it.key[r];
                    si[r * KP_SORT_BLOCK + threadIdx.x] = it.idx[r];
                }
                __syncthreads();
#pragma unroll
                for (int r = 0; r < KP_SORT_ITEMS; r++) {
                    const unsigned q = r * KP_SORT_BLOCK + (threadIdx.x ^ m);
                    kp_bitonic_keep(it, r, sk[q], si[q], m, k, seg);
                }
            }
        }
    }
}
static_assert(KP_SORT_ITEMS == 8, "kp_bitonic_sort's in-thread stages are j = 1, 2, 4");
static_assert(KP_SORT_TILE == KP_SORT_ITEMS * KP_SORT_BLOCK, "a tile is a block's items");

// Sorts the tile in sk/si (position q at slot kp_sort_slot(q), stored by the
// caller, not yet synchronised) by runs of 2^seg_log2 and leaves it there in
// the same slots, synchronised.
template <typename K> KP_DEVICE void kp_sort_tile(int seg_log2, K *sk, uint32_t *si) {
    kp_sort_items<K> it;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        const unsigned s = kp_sort_slot(threadIdx.x * KP_SORT_ITEMS + r);
        it.key[r] = sk[s];
        it.idx[r] = si[s];
    }
    kp_bitonic_sort(it, seg_log2, sk, si);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        const unsigned s = kp_sort_slot(threadIdx.x * KP_SORT_ITEMS + r);
        sk[s] = it.key[r];
        si[s] = it.idx[r];
    }
    __syncthreads();
}

// Rows of up to KP_SORT_TILE keys, 2^(log2(TILE) - seg_log2) rows per tile.
template <typename T>
KP_DEVICE void kp_argsort_rows(const kp_sort_rows &p, const kp_strided &outer, const T *src,
                               uint32_t *dst) {
    typedef typename kp_sort_key<T>::type K;
    __shared__ K sk[KP_SORT_SMEM];
    __shared__ uint32_t si[KP_SORT_SMEM];
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
            sk[kp_sort_slot(i)] = key;
            si[kp_sort_slot(i)] = column;
        }
        kp_sort_tile(seg_log2, sk, si);
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            const kp_idx row = tile * rows_per_tile + (i >> seg_log2), col = i & seg_mask;
            if (row < rows && col < ncols) {
                kp_idx off[2];
                kp_strided_offsets<2>(outer, row, off);
                dst[off[0] + col * (kp_idx)p.dst_col_stride] = si[kp_sort_slot(i)];
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
    __shared__ K sk[KP_SORT_SMEM];
    __shared__ uint32_t si[KP_SORT_SMEM];
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
            sk[kp_sort_slot(i)] = key;
            si[kp_sort_slot(i)] = column;
        }
        kp_sort_tile(tile_log2, sk, si);
        // Padding sorted last, so the first ncols - base items are the real ones.
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            if (base + i < ncols) {
                keys_out[row * ncols + base + i] = sk[kp_sort_slot(i)];
                idx_out[row * ncols + base + i] = si[kp_sort_slot(i)];
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

// Merge path: how many of the first `diag` outputs of merging runs a (la
// items) and b (lb) come from a. The block searches together, KP_SORT_BLOCK
// probes a round, so a run of 2^k items takes about k / 8 rounds of global
// loads rather than k. Every thread of the block calls it with the same
// arguments.
template <typename K>
KP_DEVICE kp_idx kp_merge_split(const K *ka, const uint32_t *ia, kp_idx la, const K *kb,
                                const uint32_t *ib, kp_idx lb, kp_idx diag) {
    kp_idx lo = diag > lb ? diag - lb : 0, hi = diag < la ? diag : la;
    while (lo < hi) {
        const kp_idx step = (hi - lo + KP_SORT_BLOCK - 1) / KP_SORT_BLOCK;
        const kp_idx i = lo + threadIdx.x * step;
        // a[i] before b[diag - 1 - i]: the split lies above i (true for a prefix of the probes).
        const bool above = i < hi && kp_item_less(ka[i], ia[i], kb[diag - 1 - i], ib[diag - 1 - i]);
        const kp_idx n = (kp_idx)__syncthreads_count(above);
        if (n == 0) {
            hi = lo;
        } else {
            const kp_idx top = lo + n * step;
            lo += (n - 1) * step + 1;
            hi = top < hi ? top : hi;
        }
    }
    return lo;
}

// One merge pass: each block makes KP_SORT_TILE outputs of a row at a time.
// It finds where they start and end in the two input runs, loads those
// ranges into shared memory, each thread merges KP_SORT_ITEMS outputs from
// there, and the block writes them out in order.
template <typename K, typename Out>
KP_DEVICE void kp_merge_pass(const kp_sort_merge &m, const K *keys, const uint32_t *idx, Out out) {
    __shared__ K sk[KP_SORT_SMEM];
    __shared__ uint32_t si[KP_SORT_SMEM];
    const kp_idx ncols = (kp_idx)m.ncols, w = (kp_idx)m.width;
    const kp_idx chunks_per_row = (ncols + KP_SORT_TILE - 1) / KP_SORT_TILE;
    const kp_idx chunks = (kp_idx)m.rows * chunks_per_row;
    for (kp_idx c = blockIdx.x; c < chunks; c += gridDim.x) {
        const kp_idx row = c / chunks_per_row;
        const kp_idx start = (c - row * chunks_per_row) * KP_SORT_TILE;
        const kp_idx end = start + KP_SORT_TILE < ncols ? start + KP_SORT_TILE : ncols;
        // The pair of runs holding this chunk (a chunk never straddles two pairs).
        const kp_idx a0 = start / (2 * w) * (2 * w);
        const kp_idx la = ncols - a0 < w ? ncols - a0 : w;
        const kp_idx rest = ncols - a0 - la;
        const kp_idx lb = rest < w ? rest : w;
        const K *ka = keys + row * ncols + a0, *kb = ka + la;
        const uint32_t *ia = idx + row * ncols + a0, *ib = ia + la;
        const kp_idx i0 = kp_merge_split(ka, ia, la, kb, ib, lb, start - a0);
        const kp_idx i1 = kp_merge_split(ka, ia, la, kb, ib, lb, end - a0);
        const unsigned na = (unsigned)(i1 - i0), total = (unsigned)(end - start), nb = total - na;
        const kp_idx j0 = start - a0 - i0;
        for (unsigned q = threadIdx.x; q < total; q += blockDim.x) {
            const bool from_a = q < na;
            const kp_idx at = from_a ? i0 + q : j0 + (q - na);
            sk[kp_sort_slot(q)] = from_a ? ka[at] : kb[at];
            si[kp_sort_slot(q)] = from_a ? ia[at] : ib[at];
        }
        __syncthreads();
        // This thread's outputs: [d, d + KP_SORT_ITEMS) of the chunk.
        const unsigned d = threadIdx.x * KP_SORT_ITEMS < total ? threadIdx.x * KP_SORT_ITEMS : total;
        unsigned lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        while (lo < hi) {
            const unsigned mid = (lo + hi) / 2, s = kp_sort_slot(mid), t = kp_sort_slot(na + d - 1 - mid);
            if (kp_item_less(sk[s], si[s], sk[t], si[t]))
                lo = mid + 1;
            else
                hi = mid;
        }
        kp_sort_items<K> it;
        unsigned i = lo, j = d - lo;
#pragma unroll
        for (int r = 0; r < KP_SORT_ITEMS; r++) {
            const unsigned s = kp_sort_slot(i), t = kp_sort_slot(na + j);
            const bool take_a = i < na && (j >= nb || kp_item_less(sk[s], si[s], sk[t], si[t]));
            const unsigned from = take_a ? s : t;
            it.key[r] = sk[from];
            it.idx[r] = si[from];
            i += take_a;
            j += !take_a;
        }
        __syncthreads();
#pragma unroll
        for (int r = 0; r < KP_SORT_ITEMS; r++) {
            if (d + r < total) {
                sk[kp_sort_slot(d + r)] = it.key[r];
                si[kp_sort_slot(d + r)] = it.idx[r];
            }
        }
        __syncthreads();
        out.row(row);
        for (unsigned q = threadIdx.x; q < total; q += blockDim.x)
            out.put(start + q, sk[kp_sort_slot(q)], si[kp_sort_slot(q)]);
        __syncthreads();  // the next chunk reuses shared memory
    }
}

// Every sort kernel runs blocks of KP_SORT_BLOCK threads: without the bound
// hipcc budgets registers for 1024-thread blocks and 64-bit keys spill.
#define KP_SORT_BOUNDS __launch_bounds__(KP_SORT_BLOCK)

#define KP_ARGSORT(NAME, T)                                                                      \
    KP_KERNEL void KP_SORT_BOUNDS argsort_rows_##NAME(kp_sort_rows p, kp_strided outer,         \
                                                      const T *src, uint32_t *dst) {             \
        kp_argsort_rows(p, outer, src, dst);                                                     \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS argsort_tiles_##NAME(kp_sort_rows p, kp_strided outer,        \
                                                       const T *src,                             \
                                                       kp_sort_key<T>::type *keys, uint32_t *idx) { \
        kp_argsort_tiles(p, outer, src, keys, idx);                                              \
    }

KP_FOR_EACH_DTYPE(KP_ARGSORT)

// Merge passes depend only on the key width.
#define KP_MERGE(NAME, K)                                                                        \
    KP_KERNEL void KP_SORT_BOUNDS argsort_merge_##NAME(kp_sort_merge m, const K *keys,          \
                                                       const uint32_t *idx, K *keys_out,         \
                                                       uint32_t *idx_out) {                      \
        kp_merge_pass(m, keys, idx, kp_merge_to_scratch<K>{keys_out, idx_out, (kp_idx)m.ncols, 0}); \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS argsort_merge_final_##NAME(                                    \
        kp_sort_merge m, kp_strided outer, const K *keys, const uint32_t *idx, uint32_t *dst) {  \
        kp_merge_pass(m, keys, idx,                                                              \
                      kp_merge_to_dst<K>{&outer, dst, (kp_idx)m.dst_col_stride, 0});             \
    }

KP_FOR_EACH_SIZE(KP_MERGE)
