/* CPU references for the spatial module: see spatial_ref.h. */
#include <math.h>

#include "harness.h"
#include "spatial_ref.h"

struct img_view image_view(const kp_tensor *t, const void *host)
{
    const kp_layout *l = &t->layout;
    struct img_view v = {t->dtype, host, l->shape[0], l->shape[1], 1, 0, {0}, l->offset};
    if (l->rank == 3) {
        v.w = l->shape[2];
        v.s[0] = l->strides[0];
        v.s[1] = l->strides[1];
        v.s[3] = l->strides[2];
    } else {
        v.h = l->shape[2];
        v.w = l->shape[3];
        for (int d = 0; d < 4; d++)
            v.s[d] = l->strides[d];
    }
    return v;
}

struct img_view columns_view(const kp_tensor *t, const void *host, int64_t h_out, int64_t w_out)
{
    const kp_layout *l = &t->layout;
    struct img_view v = {t->dtype, host, l->shape[0], l->shape[1], h_out, w_out,
                         {l->strides[0], l->strides[1], l->strides[2] * w_out, l->strides[2]},
                         l->offset};
    return v;
}

kp_window window_as_2d(const kp_window *w, int rank)
{
    if (rank == 4)
        return *w;
    kp_window o = {{1, w->kernel[0]}, {1, w->stride[0]}, {0, w->padding[0]}, {1, w->dilation[0]}};
    return o;
}

int64_t window_out_size(int64_t in, const kp_window *w, int d, bool ceil_mode)
{
    int64_t k = w->kernel[d], s = w->stride[d], p = w->padding[d], dl = w->dilation[d];
    int64_t span = in + 2 * p - (dl * (k - 1) + 1);
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p)
        o--;
    return o;
}

bool ref_im2col_source(const kp_window *w, const struct img_view *src, int64_t n, int64_t ck,
                       int64_t oy, int64_t ox, int64_t *src_offset)
{
    int64_t taps = w->kernel[0] * w->kernel[1], c = ck / taps, t = ck % taps;
    int64_t i = t / w->kernel[1], j = t % w->kernel[1];
    int64_t y = oy * w->stride[0] - w->padding[0] + i * w->dilation[0];
    int64_t x = ox * w->stride[1] - w->padding[1] + j * w->dilation[1];
    if (y < 0 || y >= src->h || x < 0 || x >= src->w)
        return false;
    *src_offset = view_at(src, n, c, y, x);
    return true;
}

void ref_col2im(const kp_window *w, const struct img_view *cols, int64_t n, int64_t c, int64_t y,
                int64_t x, double *sum, double *magnitude, uint64_t *int_sum)
{
    *sum = *magnitude = 0;
    *int_sum = 0;
    /* Every (tap, output position) of im2col that reads (y, x). */
    for (int64_t i = 0; i < w->kernel[0]; i++)
        for (int64_t j = 0; j < w->kernel[1]; j++)
            for (int64_t oy = 0; oy < cols->h; oy++)
                for (int64_t ox = 0; ox < cols->w; ox++) {
                    if (oy * w->stride[0] - w->padding[0] + i * w->dilation[0] != y ||
                        ox * w->stride[1] - w->padding[1] + j * w->dilation[1] != x)
                        continue;
                    int64_t row = (c * w->kernel[0] + i) * w->kernel[1] + j;
                    double v = host_get(cols->dtype, cols->base, (size_t)view_at(cols, n, row, oy, ox));
                    *sum += v;
                    *magnitude += fabs(v);
                    *int_sum += (uint64_t)(int64_t)v;
                }
}

int64_t ref_max_pool_index(const kp_window *w, const struct img_view *src, int64_t n, int64_t c,
                           int64_t oy, int64_t ox)
{
    int64_t best = -1;
    double best_v = 0;
    for (int64_t i = 0; i < w->kernel[0]; i++)
        for (int64_t j = 0; j < w->kernel[1]; j++) {
            int64_t y = oy * w->stride[0] - w->padding[0] + i * w->dilation[0];
            int64_t x = ox * w->stride[1] - w->padding[1] + j * w->dilation[1];
            if (y < 0 || y >= src->h || x < 0 || x >= src->w)
                continue;
            double v = host_get(src->dtype, src->base, (size_t)view_at(src, n, c, y, x));
            /* The first element starts it; then val > max || isnan(val). */
            if (best < 0 || v > best_v || isnan(v)) {
                best = y * src->w + x;
                best_v = v;
            }
        }
    return best;
}

