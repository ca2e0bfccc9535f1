/* im2col/col2im, pooling and upsampling (the spatial module): argument
 * checks, PyTorch's output sizes, and the launches of kernels/spatial.cu.
 * Spatial sizes and window parameters must fit in int (the kernels' index
 * arithmetic); element offsets stay 64-bit. */
#include <limits.h>
#include <math.h>

#include "kernel_families.h"
#include "kp_spatial_abi.h"

/* An image operand as (N, C, H, W): a rank-3 (N, C, L) tensor has H = 1. */
struct image {
    int64_t n, c, h, w;
    int64_t stride[4];
};

static struct image image_of(const kp_tensor *t)
{
    const kp_layout *l = &t->layout;
    if (l->rank == 3)
        return (struct image){l->shape[0], l->shape[1], 1, l->shape[2],
                              {l->strides[0], l->strides[1], 0, l->strides[2]}};
    return (struct image){l->shape[0], l->shape[1], l->shape[2], l->shape[3],
                          {l->strides[0], l->strides[1], l->strides[2], l->strides[3]}};
}

static kp_status check_rank(const char *fn, const char *what, const kp_tensor *t, bool one_d_ok)
{
    int r = t->layout.rank;
    if (r == 4 || (one_d_ok && r == 3))
        return KP_OK;
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has rank %d but must be 4 (N, C, H, W)%s", fn,
                   what, r, one_d_ok ? " or 3 (N, C, L)" : "");
}

/* N may be 0; C, H and W must be at least 1 and H, W fit in int. */
static kp_status check_image_sizes(const char *fn, const char *what, const struct image *im)
{
    if (im->c < 1 || im->h < 1 || im->w < 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s has a size below 1 (C %lld, H %lld, W %lld); only N may be 0", fn,
                       what, (long long)im->c, (long long)im->h, (long long)im->w);
    if (im->h > INT_MAX || im->w > INT_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has a spatial size above %d", fn, what,
                       INT_MAX);
    return KP_OK;
}

/* The window of a rank-`rank` op as (h, w): the 1-d form uses element [0]
 * for w and the identity window for h. */
static kp_window window_2d(const kp_window *w, int rank)
{
    if (rank == 4)
        return *w;
    return (kp_window){{1, w->kernel[0]}, {1, w->stride[0]}, {0, w->padding[0]},
                       {1, w->dilation[0]}};
}

static kp_status check_window(const char *fn, const kp_window *w, bool pool)
{
    for (int d = 0; d < 2; d++) {
        long long k = (long long)w->kernel[d], s = (long long)w->stride[d];
        long long p = (long long)w->padding[d], dl = (long long)w->dilation[d];
        if (k < 1 || s < 1 || dl < 1 || p < 0)
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: window dim %d has kernel %lld, stride %lld, padding %lld, "
                           "dilation %lld; kernel, stride and dilation must be >= 1, padding >= 0",
                           fn, d, k, s, p, dl);
        if (k > INT_MAX || s > INT_MAX || p > INT_MAX || dl > INT_MAX)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: window dim %d has a parameter above %d",
                           fn, d, INT_MAX);
        if (pool && p > k / 2)
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: padding %lld in window dim %d is more than half the kernel size %lld",
                           fn, p, d, k);
    }
    if (w->kernel[0] * w->kernel[1] > INT_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the window has more than %d taps", fn, INT_MAX);
    return KP_OK;
}

/* PyTorch's output size of a sliding window along one dim; the window must
 * fit in the padded input. */
static kp_status window_out(const char *fn, int d, int64_t in, const kp_window *w, bool ceil_mode,
                            int64_t *out)
{
    const int64_t k = w->kernel[d], s = w->stride[d], p = w->padding[d], dl = w->dilation[d];
    const int64_t extent = dl * (k - 1) + 1;
    if (in + 2 * p > INT_MAX || extent > INT_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: dim %d: the padded input (%lld) or the window extent (%lld) is above %d",
                       fn, d, (long long)(in + 2 * p), (long long)extent, INT_MAX);
    const int64_t span = in + 2 * p - extent;
    if (span < 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: dim %d: the window extent %lld (dilation * (kernel - 1) + 1) is larger "
                       "than the padded input %lld, so the output would be empty",
                       fn, d, (long long)extent, (long long)(in + 2 * p));
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    /* ceil_mode: the last window must start inside the input or its left padding. */
    if (ceil_mode && (o - 1) * s >= in + p)
        o--;
    *out = o;
    return KP_OK;
}

