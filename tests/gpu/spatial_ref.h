/* CPU references for the spatial module (im2col/col2im, pooling,
 * upsampling), written from PyTorch's definitions one output element at a
 * time, over host copies of the operands. */
#ifndef KP_GPU_SPATIAL_REF_H
#define KP_GPU_SPATIAL_REF_H

#include <stdbool.h>
#include <stdint.h>
#include <kernelpack/kernelpack.h>

/* A host operand as (N, C, H, W); a rank-3 (N, C, L) tensor has H = 1. The
 * column tensors of im2col/col2im are (N, C*kH*kW, H_out, W_out) views. */
struct img_view {
    kp_dtype dtype;
    const void *base;
    int64_t n, c, h, w;
    int64_t s[4];
    int64_t off;
};

struct img_view image_view(const kp_tensor *t, const void *host);
/* (N, C*kH*kW, L) columns seen as (N, C*kH*kW, h_out, w_out). */
struct img_view columns_view(const kp_tensor *t, const void *host, int64_t h_out, int64_t w_out);
static inline int64_t view_at(const struct img_view *v, int64_t n, int64_t c, int64_t y, int64_t x)
{
    return v->off + n * v->s[0] + c * v->s[1] + y * v->s[2] + x * v->s[3];
}
/* The window of a rank-3 (1-d) or rank-4 op as (h, w). */
kp_window window_as_2d(const kp_window *w, int rank);
/* PyTorch's pooled / unfolded size along dim d. */
int64_t window_out_size(int64_t in, const kp_window *w, int d, bool ceil_mode);

/* im2col: the src element that column (n, ck, oy, ox) copies; false for padding. */
bool ref_im2col_source(const kp_window *w, const struct img_view *src, int64_t n, int64_t ck,
                       int64_t oy, int64_t ox, int64_t *src_offset);
/* col2im at image position (n, c, y, x): the float sum and sum of magnitudes,
 * and the integer sum (wrapping) for integer dtypes. */
void ref_col2im(const kp_window *w, const struct img_view *cols, int64_t n, int64_t c, int64_t y,
                int64_t x, double *sum, double *magnitude, uint64_t *int_sum);
/* max_pool2d: the flat index y * W + x of the winner (PyTorch's rule). */
int64_t ref_max_pool_index(const kp_window *w, const struct img_view *src, int64_t n, int64_t c,
                           int64_t oy, int64_t ox);
/* avg_pool2d, with the sum of magnitudes / divisor for the tolerance. */
double ref_avg_pool(const kp_window *w, bool count_include_pad, const struct img_view *src,
                    int64_t n, int64_t c, int64_t oy, int64_t ox, double *magnitude);
/* nearest: the source index along one dim (f32 arithmetic, as PyTorch's GPU kernels). */
int64_t ref_nearest_index(int64_t dst, int64_t in, int64_t out, const double *scale);
/* bilinear at (n, c, y, x) of an (h_out, w_out) output. */
double ref_bilinear(const struct img_view *src, int64_t h_out, int64_t w_out, bool align_corners,
                    const double *scales, int64_t n, int64_t c, int64_t y, int64_t x);

#endif
