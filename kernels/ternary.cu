// ternary: where(cond, on_true, on_false), element by element. cond is u8,
// u32 or i64 and any nonzero value selects on_true. Values are moved as they
// are (no conversion), so NaN payloads and -0 survive.
#include "kp_elementwise.cuh"

template <typename C, typename T> struct kp_select {
    __device__ T operator()(C cond, T on_true, T on_false) const {
        return cond != 0 ? on_true : on_false;
    }
};

// where_<cond>_<dtype> when every operand is contiguous,
// where_strided_<cond>_<dtype> otherwise (operands: dst, cond, on_true, on_false).
#define KP_WHERE(CNAME, C, NAME, T)                                                            \
    KP_KERNEL void where_##CNAME##_##NAME(kp_idx n, const C *cond, const T *on_true,            \
                                          const T *on_false, T *y) {                           \
        kp_zip3_contiguous(n, cond, on_true, on_false, y, kp_select<C, T>());                  \
    }                                                                                          \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                           \
    where_strided_##CNAME##_##NAME(kp_idx n, kp_strided layout, const C *cond,                 \
                                   const T *on_true, const T *on_false, T *y) {                \
        kp_zip3_strided(n, layout, cond, on_true, on_false, y, kp_select<C, T>());             \
    }

#define KP_WHERE_U8(NAME, T) KP_WHERE(u8, uint8_t, NAME, T)
#define KP_WHERE_U32(NAME, T) KP_WHERE(u32, uint32_t, NAME, T)
#define KP_WHERE_I64(NAME, T) KP_WHERE(i64, int64_t, NAME, T)

KP_FOR_EACH_DTYPE(KP_WHERE_U8)
KP_FOR_EACH_DTYPE(KP_WHERE_U32)
KP_FOR_EACH_DTYPE(KP_WHERE_I64)
