// sort: stable argsort along the last dimension, rows of any length.
//
// Each key becomes an unsigned integer whose order is the sort order (floats:
// sign-magnitude flipped, every NaN above +Inf, -0 equal to +0; descending:
// all bits inverted); equal keys keep their column order.
//
// Rows of up to KP_SORT_TILE keys: one block sorts whole rows (several short
// rows per block). Rows padded to KP_SORT_RADIX_MIN positions or more go
// through a least-significant-digit radix sort of the block's tile, 8 bits
// a pass (a last pass on the row within the tile when a tile holds several
// rows); shorter rows through a bitonic network over the block's registers.
//
// Longer rows: a radix sort of each whole row, 8 bits a pass, in three
// steps: count each tile's digits (the first pass's counts come with the
// conversion of the keys into a scratch array), scan the counts of a row in
// (digit, tile) order, and scatter each tile's items, ranked stably within
// the tile, to their digit's place in the row. Passes ping-pong between two
// scratch arrays of (key, column); the last one writes the columns to dst.
//
// A block ranks a tile's digits wave by wave with ballots: the lanes sharing
// a digit find each other in 8 ballots. Nothing assumes a wave size.
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

template <typename K> KP_DEVICE K kp_all_ones() { return (K)~(K)0; }

// Shared-memory slot of tile position q: one pad word every 32 keeps the
// blocked reads (KP_SORT_ITEMS consecutive positions a thread) free of bank
// conflicts.
#define KP_SORT_SMEM (KP_SORT_TILE + KP_SORT_TILE / 32)
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

// The items of one thread (bitonic: tile positions tid * KP_SORT_ITEMS + r;
// radix: kp_wave_pos(r)).
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

// Sorts each run of 2^seg_log2 tile positions ascending, runs shorter than
// KP_SORT_RADIX_MIN: partners are in the same thread or the same wave.
template <typename K> KP_DEVICE void kp_bitonic_sort(kp_sort_items<K> &it, int seg_log2) {
    const unsigned seg = 1u << seg_log2;
    for (unsigned k = 2; k <= seg; k <<= 1) {
        for (unsigned j = k >> 1; j > 0; j >>= 1) {
            if (j == 1) {
                kp_bitonic_in_thread<K, 1>(it, k, seg);
            } else if (j == 2) {
                kp_bitonic_in_thread<K, 2>(it, k, seg);
            } else if (j == 4) {
                kp_bitonic_in_thread<K, 4>(it, k, seg);
            } else {
                const unsigned m = j / KP_SORT_ITEMS;
#pragma unroll
                for (int r = 0; r < KP_SORT_ITEMS; r++) {
                    const K pk = kp_sort_shfl(it.key[r], (int)m);
                    const uint32_t pi = kp_shfl_xor(it.idx[r], (int)m, KP_WAVE_SIZE);
                    kp_bitonic_keep(it, r, pk, pi, m, k, seg);
                }
            }
        }
    }
}
static_assert(KP_SORT_RADIX_MIN / 2 < KP_SORT_ITEMS * KP_WAVE_SIZE,
              "kp_bitonic_sort's partners are within a wave");
static_assert(KP_SORT_ITEMS == 8, "kp_bitonic_sort's in-thread stages are j = 1, 2, 4");
static_assert(KP_SORT_TILE == KP_SORT_ITEMS * KP_SORT_BLOCK, "a tile is a block's items");

// Sorts the tile in sk/si (position q at slot kp_sort_slot(q), stored by the
// caller, not yet synchronised) by runs of 2^seg_log2 < KP_SORT_RADIX_MIN
// and leaves it there in the same slots, synchronised.
template <typename K> KP_DEVICE void kp_bitonic_sort_tile(int seg_log2, K *sk, uint32_t *si) {
    kp_sort_items<K> it;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        const unsigned s = kp_sort_slot(threadIdx.x * KP_SORT_ITEMS + r);
        it.key[r] = sk[s];
        it.idx[r] = si[s];
    }
    kp_bitonic_sort(it, seg_log2);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        const unsigned s = kp_sort_slot(threadIdx.x * KP_SORT_ITEMS + r);
        sk[s] = it.key[r];
        si[s] = it.idx[r];
    }
    __syncthreads();
}

