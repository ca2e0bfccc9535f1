/* kernelpack: tensor operations.
 *
 * Every op queues its work on `stream` and returns without waiting. All
 * tensors must live on the stream's device. Arguments are checked before
 * anything is queued: on any error nothing is launched or written and the
 * status says why (kp_last_error_message has the detail). Input and output
 * may share a buffer only where an op says so. */
#ifndef KERNELPACK_OPS_H
#define KERNELPACK_OPS_H

#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* affine: dst = src * mul + add, element by element. src and dst have the same
 * dtype and shape, any layouts; dst may be src itself (same layout) but must
 * not otherwise overlap it or itself (no stride-0 outputs). All dtypes. Floats
 * compute in the dtype's precision (f32 for f16/bf16); for integer dtypes
 * mul and add must be whole numbers that the dtype can hold, and the
 * arithmetic wraps like unsigned (u8, u32) or two's-complement (i64) C. */
KP_API kp_status kp_affine(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                           double mul, double add);

/* fill: sets every element of dst to *value, which points to one element of
 * dst's dtype (uint16_t bits for f16/bf16). dst may have any layout, also
 * with stride-0 dimensions. All dtypes. */
KP_API kp_status kp_fill(kp_stream *stream, const kp_tensor *dst, const void *value);

/* copy: dst = src between any two layouts of the same dtype and shape. dst
 * must not overlap src or itself. All dtypes. */
KP_API kp_status kp_copy(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src);

/* cast: dst = src converted to dst's dtype, element by element, between any
 * two dtypes. Same shape, any layouts; dst must not overlap src or itself.
 * Unlike C casts, the result is defined for every input:
 * - same dtype: the bits are copied unchanged (NaN payloads included);
 * - into f32/f64/f16/bf16: round to nearest, ties to even, once, directly
 *   from the exact source value (an f64 or i64 source is not rounded through
 *   f32 first); too large gives +-Inf, too small a subnormal or +-0;
 * - NaN into a float dtype: that dtype's canonical quiet NaN (f32 0x7fc00000,
 *   f64 0x7ff8000000000000, f16 0x7e00, bf16 0x7fc0) with the source's sign;
 * - float into an integer dtype: truncate toward zero; NaN gives 0; values
 *   outside the dtype's range (+-Inf included) saturate to its minimum or
 *   maximum, so negative values give 0 for u8/u32;
 * - integer into integer: widening is exact; narrowing (i64 to u32 or u8,
 *   u32 to u8) keeps the low bits, i.e. wraps modulo 2^bits. */
KP_API kp_status kp_cast(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src);

/* copy2d: copies `rows` rows of `cols` elements; row r starts at element
 * src_offset + r * src_stride in src and dst_offset + r * dst_stride in dst.
 * Strides >= cols; the regions must not overlap. */
KP_API kp_status kp_copy2d(kp_stream *stream, kp_dtype dtype,
                           kp_buffer *dst, size_t dst_offset, size_t dst_stride,
                           const kp_buffer *src, size_t src_offset, size_t src_stride,
                           size_t rows, size_t cols);

/* The element-by-element binary ops of kp_binary. */
typedef enum kp_binary_op {
    KP_BINARY_ADD = 0,
    KP_BINARY_SUB,
    KP_BINARY_MUL,
    KP_BINARY_DIV,
    KP_BINARY_MINIMUM,
    KP_BINARY_MAXIMUM,
    KP_BINARY_EQ,       /* comparisons: dst is u8, 1 where true and 0 where false */
    KP_BINARY_NE,
    KP_BINARY_LT,
    KP_BINARY_LE,
    KP_BINARY_GT,
    KP_BINARY_GE,
    KP_BINARY_OP_COUNT  /* the number of ops, not an op */
} kp_binary_op;

/* "add", "minimum", "ge", ...; NULL for a value that is not a kp_binary_op. */
KP_API const char *kp_binary_op_name(kp_binary_op op);

/* binary: dst = lhs <op> rhs, element by element. lhs and rhs have the same
 * dtype (any) and dst's shape; broadcast an input with stride-0 dims. dst has
 * the inputs' dtype for add, sub, mul, div, minimum, maximum and is u8 (1 or
 * 0) for the comparisons. dst may be lhs or rhs itself (identical view and
 * dtype) but must not otherwise overlap them or itself. Floats compute in the
 * dtype's precision (f32 for f16/bf16), so add/sub/mul/div are correctly
 * rounded for f32/f64. minimum/maximum return NaN if either input is NaN and
 * treat -0 as less than +0; comparisons follow IEEE (with a NaN only ne is
 * true). Integer add, sub and mul wrap; integer division truncates, x / 0
 * gives 0 (the GPU does not trap) and INT64_MIN / -1 gives INT64_MIN. */
KP_API kp_status kp_binary(kp_stream *stream, kp_binary_op op, const kp_tensor *dst,
                           const kp_tensor *lhs, const kp_tensor *rhs);

/* where: dst = cond ? on_true : on_false, element by element. cond is u8, u32
 * or i64 (any nonzero value is true); on_true, on_false and dst share one
 * dtype (any), whose bits are copied unchanged. All inputs have dst's shape;
 * broadcast with stride-0 dims. dst may be an input itself (identical view
 * and dtype) but must not otherwise overlap an input or itself. */
KP_API kp_status kp_where(kp_stream *stream, const kp_tensor *dst, const kp_tensor *cond,
                          const kp_tensor *on_true, const kp_tensor *on_false);