/* Walk the output as rows (n, c, y) of x, or as rows (n, y, x) of c when
 * `channels_last`. */
static void set_walk(struct kp_spatial_args *a, bool channels_last, int64_t n, int64_t c,
                     int64_t h, int64_t w)
{
    if (channels_last) {
        a->order = KP_SPATIAL_ROWS_NHW;
        a->d1 = h;
        a->d2 = w;
        a->rows = n * h * w;
        a->row_len = c;
    } else {
        a->order = KP_SPATIAL_ROWS_NCH;
        a->d1 = c;
        a->d2 = h;
        a->rows = n * c * h;
        a->row_len = w;
    }
}

static void set_window(struct kp_spatial_args *a, const kp_window *w)
{
    for (int d = 0; d < 2; d++) {
        a->kernel[d] = w->kernel[d];
        a->stride[d] = w->stride[d];
        a->padding[d] = w->padding[d];
        a->dilation[d] = w->dilation[d];
    }
}

static void copy_strides(int64_t out[4], const int64_t in[4])
{
    for (int d = 0; d < 4; d++)
        out[d] = in[d];
}

/* Whether the kernel may use 32-bit arithmetic (KP_SPATIAL_SMALL): fewer
 * than 2^31 runs and channels to walk, and every offset the kernel takes
 * inside one (n, c) plane of src below 2^31 (col2im's planes span a
 * channel's kH*kW column rows). */
static bool fits_32_bits(const struct kp_spatial_args *a, enum kp_family_id family, uint64_t runs)
{
    const int64_t *s = a->src_stride;
    int64_t span = (a->h - 1) * s[2] + (a->w - 1) * s[3];
    if (family == KP_KF_COL2IM)
        span = (a->kernel[0] * a->kernel[1] - 1) * s[1] + (a->h_out - 1) * s[2] +
               (a->w_out - 1) * s[3];
    const int64_t channels = a->order == KP_SPATIAL_ROWS_NCH ? a->d1 : a->row_len;
    return runs < ((uint64_t)1 << 31) && channels < ((int64_t)1 << 31) && span < ((int64_t)1 << 31);
}

/* The fast paths of whole runs of NCHW rows a problem may take (the
 * KP_SPATIAL_ROWS16 and KP_SPATIAL_FAST_* flags); `vec` elements make 16
 * bytes. */
static int32_t fast_flags(const struct kp_spatial_args *a, enum kp_family_id family, int64_t vec)
{
    const int64_t *s = a->src_stride;
    if (a->order != KP_SPATIAL_ROWS_NCH || s[3] != 1 || s[2] % vec != 0 ||
        (family == KP_KF_COL2IM && s[1] % vec != 0))
        return 0;
    int32_t flags = KP_SPATIAL_ROWS16;
    const bool square = a->kernel[0] == a->kernel[1] && a->stride[0] == a->stride[1] &&
                        a->padding[0] == a->padding[1] && a->dilation[0] == 1 &&
                        a->dilation[1] == 1;
    if ((family == KP_KF_MAX_POOL2D || family == KP_KF_AVG_POOL2D) && square) {
        if (a->kernel[0] == 2 && a->stride[0] == 2 && a->padding[0] == 0)
            flags |= KP_SPATIAL_FAST_K2S2;
        if (a->kernel[0] == 3 && a->stride[0] == 2 && a->padding[0] == 1)
            flags |= KP_SPATIAL_FAST_K3S2P1;
    }
    if ((family == KP_KF_IM2COL || family == KP_KF_COL2IM) && a->stride[1] == 1 &&
        a->dilation[1] == 1 && a->padding[1] <= 1 && a->kernel[1] - 1 - a->padding[1] <= 1)
        flags |= KP_SPATIAL_FAST_SHIFT;
    return flags;
}