// ---- block-wide radix ranking

#define KP_SORT_WAVES (KP_SORT_BLOCK / KP_WAVE_SIZE)
#define KP_RADIX_BITS 8
#define KP_RADIX (1 << KP_RADIX_BITS)
static_assert(KP_RADIX == KP_SORT_BLOCK, "one thread per digit scans the counts");

struct kp_rank_smem {
    uint32_t count[KP_SORT_WAVES][KP_RADIX];  // per wave; then the waves-before prefix
    uint32_t start[KP_RADIX];                 // each digit's first position in the ranked tile
    uint32_t wave_sum[KP_SORT_WAVES];
};

// Tile position of this thread's item r in the ranking order: each wave
// takes KP_SORT_ITEMS * KP_WAVE_SIZE consecutive positions, item r of its
// lanes KP_WAVE_SIZE consecutive ones (coalesced loads).
KP_DEVICE unsigned kp_wave_pos(int r) {
    return threadIdx.x / KP_WAVE_SIZE * (KP_SORT_ITEMS * KP_WAVE_SIZE) + r * KP_WAVE_SIZE +
           threadIdx.x % KP_WAVE_SIZE;
}

// Sum of v over the threads before this one. Uses wave_sum; callers
// synchronise before its next use.
KP_DEVICE uint32_t kp_block_exclusive_sum(uint32_t v, uint32_t *wave_sum) {
    const int lane = (int)(threadIdx.x % KP_WAVE_SIZE), wave = (int)(threadIdx.x / KP_WAVE_SIZE);
    uint32_t incl = v;
    for (int o = 1; o < KP_WAVE_SIZE; o <<= 1) {
        const uint32_t t = kp_shfl(incl, lane >= o ? lane - o : lane);
        if (lane >= o)
            incl += t;
    }
    if (lane == KP_WAVE_SIZE - 1)
        wave_sum[wave] = incl;
    __syncthreads();
    uint32_t before = 0;
    for (int k = 0; k < wave; k++)
        before += wave_sum[k];
    return before + incl - v;
}

// rank[r] := where this thread's item r (at kp_wave_pos(r)) goes when the
// tile is sorted stably by digit; s.start holds each digit's first place.
// Every thread of the block calls it.
template <int BITS>
KP_DEVICE void kp_block_rank(const uint32_t (&digit)[KP_SORT_ITEMS], uint32_t (&rank)[KP_SORT_ITEMS],
                             kp_rank_smem &s) {
    const unsigned lane = threadIdx.x % KP_WAVE_SIZE, wave = threadIdx.x / KP_WAVE_SIZE;
    for (unsigned i = threadIdx.x; i < KP_SORT_WAVES * KP_RADIX; i += KP_SORT_BLOCK)
        (&s.count[0][0])[i] = 0;
    __syncthreads();
    const uint64_t below = (1ull << lane) - 1;
    uint32_t *count = s.count[wave];
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        const uint64_t peers = kp_match_any<BITS>(digit[r]);  // lanes with this digit
        const uint32_t base = count[digit[r]];
        const unsigned ahead = (unsigned)__popcll(peers & below);
        rank[r] = base + ahead;
        kp_wave_sync();  // every lane has read base
        if (ahead == 0)
            count[digit[r]] = base + (uint32_t)__popcll(peers);
        kp_wave_sync();
    }
    __syncthreads();
    uint32_t total = 0;
    for (int k = 0; k < KP_SORT_WAVES; k++) {
        const uint32_t c = s.count[k][threadIdx.x];
        s.count[k][threadIdx.x] = total;
        total += c;
    }
    s.start[threadIdx.x] = kp_block_exclusive_sum(total, s.wave_sum);
    __syncthreads();
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++)
        rank[r] += s.count[wave][digit[r]] + s.start[digit[r]];
}

