/* Parameters of the spatial module's kernels (im2col/col2im, pooling,
 * upsampling), passed by value from src/ops/spatial*.c. Plain C, shared by
 * the library and the kernels.
 *
 * Every kernel walks its output as rows: the launcher picks the order.
 * KP_SPATIAL_ROWS_NCH: a row is (n, c, y) and its elements are x (NCHW
 * memory); KP_SPATIAL_ROWS_NHW: a row is (n, y, x) and its elements are c
 * (channels-last memory, so neighbouring threads touch neighbouring bytes
 * either way). Row r = (r0 * d1 + r1) * d2 + r2. */
#ifndef KP_SPATIAL_ABI_H
#define KP_SPATIAL_ABI_H

#include <stdint.h>

#define KP_SPATIAL_BLOCK 256   /* threads a block */

#define KP_SPATIAL_ROWS_NCH 0
#define KP_SPATIAL_ROWS_NHW 1

/* flags */
#define KP_SPATIAL_COUNT_PAD 1      /* avg_pool2d: count_include_pad */
#define KP_SPATIAL_ALIGN_CORNERS 2  /* bilinear */
#define KP_SPATIAL_SMALL 4          /* fewer than 2^31 runs and walk channels, and every
                                       operand's offsets inside one (n, c) plane (taps
                                       included) below 2^31: 32-bit index arithmetic */
/* Fast paths for whole runs of NCHW rows (kernels/spatial.cu); the kernels
 * still check each run's alignment and extent: */
#define KP_SPATIAL_ROWS16 8         /* src rows contiguous along x and 16 bytes apart
                                       (src strides of H, and col2im's of C*kH*kW,
                                       multiples of 16 bytes) */
#define KP_SPATIAL_FAST_K2S2 16     /* pools: 2x2 window, stride 2, no padding or dilation */
#define KP_SPATIAL_FAST_K3S2P1 32   /* pools: 3x3 window, stride 2, padding 1, no dilation */
#define KP_SPATIAL_FAST_SHIFT 64    /* im2col/col2im: along x, stride and dilation 1 and
                                       every tap's offset j - padding in -1..1 */
/* Walks of the image side instead of the output (kernels/spatial.cu), an
 * item being 16 bytes of one image row: src and dst rows contiguous along
 * x, W a multiple of an item's elements, every stride of both operands but
 * N's a multiple of 16 bytes (dst's of 8 for KP_SPATIAL_FAST_PAIRS, src's of 8
 * for KP_SPATIAL_FAST_BILINEAR2), N's C
 * times C's (the plane index n * C + c gives the offsets), fewer than 2^31
 * items, and the div slots 3 and 4 (no window strides there) divide by the
 * items a row and the item rows a plane. The kernels check the bases'
 * alignment. */
#define KP_SPATIAL_FAST_IM2COL3 128 /* im2col of 16-bit types: 3x3 window, stride,
                                       padding and dilation 1: an image row's item
                                       stores the 9 column rows it fills (item rows a
                                       plane: H) */
#define KP_SPATIAL_FAST_BILINEAR2 256 /* upsample_bilinear2d without align_corners, H and W
                                       both doubled (f32 source steps of 0.5): an item is 8
                                       bytes of an image row (src strides multiples of 8
                                       bytes), which make 16 bytes of two output rows
                                       (item rows a plane: H) */
#define KP_SPATIAL_FAST_PAIRS 512   /* max_pool2d of 16-bit types without indices, 3x3
                                       window, stride 2, padding 1, W = 2 W_out: item
                                       row k makes the 4 outputs of output rows 2k and
                                       2k + 1 from the 5 image rows they read (item
                                       rows a plane: H_out / 2 rounded up) */

struct kp_spatial_args {
    int64_t rows, row_len;
    int64_t d1, d2;
    int32_t order;            /* KP_SPATIAL_ROWS_* */
    int32_t flags;
    /* The 4-d problem: the image side (src of im2col, pools, upsampling;
     * dst of col2im) is (N, C, H, W), the other side (N, C', H_out, W_out). */
    int64_t n, c, h, w, h_out, w_out;
    int64_t kernel[2], stride[2], padding[2], dilation[2];
    /* Element strides of src, dst and indices, in (N, C, H, W) order; im2col
     * and col2im see their column tensor as (N, C*kH*kW, H_out, W_out). */
    int64_t src_stride[4];
    int64_t dst_stride[4];
    int64_t idx_stride[4];
    double scale[2];          /* upsampling: source coordinate per output step (h, w) */
    /* Bilinear upsampling without align_corners: PyTorch's f32 source step
     * (1 / scale_factor, else in / out, in f32), set once by the launcher
     * for the whole-row fast path instead of divided out per run. */
    float bilinear_step[2];
    /* With KP_SPATIAL_SMALL: dividing an index n < 2^31 by the runs per row,
     * d2, d1, the two window strides, the window's taps (kH*kW) and its
     * width, as kp_div_magic() (kp_kernel_abi.h) sets up. */
    uint32_t div_mul[7];
    uint32_t div_shift[7];
};

#endif