/* Whether the image side of the problem can be walked in items of its rows
 * (KP_SPATIAL_FAST_IM2COL3, KP_SPATIAL_FAST_PAIRS, KP_SPATIAL_FAST_BILINEAR2;
 * the conditions of kp_spatial_abi.h), as the flag to set or 0; *cols gets
 * the image columns of an item (16 bytes' worth, 8 for bilinear) and
 * *item_rows the item rows of a plane.
 * vec: elements of 16 bytes; indices: max_pool2d's. */
static int32_t image_walk_flag(const struct kp_spatial_args *a, enum kp_family_id family,
                               bool indices, int64_t vec, int64_t *cols, int64_t *item_rows)
{
    const int64_t *s = a->src_stride, *d = a->dst_stride;
    int32_t flag = 0;
    int64_t src_vec = vec, dst_vec = vec; /* strides' multiples (16 or 8 bytes) */
    *cols = vec;
    if (family == KP_KF_IM2COL && vec == 8 && a->kernel[0] == 3 && a->kernel[1] == 3) {
        bool ones = true;
        for (int k = 0; k < 2; k++)
            ones = ones && a->stride[k] == 1 && a->padding[k] == 1 && a->dilation[k] == 1;
        if (ones) {
            flag = KP_SPATIAL_FAST_IM2COL3;
            *item_rows = a->h;
        }
    }
    if (family == KP_KF_MAX_POOL2D && !indices && vec == 8 && a->kernel[0] == 3 &&
        a->kernel[1] == 3 && a->w == 2 * a->w_out && a->h_out == (a->h - 1) / 2 + 1) {
        bool window = true;
        for (int k = 0; k < 2; k++)
            window = window && a->stride[k] == 2 && a->padding[k] == 1 && a->dilation[k] == 1;
        if (window) {
            flag = KP_SPATIAL_FAST_PAIRS;
            *item_rows = (a->h_out + 1) / 2;
            dst_vec = 4;
        }
    }
    /* Source coordinates y / 2 - 0.25 exact in f32 (below 2^22) and the
     * launcher's f32 steps exactly 0.5, as kp_bilinear_op's fast path;
     * 16- and 32-bit types (8-byte items of 4 or 2 columns). */
    if (family == KP_KF_UPSAMPLE_BILINEAR2D && vec >= 4 && !(a->flags & KP_SPATIAL_ALIGN_CORNERS) &&
        a->h_out == 2 * a->h && a->w_out == 2 * a->w && a->w_out < ((int64_t)1 << 22) &&
        a->h_out < ((int64_t)1 << 22) && a->bilinear_step[0] == 0.5f &&
        a->bilinear_step[1] == 0.5f) {
        flag = KP_SPATIAL_FAST_BILINEAR2;
        *cols = vec / 2;
        *item_rows = a->h;
        src_vec = vec / 2;
    }
    if (!flag || a->order != KP_SPATIAL_ROWS_NCH || s[3] != 1 || d[3] != 1 || a->w % *cols != 0)
        return 0;
    const int64_t taps = flag == KP_SPATIAL_FAST_IM2COL3 ? 9 : 1;
    if (a->n > 1 && (s[0] != a->c * s[1] || d[0] != taps * a->c * d[1]))
        return 0;
    for (int k = 1; k < 3; k++)
        if (s[k] % src_vec != 0 || d[k] % dst_vec != 0)
            return 0;
    if (d[2] * a->h_out >= ((int64_t)1 << 31) ||
        (uint64_t)(a->n * a->c) * (uint64_t)*item_rows * (uint64_t)(a->w / *cols) >=
            ((uint64_t)1 << 31))
        return 0;
    return flag;
}

/* Elements of a row's output a thread step computes (its run), as
 * kernels/spatial.cu's ops say (vec): 16 bytes' worth, but 4 for the pools'
 * 16-bit types (kp_pool_run_elems()) and for the 1-byte types of col2im and
 * max_pool2d. */
static int64_t run_elements(enum kp_family_id family, int64_t es)
{
    if ((family == KP_KF_MAX_POOL2D || family == KP_KF_AVG_POOL2D) && es == 2)
        return 4;
    if ((family == KP_KF_MAX_POOL2D || family == KP_KF_COL2IM) && es == 1)
        return 4;
    return 16 / es;
}

