/* kernelpack: element types and tensor layouts. */
#ifndef KERNELPACK_TENSOR_H
#define KERNELPACK_TENSOR_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"
#include "device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kp_dtype {
    KP_DTYPE_F32 = 0,
    KP_DTYPE_F64,
    KP_DTYPE_F16,   /* IEEE binary16, passed as uint16_t bits */
    KP_DTYPE_BF16,  /* bfloat16, passed as uint16_t bits */
    KP_DTYPE_U8,
    KP_DTYPE_U32,
    KP_DTYPE_I64,
    KP_DTYPE_COUNT
} kp_dtype;

/* "f32", "bf16", ...; NULL for a value that is not a kp_dtype. */
KP_API const char *kp_dtype_name(kp_dtype dtype);
/* Bytes per element; 0 for a value that is not a kp_dtype. */
KP_API size_t kp_dtype_size(kp_dtype dtype);

#define KP_MAX_RANK 8

/* Where the elements of a tensor are: element (i0, ..., i{rank-1}) lives at
 * element index offset + sum(ik * strides[k]) of its buffer. Strides are in
 * elements and must be >= 0; a stride of 0 broadcasts. Rank 0 is a scalar. */
typedef struct kp_layout {
    int rank;
    int64_t shape[KP_MAX_RANK];
    int64_t strides[KP_MAX_RANK];
    int64_t offset;
} kp_layout;

/* A view of a buffer: what ops read and write. */
typedef struct kp_tensor {
    kp_buffer *buffer;
    kp_dtype dtype;
    kp_layout layout;
} kp_tensor;

/* Fills `layout` as a contiguous row-major layout of the given shape. */
KP_API kp_status kp_layout_contiguous(kp_layout *layout, int rank, const int64_t *shape);

#ifdef __cplusplus
}
#endif
#endif