/* unary: dst = op(src), element by element. src and dst have the same dtype
 * and shape, any layouts; dst may be src itself (same layout) but must not
 * otherwise overlap it or itself (no stride-0 outputs). `param` is alpha for
 * KP_UNARY_ELU and the exponent for KP_UNARY_POWF and is ignored by the other
 * ops; for f32, f16 and bf16 it is rounded to f32 and must lie within f32's
 * range (infinities and NaN are accepted).
 *
 * Float dtypes support every op. f32 and f64 compute in their own precision
 * with accurate math functions and are within a few units in the last place
 * (ulp) of the exact result, except gelu and gelu_erf for negative x, where
 * the rounding of their exponential's argument is amplified as the results
 * shrink. f32 powf computes log2|x| in two floats and is within 2 ulp (the
 * tests sweep 77 million inputs and see at most 1) and exact where the
 * result is a float for integer powers of integers up to 2^24, square roots
 * of squares and their cubes, and negative powers of powers of two; on
 * devices whose f64 arithmetic runs at half the f32 rate or better (NVIDIA
 * A100, H100, H200) contiguous f32 powf computes in f64 instead, faster
 * there, and is within 0.51 ulp (a model of its arithmetic), under the same
 * test bounds. In
 * f32, over 70 million inputs spread across the whole range, the
 * worst seen is, for x >= 0 / -1 <= x < 0 / -3 <= x < -1 / -5 <= x < -3 /
 * below: gelu 2 / 3 / 13 / 35 / 182 ulp, gelu_erf 1 / 3 / 14 / 43 / 165
 * ulp, the last for -10 <= x < -5 (below -10, a host model of its
 * arithmetic sees up to 211 ulp where the result is a normal float)
 * (tests/gpu/test_unary.c sweeps them and asserts 6 + 8|v|/(1 + e^v) ulp for
 * gelu, v its sigmoid's argument, and 8 + 2x^2 ulp for gelu_erf). f32
 * gelu_erf evaluates its own polynomial fits of the normal distribution's
 * tail (within 1e-8 relative) and gives 0 on NVIDIA where the result is
 * below the normal range (x < -13.2). f16 and bf16 compute in f32, using
 * the hardware's fast exp, exp2, log, log2, reciprocal and reciprocal
 * square root where their few-f32-ulp error cannot show in 16 bits, short
 * polynomials for sin, cos and erf (within 1.2e-6 and 8e-7 relative), and
 * for gelu_erf a polynomial fit of erfc (within 2e-5 relative), then round
 * to nearest even: for every one of the 65536 inputs of every op the result
 * is within one 16-bit ulp. Results below the normal range may lose
 * precision. Integer dtypes support copy, abs, sign, sqr and
 * relu, and i64 also neg; integer arithmetic wraps (abs and neg of
 * INT64_MIN give INT64_MIN), and abs and relu are the identity for u8 and
 * u32. Any other (op, dtype) pair fails with KP_ERR_UNSUPPORTED.
 *
 * The ops, with x = src element:
 *   copy x (bits unchanged) | neg -x | recip 1/x | abs |x|
 *   sign -1, 0 or +1 (+-0 keep their sign) | sqr x*x | sqrt | rsqrt 1/sqrt(x)
 *   exp | log (natural) | sin | cos | tanh | erf | ceil | floor
 *   round: to nearest, halfway cases away from zero (C round())
 *   relu x <= 0 ? +0 : x | sigmoid 1/(1+exp(-x)) | silu x/(1+exp(-x)),
 *     both computed through exp(-|x|), so exp never overflows
 *   gelu (tanh approximation) 0.5x(1+tanh(u)), u = sqrt(2/pi)(x+0.044715x^3),
 *     computed as x*sigmoid(2u) (as above), which is the same function
 *     without the cancellation of 1+tanh(u) for negative x
 *   gelu_erf 0.5x(1+erf(x/sqrt(2))), computed as 0.5x*erfc(-x/sqrt(2))
 *   elu x > 0 ? x : alpha(exp(x)-1), computed with expm1
 *   powf pow(x, param) as C pow()
 * NaN and infinities: a NaN input gives NaN for every float op (sign and
 * relu included) except powf, which follows C pow() (pow(NaN, 0) = 1).
 * Infinite inputs give the ops' limits, e.g. exp(-inf) = 0, tanh(+inf) = 1,
 * sigmoid(-inf) = 0, and gelu, gelu_erf and silu of -inf are -0 (their
 * formulas alone would give NaN). */
typedef enum kp_unary_op {
    KP_UNARY_COPY = 0,
    KP_UNARY_NEG,
    KP_UNARY_RECIP,
    KP_UNARY_ABS,
    KP_UNARY_SIGN,
    KP_UNARY_SQR,
    KP_UNARY_SQRT,
    KP_UNARY_RSQRT,
    KP_UNARY_EXP,
    KP_UNARY_LOG,
    KP_UNARY_SIN,
    KP_UNARY_COS,
    KP_UNARY_TANH,
    KP_UNARY_ERF,
    KP_UNARY_CEIL,
    KP_UNARY_FLOOR,
    KP_UNARY_ROUND,
    KP_UNARY_RELU,
    KP_UNARY_GELU,
    KP_UNARY_GELU_ERF,
    KP_UNARY_SILU,
    KP_UNARY_SIGMOID,
    KP_UNARY_ELU,
    KP_UNARY_POWF,
    KP_UNARY_OP_COUNT
} kp_unary_op;

KP_API kp_status kp_unary(kp_stream *stream, kp_unary_op op, const kp_tensor *dst,
                          const kp_tensor *src, double param);

/* The op's name as used in kernel names ("exp", "gelu_erf"); NULL for a value
 * that is not a kp_unary_op. */
KP_API const char *kp_unary_op_name(kp_unary_op op);

#ifdef __cplusplus
}
#endif
#endif