static kp_status launch(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                        struct kp_spatial_args *a, bool indices, void **args)
{
    const int64_t es = (int64_t)kp_dtype_size(dtype), vec = run_elements(family, es);
    const uint64_t runs = (uint64_t)a->rows * (uint64_t)((a->row_len + vec - 1) / vec);
    uint64_t items = runs;
    if (fits_32_bits(a, family, runs)) {
        a->flags |= fast_flags(a, family, 16 / es);
        /* Upsampling has no window: its zeros divide by 1. */
        const int64_t taps = a->kernel[0] * a->kernel[1];
        const int64_t divisors[7] = {(a->row_len + vec - 1) / vec, a->d2, a->d1,
                                     a->stride[0] ? a->stride[0] : 1, a->stride[1] ? a->stride[1] : 1,
                                     taps > 0 ? taps : 1, a->kernel[1] ? a->kernel[1] : 1};
        a->flags |= KP_SPATIAL_SMALL;
        for (int k = 0; k < 7; k++)
            kp_div_magic((uint32_t)divisors[k], &a->div_mul[k], &a->div_shift[k]);
        int64_t cols = 0, item_rows = 0;
        const int32_t walk = image_walk_flag(a, family, indices, 16 / es, &cols, &item_rows);
        if (walk) {
            /* Slots 3 and 4 (window strides, which these ops do not read). */
            items = (uint64_t)(a->n * a->c) * (uint64_t)item_rows * (uint64_t)(a->w / cols);
            a->flags |= walk;
            kp_div_magic((uint32_t)(a->w / cols), &a->div_mul[3], &a->div_shift[3]);
            kp_div_magic((uint32_t)item_rows, &a->div_mul[4], &a->div_shift[4]);
        }
    }
    struct kp_launch_dims dims = kp_launch_1d(stream->device, items, KP_SPATIAL_BLOCK);
    return kp_launch_family(stream, family, dtype, &dims, args);
}

/* The checks every op but col2im starts with: stream, dst and src tensors of
 * one dtype that `family` has, and src's rank (dst's too unless it holds
 * columns: its shape is checked later). */
static kp_status check_common(const char *fn, kp_stream *stream, const kp_tensor *dst,
                              const kp_tensor *src, enum kp_family_id family, bool one_d_ok)
{
    const bool dst_is_image = family != KP_KF_IM2COL;
    uint64_t n_dst, n_src;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n_dst, &n_src);
    if (st == KP_OK)
        st = kp_check_same_dtype(fn, dst, src);
    if (st == KP_OK && !kp_family_supports(family, src->dtype))
        st = kp_fail(KP_ERR_UNSUPPORTED, "%s: %s is not supported (floats only: f32, f64, f16, bf16)",
                     fn, kp_dtype_name(src->dtype));
    if (st == KP_OK)
        st = check_rank(fn, "src", src, one_d_ok);
    if (st == KP_OK && dst_is_image)
        st = check_rank(fn, "dst", dst, one_d_ok);
    if (st == KP_OK && dst_is_image && dst->layout.rank != src->layout.rank)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst has rank %d but src has rank %d", fn,
                     dst->layout.rank, src->layout.rank);
    return st;
}

/* dst writes each element once and shares no byte with src. */
static kp_status check_outputs(const char *fn, const kp_tensor *dst, const kp_tensor *src)
{
    kp_status st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "dst", dst, "src", src);
    return st;
}

/* What every entry point ends with once its checks passed and *a holds the
 * problem: dst writes each element once and shares no byte with src; the
 * operands' strides; the walk over (N, C, H, W) = walk[] (rows of channels
 * when channels_last); the launch. indices: max_pool2d's or NULL (a
 * trailing argument the other kernels do not read). */
static kp_status launch_op(const char *fn, kp_stream *stream, enum kp_family_id family,
                           kp_dtype dtype, struct kp_spatial_args *a, const kp_tensor *dst,
                           const int64_t dst_stride[4], const kp_tensor *src,
                           const int64_t src_stride[4], const kp_tensor *indices,
                           bool channels_last, const int64_t walk[4])
{
    kp_status st = check_outputs(fn, dst, src);
    if (st != KP_OK)
        return st;
    copy_strides(a->src_stride, src_stride);
    copy_strides(a->dst_stride, dst_stride);
    if (indices)
        copy_strides(a->idx_stride, indices->layout.strides);
    set_walk(a, channels_last, walk[0], walk[1], walk[2], walk[3]);
    void *s = kp_tensor_base(src), *y = kp_tensor_base(dst);
    void *ix = indices ? kp_tensor_base(indices) : NULL;
    void *args[] = {a, &s, &y, &ix};
    return launch(stream, family, dtype, a, indices != NULL, args);
}

