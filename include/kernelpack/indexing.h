/* kernelpack: index ops along one dimension (index_select, gather,
 * scatter, scatter_add, index_add) and their out-of-range report.
 *
 * Common rules. `dim` is a dimension of dst (0 <= dim < rank; no negative
 * dims). ids hold u8, u32 or i64 values; src and dst share one dtype, any of
 * the seven. Every tensor may have any layout (strides, offsets, stride-0
 * broadcasts) except that dst must not write an element twice, and dst must
 * not overlap src or ids (no in-place use). Like every op, the work is queued
 * on `stream` and arguments are checked before anything is queued.
 *
 * Out-of-range ids. An id is valid when 0 <= id < size of the dimension it
 * indexes (src's `dim` for index_select and gather, dst's `dim` for the
 * others). An invalid id is never followed and never traps: index_select
 * and gather write 0 (all bits zero: +0.0 for floats) to the elements it
 * would have read, and scatter, scatter_add and index_add skip the updates
 * it would have made (those dst elements keep their values). Every op is
 * otherwise carried out in full. If `status` is not NULL, the op also records
 * the invalid ids in it; pass NULL to skip the check silently. */
#ifndef KERNELPACK_INDEXING_H
#define KERNELPACK_INDEXING_H

#include <stdbool.h>
#include <stdint.h>
#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device-side record of out-of-range ids, owned by kernelpack (8 bytes of
 * device memory). It starts clear and is sticky: every op given it adds its
 * invalid ids until kp_index_status_clear. Ops on several streams may share
 * one (updates are atomic); ordering its clear and read against those ops is
 * the caller's job, as for any buffer. */
typedef struct kp_index_status kp_index_status;

typedef struct kp_index_report {
    bool out_of_range;         /* some op since the last clear met an invalid id */
    uint64_t first_position;   /* the smallest position, in its ids tensor, of an
                                * invalid id (row-major linear index over ids'
                                * shape); 0 when out_of_range is false */
} kp_index_report;

/* Allocates a clear status on `device` (waits until it is cleared). */
KP_API kp_status kp_index_status_create(kp_device *device, kp_index_status **out);
/* Frees *status and sets it to NULL; NULL is a no-op. No queued op may still use it. */
KP_API void kp_index_status_destroy(kp_index_status **status);
/* Queues a clear on `stream`. */
KP_API kp_status kp_index_status_clear(kp_stream *stream, kp_index_status *status);
/* Queues a copy of the status on `stream`, waits for the stream and decodes
 * it into *report: everything queued on `stream` before this call counts. */
KP_API kp_status kp_index_status_read(kp_stream *stream, kp_index_status *status,
                                      kp_index_report *report);

/* index_select: picks slices of src along `dim`: ids is rank 1 of length N,
 * dst has src's shape except N at `dim`, and
 *     dst[..., i, ...] = src[..., ids[i], ...]   (i at position dim).
 * Contiguous rows (the dims after `dim` dense in both src and dst, the dims
 * before it collapsible to one stride) are copied row by row with 16-byte
 * accesses; any other layout takes an element-wise path. Invalid ids give
 * zero slices and are recorded at position i. */
KP_API kp_status kp_index_select(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                                 const kp_tensor *ids, int dim, kp_index_status *status);

/* gather: ids has the rank of src and src's sizes except at `dim` (any size
 * there); dst has ids' shape and
 *     dst[i0, .., ik, ..] = src[i0, .., ids[i0, .., ik, ..], ..]   (ik at dim).
 * An invalid id gives 0 in that dst element. */
KP_API kp_status kp_gather(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                           const kp_tensor *ids, int dim, kp_index_status *status);

/* scatter: the inverse of gather, writing into dst in place: src and ids
 * have one shape, equal to dst's except at `dim`, and
 *     dst[i0, .., ids[i0, .., ik, ..], ..] = src[i0, .., ik, ..]   (ik at dim).
 * dst elements no valid id names are left unchanged. When several ids name
 * the same dst element, which of their src values lands there is unspecified. */
KP_API kp_status kp_scatter(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                            const kp_tensor *ids, int dim, kp_index_status *status);

/* scatter_add: like scatter but adds: dst[.., ids[..], ..] += src[..]. Ids may
 * repeat; every src element is added exactly once, with atomics. Integers
 * wrap (u8, u32 unsigned; i64 two's complement) and give exact, repeatable
 * sums. Floats add in the dtype's precision (f16 and bf16 in f32, rounded
 * back after each addition) in an unspecified order, so sums to one element
 * may differ in the last bits from run to run. On NVIDIA GPUs f32 additions
 * flush subnormal addends and sums to zero (the f32 atomic add has no other
 * mode; PyTorch's CUDA scatter_add_ and index_add_ do the same); f64, f16
 * and bf16 keep them. Where ids are constant along
 * contiguous rows (stride 0 after `dim`, dims before it collapsible, as for
 * index_add below), whole rows are added, several elements per atomic
 * where the device has it: 16 bytes on sm_90 and later, f16/bf16 pairs
 * elsewhere. */
KP_API kp_status kp_scatter_add(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                                const kp_tensor *ids, int dim, kp_index_status *status);

/* index_add: adds slices of src into dst along `dim`: ids is rank 1 of
 * length N, src has dst's shape except N at `dim`, and
 *     dst[..., ids[i], ...] += src[..., i, ...]   (i at position dim).
 * Ids may repeat; additions behave as in scatter_add (atomic, floats in an
 * unspecified order; contiguous rows added row by row). Invalid ids are
 * recorded at position i. */
KP_API kp_status kp_index_add(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                              const kp_tensor *ids, int dim, kp_index_status *status);

#ifdef __cplusplus
}
#endif
#endif