// Ranks the tile's items by digit (kp_block_rank) and leaves them in sk/si
// at kp_sort_slot(rank), synchronised.
template <int BITS = KP_RADIX_BITS, typename K>
KP_DEVICE void kp_rank_into(const kp_sort_items<K> &it, const uint32_t (&digit)[KP_SORT_ITEMS],
                            K *sk, uint32_t *si, kp_rank_smem &s) {
    uint32_t rank[KP_SORT_ITEMS];
    kp_block_rank<BITS>(digit, rank, s);
#pragma unroll
    for (int r = 0; r < KP_SORT_ITEMS; r++) {
        sk[kp_sort_slot(rank[r])] = it.key[r];
        si[kp_sort_slot(rank[r])] = it.idx[r];
    }
    __syncthreads();
}

// Bits of a row's number within a tile of rows of KP_SORT_RADIX_MIN or more.
#define KP_SORT_ROW_BITS kp_log2(KP_SORT_TILE / KP_SORT_RADIX_MIN)
__host__ __device__ constexpr int kp_log2(int v) { return v > 1 ? 1 + kp_log2(v / 2) : 0; }

// Radix sort of a tile by key, then (if several rows share the tile) by row:
// `it` holds the items at kp_wave_pos(r), with idx their tile position. The
// sorted tile is left in sk/si at kp_sort_slot(sorted position), synchronised.
template <typename K>
KP_DEVICE void kp_radix_sort_tile(kp_sort_items<K> &it, int seg_log2, int tile_log2, K *sk,
                                  uint32_t *si, kp_rank_smem &s) {
    const int key_passes = (int)sizeof(K);
    const int passes = key_passes + (seg_log2 < tile_log2 ? 1 : 0);
    for (int pass = 0; pass < passes; pass++) {
        uint32_t digit[KP_SORT_ITEMS];
#pragma unroll
        for (int r = 0; r < KP_SORT_ITEMS; r++)
            digit[r] = pass < key_passes ? (uint32_t)(it.key[r] >> (KP_RADIX_BITS * pass)) & (KP_RADIX - 1)
                                         : it.idx[r] >> seg_log2;
        if (pass < key_passes)
            kp_rank_into(it, digit, sk, si, s);
        else
            kp_rank_into<KP_SORT_ROW_BITS>(it, digit, sk, si, s);
        if (pass + 1 < passes) {
#pragma unroll
            for (int r = 0; r < KP_SORT_ITEMS; r++) {
                it.key[r] = sk[kp_sort_slot(kp_wave_pos(r))];
                it.idx[r] = si[kp_sort_slot(kp_wave_pos(r))];
            }
        }
    }
}

// Rows of up to KP_SORT_TILE keys, 2^(log2(TILE) - seg_log2) rows per tile
// (each padded to 2^seg_log2 positions). An item's idx is its tile position,
// whose low seg_log2 bits are its column. RADIX: rows of KP_SORT_RADIX_MIN
// positions or more; shorter ones go through the bitonic network, in a
// kernel of their own (the radix path's registers cost 16-bit rows of 64
// 5 % of their speed).
template <typename T, bool RADIX>
KP_DEVICE void kp_argsort_rows(const kp_sort_rows &p, const kp_strided &outer, const T *src,
                               uint32_t *dst) {
    typedef typename kp_sort_key<T>::type K;
    __shared__ K sk[KP_SORT_SMEM];
    __shared__ uint32_t si[KP_SORT_SMEM];
    const int seg_log2 = p.seg_log2, tile_log2 = kp_log2(KP_SORT_TILE);
    const kp_idx seg_mask = ((kp_idx)1 << seg_log2) - 1;
    const kp_idx rows = (kp_idx)p.rows, ncols = (kp_idx)p.ncols;
    const kp_idx rows_per_tile = (kp_idx)KP_SORT_TILE >> seg_log2;
    const kp_idx tiles = (rows + rows_per_tile - 1) / rows_per_tile;
    const K flip = p.descending ? kp_all_ones<K>() : (K)0;
    for (kp_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        // Padding (columns past ncols, rows past the last) sorts last in its row.
        auto key_at = [&](unsigned q) {
            const kp_idx row = tile * rows_per_tile + (q >> seg_log2), col = q & seg_mask;
            K key = kp_all_ones<K>();
            if (row < rows && col < ncols) {
                kp_idx off[2];
                kp_strided_offsets<2>(outer, row, off);
                key = (K)(kp_sort_key<T>::of(src[off[1] + col * (kp_idx)p.src_col_stride]) ^ flip);
            }
            return key;
        };
        if constexpr (RADIX) {
            __shared__ kp_rank_smem rs;
            kp_sort_items<K> it;
#pragma unroll
            for (int r = 0; r < KP_SORT_ITEMS; r++) {
                it.idx[r] = kp_wave_pos(r);
                it.key[r] = key_at(it.idx[r]);
            }
            kp_radix_sort_tile(it, seg_log2, tile_log2, sk, si, rs);
        } else {
            for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
                sk[kp_sort_slot(i)] = key_at(i);
                si[kp_sort_slot(i)] = i;
            }
            kp_bitonic_sort_tile(seg_log2, sk, si);
        }
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE; i += blockDim.x) {
            const kp_idx row = tile * rows_per_tile + (i >> seg_log2), rank = i & seg_mask;
            if (row < rows && rank < ncols) {
                kp_idx off[2];
                kp_strided_offsets<2>(outer, row, off);
                dst[off[0] + rank * (kp_idx)p.dst_col_stride] = si[kp_sort_slot(i)] & (uint32_t)seg_mask;
            }
        }
        __syncthreads();  // the next tile reuses shared memory
    }
}