/* ---- im2col / col2im */

/* The column tensor's shape for an image and window: (N, C*kH*kW, H_out*W_out). */
static kp_status columns_shape(const char *fn, const struct image *im, const kp_window *w,
                               int64_t *h_out, int64_t *w_out, int64_t shape[3])
{
    kp_status st = window_out(fn, 0, im->h, w, false, h_out);
    if (st == KP_OK)
        st = window_out(fn, 1, im->w, w, false, w_out);
    if (st != KP_OK)
        return st;
    const int64_t taps = w->kernel[0] * w->kernel[1];
    if (im->c > INT64_MAX / taps)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: C * kernel taps overflows", fn);
    shape[0] = im->n;
    shape[1] = im->c * taps;
    shape[2] = *h_out * *w_out;
    return KP_OK;
}

/* The columns (N, C*kH*kW, L) as (N, C*kH*kW, H_out, W_out). */
static void column_strides(const kp_tensor *cols, int64_t w_out, int64_t out[4])
{
    const int64_t *s = cols->layout.strides;
    out[0] = s[0];
    out[1] = s[1];
    out[2] = s[2] * w_out;
    out[3] = s[2];
}

/* What im2col and col2im share: `image` (im2col's src, col2im's dst) and
 * `cols`, checked against the window; *a gets the problem and *rows the
 * columns' C*kH*kW. */
static kp_status unfold_problem(const char *fn, const kp_tensor *image, const char *image_name,
                                const kp_tensor *cols, const char *cols_name,
                                const kp_window *window, struct kp_spatial_args *a, int64_t *rows)
{
    const kp_window w = window_2d(window, image->layout.rank);
    const struct image im = image_of(image);
    int64_t h_out, w_out, shape[3];
    kp_status st = check_window(fn, &w, false);
    if (st == KP_OK)
        st = check_image_sizes(fn, image_name, &im);
    if (st == KP_OK)
        st = columns_shape(fn, &im, &w, &h_out, &w_out, shape);
    if (st == KP_OK)
        st = kp_check_shape_is(fn, cols_name, cols, 3, shape);
    if (st != KP_OK)
        return st;
    *a = (struct kp_spatial_args){.n = im.n, .c = im.c, .h = im.h, .w = im.w,
                                  .h_out = h_out, .w_out = w_out};
    set_window(a, &w);
    *rows = shape[1];
    return KP_OK;
}

kp_status kp_im2col(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                    const kp_window *window)
{
    static const char fn[] = "kp_im2col";
    KP_CHECK_NOT_NULL(window);
    struct kp_spatial_args a;
    int64_t rows;
    kp_status st = check_common(fn, stream, dst, src, KP_KF_IM2COL, true);
    if (st == KP_OK)
        st = unfold_problem(fn, src, "src", dst, "dst", window, &a, &rows);
    if (st != KP_OK || a.n == 0)
        return st;

    const struct image im = image_of(src);
    int64_t cols[4];
    column_strides(dst, a.w_out, cols);
    /* Rows of taps when the columns are the GEMM-friendly (N, L, C*kH*kW) memory. */
    const int64_t walk[4] = {a.n, rows, a.h_out, a.w_out};
    return launch_op(fn, stream, KP_KF_IM2COL, src->dtype, &a, dst, cols, src, im.stride, NULL,
                     dst->layout.strides[1] == 1 && rows > 1, walk);
}

kp_status kp_col2im(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                    const kp_window *window)
{
    static const char fn[] = "kp_col2im";
    KP_CHECK_NOT_NULL(window);
    struct kp_spatial_args a;
    int64_t rows;
    uint64_t n_dst, n_src;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n_dst, &n_src);
    if (st == KP_OK)
        st = kp_check_same_dtype(fn, dst, src);
    if (st == KP_OK)
        st = check_rank(fn, "dst", dst, true);
    if (st == KP_OK)
        st = unfold_problem(fn, dst, "dst", src, "src", window, &a, &rows);
    if (st != KP_OK || a.n == 0)
        return st;

    const struct image im = image_of(dst);
    int64_t cols[4];
    column_strides(src, a.w_out, cols);
    const int64_t walk[4] = {im.n, im.c, im.h, im.w};
    return launch_op(fn, stream, KP_KF_COL2IM, dst->dtype, &a, dst, im.stride, src, cols, NULL,
                     im.stride[1] == 1 && im.c > 1, walk);
}

