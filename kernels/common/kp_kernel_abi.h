/* Parameter structs passed by value from the host launchers to the kernels.
 * Plain C, included by both the library (C11) and the kernels (CUDA/HIP C++),
 * so the two sides cannot disagree on a layout. */
#ifndef KP_KERNEL_ABI_H
#define KP_KERNEL_ABI_H

#include <stdint.h>

/* Highest tensor rank a kernel handles; the public KP_MAX_RANK matches it. */
#define KP_KERNEL_MAX_RANK 8
/* Most operands one elementwise kernel iterates over (where: out, cond, t, f). */
#define KP_KERNEL_MAX_OPERANDS 4

/* Up to four operands iterated over one shape (output first). Strides are in elements and
 * non-negative (0 broadcasts); offsets are applied to the pointers on the
 * host. Dimensions are ordered outermost first, after the host merged the
 * dimensions that are contiguous in every operand. */
struct kp_strided {
    int32_t rank;
    int32_t pad_;
    int64_t shape[KP_KERNEL_MAX_RANK];
    int64_t stride[KP_KERNEL_MAX_OPERANDS][KP_KERNEL_MAX_RANK];
};

#endif