// ---- rows longer than a tile: radix passes over whole rows

KP_DEVICE kp_idx kp_tiles_per_row(kp_idx ncols) { return (ncols + KP_SORT_TILE - 1) / KP_SORT_TILE; }

// This thread's digit count of a tile: counts[(row * tiles_per_row + tile)
// * KP_RADIX + digit], so a tile's counts are written in one coalesced row.
KP_DEVICE uint32_t *kp_digit_counts(uint32_t *counts, kp_idx row, kp_idx tile, kp_idx tiles_per_row) {
    return counts + (row * tiles_per_row + tile) * KP_RADIX + threadIdx.x;
}

// For each tile of each row: digit(row, at, col) for the tile's columns,
// counted into the tile's counts, where at = row_at(row) is worked out once
// a tile (a source row's offset, say). Every thread of the block calls it.
template <typename RowAt, typename Digit>
KP_DEVICE void kp_count_tiles(kp_idx rows, kp_idx ncols, uint32_t *counts, RowAt row_at, Digit digit) {
    __shared__ uint32_t hist[KP_RADIX];
    const kp_idx per_row = kp_tiles_per_row(ncols), tiles = rows * per_row;
    for (kp_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const kp_idx row = tile / per_row, t = tile - row * per_row, base = t * KP_SORT_TILE;
        const kp_idx at = row_at(row);
        hist[threadIdx.x] = 0;
        __syncthreads();
        for (unsigned i = threadIdx.x; i < KP_SORT_TILE && base + i < ncols; i += blockDim.x)
            atomicAdd(&hist[digit(row, at, base + i)], 1u);
        __syncthreads();
        *kp_digit_counts(counts, row, t, per_row) = hist[threadIdx.x];
        __syncthreads();
    }
}

// The first pass: keys of a row converted into the dense rows x ncols
// scratch array, and each tile's counts of their lowest digit.
template <typename T>
KP_DEVICE void kp_argsort_keys(const kp_sort_rows &p, const kp_strided &outer, const T *src,
                               typename kp_sort_key<T>::type *keys, uint32_t *counts) {
    typedef typename kp_sort_key<T>::type K;
    const kp_idx ncols = (kp_idx)p.ncols;
    const K flip = p.descending ? kp_all_ones<K>() : (K)0;
    auto src_row = [&](kp_idx row) {
        kp_idx off[2];
        kp_strided_offsets<2>(outer, row, off);
        return off[1];
    };
    kp_count_tiles((kp_idx)p.rows, ncols, counts, src_row, [&](kp_idx row, kp_idx at, kp_idx col) {
        const K key = (K)(kp_sort_key<T>::of(src[at + col * (kp_idx)p.src_col_stride]) ^ flip);
        keys[row * ncols + col] = key;
        return (uint32_t)key & (KP_RADIX - 1);
    });
}