/* ---- pooling and upsampling: (N, C, H, W) -> (N, C, H_out, W_out) */

/* dst is (src's N and C, h_out, w_out). */
static kp_status check_pooled_shape(const char *fn, const kp_tensor *dst, const struct image *im,
                                    int64_t h_out, int64_t w_out)
{
    const int64_t shape[4] = {im->n, im->c, h_out, w_out};
    return kp_check_shape_is(fn, "dst", dst, 4, shape);
}

/* Channels-last walk when every operand keeps C innermost in memory. */
static bool all_channels_last(const struct image *im, const kp_tensor *dst, const kp_tensor *idx)
{
    return im->c > 1 && im->stride[1] == 1 && dst->layout.strides[1] == 1 &&
           (!idx || idx->layout.strides[1] == 1);
}

/* Window checks and output size shared by the two pools. */
static kp_status pool_shape(const char *fn, const kp_tensor *dst, const struct image *im,
                            const kp_window *w, bool ceil_mode, int64_t *h_out, int64_t *w_out)
{
    kp_status st = check_window(fn, w, true);
    if (st == KP_OK)
        st = check_image_sizes(fn, "src", im);
    if (st == KP_OK)
        st = window_out(fn, 0, im->h, w, ceil_mode, h_out);
    if (st == KP_OK)
        st = window_out(fn, 1, im->w, w, ceil_mode, w_out);
    if (st == KP_OK)
        st = check_pooled_shape(fn, dst, im, *h_out, *w_out);
    return st;
}

static kp_status check_indices(const char *fn, kp_stream *stream, const kp_tensor *indices,
                               const kp_tensor *dst, const kp_tensor *src, const struct image *im)
{
    uint64_t n;
    kp_status st = kp_check_tensor(fn, "indices", indices, stream->device, &n);
    if (st == KP_OK && indices->dtype != KP_DTYPE_U32)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: indices is %s but must be u32", fn,
                     kp_dtype_name(indices->dtype));
    if (st == KP_OK)
        st = kp_check_shape_is(fn, "indices", indices, 4, dst->layout.shape);
    if (st == KP_OK && (uint64_t)im->h * (uint64_t)im->w > (uint64_t)UINT32_MAX + 1)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                     "%s: H * W = %llu does not fit the u32 indices", fn,
                     (unsigned long long)im->h * (unsigned long long)im->w);
    if (st == KP_OK && n > 0)
        st = kp_check_no_self_overlap(fn, "indices", indices);
    if (st == KP_OK && n > 0)
        st = kp_check_disjoint(fn, "indices", indices, "dst", dst);
    if (st == KP_OK && n > 0)
        st = kp_check_disjoint(fn, "indices", indices, "src", src);
    return st;
}

kp_status kp_max_pool2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *indices,
                        const kp_tensor *src, const kp_window *window, bool ceil_mode)
{
    static const char fn[] = "kp_max_pool2d";
    KP_CHECK_NOT_NULL(window);
    kp_status st = check_common(fn, stream, dst, src, KP_KF_MAX_POOL2D, false);
    if (st != KP_OK)
        return st;
    const struct image im = image_of(src);
    int64_t h_out, w_out;
    st = pool_shape(fn, dst, &im, window, ceil_mode, &h_out, &w_out);
    if (st == KP_OK && indices)
        st = check_indices(fn, stream, indices, dst, src, &im);
    if (st != KP_OK || im.n == 0)
        return st;

    struct kp_spatial_args a = {.n = im.n, .c = im.c, .h = im.h, .w = im.w,
                                .h_out = h_out, .w_out = w_out};
    set_window(&a, window);
    const int64_t walk[4] = {im.n, im.c, h_out, w_out};
    return launch_op(fn, stream, KP_KF_MAX_POOL2D, src->dtype, &a, dst, dst->layout.strides, src,
                     im.stride, indices, all_channels_last(&im, dst, indices), walk);
}

