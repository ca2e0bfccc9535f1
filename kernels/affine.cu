// affine: y = x * mul + add, computed in the dtype's compute type
// (f32 for the 16-bit floats, wrapping integer arithmetic for integers).
#include "kp_elementwise.cuh"

template <typename T> struct kp_affine_op {
    typedef typename kp_compute<T>::type C;
    C mul, add;
    __device__ T operator()(T x) const { return kp_store<T>(kp_load(x) * mul + add); }
};

#define KP_AFFINE(NAME, T)                                                                    \
    KP_KERNEL void affine_##NAME(kp_idx n, const T *x, T *y, kp_compute<T>::type mul,          \
                                 kp_compute<T>::type add) {                                   \
        kp_map_contiguous(n, x, y, kp_affine_op<T>{mul, add});                                \
    }                                                                                         \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                          \
    affine_strided_##NAME(kp_idx n, kp_strided layout, const T *x, T *y,                      \
                          kp_compute<T>::type mul, kp_compute<T>::type add) {                 \
        kp_map_strided(n, layout, x, y, kp_affine_op<T>{mul, add});                           \
    }

KP_FOR_EACH_DTYPE(KP_AFFINE)
