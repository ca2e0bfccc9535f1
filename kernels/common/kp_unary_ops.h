/* The unary ops and the dtypes each is built for, as one list that both
 * sides expand: kernels/unary.cu instantiates `<op>_<dtype>` and
 * `<op>_strided_<dtype>` for every dtype of the set, and the library turns
 * each entry into two kernel families and a row of kp_unary's op table.
 * Plain C preprocessor only, like kp_kernel_abi.h.
 *
 * X(ID, name, SET): ID names the public KP_UNARY_<ID>, name is the op's
 * kernel name prefix and kp_unary_op_name(), SET is one of
 *   DTYPES  every dtype (f32 f64 f16 bf16 u8 u32 i64)
 *   SIGNED  the float dtypes and i64
 *   FLOATS  the float dtypes (f32 f64 f16 bf16)
 * Order matches enum kp_unary_op. */
#ifndef KP_UNARY_OPS_H
#define KP_UNARY_OPS_H

#define KP_UNARY_OPS(X)            \
    X(COPY, copy, DTYPES)          \
    X(NEG, neg, SIGNED)            \
    X(RECIP, recip, FLOATS)        \
    X(ABS, abs, DTYPES)            \
    X(SIGN, sign, DTYPES)          \
    X(SQR, sqr, DTYPES)            \
    X(SQRT, sqrt, FLOATS)          \
    X(RSQRT, rsqrt, FLOATS)        \
    X(EXP, exp, FLOATS)            \
    X(LOG, log, FLOATS)            \
    X(SIN, sin, FLOATS)            \
    X(COS, cos, FLOATS)            \
    X(TANH, tanh, FLOATS)          \
    X(ERF, erf, FLOATS)            \
    X(CEIL, ceil, FLOATS)          \
    X(FLOOR, floor, FLOATS)        \
    X(ROUND, round, FLOATS)        \
    X(RELU, relu, DTYPES)          \
    X(GELU, gelu, FLOATS)          \
    X(GELU_ERF, gelu_erf, FLOATS)  \
    X(SILU, silu, FLOATS)          \
    X(SIGMOID, sigmoid, FLOATS)    \
    X(ELU, elu, FLOATS)            \
    X(POWF, powf, FLOATS)

#endif
