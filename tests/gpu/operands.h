/* Operand layouts for the elementwise GPU tests (binary, where): a case
 * gives one shape and, per operand, either a contiguous layout or explicit
 * strides (0 broadcasts), at an element offset. Also: checking that bytes
 * outside an output view kept their poison, and printing elements exactly. */
#ifndef KP_GPU_OPERANDS_H
#define KP_GPU_OPERANDS_H

#include <stdbool.h>
#include "harness.h"

#define CASE_MAX_RANK 3

struct operand_layout {
    bool strided;                    /* false: contiguous, strides ignored */
    int64_t strides[CASE_MAX_RANK];
    int64_t offset;
};
#define OPERAND_CONTIGUOUS(off) {false, {0, 0, 0}, (off)}
#define OPERAND_STRIDED(off, ...) {true, {__VA_ARGS__}, (off)}

/* Elements a buffer needs to hold the operand (at least 1). */
size_t operand_extent(int rank, const int64_t *shape, const struct operand_layout *l);
/* The operand as a tensor over b (b may be an empty gpu_buf when only the layout matters). */
kp_tensor operand_tensor(struct gpu_buf *b, kp_dtype dtype, int rank, const int64_t *shape,
                         const struct operand_layout *l);

/* A destination and a source view of one shape, for the tests of ops with
 * one input (unary, cast, affine, copy, fill): strides all zero mean
 * contiguous, offsets are in elements. */
struct dst_src_case {
    const char *name;
    int rank;
    int64_t shape[CASE_MAX_RANK];
    int64_t dst_strides[CASE_MAX_RANK], src_strides[CASE_MAX_RANK];
    int64_t dst_offset, src_offset;
};
/* The case's views as tensors of dtype over b (an empty gpu_buf when only
 * the layout matters, e.g. for tensor_extent). */
kp_tensor case_dst_tensor(struct gpu_buf *b, kp_dtype dtype, const struct dst_src_case *c);
kp_tensor case_src_tensor(struct gpu_buf *b, kp_dtype dtype, const struct dst_src_case *c);

/* Fails unless every byte of b's host mirror outside the elements flagged in
 * `written` (one flag per element of size es; NULL: none) still equals
 * `poison`. */
void check_untouched(const struct gpu_buf *b, const unsigned char *written, size_t es,
                     unsigned char poison, const char *context);

/* Element i of a host array as text that identifies it exactly:
 * "-1.5 (0xbe00)" for 16-bit floats, "nan (0x7fc00000)", "-9223372036854775808". */
const char *format_element(kp_dtype dtype, const void *base, size_t i, char *out, size_t size);

#endif