kp_status kp_avg_pool2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                        const kp_window *window, bool ceil_mode, bool count_include_pad)
{
    static const char fn[] = "kp_avg_pool2d";
    KP_CHECK_NOT_NULL(window);
    kp_status st = check_common(fn, stream, dst, src, KP_KF_AVG_POOL2D, false);
    if (st != KP_OK)
        return st;
    if (window->dilation[0] != 1 || window->dilation[1] != 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dilation is (%lld, %lld) but must be 1", fn,
                       (long long)window->dilation[0], (long long)window->dilation[1]);
    const struct image im = image_of(src);
    int64_t h_out, w_out;
    st = pool_shape(fn, dst, &im, window, ceil_mode, &h_out, &w_out);
    if (st != KP_OK || im.n == 0)
        return st;

    struct kp_spatial_args a = {.n = im.n, .c = im.c, .h = im.h, .w = im.w,
                                .h_out = h_out, .w_out = w_out,
                                .flags = count_include_pad ? KP_SPATIAL_COUNT_PAD : 0};
    set_window(&a, window);
    const int64_t walk[4] = {im.n, im.c, h_out, w_out};
    return launch_op(fn, stream, KP_KF_AVG_POOL2D, src->dtype, &a, dst, dst->layout.strides, src,
                     im.stride, NULL, all_channels_last(&im, dst, NULL), walk);
}

/* Upsampling: dst's sizes are the output's; src and dst share N and C. */
static kp_status upsample(const char *fn, kp_stream *stream, const kp_tensor *dst,
                          const kp_tensor *src, const double *scales, enum kp_family_id family,
                          int flags)
{
    kp_status st = check_common(fn, stream, dst, src, family, false);
    if (st != KP_OK)
        return st;
    const struct image im = image_of(src), out = image_of(dst);
    st = check_image_sizes(fn, "src", &im);
    if (st == KP_OK)
        st = check_image_sizes(fn, "dst", &out);
    if (st == KP_OK)
        st = check_pooled_shape(fn, dst, &im, out.h, out.w);
    for (int d = 0; st == KP_OK && scales && d < 2; d++)
        if (!(scales[d] > 0) || !isfinite(scales[d]))
            st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: scales[%d] is %g but must be > 0 and finite",
                         fn, d, scales[d]);
    if (st != KP_OK || im.n == 0)
        return st;

    struct kp_spatial_args a = {.n = im.n, .c = im.c, .h = im.h, .w = im.w,
                                .h_out = out.h, .w_out = out.w, .flags = flags};
    /* Equal sizes are a copy, as in PyTorch: the nearest kernel at scale 1. */
    const bool copy = out.h == im.h && out.w == im.w;
    if (copy)
        family = KP_KF_UPSAMPLE_NEAREST2D;
    /* The kernels use 1 / scale_factor as given, else in / out. */
    for (int d = 0; scales && !copy && d < 2; d++)
        a.scale[d] = 1.0 / scales[d];
    const int64_t in[2] = {im.h, im.w}, outs[2] = {out.h, out.w};
    for (int d = 0; d < 2; d++)  /* as kp_resize_scale<float>() computes it */
        a.bilinear_step[d] = a.scale[d] > 0 ? (float)a.scale[d] : (float)in[d] / (float)outs[d];
    const int64_t walk[4] = {im.n, im.c, out.h, out.w};
    return launch_op(fn, stream, family, src->dtype, &a, dst, out.stride, src, im.stride, NULL,
                     all_channels_last(&im, dst, NULL), walk);
}

kp_status kp_upsample_nearest2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                                const double *scales)
{
    return upsample("kp_upsample_nearest2d", stream, dst, src, scales, KP_KF_UPSAMPLE_NEAREST2D, 0);
}

kp_status kp_upsample_bilinear2d(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                                 bool align_corners, const double *scales)
{
    return upsample("kp_upsample_bilinear2d", stream, dst, src, scales,
                    KP_KF_UPSAMPLE_BILINEAR2D, align_corners ? KP_SPATIAL_ALIGN_CORNERS : 0);
}
