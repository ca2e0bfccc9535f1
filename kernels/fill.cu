// fill: set every element to a constant, and copy between layouts. Both only
// move bits, so kernels exist per element size, not per dtype.
#include "kp_elementwise.cuh"

template <typename T> struct kp_identity {
    __device__ T operator()(T x) const { return x; }
};

// copy_strided_rows: a strided copy whose rows are contiguous in both
// operands (a permutation that keeps the last dim, [B, S, H, D] ->
// [B, H, S, D]), launched as kp_launch_strided() plans it (threads for
// about 4 vectors of a row each). A thread loads up to 4 of its row's
// 16-byte vectors before it stores any: copy_strided's row loop stores
// each before loading the next, one vector a thread in flight (H100: 73 %
// of a copy for rows of 256 bytes). A kernel of its own, so that
// copy_strided's element path keeps its registers.
template <typename T> __device__ void kp_copy_row(kp_idx n, const T *x, T *y) {
    constexpr int N = 16 / sizeof(T), U = 4;
    typedef kp_vec<uint32_t, 4> V;  // bits only: no per-element registers for 1-byte T
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (kp_aligned<N>(x) && kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        const V *xv = reinterpret_cast<const V *>(x);
        V *yv = reinterpret_cast<V *>(y);
        for (kp_idx i = tid; i < nvec; i += U * step) {
            V a[U];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (i + u * step < nvec)
                    a[u] = xv[i + u * step];
#pragma unroll
            for (int u = 0; u < U; u++)
                if (i + u * step < nvec)
                    yv[i + u * step] = a[u];
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = x[i];
}

template <typename T> __device__ void kp_copy_rows(kp_idx n, const kp_strided &L, const T *x, T *y) {
    const kp_idx inner = (kp_idx)L.shape[L.rank - 1];
    kp_for_each_row<2>(n, L, [&](const kp_idx (&b)[2]) { kp_copy_row(inner, x + b[1], y + b[0]); });
}

#define KP_FILL(NAME, T)                                                                  \
    KP_KERNEL void fill_##NAME(kp_idx n, T *y, T value) { kp_set_contiguous(n, y, value); } \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                        \
    fill_strided_##NAME(kp_idx n, kp_strided layout, T *y, T value) {                       \
        kp_set_strided(n, layout, y, value);                                                \
    }                                                                                       \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                        \
    copy_strided_##NAME(kp_idx n, kp_strided layout, const T *x, T *y) {                    \
        kp_map_strided(n, layout, x, y, kp_identity<T>());                                  \
    }                                                                                       \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                        \
    copy_strided_rows_##NAME(kp_idx n, kp_strided layout, const T *x, T *y) {               \
        kp_copy_rows(n, layout, x, y);                                                      \
    }                                                                                       \
    KP_KERNEL void copy2d_##NAME(kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride,     \
                                 T *y, kp_idx y_stride) {                                   \
        for (kp_idx r = blockIdx.y; r < rows; r += gridDim.y)                               \
            kp_map_contiguous(cols, x + r * x_stride, y + r * y_stride, kp_identity<T>());  \
    }

// ---- Transposing copies, through shared-memory tiles so that both the
// reads and the writes are coalesced: for each of `batch` matrices,
// y[r * y_stride + c] = x[c * x_stride + r] (r < rows, c < cols), the b-th
// at x + b * x_batch, y + b * y_batch.
struct kp_transpose_shape {
    kp_idx rows, cols, x_stride, y_stride, batch, x_batch, y_batch;
};

// Calls tile(x, y, r0, c0, whole) for every TR x TC tile (rows r0..,
// columns c0..) of every matrix (whole: the tile lies inside it): blocks
// stride over (matrix, row tile) on y and over column tiles on x. Blocks
// are KP_TILE_ROWS warps.
#define KP_TILE_ROWS 8
template <int TR, int TC = TR, typename E, typename Tile>
__device__ void kp_transpose_tiles(const kp_transpose_shape &s, const E *x, E *y, const Tile &tile) {
    const kp_idx row_tiles = (s.rows + TR - 1) / TR, col_tiles = (s.cols + TC - 1) / TC;
    for (kp_idx br = blockIdx.y; br < s.batch * row_tiles; br += gridDim.y) {
        const kp_idx b = br / row_tiles, r0 = (br - b * row_tiles) * TR;
        for (kp_idx tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
            const kp_idx c0 = tc * TC;
            tile(x + b * s.x_batch, y + b * s.y_batch, r0, c0, r0 + TR <= s.rows && c0 + TC <= s.cols);
        }
    }
}

