// cast: dst = src converted to another dtype, for every pair of dtypes
// (identity pairs copy bits). The conversion rules live in kp_convert.cuh.
#include "kp_convert.cuh"
#include "kp_elementwise.cuh"

template <typename Src, typename Dst> struct kp_cast_op {
    __device__ Dst operator()(Src x) const { return kp_convert<Dst>(x); }
};

#define KP_CAST_PAIR(SRC, TS, DST, TD)                                                      \
    KP_KERNEL void cast_##SRC##_##DST(kp_idx n, const TS *x, TD *y) {                       \
        kp_map_contiguous(n, x, y, kp_cast_op<TS, TD>());                                   \
    }                                                                                       \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                        \
    cast_strided_##SRC##_##DST(kp_idx n, kp_strided layout, const TS *x,                    \
                               TD *y) {                                                     \
        kp_map_strided(n, layout, x, y, kp_cast_op<TS, TD>());                              \
    }

// One source dtype to every destination dtype. The destinations are spelled
// out because KP_FOR_EACH_DTYPE cannot expand inside its own expansion; keep
// this list in step with it.
#define KP_CAST_FROM(SRC, TS)               \
    KP_CAST_PAIR(SRC, TS, f32, float)       \
    KP_CAST_PAIR(SRC, TS, f64, double)      \
    KP_CAST_PAIR(SRC, TS, f16, kp_f16)      \
    KP_CAST_PAIR(SRC, TS, bf16, kp_bf16)    \
    KP_CAST_PAIR(SRC, TS, u8, uint8_t)      \
    KP_CAST_PAIR(SRC, TS, u32, uint32_t)    \
    KP_CAST_PAIR(SRC, TS, i64, int64_t)

KP_FOR_EACH_DTYPE(KP_CAST_FROM)
