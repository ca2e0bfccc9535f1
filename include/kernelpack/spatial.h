/* kernelpack: spatial data movement with PyTorch's semantics (the `spatial`
 * module): im2col/col2im (unfold/fold), max and average pooling, nearest
 * and bilinear upsampling.
 *
 * Layouts. Images are (N, C, H, W) and sequences (N, C, L): PyTorch's dims
 * and order, with any strides. A channels-last tensor is such a view whose
 * C stride is 1 (NHWC memory); it is accepted everywhere. 2-d ops take
 * rank-4 tensors; im2col and col2im also take rank-3 tensors for their 1-d
 * form and then use element [0] of each window pair (element [1] is
 * ignored).
 *
 * Sizes. N may be 0 (nothing is launched); every other size of every
 * operand must be at least 1. dst must have exactly the output shape below
 * (the message names the expected shape). With `in` an input size, `k` a
 * kernel size, `s` stride, `p` padding, `d` dilation (all per spatial dim):
 *   window extent      e   = d * (k - 1) + 1
 *   im2col, pool       out = floor((in + 2p - e) / s) + 1   (must be >= 1)
 *   pool, ceil_mode    out = ceil((in + 2p - e) / s) + 1, minus 1 if the
 *                            last window would start at or past in + p
 *
 * As for every op, arguments are checked before anything is queued; bad
 * ones (a size below 1, stride or dilation below 1, negative padding, an
 * output size below 1, a dst of the wrong shape) give
 * KP_ERR_INVALID_ARGUMENT with a message, and a dtype an op lacks gives
 * KP_ERR_UNSUPPORTED. dst must not overlap an input or itself. Element
 * counts and offsets are 64-bit throughout.
 *
 * Speed. Every layout gives the same results; the fastest paths are for
 * NCHW sources whose rows are contiguous and start on 16-byte boundaries
 * (W a multiple of 16 bytes, the tensor's start aligned), in f32, f16 and
 * bf16: max (without indices) and average pooling with 2x2 windows at
 * stride 2 or 3x3 at stride 2 with padding 1, im2col and col2im with
 * stride and dilation 1 along W and taps at most one column from the
 * output's (e.g. 3x3 padding 1), nearest upsampling by 2 or 1 and bilinear
 * upsampling by 2 without align_corners. For 16-bit types with such
 * sources and packed NCHW outputs (planes one after another), im2col with
 * a 3x3 window at stride, padding and dilation 1 and max pooling without
 * indices, 3x3 at stride 2 with padding 1 and W even, read each source row
 * once for several output rows; so does bilinear upsampling by 2 along
 * both dims without align_corners in f32, f16 and bf16 (W a multiple of
 * 8 bytes, packed NCHW output). Other cases compute each element on its
 * own. */
#ifndef KERNELPACK_SPATIAL_H
#define KERNELPACK_SPATIAL_H

#include <stdbool.h>
#include <stdint.h>
#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------- spatial windows
 * A sliding window for im2col, col2im and the pools. */
typedef struct kp_window {
    int64_t kernel[2];    /* >= 1 */
    int64_t stride[2];    /* >= 1 */
    int64_t padding[2];   /* >= 0 */
    int64_t dilation[2];  /* >= 1 */
} kp_window;

/* im2col (torch.nn.functional.unfold; 1-d: candle's im2col1d):
 *   src (N, C, H, W) -> dst (N, C*kH*kW, H_out*W_out)
 *   src (N, C, L)    -> dst (N, C*k, L_out)
 * dst[n, (c*kH + i)*kW + j, y*W_out + x] = src[n, c, y*s - p + i*d,
 * x*s - p + j*d], 0 in the padding. Any dst layout: pass a permuted view
 * for another order (e.g. (N, L, C*kH*kW), the GEMM-friendly one).
 * Every dtype (bits are copied). */
KP_API kp_status kp_im2col(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                           const kp_window *window);

/* col2im (torch.nn.functional.fold), the adjoint of im2col: dst's (H, W) or
 * (L) is the image size, src is (N, C*kH*kW, H_out*W_out) or (N, C*k,
 * L_out) with the sizes im2col would give for dst. dst is overwritten with
 * the sum of every src value im2col would have read from each position
 * (values that fall in the padding are dropped). Every dtype: floats sum
 * in f32 (f64 for f64), integer sums wrap like the dtype. */
KP_API kp_status kp_col2im(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                           const kp_window *window);

/* max_pool2d: src (N, C, H, W) -> dst (N, C, H_out, W_out), the maximum
 * of each window's elements inside src (padding never wins). padding may
 * be at most half the kernel size (kernel / 2, per dim), as PyTorch
 * requires. PyTorch's rule picks the winner: an element replaces the
 * current one if it is greater or NaN, so a NaN in a window is the result
 * (the last NaN's index) and among equal maxima the first in row-major
 * window order wins. `indices` is NULL or a u32 tensor of dst's shape that
 * receives each winner's flat index y * W + x in its (n, c) plane of src,
 * as PyTorch's return_indices (H * W must then fit in u32). Every dtype. */
KP_API kp_status kp_max_pool2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *indices,
                               const kp_tensor *src, const kp_window *window, bool ceil_mode);

/* avg_pool2d: src (N, C, H, W) -> dst (N, C, H_out, W_out), each window's
 * sum divided by the number of its elements inside the padded input (if
 * count_include_pad; a ceil_mode window that hangs past the padding counts
 * only up to it) or inside src (if not). dilation must be 1 and padding at
 * most kernel / 2. Floats only (f32, f64, f16, bf16), summed in f32 (f64
 * for f64). */
KP_API kp_status kp_avg_pool2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                               const kp_window *window, bool ceil_mode, bool count_include_pad);

/* ------------------------------------------------------------ upsampling
 * src (N, C, H, W) -> dst (N, C, H_out, W_out) with dst's size. `scales`
 * is NULL (the scale is in / out per dim) or PyTorch's scale_factor {h, w}
 * (> 0), used as 1 / scale_factor in the coordinate mapping, as
 * torch.nn.functional.interpolate does with recompute_scale_factor unset.
 * Coordinates are computed as PyTorch's GPU kernels compute them. */

/* nearest (PyTorch's mode="nearest"): dst[.., y, x] = src[.., min(floor(y *
 * scale_h), H - 1), min(floor(x * scale_w), W - 1)], in f32 arithmetic.
 * Every dtype (bits are copied). */
KP_API kp_status kp_upsample_nearest2d(kp_stream *stream, const kp_tensor *dst,
                                       const kp_tensor *src, const double *scales);

/* bilinear (mode="bilinear"): with align_corners the corner pixels' centres
 * align and the scale is (in - 1) / (out - 1) (0 for out = 1; scales are
 * then ignored), without it source coordinate = max(scale * (dst + 0.5) -
 * 0.5, 0). An output of the input's size is a copy, as in PyTorch. Floats
 * only (f32, f64, f16, bf16), computed in f32 (f64 for f64). */
KP_API kp_status kp_upsample_bilinear2d(kp_stream *stream, const kp_tensor *dst,
                                        const kp_tensor *src, bool align_corners,
                                        const double *scales);

#ifdef __cplusplus
}
#endif

#endif
