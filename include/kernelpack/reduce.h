/* kernelpack: reductions, normalisations and rotary embeddings.
 *
 * The rules of ops.h apply: work is queued on `stream`, all tensors live on
 * its device, and arguments are checked before anything is queued. Floats
 * are computed in f32 (f16, bf16, f32) or f64 (f64). */
#ifndef KERNELPACK_REDUCE_H
#define KERNELPACK_REDUCE_H

#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kp_reduce_op {
    KP_REDUCE_SUM = 0,
    KP_REDUCE_MEAN,
    KP_REDUCE_MIN,
    KP_REDUCE_MAX,
    KP_REDUCE_ARGMIN,
    KP_REDUCE_ARGMAX,
    KP_REDUCE_OP_COUNT
} kp_reduce_op;

/* reduce: reduces src over the `ndims` distinct dimensions listed in dims
 * (1 <= ndims <= rank, each in 0..rank-1). dst keeps src's rank: its shape is
 * src's with every reduced dimension set to 1 (keepdim), any layout; it must
 * not overlap src or itself.
 * - SUM, MIN, MAX: all dtypes, dst has src's dtype. Float sums accumulate in
 *   f32 (f64 for f64); the order of additions is fixed for a given shape,
 *   layout and device, but is not sequential, so results may differ from a
 *   sequential sum in the last bits. Integer sums wrap in the dtype's width
 *   (u8 modulo 256, u32 modulo 2^32, i64 two's complement). A sum over an
 *   empty set is 0. MIN and MAX propagate NaN: any NaN gives NaN.
 * - MEAN: f32, f64, f16, bf16; the sum divided by the element count (NaN for
 *   an empty set).
 * - ARGMIN, ARGMAX: ndims must be 1; dst is u32 and holds the index along
 *   that dimension (its size must fit u32). Ties go to the smallest index;
 *   a NaN counts as the extreme, so the index of the first NaN is returned
 *   when there is one.
 * MIN, MAX, ARGMIN and ARGMAX over an empty set are invalid arguments (an
 * empty dst is fine: nothing is launched). */
KP_API kp_status kp_reduce(kp_stream *stream, kp_reduce_op op, const kp_tensor *dst,
                           const kp_tensor *src, const int *dims, int ndims);

/* softmax, log_softmax: over the last dimension of src (rank >= 1),
 * numerically stable (the row maximum is subtracted first):
 * softmax = exp(x - max) / sum(exp(x - max)), log_softmax = (x - max) -
 * log(sum(exp(x - max))). A row holding NaN or +inf becomes NaN; -inf gives 0
 * (softmax) or -inf (log_softmax) where the row has a finite element. Math
 * in f32 (f64 for f64); for f16 and bf16 exp is the hardware approximation
 * (a few f32 ulp, far below a 16-bit ulp), with which CUDA builds flush bf16
 * softmax results below 2^-126 (bf16 subnormals) to 0. dst and src: same
 * float dtype (f32, f64, f16, bf16) and shape, any layouts; dst may be src
 * itself (same layout) but must not otherwise overlap it or itself.
 * Contiguous rows longer than one block takes (8192 f32, 16384 16-bit
 * elements), fewer of them than the device has multiprocessors (the
 * vocabulary-wide logits of token sampling), are split over several blocks
 * in two launches that use the stream's scratch memory (device.h); so are
 * such rows of rmsnorm and layernorm. On GPUs with thread block clusters
 * (NVIDIA sm_90+, built for them), more such f32 rows of up to 98304
 * elements (a multiple of 4) take a cluster of blocks a row, which reads
 * the row once. */
KP_API kp_status kp_softmax(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src);
KP_API kp_status kp_log_softmax(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src);

/* rmsnorm: dst = x / sqrt(mean(x^2) + eps) * weight, over the last dimension
 * (length D) of src. weight is NULL (no scaling) or a rank-1 tensor of D
 * elements of src's dtype, any stride. Float dtypes; eps >= 0 and finite.
 * Layout and in-place rules as softmax; dst must not overlap weight. */
KP_API kp_status kp_rmsnorm(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                            const kp_tensor *weight, float eps);

/* layernorm: dst = (x - mean) / sqrt(var + eps) * weight + bias over the
 * last dimension, with the biased variance mean((x - mean)^2). weight and
 * bias are each NULL or a rank-1 tensor of D elements of src's dtype. Rules
 * as rmsnorm; dst must not overlap weight or bias. */
KP_API kp_status kp_layernorm(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                              const kp_tensor *weight, const kp_tensor *bias, float eps);

/* Layouts of kp_rope, after candle's rope_i, rope and rope_thd. */
typedef enum kp_rope_layout {
    KP_ROPE_INTERLEAVED = 0, /* src (b, h, t, d); rotates pairs (2j, 2j+1) */
    KP_ROPE_HALF,            /* src (b, h, t, d); rotates pairs (j, j + d/2) */
    KP_ROPE_THD,             /* src (b, t, h, d); rotates pairs (j, j + d/2) */
    KP_ROPE_LAYOUT_COUNT
} kp_rope_layout;

/* rope: rotary position embedding. For each pair (x1, x2) at pair index j
 * (0 <= j < d/2) of position t in batch entry b: dst1 = x1*c - x2*s,
 * dst2 = x1*s + x2*c with c = cos_table[t, j] and s = sin_table[t, j] (or
 * [b, t, j]). src is rank 4 as `layout` says, d even; the two tables have the
 * same shape, (t, d/2), or (b, t, d/2) for per-batch tables, and src's dtype.
 * Float dtypes, any layouts; dst has src's shape and dtype, may be src itself
 * (same layout), and must not otherwise overlap src, the tables or itself. */
KP_API kp_status kp_rope(kp_stream *stream, kp_rope_layout layout, const kp_tensor *dst,
                         const kp_tensor *src, const kp_tensor *cos_table,
                         const kp_tensor *sin_table);

#ifdef __cplusplus
}
#endif
#endif