// 1- and 8-byte elements: 32 x 32 tiles, one padding column so that a
// column of the tile spans distinct banks.
template <typename E> __device__ void kp_transpose_elems(const kp_transpose_shape &s, const E *x, E *y) {
    constexpr int T = 32;
    __shared__ E tile[T][T + 1];  // tile[c - c0][r - r0]
    kp_transpose_tiles<T>(s, x, y, [&](const E *xb, E *yb, kp_idx r0, kp_idx c0, bool whole) {
        for (unsigned k = threadIdx.y; k < T; k += KP_TILE_ROWS) {
            const kp_idx r = r0 + threadIdx.x, c = c0 + k;
            if (whole || (r < s.rows && c < s.cols))
                tile[k][threadIdx.x] = xb[c * s.x_stride + r];
        }
        __syncthreads();
        for (unsigned k = threadIdx.y; k < T; k += KP_TILE_ROWS) {
            const kp_idx r = r0 + k, c = c0 + threadIdx.x;
            if (whole || (r < s.rows && c < s.cols))
                yb[r * s.y_stride + c] = tile[threadIdx.x][k];
        }
        __syncthreads();
    });
}

// 32-bit elements: tiles of KP_TRANSPOSE32_ROWS rows (r) by
// KP_TRANSPOSE32_COLS columns (c) (kp_kernel_abi.h), all of a thread's
// loads in flight before the tile is stored (a 32 x 32 tile's 4 left H100
// at 69 % of a copy).
__device__ void kp_transpose_words(const kp_transpose_shape &s, const uint32_t *x, uint32_t *y) {
    constexpr int TR = KP_TRANSPOSE32_ROWS, TC = KP_TRANSPOSE32_COLS;
    static_assert(TR % 32 == 0 && TC % 32 == 0, "a warp moves 32 words of a row or column");
    __shared__ uint32_t tile[TC][TR + 1];  // tile[c - c0][r - r0]
    const unsigned lane = threadIdx.x, w = threadIdx.y;
    kp_transpose_tiles<TR, TC>(s, x, y, [&](const uint32_t *xb, uint32_t *yb, kp_idx r0, kp_idx c0, bool whole) {
#pragma unroll
        for (int i = 0; i < TC / KP_TILE_ROWS; i++)
#pragma unroll
            for (int h = 0; h < TR / 32; h++) {
                const unsigned k = w + KP_TILE_ROWS * i, u = lane + 32 * h;
                const kp_idx c = c0 + k, r = r0 + u;
                tile[k][u] = whole || (c < s.cols && r < s.rows) ? xb[c * s.x_stride + r] : 0u;
            }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TR / KP_TILE_ROWS; j++)
#pragma unroll
            for (int h = 0; h < TC / 32; h++) {
                const unsigned k = w + KP_TILE_ROWS * j, u = lane + 32 * h;
                const kp_idx r = r0 + k, c = c0 + u;
                if (whole || (r < s.rows && c < s.cols))
                    yb[r * s.y_stride + c] = tile[u][k];
            }
        __syncthreads();
    });
}