// A later pass's counts: each tile's digits at bit p.shift.
template <typename K>
KP_DEVICE void kp_argsort_hist(const kp_sort_radix &p, const K *keys, uint32_t *counts) {
    const kp_idx ncols = (kp_idx)p.ncols;
    auto key_row = [&](kp_idx row) { return row * ncols; };
    kp_count_tiles((kp_idx)p.rows, ncols, counts, key_row, [&](kp_idx, kp_idx at, kp_idx col) {
        return (uint32_t)(keys[at + col] >> p.shift) & (KP_RADIX - 1);
    });
}

// Each row's counts, in (digit, tile) order, become their exclusive prefix
// sums: where each tile's items of each digit start in the row. Thread d
// walks digit d's counts, KP_SCAN_BATCH loads in flight at a time.
#define KP_SCAN_BATCH 16
KP_DEVICE void kp_argsort_scan(const kp_sort_radix &p, uint32_t *counts) {
    __shared__ uint32_t wave_sum[KP_SORT_WAVES];
    const kp_idx per_row = kp_tiles_per_row((kp_idx)p.ncols);
    for (kp_idx row = blockIdx.x; row < (kp_idx)p.rows; row += gridDim.x) {
        uint32_t *c = kp_digit_counts(counts, row, 0, per_row);
        auto load = [&](kp_idx t0, uint32_t (&v)[KP_SCAN_BATCH]) {
#pragma unroll
            for (int u = 0; u < KP_SCAN_BATCH; u++)
                v[u] = t0 + u < per_row ? c[(t0 + u) * KP_RADIX] : 0;
        };
        uint32_t sum = 0;
        for (kp_idx t0 = 0; t0 < per_row; t0 += KP_SCAN_BATCH) {
            uint32_t v[KP_SCAN_BATCH];
            load(t0, v);
#pragma unroll
            for (int u = 0; u < KP_SCAN_BATCH; u++)
                sum += v[u];
        }
        uint32_t run = kp_block_exclusive_sum(sum, wave_sum);
        for (kp_idx t0 = 0; t0 < per_row; t0 += KP_SCAN_BATCH) {
            uint32_t v[KP_SCAN_BATCH];
            load(t0, v);
#pragma unroll
            for (int u = 0; u < KP_SCAN_BATCH; u++) {
                if (t0 + u < per_row)
                    c[(t0 + u) * KP_RADIX] = run;
                run += v[u];
            }
        }
        __syncthreads();
    }
}

