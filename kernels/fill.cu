// fill: set every element to a constant, and copy between layouts. Both only
// move bits, so kernels exist per element size, not per dtype.
#include "kp_elementwise.cuh"

template <typename T> struct kp_identity {
    __device__ T operator()(T x) const { return x; }
};

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
    KP_KERNEL void copy2d_##NAME(kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride,     \
                                 T *y, kp_idx y_stride) {                                   \
        for (kp_idx r = blockIdx.y; r < rows; r += gridDim.y)                               \
            kp_map_contiguous(cols, x + r * x_stride, y + r * y_stride, kp_identity<T>());  \
    }

// Transposing copy through shared-memory tiles, so both the reads and the
// writes are coalesced: y[r * y_stride + c] = x[c * x_stride + r]. The tile
// is 32 x 32 elements (a tile size, not a warp size) with one padding column
// so a column of the tile spans distinct shared-memory banks.
#define KP_TILE 32
#define KP_TILE_ROWS 8
template <typename T>
__device__ void kp_transpose(kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride, T *y, kp_idx y_stride) {
    __shared__ T tile[KP_TILE][KP_TILE + 1];
    const kp_idx row_tiles = (rows + KP_TILE - 1) / KP_TILE, col_tiles = (cols + KP_TILE - 1) / KP_TILE;
    for (kp_idx tr = blockIdx.y; tr < row_tiles; tr += gridDim.y) {
        for (kp_idx tc = blockIdx.x; tc < col_tiles; tc += gridDim.x) {
            const kp_idx r0 = tr * KP_TILE, c0 = tc * KP_TILE;
            // read: consecutive threads take consecutive r (contiguous in x)
            for (unsigned k = threadIdx.y; k < KP_TILE; k += blockDim.y) {
                const kp_idx r = r0 + threadIdx.x, c = c0 + k;
                if (r < rows && c < cols) tile[k][threadIdx.x] = x[c * x_stride + r];
            }
            __syncthreads();
            // write: consecutive threads take consecutive c (contiguous in y)
            for (unsigned k = threadIdx.y; k < KP_TILE; k += blockDim.y) {
                const kp_idx r = r0 + k, c = c0 + threadIdx.x;
                if (r < rows && c < cols) y[r * y_stride + c] = tile[threadIdx.x][k];
            }
            __syncthreads();
        }
    }
}

#define KP_TRANSPOSE(NAME, T)                                                                  \
    KP_KERNEL void transpose2d_##NAME(kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride,    \
                                      T *y, kp_idx y_stride) {                                  \
        kp_transpose(rows, cols, x, x_stride, y, y_stride);                                     \
    }

KP_FOR_EACH_SIZE(KP_FILL)
KP_FOR_EACH_SIZE(KP_TRANSPOSE)
