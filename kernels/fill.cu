// fill: set every element to a constant, and copy between layouts. Both only
// move bits, so kernels exist per element size, not per dtype.
#include "kp_elementwise.cuh"

template <typename T> struct kp_identity {
    __device__ T operator()(T x) const { return x; }
};

#define KP_FILL(NAME, T)                                                                  \
    KP_KERNEL void fill_##NAME(kp_idx n, T *y, T value) { kp_set_contiguous(n, y, value); } \
    KP_KERNEL void fill_strided_##NAME(kp_idx n, kp_strided layout, T *y, T value) {       \
        kp_set_strided(n, layout, y, value);                                                \
    }                                                                                       \
    KP_KERNEL void copy_strided_##NAME(kp_idx n, kp_strided layout, const T *x, T *y) {    \
        kp_map_strided(n, layout, x, y, kp_identity<T>());                                  \
    }                                                                                       \
    KP_KERNEL void copy2d_##NAME(kp_idx rows, kp_idx cols, const T *x, kp_idx x_stride,     \
                                 T *y, kp_idx y_stride) {                                   \
        for (kp_idx r = blockIdx.y; r < rows; r += gridDim.y)                               \
            kp_map_contiguous(cols, x + r * x_stride, y + r * y_stride, kp_identity<T>());  \
    }

KP_FOR_EACH_SIZE(KP_FILL)
