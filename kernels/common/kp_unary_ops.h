/* The unary ops and the dtypes each is built for, as one list that both
 * sides expand: kernels/unary.cu instantiates `<op>_<dtype>` and
 * `<op>_strided_<dtype>` for every dtype of the set, and the library turns
 * each entry into two kernel families and a row of kp_unary's op table.
 * Plain C preprocessor only, like kp_kernel_abi.h.
 *
 * X(ID, name, SET, V32, V16, V64): ID names the public KP_UNARY_<ID>, name
 * is the op's kernel name prefix and kp_unary_op_name(), SET is one of
 *   DTYPES  every dtype (f32 f64 f16 bf16 u8 u32 i64)
 *   SIGNED  the float dtypes and i64
 *   FLOATS  the float dtypes (f32 f64 f16 bf16)
 * and V32, V16, V64 are how many 16-byte vectors each thread of the
 * contiguous kernel loads before it computes any, over a grid that covers
 * the tensor once: V16 for f16 and bf16, V64 for f64 and i64, V32 for the
 * others. Four keep the compute-heavy ops memory-bound; one is faster for
 * the ops that are little more than their loads and stores, which four
 * left at 97.6-99.7 % of the copy bandwidth. H200 (kp-bench, 2^28
 * elements, VPT 4 and VPT 1 interleaved twice), % of copy, 4 -> 1:
 *   neg, abs, sign, sqr, ceil, floor, round, relu: 97.6-99.7 -> 99.9-101.5
 *     in f32, f16, bf16 and f64; rsqrt too but for f64 (level);
 *   recip 98.5 -> 99.1 in f32 and 98.2 -> 100.5 in f64, where 16-bit lost
 *     3.5 points; exp 98.5 -> 100.0 and tanh 98.6 -> 99.2 in f32, where
 *     16-bit lost 0-4 points and f64 10-11 (exp 98.4 -> 87.3);
 *   log, sigmoid 99.0-99.5 -> 99.4-100.3 in 16-bit, where f32 lost 1-3;
 *   sin, cos, erf, gelu, gelu_erf, silu, elu, powf, sqrt lost 1-16 points
 *     at one vector a thread (16-bit erf 89 -> 75, elu 99 -> 86);
 *   copy keeps four, unmeasured: kp-bench's copy cases run kp_copy (the
 *     driver's copy, or the transposing kernels of the fill module).
 * The integer dtypes take their column unmeasured.
 * Order matches enum kp_unary_op. */
#ifndef KP_UNARY_OPS_H
#define KP_UNARY_OPS_H

#define KP_UNARY_OPS(X)                         \
    X(COPY, copy, DTYPES, 4, 4, 4)          \
    X(NEG, neg, SIGNED, 1, 1, 1)            \
    X(RECIP, recip, FLOATS, 1, 4, 1)        \
    X(ABS, abs, DTYPES, 1, 1, 1)            \
    X(SIGN, sign, DTYPES, 1, 1, 1)          \
    X(SQR, sqr, DTYPES, 1, 1, 1)            \
    X(SQRT, sqrt, FLOATS, 4, 4, 4)          \
    X(RSQRT, rsqrt, FLOATS, 1, 1, 4)        \
    X(EXP, exp, FLOATS, 1, 4, 4)            \
    X(LOG, log, FLOATS, 4, 1, 4)            \
    X(SIN, sin, FLOATS, 4, 4, 4)            \
    X(COS, cos, FLOATS, 4, 4, 4)            \
    X(TANH, tanh, FLOATS, 1, 4, 4)          \
    X(ERF, erf, FLOATS, 4, 4, 4)            \
    X(CEIL, ceil, FLOATS, 1, 1, 1)          \
    X(FLOOR, floor, FLOATS, 1, 1, 1)        \
    X(ROUND, round, FLOATS, 1, 1, 1)        \
    X(RELU, relu, DTYPES, 1, 1, 1)          \
    X(GELU, gelu, FLOATS, 4, 4, 4)          \
    X(GELU_ERF, gelu_erf, FLOATS, 4, 4, 4)  \
    X(SILU, silu, FLOATS, 4, 4, 4)          \
    X(SIGMOID, sigmoid, FLOATS, 4, 1, 4)    \
    X(ELU, elu, FLOATS, 4, 4, 4)            \
    X(POWF, powf, FLOATS, 4, 4, 4)

#endif
