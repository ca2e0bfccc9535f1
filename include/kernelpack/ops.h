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

/* copy2d: copies `rows` rows of `cols` elements; row r starts at element
 * src_offset + r * src_stride in src and dst_offset + r * dst_stride in dst.
 * Strides >= cols; the regions must not overlap. */
KP_API kp_status kp_copy2d(kp_stream *stream, kp_dtype dtype,
                           kp_buffer *dst, size_t dst_offset, size_t dst_stride,
                           const kp_buffer *src, size_t src_offset, size_t src_stride,
                           size_t rows, size_t cols);

#ifdef __cplusplus
}
#endif
#endif
