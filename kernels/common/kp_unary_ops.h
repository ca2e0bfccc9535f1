/* The unary ops and the dtypes each is built for, as one list that both
 * sides expand: kernels/unary.cu instantiates `<op>_<dtype>` and
 * `<op>_strided_<dtype>` for every dtype of the set, and the library turns
 * each entry into two kernel families and a row of kp_unary's op table.
 * Plain C preprocessor only, like kp_kernel_abi.h.
 *
 * X(ID, name, SET, VPT): ID names the public KP_UNARY_<ID>, name is the
 * op's kernel name prefix and kp_unary_op_name(), SET is one of
 *   DTYPES  every dtype (f32 f64 f16 bf16 u8 u32 i64)
 *   SIGNED  the float dtypes and i64
 *   FLOATS  the float dtypes (f32 f64 f16 bf16)
 * and VPT is how the contiguous kernel is laid over the tensor:
 *   4  a grid covering it once, each thread loading four 16-byte vectors
 *      before it computes any: on an H100 (kp-bench, 2^28 elements) every
 *      op then runs at 98-100 % of the copy bandwidth in f32, f16 and bf16
 *      (powf with its own pow, kp_pow.cuh), where a grid-stride loop over at
 *      most 32 blocks a multiprocessor, one vector a step, gave 92-96 %
 *      (gelu_erf 78 %, 16-bit powf 91 %);
 *   1  that grid-stride loop, which no op takes now (powf took it while it
 *      called libm's powf for every element, compute-bound at 85-87 %).
 * Order matches enum kp_unary_op. */
#ifndef KP_UNARY_OPS_H
#define KP_UNARY_OPS_H

#define KP_UNARY_OPS(X)                \
    X(COPY, copy, DTYPES, 4)           \
    X(NEG, neg, SIGNED, 4)             \
    X(RECIP, recip, FLOATS, 4)         \
    X(ABS, abs, DTYPES, 4)             \
    X(SIGN, sign, DTYPES, 4)           \
    X(SQR, sqr, DTYPES, 4)             \
    X(SQRT, sqrt, FLOATS, 4)           \
    X(RSQRT, rsqrt, FLOATS, 4)         \
    X(EXP, exp, FLOATS, 4)             \
    X(LOG, log, FLOATS, 4)             \
    X(SIN, sin, FLOATS, 4)             \
    X(COS, cos, FLOATS, 4)             \
    X(TANH, tanh, FLOATS, 4)           \
    X(ERF, erf, FLOATS, 4)             \
    X(CEIL, ceil, FLOATS, 4)           \
    X(FLOOR, floor, FLOATS, 4)         \
    X(ROUND, round, FLOATS, 4)         \
    X(RELU, relu, DTYPES, 4)           \
    X(GELU, gelu, FLOATS, 4)           \
    X(GELU_ERF, gelu_erf, FLOATS, 4)   \
    X(SILU, silu, FLOATS, 4)           \
    X(SIGMOID, sigmoid, FLOATS, 4)     \
    X(ELU, elu, FLOATS, 4)             \
    X(POWF, powf, FLOATS, 4)

#endif