double ref_avg_pool(const kp_window *w, bool count_include_pad, const struct img_view *src,
                    int64_t n, int64_t c, int64_t oy, int64_t ox, double *magnitude)
{
    int64_t hs = oy * w->stride[0] - w->padding[0], ws = ox * w->stride[1] - w->padding[1];
    int64_t he = hs + w->kernel[0], we = ws + w->kernel[1];
    if (he > src->h + w->padding[0])
        he = src->h + w->padding[0];
    if (we > src->w + w->padding[1])
        we = src->w + w->padding[1];
    int64_t padded = (he - hs) * (we - ws);
    hs = hs < 0 ? 0 : hs;
    ws = ws < 0 ? 0 : ws;
    he = he > src->h ? src->h : he;
    we = we > src->w ? src->w : we;
    double sum = 0, mag = 0;
    for (int64_t y = hs; y < he; y++)
        for (int64_t x = ws; x < we; x++) {
            double v = host_get(src->dtype, src->base, (size_t)view_at(src, n, c, y, x));
            sum += v;
            mag += fabs(v);
        }
    *magnitude = 0;
    if (hs >= he || ws >= we)
        return 0;
    double count = (double)(count_include_pad ? padded : (he - hs) * (we - ws));
    *magnitude = mag / count;
    return sum / count;
}

int64_t ref_nearest_index(int64_t dst, int64_t in, int64_t out, const double *scale)
{
    float s = scale ? (float)(1.0 / *scale) : (float)in / (float)out;
    int64_t i = (int64_t)floorf((float)dst * s);
    return i < in - 1 ? i : in - 1;
}

/* PyTorch's source coordinate, in f32 (f64 for f64) like its kernels. */
static void bilinear_tap(bool f64, int64_t dst, int64_t in, int64_t out, bool align,
                         const double *scale, int64_t *i0, int64_t *step, double *w1)
{
    double r;
    if (f64) {
        double s = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0)
                         : scale ? 1.0 / *scale : (double)in / (double)out;
        r = align ? s * (double)dst : s * ((double)dst + 0.5) - 0.5;
    } else {
        float s = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f)
                        : scale ? (float)(1.0 / *scale) : (float)in / (float)out;
        r = align ? (double)(s * (float)dst) : (double)(s * ((float)dst + 0.5f) - 0.5f);
    }
    if (r < 0)
        r = 0;
    *i0 = (int64_t)r;
    *step = *i0 < in - 1 ? 1 : 0;
    *w1 = r - (double)*i0;
}

double ref_bilinear(const struct img_view *src, int64_t h_out, int64_t w_out, bool align_corners,
                    const double *scales, int64_t n, int64_t c, int64_t y, int64_t x)
{
    if (h_out == src->h && w_out == src->w)
        return host_get(src->dtype, src->base, (size_t)view_at(src, n, c, y, x));
    bool f64 = src->dtype == KP_DTYPE_F64;
    int64_t y0, ys, x0, xs;
    double wy, wx;
    bilinear_tap(f64, y, src->h, h_out, align_corners, scales ? &scales[0] : NULL, &y0, &ys, &wy);
    bilinear_tap(f64, x, src->w, w_out, align_corners, scales ? &scales[1] : NULL, &x0, &xs, &wx);
#define AT(yy, xx) host_get(src->dtype, src->base, (size_t)view_at(src, n, c, (yy), (xx)))
    return (1 - wy) * ((1 - wx) * AT(y0, x0) + wx * AT(y0, x0 + xs)) +
           wy * ((1 - wx) * AT(y0 + ys, x0) + wx * AT(y0 + ys, x0 + xs));
#undef AT
}
