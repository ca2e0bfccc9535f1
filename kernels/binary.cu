// binary: dst = lhs <op> rhs element by element, for the arithmetic ops
// add sub mul div minimum maximum (dst has the input dtype) and the
// comparisons eq ne lt le gt ge (dst is u8 holding 1 or 0).
//
// Math happens in the dtype's compute type (f32 for f16/bf16, u32 for u8).
// Edge cases, the same in every layout:
// - integer add/sub/mul wrap (two's complement for i64);
// - integer division truncates toward zero; x / 0 gives 0 (a device trap
//   would kill the whole context) and INT64_MIN / -1 gives INT64_MIN;
// - minimum/maximum return NaN when either input is NaN and order -0 below
//   +0 (IEEE 754-2019 minimum/maximum);
// - comparisons follow IEEE: with a NaN operand only ne is true.
#include "kp_elementwise.cuh"

// ---- the ops, on compute types. Overloads cover the types whose rules
// differ from plain C++ (wrapping i64, integer division, NaN-aware min/max).

struct kp_op_add {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a + b; }
    static KP_DEVICE int64_t apply(int64_t a, int64_t b) { return (int64_t)((uint64_t)a + (uint64_t)b); }
};

struct kp_op_sub {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a - b; }
    static KP_DEVICE int64_t apply(int64_t a, int64_t b) { return (int64_t)((uint64_t)a - (uint64_t)b); }
};

struct kp_op_mul {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a * b; }
    static KP_DEVICE int64_t apply(int64_t a, int64_t b) { return (int64_t)((uint64_t)a * (uint64_t)b); }
};

struct kp_op_div {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a / b; }  // floats: IEEE
    static KP_DEVICE uint32_t apply(uint32_t a, uint32_t b) { return b ? a / b : 0u; }
    static KP_DEVICE int64_t apply(int64_t a, int64_t b) {
        if (b == 0) return 0;
        if (b == -1) return (int64_t)(0u - (uint64_t)a);  // wraps: INT64_MIN stays INT64_MIN
        return a / b;
    }
};

// IEEE 754-2019 minimum/maximum: NaN wins, -0 < +0.
template <typename F> KP_DEVICE F kp_nan_min(F a, F b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
template <typename F> KP_DEVICE F kp_nan_max(F a, F b) {
    if (a != a) return a;
    if (b != b) return b;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

struct kp_op_minimum {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a < b ? a : b; }  // integers
    static KP_DEVICE float apply(float a, float b) { return kp_nan_min(a, b); }
    static KP_DEVICE double apply(double a, double b) { return kp_nan_min(a, b); }
};

struct kp_op_maximum {
    template <typename C> static KP_DEVICE C apply(C a, C b) { return a > b ? a : b; }  // integers
    static KP_DEVICE float apply(float a, float b) { return kp_nan_max(a, b); }
    static KP_DEVICE double apply(double a, double b) { return kp_nan_max(a, b); }
};

struct kp_op_eq { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a == b; } };
struct kp_op_ne { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a != b; } };
struct kp_op_lt { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a < b; } };
struct kp_op_le { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a <= b; } };
struct kp_op_gt { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a > b; } };
struct kp_op_ge { template <typename C> static KP_DEVICE bool apply(C a, C b) { return a >= b; } };

// ---- element functors: load to the compute type, apply, store.

template <typename Op, typename T> struct kp_arith {
    __device__ T operator()(T a, T b) const { return kp_store<T>(Op::apply(kp_load(a), kp_load(b))); }
};

template <typename Op, typename T> struct kp_compare {
    __device__ uint8_t operator()(T a, T b) const { return Op::apply(kp_load(a), kp_load(b)) ? 1 : 0; }
};

// ---- kernels: <op>_<dtype> when lhs, rhs and dst are all contiguous,
// <op>_strided_<dtype> for any other layouts (operands: dst, lhs, rhs).

#define KP_BINARY(OP, KIND, TOUT, NAME, T)                                                    \
    KP_KERNEL void OP##_##NAME(kp_idx n, const T *lhs, const T *rhs, TOUT *y) {                \
        kp_zip_contiguous(n, lhs, rhs, y, KIND<kp_op_##OP, T>());                              \
    }                                                                                         \
    KP_KERNEL KP_STRIDED_BOUNDS void                                                          \
    OP##_strided_##NAME(kp_idx n, kp_strided layout, const T *lhs, const T *rhs,              \
                        TOUT *y) {                                                            \
        kp_zip_strided(n, layout, lhs, rhs, y, KIND<kp_op_##OP, T>());                         \
    }

#define KP_BINARY_ALL(NAME, T)                  \
    KP_BINARY(add, kp_arith, T, NAME, T)        \
    KP_BINARY(sub, kp_arith, T, NAME, T)        \
    KP_BINARY(mul, kp_arith, T, NAME, T)        \
    KP_BINARY(div, kp_arith, T, NAME, T)        \
    KP_BINARY(minimum, kp_arith, T, NAME, T)    \
    KP_BINARY(maximum, kp_arith, T, NAME, T)    \
    KP_BINARY(eq, kp_compare, uint8_t, NAME, T) \
    KP_BINARY(ne, kp_compare, uint8_t, NAME, T) \
    KP_BINARY(lt, kp_compare, uint8_t, NAME, T) \
    KP_BINARY(le, kp_compare, uint8_t, NAME, T) \
    KP_BINARY(gt, kp_compare, uint8_t, NAME, T) \
    KP_BINARY(ge, kp_compare, uint8_t, NAME, T)

KP_FOR_EACH_DTYPE(KP_BINARY_ALL)
