/* The convolution kernels' parameters (kp_conv, kp_conv_transpose), passed
 * by value. Plain C, shared by the launcher (C11) and the kernels. */
#ifndef KP_CONV_ABI_H
#define KP_CONV_ABI_H

#include <stdint.h>

/* Every conv kernel runs blocks of KP_CONV_BLOCK threads, each computing a
 * tile of KP_CONV_TILE_M output channels (KP_CONV_TILE_M_16 for f16 and
 * bf16, whose tensor-core tile is taller) by KP_CONV_TILE_N output pixels
 * (KP_CONV_TILE_N_F64 for f64, whose wider accumulators need a smaller
 * tile). Blocks over pixel tiles run on the grid's x, channel tiles x
 * groups on y; both loop when the grid is capped. */
#define KP_CONV_BLOCK 256
#define KP_CONV_TILE_M 64
#define KP_CONV_TILE_M_16 128
#define KP_CONV_TILE_N 128
#define KP_CONV_TILE_N_F64 64

/* The 16-bit tensor-core tile's input halo (see kp_conv_args.halo_w):
 * at most this many halo pixels, each holding one 16-channel chunk. */
#define KP_CONV_HALO_PIXELS 512

/* A convolution as an implicit GEMM per group g: rows are the group's
 * output channels m, columns the output pixels p (n, y, x) in row-major
 * order, and the reduction runs over the group's input channels c and the
 * taps (i, j). A 1-d convolution is a 2-d one of height 1. Spatial sizes
 * fit in 32 bits (the launcher checks); pixels and offsets are 64-bit.
 *
 * Weight element (m, c, i, j) of group g lives at
 *   g * w_stride_group + m * w_stride_m + c * w_stride_c + i * w_stride_i + j * w_stride_j
 * which covers both weight layouts: (C_out, C_in/groups, kH, kW) for conv
 * and (C_in, C_out/groups, kH, kW) for the transposed conv. Strides are in
 * elements; the kernels get pointers with the offsets applied. */
struct kp_conv_args {
    int64_t pixels;             /* N * out_h * out_w */
    int64_t src_stride[4];      /* n, c, h, w */
    int64_t dst_stride[4];      /* n, c, h, w */
    int64_t w_stride_group;
    int64_t w_stride_m;
    int64_t w_stride_c;
    int64_t w_stride_i;
    int64_t w_stride_j;
    int64_t bias_stride;
    int32_t in_h, in_w;
    int32_t out_h, out_w;
    int32_t k_h, k_w;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
    int32_t dil_h, dil_w;
    int32_t c_in_group;         /* input channels per group */
    int32_t c_out_group;        /* output channels per group (GEMM rows) */
    int32_t k_total;            /* c_in_group * k_h * k_w (GEMM depth) */
    int32_t m_tiles;            /* channel tiles per group */
    int32_t groups;
    int32_t has_bias;
    /* Nonzero: the 16-bit tensor-core tile may stage its input as a halo
     * of halo_w columns in shared memory (stride 1, dilation 1, channels
     * per group a multiple of 16, at least 8 taps, images of at least a
     * tile's pixels; the launcher checks that the halo fits
     * KP_CONV_HALO_PIXELS). Other tiles ignore it. */
    int32_t halo_w;
    int64_t w_offset;           /* added to the weight and dst pointers */
    int64_t dst_offset;
};

/* The kernels' first argument: block z runs conv[z]. A transposed conv
 * runs as one plain conv per output phase (see src/ops/conv.c), up to
 * KP_CONV_MAX_PHASES of them in one launch; other launches fill conv[0]. */
#define KP_CONV_MAX_PHASES 8
struct kp_conv_launch {
    struct kp_conv_args conv[KP_CONV_MAX_PHASES];
};

#endif