// 16-bit elements: tiles of KP_TRANSPOSE16_ROWS rows (r) by
// KP_TRANSPOSE16_COLS columns (c) (kp_kernel_abi.h) moved as 32-bit words,
// so each global access is a word and a warp's reads and writes are
// 128-byte rows (element by element they were 64-byte ones, at 43 % of a
// copy on H100): a thread loads rows r and r + 1 of columns c and c + 1
// (two words), swaps their halves into the words of columns (c, c + 1) at
// r and at r + 1, and stores those to the tile, which is then written out
// a row at a time. A warp covers 64 rows of a column; taller tiles take
// more such bands. 128 x 128 tiles read and write 256-byte runs of each
// row or column: H200 (kp-bench, % of copy, f16 / bf16), transposed copy
// 88 -> 94-94.5, the permutes bsc>bcs 88 -> 94 and nchw>nhwc 90 -> 95.5,
// where 64 x 128 tiles (128-byte reads) stayed at 88-90 and 128 x 64
// (128-byte writes) gained 1 point. Tiles past an edge, and operands whose
// words would be misaligned, move element by element.
__device__ void kp_transpose_pairs(const kp_transpose_shape &s, const uint16_t *x, uint16_t *y) {
    constexpr int TR = KP_TRANSPOSE16_ROWS, TC = KP_TRANSPOSE16_COLS;
    constexpr int BANDS = TR / 64, STEPS = TC / 2 / KP_TILE_ROWS;
    static_assert(TR % 64 == 0 && TC % 64 == 0, "a warp moves 64 rows and 64-column words");
    __shared__ uint32_t tile[TR][TC / 2 + 1];  // tile[r - r0][(c - c0) / 2]: columns c, c + 1 at r
    const unsigned lane = threadIdx.x, w = threadIdx.y;
    const bool words = ((s.x_stride | s.y_stride | s.x_batch | s.y_batch) & 1) == 0 &&
                       (((uintptr_t)x | (uintptr_t)y) & 3) == 0;
    kp_transpose_tiles<TR, TC>(s, x, y, [&](const uint16_t *xb, uint16_t *yb, kp_idx r0, kp_idx c0,
                                            bool whole) {
        whole = whole && words;
        auto at = [&](kp_idx c, kp_idx rr) -> uint32_t {
            return c < s.cols && rr < s.rows ? xb[c * s.x_stride + rr] : 0u;
        };
        // a, b: rows r, r + 1 (r - r0 = 64 band + 2 lane) of columns c and c + 1, c - c0 = k
        auto put = [&](int band, unsigned k, uint32_t a, uint32_t b) {
            tile[64 * band + 2 * lane][k / 2] = __byte_perm(a, b, 0x5410);
            tile[64 * band + 2 * lane + 1][k / 2] = __byte_perm(a, b, 0x7632);
        };
        if (whole) {  // words: x_stride / 2 a column, KP_TILE_ROWS * x_stride a step
#pragma unroll
            for (int band = 0; band < BANDS; band++) {
                const kp_idx r = r0 + 64 * band + 2 * lane;
                const uint32_t *p = (const uint32_t *)(xb + (c0 + 2 * w) * s.x_stride + r);
#pragma unroll
                for (int i = 0; i < STEPS; i++)
                    put(band, 2 * (w + KP_TILE_ROWS * i), p[i * KP_TILE_ROWS * s.x_stride],
                        p[i * KP_TILE_ROWS * s.x_stride + s.x_stride / 2]);
            }
        } else {  // element by element; not unrolled: its many loads would raise
                  // every tile's registers
#pragma unroll 1
            for (int band = 0; band < BANDS; band++) {
                const kp_idx r = r0 + 64 * band + 2 * lane;
#pragma unroll 1
                for (int i = 0; i < STEPS; i++) {
                    const unsigned k = 2 * (w + KP_TILE_ROWS * i);
                    const kp_idx c = c0 + k;
                    put(band, k, at(c, r) | at(c, r + 1) << 16,
                        at(c + 1, r) | at(c + 1, r + 1) << 16);
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < TR / KP_TILE_ROWS; j++)
#pragma unroll
            for (int h = 0; h < TC / 64; h++) {
                const unsigned k = w + KP_TILE_ROWS * j, u = lane + 32 * h;  // r - r0, (c - c0) / 2
                const kp_idx rr = r0 + k, c = c0 + 2 * u;
                const uint32_t v = tile[k][u];
                if (whole) {
                    *(uint32_t *)(yb + rr * s.y_stride + c) = v;
                } else if (rr < s.rows) {
                    if (c < s.cols)
                        yb[rr * s.y_stride + c] = (uint16_t)v;
                    if (c + 1 < s.cols)
                        yb[rr * s.y_stride + c + 1] = (uint16_t)(v >> 16);
                }
            }
        __syncthreads();
    });
}

template <typename E> __device__ void kp_transpose(const kp_transpose_shape &s, const E *x, E *y) {
    if constexpr (sizeof(E) == 2)
        kp_transpose_pairs(s, x, y);
    else if constexpr (sizeof(E) == 4)
        kp_transpose_words(s, x, y);
    else
        kp_transpose_elems(s, x, y);
}

// Launched with blocks of 32 x KP_TILE_ROWS threads; the launcher's grid
// counts tiles of KP_TRANSPOSE16_ROWS x KP_TRANSPOSE16_COLS (2-byte
// elements), KP_TRANSPOSE32_ROWS x KP_TRANSPOSE32_COLS (4) or 32 x 32 (1, 8).
// (Without KP_AMD_BLOCK_BOUNDS the 16-bit kernel's 32 loads in flight
// spilled on gfx900 and gfx906.)
#define KP_TRANSPOSE(NAME, T)                                                                  \
    KP_KERNEL KP_AMD_BLOCK_BOUNDS(32 * KP_TILE_ROWS) void transpose2d_##NAME(                  \
        kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride, T *y, kp_idx y_stride,          \
        kp_idx batch, kp_idx x_batch, kp_idx y_batch) {                                        \
        const kp_transpose_shape s = {rows, cols, x_stride, y_stride, batch, x_batch, y_batch}; \
        kp_transpose<T>(s, x, y);                                                               \
    }

KP_FOR_EACH_SIZE(KP_FILL)
KP_FOR_EACH_SIZE(KP_TRANSPOSE)