// Output of a pass into the other scratch arrays.
template <typename K> struct kp_sort_to_scratch {
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

// Output of the last pass: the columns, into dst.
template <typename K> struct kp_sort_to_dst {
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

// One pass: each tile's items ranked by their digit at p.shift within the
// tile, then written to the digit's place in the row (offsets: the scanned
// counts). idx NULL: the first pass, whose items are in column order.
template <typename K, typename Out>
KP_DEVICE void kp_argsort_scatter(const kp_sort_radix &p, const K *keys, const uint32_t *idx,
                                  const uint32_t *offsets, Out out) {
    __shared__ K sk[KP_SORT_SMEM];
    __shared__ uint32_t si[KP_SORT_SMEM];
    __shared__ kp_rank_smem rs;
    __shared__ uint32_t where[KP_RADIX];
    const kp_idx ncols = (kp_idx)p.ncols, per_row = kp_tiles_per_row(ncols);
    const kp_idx tiles = (kp_idx)p.rows * per_row;
    for (kp_idx tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const kp_idx row = tile / per_row, t = tile - row * per_row, base = t * KP_SORT_TILE;
        const unsigned n = ncols - base < KP_SORT_TILE ? (unsigned)(ncols - base) : KP_SORT_TILE;
        where[threadIdx.x] = *kp_digit_counts((uint32_t *)offsets, row, t, per_row);
        // Positions past the row's end rank last (highest digit, last places) and are not written.
        kp_sort_items<K> it;
        uint32_t digit[KP_SORT_ITEMS];
#pragma unroll
        for (int r = 0; r < KP_SORT_ITEMS; r++) {
            const unsigned q = kp_wave_pos(r);
            const kp_idx at = row * ncols + base + q;
            it.key[r] = q < n ? keys[at] : kp_all_ones<K>();
            it.idx[r] = idx ? (q < n ? idx[at] : 0) : (uint32_t)(base + q);
            digit[r] = q < n ? (uint32_t)(it.key[r] >> p.shift) & (KP_RADIX - 1) : KP_RADIX - 1;
        }
        kp_rank_into(it, digit, sk, si, rs);
        out.row(row);
        for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
            const K key = sk[kp_sort_slot(i)];
            const uint32_t d = (uint32_t)(key >> p.shift) & (KP_RADIX - 1);
            out.put(where[d] + (i - rs.start[d]), key, si[kp_sort_slot(i)]);
        }
        __syncthreads();  // the next tile reuses shared memory
    }
}

// Every sort kernel runs blocks of KP_SORT_BLOCK threads: without the bound
// hipcc budgets registers for 1024-thread blocks and 64-bit keys spill.
#define KP_SORT_BOUNDS __launch_bounds__(KP_SORT_BLOCK)
// The rows kernels keep three blocks a multiprocessor on NVIDIA (left to
// itself ptxas chose that and spilled; two measured 20-25 % slower on
// sm_90), two for 64-bit keys, which spill within three's registers. AMD:
// no minimum (gfx900/gfx906 spill heavily when held to three).
#if KP_HIP
#define KP_SORT_ROWS_MIN_BLOCKS(T) 1
#else
#define KP_SORT_ROWS_MIN_BLOCKS(T) (sizeof(typename kp_sort_key<T>::type) == 8 ? 2 : 3)
#endif
#define KP_SORT_ROWS_BOUNDS(T) __launch_bounds__(KP_SORT_BLOCK, KP_SORT_ROWS_MIN_BLOCKS(T))

#define KP_ARGSORT(NAME, T)                                                                      \
    KP_KERNEL void KP_SORT_ROWS_BOUNDS(T)                                                        \
        argsort_rows_##NAME(kp_sort_rows p, kp_strided outer, const T *src, uint32_t *dst) {     \
        kp_argsort_rows<T, true>(p, outer, src, dst);                                            \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS                                                                \
        argsort_rows_short_##NAME(kp_sort_rows p, kp_strided outer, const T *src, uint32_t *dst) { \
        kp_argsort_rows<T, false>(p, outer, src, dst);                                           \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS argsort_keys_##NAME(kp_sort_rows p, kp_strided outer,         \
                                                      const T *src,                              \
                                                      kp_sort_key<T>::type *keys,                \
                                                      uint32_t *counts) {                        \
        kp_argsort_keys(p, outer, src, keys, counts);                                            \
    }

KP_FOR_EACH_DTYPE(KP_ARGSORT)

// The radix passes depend only on the key width.
#define KP_RADIX_PASS(NAME, K)                                                                   \
    KP_KERNEL void KP_SORT_BOUNDS argsort_hist_##NAME(kp_sort_radix p, const K *keys,           \
                                                      uint32_t *counts) {                        \
        kp_argsort_hist(p, keys, counts);                                                        \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS argsort_scatter_##NAME(                                        \
        kp_sort_radix p, const K *keys, const uint32_t *idx, const uint32_t *offsets,           \
        K *keys_out, uint32_t *idx_out) {                                                        \
        kp_argsort_scatter(p, keys, idx, offsets,                                                \
                           kp_sort_to_scratch<K>{keys_out, idx_out, (kp_idx)p.ncols, 0});        \
    }                                                                                            \
    KP_KERNEL void KP_SORT_BOUNDS argsort_scatter_final_##NAME(                                  \
        kp_sort_radix p, kp_strided outer, const K *keys, const uint32_t *idx,                   \
        const uint32_t *offsets, uint32_t *dst) {                                                \
        kp_argsort_scatter(p, keys, idx, offsets,                                                \
                           kp_sort_to_dst<K>{&outer, dst, (kp_idx)p.dst_col_stride, 0});         \
    }

KP_FOR_EACH_SIZE(KP_RADIX_PASS)

KP_KERNEL void KP_SORT_BOUNDS argsort_scan(kp_sort_radix p, uint32_t *counts) {
    kp_argsort_scan(p, counts);
}
