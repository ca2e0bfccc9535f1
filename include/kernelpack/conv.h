/* kernelpack: convolutions (the `conv` module), with PyTorch's parameter
 * meanings and output sizes. im2col/col2im, pooling and upsampling are in
 * spatial.h.
 *
 * Layouts. Images are (N, C, H, W) and sequences (N, C, L): PyTorch's dims
 * and order, with any strides. A channels-last tensor is such a view whose
 * C stride is 1 (NHWC memory); it is accepted everywhere. 2-d convolutions
 * take rank-4 tensors, 1-d ones rank-3 tensors and use element [0] of each
 * parameter pair (element [1] is ignored).
 *
 * Sizes. N may be 0 (nothing is launched); every other size of every
 * operand must be at least 1. dst must have exactly the output shape below
 * (the message names the expected shape). With `in` an input size, `k` a
 * kernel size, `s` stride, `p` padding, `d` dilation (all per spatial dim):
 *   kernel extent      e   = d * (k - 1) + 1
 *   conv               out = floor((in + 2p - e) / s) + 1   (must be >= 1)
 *   conv_transpose     out = (in - 1) * s - 2p + e + output_padding
 *
 * As for every op, arguments are checked before anything is queued; bad
 * ones (a size below 1, stride or dilation below 1, negative padding,
 * channels not divisible by groups, an output size below 1, a dst of the
 * wrong shape) give KP_ERR_INVALID_ARGUMENT with a message, and a dtype the
 * ops lack gives KP_ERR_UNSUPPORTED. dst must not overlap an input or
 * itself. Element counts and offsets are 64-bit throughout; each spatial
 * size, kernel size, stride, padding, dilation, channel count per group
 * and C_in / groups * kH * kW must be below 2^29 (KP_ERR_UNSUPPORTED
 * otherwise: the kernels' coordinate arithmetic is 32-bit). */
#ifndef KERNELPACK_CONV_H
#define KERNELPACK_CONV_H

#include <stdbool.h>
#include <stdint.h>
#include "core.h"
#include "device.h"
#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ convolutions
 * dtypes: f32, f64, f16, bf16; src, weight, bias and dst share one. Sums
 * accumulate in f32 (f64 for f64) in an unspecified order; f16 and bf16
 * products are exact in f32 (they may run on tensor cores / matrix cores)
 * and the result is rounded once to dst's dtype. */
typedef struct kp_conv_params {
    int64_t stride[2];          /* >= 1 */
    int64_t padding[2];         /* >= 0: implicit zeros on both sides */
    int64_t dilation[2];        /* >= 1 */
    int64_t output_padding[2];  /* conv_transpose only (0 for kp_conv): extra
                                   size on one side, < stride or < dilation */
    int64_t groups;             /* >= 1; divides the in and out channels */
} kp_conv_params;

/* conv1d / conv2d (torch.nn.functional.conv1d/conv2d):
 *   src    (N, C_in, H, W)             or (N, C_in, L)
 *   weight (C_out, C_in / groups, kH, kW) or (C_out, C_in / groups, k)
 *   bias   NULL or (C_out)
 *   dst    (N, C_out, H_out, W_out)    or (N, C_out, L_out)
 * dst[n, o, y, x] = bias[o] + sum over the group's input channels c and
 * the kernel taps (i, j) of src[n, c, y*s - p + i*d, x*s - p + j*d] *
 * weight[o, c - group start, i, j], taps in the padding counting as 0. */
KP_API kp_status kp_conv(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                         const kp_tensor *weight, const kp_tensor *bias,
                         const kp_conv_params *params);

/* conv_transpose1d / conv_transpose2d (the gradient of kp_conv with
 * respect to its input, plus bias; torch.nn.functional.conv_transpose*d):
 *   src    (N, C_in, H, W)             or (N, C_in, L)
 *   weight (C_in, C_out / groups, kH, kW) or (C_in, C_out / groups, k)
 *   bias   NULL or (C_out)
 *   dst    (N, C_out, H_out, W_out)    or (N, C_out, L_out)
 * Every src element scatters src[n, c, y, x] * weight[c, o, i, j] into
 * dst[n, o, y*s - p + i*d, x*s - p + j*d] where that is inside dst. */
KP_API kp_status kp_conv_transpose(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                                   const kp_tensor *weight, const kp_tensor *bias,
                                   const kp_conv_params *params);

#ifdef __cplusplus
}
#endif

#endif
