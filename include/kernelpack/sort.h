/* kernelpack: sorting. */
#ifndef KERNELPACK_SORT_H
#define KERNELPACK_SORT_H

#include <stdbool.h>
#include <stddef.h>
#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* argsort: for each row along the last dimension of src, writes into dst
 * (u32, src's shape) the column indices that put the row in ascending order,
 * or descending order if `descending`. Rows may have any length up to
 * UINT32_MAX; src may be any of the seven dtypes, and src and dst may have
 * any layouts, but dst must not overlap src or itself. A rank-0 src is one
 * row of one element.
 *
 * Order: the sort is stable in both directions: equal keys keep ascending
 * column order. -0.0 and +0.0 are equal. Every NaN (any payload or sign) is
 * equal to every other NaN and larger than +Inf, so ascending puts NaNs
 * last and descending puts them first.
 *
 * Workspace: rows longer than 2048 elements are radix-sorted a byte of the
 * key a pass (one pass for u8, eight for f64/i64) through device scratch
 * memory that the caller provides (two copies of the keys, 8 bytes an
 * element for column indices, 1 KB per 2048 elements for digit counts):
 * kp_argsort_workspace_size gives the bytes needed for src's dtype and shape
 * (0 when every row fits one tile; then `workspace` may be NULL). The
 * workspace must be on the stream's device, 16-byte aligned, at least that
 * large, not overlap src or dst, and not be used by other work until the
 * argsort has finished on the stream. */
KP_API kp_status kp_argsort(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                            bool descending, kp_buffer *workspace);

/* Bytes of workspace kp_argsort needs for src's dtype and shape (src's
 * buffer is not looked at and may be NULL). */
KP_API kp_status kp_argsort_workspace_size(const kp_tensor *src, size_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
