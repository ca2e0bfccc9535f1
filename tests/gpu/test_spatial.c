/* The spatial module on the GPU against the CPU references of
 * spatial_ref.c: im2col and col2im (2-d and 1-d), max_pool2d (with and
 * without indices, NaNs), avg_pool2d (count_include_pad, ceil_mode) and
 * nearest/bilinear upsampling (sizes, scales, align_corners), for every
 * dtype each op takes, in NCHW, channels-last and strided layouts at an
 * offset. Corner cases: kernels larger than the input with padding, stride
 * larger than the kernel, dilation 2, ceil_mode windows that start in the
 * padding, 1x1 images, N = 0. Outputs are poisoned first: every element of
 * the view must be written and every byte outside it keep the poison.
 * Data movement (im2col, nearest, max_pool's winner) must be bit-exact;
 * sums must be within a few roundings of the f64 reference. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operands.h"
#include "spatial_ref.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
static const kp_dtype float_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* NCHW0: NCHW at offset 0, so that rows whose width is a multiple of 16
 * bytes are 16-byte aligned and the kernels' fast paths for whole runs are
 * taken (the other kinds start 3 elements in). */
enum layout_kind { NCHW, CHANNELS_LAST, STRIDED, COLS_PERMUTED, NCHW0 };
static const char *const layout_names[] = {"nchw", "channels-last", "strided", "(N, L, C*k) view",
                                           "nchw at offset 0"};

/* One operand: a host mirror with a device buffer, and its view. */
struct operand {
    struct gpu_buf buf;
    kp_tensor t;
};

/* A tensor of `shape` in a layout kind, 3 elements into its buffer (NCHW0: 0). */
static void operand_make(struct operand *o, kp_dtype dt, int rank, const int64_t *shape,
                         enum layout_kind kind)
{
    int64_t strides[4], span = 1;
    if (kind == CHANNELS_LAST || kind == COLS_PERMUTED) {
        /* dim 1 innermost, then the last dims, then dim 0 */
        strides[1] = 1;
        span = shape[1];
        for (int d = rank - 1; d >= 2; d--) {
            strides[d] = span;
            span *= shape[d];
        }
        strides[0] = span;
    } else {
        int64_t step = kind == STRIDED ? 2 : 1;
        for (int d = rank - 1; d >= 0; d--) {
            strides[d] = span * step;
            span *= shape[d] * step;
            step = 1;
        }
    }
    o->t = gpu_tensor(&o->buf, dt, rank, shape, strides, kind == NCHW0 ? 0 : 3);
    gpu_buf_alloc(&o->buf, (size_t)tensor_extent(&o->t) * kp_dtype_size(dt) + 5);
    o->t.buffer = o->buf.dev;
}

static void operand_random(struct operand *o)
{
    host_random(o->t.dtype, o->buf.host, o->buf.bytes / kp_dtype_size(o->t.dtype));
    gpu_buf_upload(&o->buf);
}

static void operand_poison(struct operand *o)
{
    memset(o->buf.host, POISON, o->buf.bytes);
    gpu_buf_upload(&o->buf);
}

/* Downloads an output and checks that only its view was written. */
static void output_fetch(struct operand *o, const char *context)
{
    gpu_buf_download(&o->buf);
    size_t es = kp_dtype_size(o->t.dtype), n = o->buf.bytes / es + 1;
    unsigned char *written = calloc(n, 1);
    ck_assert_ptr_nonnull(written);
    for (uint64_t i = 0; i < tensor_numel(&o->t); i++)
        written[tensor_offset(&o->t, i)] = 1;
    check_untouched(&o->buf, written, es, POISON, context);
    free(written);
}

static void operand_free(struct operand *o)
{
    gpu_buf_free(&o->buf);
}

static bool same_bits(const struct operand *a, int64_t ia, const void *b, int64_t ib)
{
    size_t es = kp_dtype_size(a->t.dtype);
    return memcmp((const char *)a->buf.host + ia * es, (const char *)b + ib * es, es) == 0;
}

static bool is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

/* Rounding error of one result in dt, plus the f32 sum of `terms` values. */
static double tolerance(kp_dtype dt, double magnitude, int terms)
{
    double eps = dt == KP_DTYPE_F64 ? 0x1p-52 : dt == KP_DTYPE_F16 ? 0x1p-10
                 : dt == KP_DTYPE_BF16 ? 0x1p-7 : 0x1p-23;
    double acc = dt == KP_DTYPE_F64 ? 0x1p-52 : 0x1p-23;
    return magnitude * (eps + acc * terms) + 1e-300;
}

static void expect_close(double got, double want, double tol, const char *what, int64_t i)
{
    if (isnan(want)) {
        ck_assert_msg(isnan(got), "%s: element %lld is %g, want NaN", what, (long long)i, got);
        return;
    }
    ck_assert_msg(fabs(got - want) <= tol, "%s: element %lld is %.9g, want %.9g (tolerance %g)",
                  what, (long long)i, got, want, tol);
}

/* ------------------------------------------------------------- im2col/col2im */

struct window_case {
    int rank;
    int64_t n, c, h, w;     /* the image; rank 3: (n, c, w) */
    kp_window win;           /* 1-d: element [0] */
    enum layout_kind image_layout, cols_layout;
};

static const struct window_case unfold_cases[] = {
    {4, 2, 3, 7, 9, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW, NCHW},
    {4, 1, 2, 9, 8, {{3, 2}, {2, 1}, {2, 0}, {2, 3}}, NCHW, NCHW},        /* dilation, uneven */
    {4, 1, 2, 3, 3, {{5, 5}, {1, 1}, {2, 2}, {1, 1}}, NCHW, NCHW},        /* kernel > input */
    {4, 2, 2, 8, 7, {{2, 2}, {3, 3}, {0, 1}, {1, 1}}, NCHW, NCHW},        /* stride > kernel */
    {4, 3, 2, 1, 1, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW, NCHW},        /* 1x1 image */
    {4, 2, 5, 6, 6, {{3, 3}, {1, 2}, {1, 1}, {1, 1}}, CHANNELS_LAST, NCHW},
    {4, 2, 3, 6, 7, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW, COLS_PERMUTED},
    {4, 1, 3, 5, 6, {{2, 3}, {1, 2}, {1, 0}, {1, 1}}, STRIDED, STRIDED},
    {3, 2, 4, 1, 11, {{3}, {1}, {1}, {1}}, NCHW, NCHW},                   /* 1-d */
    {3, 1, 3, 1, 17, {{4}, {3}, {2}, {2}}, CHANNELS_LAST, COLS_PERMUTED},
    {4, 0, 3, 5, 5, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW, NCHW},        /* N = 0 */
    /* aligned rows of 16-byte multiples: whole runs take the fast paths */
    {4, 2, 3, 9, 32, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW0, NCHW0},
    {4, 1, 2, 7, 24, {{2, 2}, {1, 1}, {1, 1}, {1, 1}}, NCHW0, NCHW0},     /* taps -1, 0 */
    {4, 1, 2, 7, 24, {{2, 2}, {1, 1}, {0, 0}, {1, 1}}, NCHW0, NCHW0},     /* taps 0, 1 */
    {4, 2, 2, 9, 16, {{3, 3}, {2, 1}, {2, 1}, {2, 1}}, NCHW0, NCHW0},     /* y: stride, dilation */
    {4, 1, 3, 6, 40, {{1, 3}, {1, 1}, {0, 1}, {1, 1}}, NCHW0, NCHW0},
    {4, 1, 2, 5, 20, {{3, 3}, {1, 1}, {1, 1}, {1, 1}}, NCHW0, NCHW0},     /* short runs */
    {3, 2, 4, 1, 40, {{3}, {1}, {1}, {1}}, NCHW0, NCHW0},                 /* 1-d */
};

static void image_shape(const struct window_case *c, int64_t shape[4])
{
    shape[0] = c->n;
    shape[1] = c->c;
    if (c->rank == 3) {
        shape[2] = c->w;
    } else {
        shape[2] = c->h;
        shape[3] = c->w;
    }
}

static void cols_shape(const struct window_case *c, const kp_window *w2, int64_t *h_out,
                       int64_t *w_out, int64_t shape[3])
{
    *h_out = window_out_size(c->h, w2, 0, false);
    *w_out = window_out_size(c->w, w2, 1, false);
    shape[0] = c->n;
    shape[1] = c->c * w2->kernel[0] * w2->kernel[1];
    shape[2] = *h_out * *w_out;
}

static void check_im2col(const struct window_case *c, kp_dtype dt)
{
    char what[128];
    snprintf(what, sizeof(what), "im2col %s rank %d %s -> %s", kp_dtype_name(dt), c->rank,
             layout_names[c->image_layout], layout_names[c->cols_layout]);
    kp_window w2 = window_as_2d(&c->win, c->rank);
    int64_t ishape[4], cshape[3], h_out, w_out;
    image_shape(c, ishape);
    cols_shape(c, &w2, &h_out, &w_out, cshape);
    struct operand src, dst;
    operand_make(&src, dt, c->rank, ishape, c->image_layout);
    operand_make(&dst, dt, 3, cshape, c->cols_layout);
    operand_random(&src);
    operand_poison(&dst);
    CK_OK(kp_im2col(gpu_stream, &dst.t, &src.t, &c->win));
    output_fetch(&dst, what);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = columns_view(&dst.t, NULL, h_out, w_out);
    static const unsigned char zero[8];
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t r = 0; r < cshape[1]; r++)
            for (int64_t y = 0; y < h_out; y++)
                for (int64_t x = 0; x < w_out; x++) {
                    int64_t so, at = view_at(&dv, n, r, y, x);
                    bool ok = ref_im2col_source(&w2, &sv, n, r, y, x, &so)
                                  ? same_bits(&dst, at, src.buf.host, so)
                                  : same_bits(&dst, at, zero, 0);
                    ck_assert_msg(ok, "%s: column (%lld, %lld, %lld, %lld) differs", what,
                                  (long long)n, (long long)r, (long long)y, (long long)x);
                }
    operand_free(&src);
    operand_free(&dst);
}

static void check_col2im(const struct window_case *c, kp_dtype dt)
{
    char what[128];
    snprintf(what, sizeof(what), "col2im %s rank %d %s -> %s", kp_dtype_name(dt), c->rank,
             layout_names[c->cols_layout], layout_names[c->image_layout]);
    kp_window w2 = window_as_2d(&c->win, c->rank);
    int64_t ishape[4], cshape[3], h_out, w_out;
    image_shape(c, ishape);
    cols_shape(c, &w2, &h_out, &w_out, cshape);
    struct operand src, dst;
    operand_make(&src, dt, 3, cshape, c->cols_layout);
    operand_make(&dst, dt, c->rank, ishape, c->image_layout);
    operand_random(&src);
    operand_poison(&dst);
    CK_OK(kp_col2im(gpu_stream, &dst.t, &src.t, &c->win));
    output_fetch(&dst, what);
    struct img_view cv = columns_view(&src.t, src.buf.host, h_out, w_out);
    struct img_view dv = image_view(&dst.t, dst.buf.host);
    int taps = (int)(w2.kernel[0] * w2.kernel[1]);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < dv.h; y++)
                for (int64_t x = 0; x < dv.w; x++) {
                    double sum, mag;
                    uint64_t isum;
                    ref_col2im(&w2, &cv, n, ch, y, x, &sum, &mag, &isum);
                    int64_t at = view_at(&dv, n, ch, y, x);
                    if (is_float(dt)) {
                        expect_close(host_get(dt, dst.buf.host, (size_t)at), sum,
                                     tolerance(dt, mag, taps), what, at);
                    } else {
                        unsigned char want[8];
                        memcpy(want, &isum, 8);  /* the low bytes: wrapped to the dtype */
                        ck_assert_msg(same_bits(&dst, at, want, 0), "%s: element %lld differs "
                                      "from the wrapped sum %llu", what, (long long)at,
                                      (unsigned long long)isum);
                    }
                }
    operand_free(&src);
    operand_free(&dst);
}

START_TEST(test_im2col)
{
    rng_seed(11 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(all_dtypes); d++)
        check_im2col(&unfold_cases[_i], all_dtypes[d]);
}
END_TEST

START_TEST(test_col2im)
{
    rng_seed(12 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(all_dtypes); d++)
        check_col2im(&unfold_cases[_i], all_dtypes[d]);
}
END_TEST

/* ------------------------------------------------------------------- pooling */

struct pool_case {
    int64_t n, c, h, w;
    kp_window win;
    bool ceil_mode, count_include_pad;
    enum layout_kind layout;
};

static const struct pool_case pool_cases[] = {
    {2, 3, 11, 13, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, false, true, NCHW},
    {1, 4, 8, 8, {{2, 2}, {2, 2}, {0, 0}, {1, 1}}, false, true, NCHW},
    {2, 2, 6, 6, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, true, true, NCHW},     /* ceil_mode */
    {1, 3, 5, 5, {{2, 2}, {2, 2}, {1, 1}, {1, 1}}, true, false, NCHW},    /* last window dropped */
    {1, 2, 7, 6, {{3, 2}, {3, 1}, {1, 1}, {1, 1}}, true, false, STRIDED}, /* starts in padding */
    {2, 2, 9, 9, {{3, 3}, {1, 1}, {1, 1}, {2, 2}}, false, true, NCHW},    /* dilation (max only) */
    {3, 2, 1, 1, {{1, 1}, {1, 1}, {0, 0}, {1, 1}}, false, true, NCHW},    /* 1x1 image */
    {2, 5, 7, 9, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, true, false, CHANNELS_LAST},
    {0, 2, 5, 5, {{2, 2}, {2, 2}, {0, 0}, {1, 1}}, false, true, NCHW},    /* N = 0 */
    /* aligned rows of 16-byte multiples: the fast paths of 3x3/2 pad 1 and 2x2/2 */
    {2, 3, 10, 48, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, false, true, NCHW0},
    {2, 2, 9, 48, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, true, false, NCHW0},  /* ceil_mode */
    {1, 3, 8, 64, {{2, 2}, {2, 2}, {0, 0}, {1, 1}}, false, true, NCHW0},
    {2, 2, 7, 40, {{2, 2}, {2, 2}, {0, 0}, {1, 1}}, true, false, NCHW0},  /* ceil_mode */
    {1, 2, 9, 48, {{3, 3}, {2, 2}, {1, 1}, {1, 1}}, false, true, STRIDED}, /* not aligned */
};

/* A few NaNs (signed, with payloads) and infinities among the values. */
static void sprinkle_specials(struct operand *o)
{
    kp_dtype dt = o->t.dtype;
    if (!is_float(dt))
        return;
    size_t n = o->buf.bytes / kp_dtype_size(dt);
    for (size_t i = 0; i < n; i++)
        if (rng_next() % 13 == 0)
            host_set(dt, o->buf.host, i, rng_next() % 3 ? NAN : -INFINITY);
    gpu_buf_upload(&o->buf);
}

static void check_max_pool(const struct pool_case *c, kp_dtype dt, bool with_indices)
{
    char what[128];
    snprintf(what, sizeof(what), "max_pool2d %s %s%s%s", kp_dtype_name(dt), layout_names[c->layout],
             c->ceil_mode ? " ceil" : "", with_indices ? " +indices" : "");
    int64_t h_out = window_out_size(c->h, &c->win, 0, c->ceil_mode);
    int64_t w_out = window_out_size(c->w, &c->win, 1, c->ceil_mode);
    int64_t ishape[4] = {c->n, c->c, c->h, c->w}, oshape[4] = {c->n, c->c, h_out, w_out};
    struct operand src, dst, idx;
    operand_make(&src, dt, 4, ishape, c->layout);
    operand_make(&dst, dt, 4, oshape, c->layout);
    operand_make(&idx, KP_DTYPE_U32, 4, oshape, c->layout);
    operand_random(&src);
    sprinkle_specials(&src);
    operand_poison(&dst);
    operand_poison(&idx);
    CK_OK(kp_max_pool2d(gpu_stream, &dst.t, with_indices ? &idx.t : NULL, &src.t, &c->win,
                        c->ceil_mode));
    output_fetch(&dst, what);
    if (with_indices)
        output_fetch(&idx, what);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = image_view(&dst.t, NULL);
    struct img_view iv = image_view(&idx.t, idx.buf.host);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < h_out; y++)
                for (int64_t x = 0; x < w_out; x++) {
                    int64_t best = ref_max_pool_index(&c->win, &sv, n, ch, y, x);
                    ck_assert_msg(best >= 0, "%s: a window with no element", what);
                    int64_t so = view_at(&sv, n, ch, best / c->w, best % c->w);
                    int64_t at = view_at(&dv, n, ch, y, x);
                    double want = host_get(dt, src.buf.host, (size_t)so);
                    double got = host_get(dt, dst.buf.host, (size_t)at);
                    /* NaN payloads may be quietened by 16-bit conversions. */
                    ck_assert_msg(isnan(want) ? isnan(got) : same_bits(&dst, at, src.buf.host, so),
                                  "%s: (%lld, %lld, %lld, %lld) is %g, want %g", what, (long long)n,
                                  (long long)ch, (long long)y, (long long)x, got, want);
                    if (with_indices) {
                        uint32_t got_i = ((const uint32_t *)idx.buf.host)[view_at(&iv, n, ch, y, x)];
                        ck_assert_msg(got_i == (uint32_t)best, "%s: index of (%lld, %lld, %lld, "
                                      "%lld) is %u, want %lld", what, (long long)n, (long long)ch,
                                      (long long)y, (long long)x, got_i, (long long)best);
                    }
                }
    operand_free(&src);
    operand_free(&dst);
    operand_free(&idx);
}

static void check_avg_pool(const struct pool_case *c, kp_dtype dt)
{
    char what[128];
    snprintf(what, sizeof(what), "avg_pool2d %s %s%s%s", kp_dtype_name(dt), layout_names[c->layout],
             c->ceil_mode ? " ceil" : "", c->count_include_pad ? " count-pad" : "");
    int64_t h_out = window_out_size(c->h, &c->win, 0, c->ceil_mode);
    int64_t w_out = window_out_size(c->w, &c->win, 1, c->ceil_mode);
    int64_t ishape[4] = {c->n, c->c, c->h, c->w}, oshape[4] = {c->n, c->c, h_out, w_out};
    struct operand src, dst;
    operand_make(&src, dt, 4, ishape, c->layout);
    operand_make(&dst, dt, 4, oshape, c->layout);
    operand_random(&src);
    operand_poison(&dst);
    CK_OK(kp_avg_pool2d(gpu_stream, &dst.t, &src.t, &c->win, c->ceil_mode, c->count_include_pad));
    output_fetch(&dst, what);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = image_view(&dst.t, NULL);
    int taps = (int)(c->win.kernel[0] * c->win.kernel[1]);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < h_out; y++)
                for (int64_t x = 0; x < w_out; x++) {
                    double mag, want = ref_avg_pool(&c->win, c->count_include_pad, &sv, n, ch, y, x, &mag);
                    int64_t at = view_at(&dv, n, ch, y, x);
                    expect_close(host_get(dt, dst.buf.host, (size_t)at), want,
                                 tolerance(dt, mag, taps + 1), what, at);
                }
    operand_free(&src);
    operand_free(&dst);
}

START_TEST(test_max_pool)
{
    rng_seed(13 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(all_dtypes); d++) {
        check_max_pool(&pool_cases[_i], all_dtypes[d], true);
        check_max_pool(&pool_cases[_i], all_dtypes[d], false);
    }
}
END_TEST

START_TEST(test_avg_pool)
{
    const struct pool_case *c = &pool_cases[_i];
    if (c->win.dilation[0] != 1 || c->win.dilation[1] != 1)
        return;  /* avg_pool2d has no dilation */
    rng_seed(14 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        struct pool_case flipped = *c;
        check_avg_pool(c, float_dtypes[d]);
        flipped.count_include_pad = !c->count_include_pad;
        check_avg_pool(&flipped, float_dtypes[d]);
    }
}
END_TEST

/* ---------------------------------------------------------------- upsampling */

struct resize_case {
    int64_t n, c, h, w, h_out, w_out;
    bool has_scales;
    double scales[2];
    enum layout_kind layout;
};

static const struct resize_case resize_cases[] = {
    {2, 3, 5, 7, 10, 14, false, {0, 0}, NCHW},
    {1, 2, 5, 7, 3, 4, false, {0, 0}, NCHW},            /* downsampling */
    {2, 2, 3, 5, 7, 11, false, {0, 0}, STRIDED},        /* odd ratios */
    {1, 3, 6, 6, 12, 12, true, {2.0, 2.0}, NCHW},       /* scale_factor 2 */
    {1, 2, 5, 7, 8, 16, true, {1.7, 2.3}, NCHW},        /* scales not out / in */
    {2, 3, 4, 4, 4, 4, false, {0, 0}, NCHW},            /* same size: a copy */
    {1, 2, 1, 1, 3, 5, false, {0, 0}, NCHW},            /* 1x1 image */
    {2, 2, 4, 5, 1, 1, false, {0, 0}, NCHW},            /* 1x1 output */
    {2, 5, 6, 5, 12, 9, false, {0, 0}, CHANNELS_LAST},
    {0, 2, 3, 3, 6, 6, false, {0, 0}, NCHW},            /* N = 0 */
    /* aligned rows of 16-byte multiples: the fast paths of x2 and x1 */
    {2, 3, 5, 16, 10, 32, false, {0, 0}, NCHW0},
    {1, 2, 5, 32, 7, 64, false, {0, 0}, NCHW0},         /* x2 along x only */
    {1, 2, 4, 16, 8, 32, true, {2.0, 2.0}, NCHW0},      /* scale_factor 2 */
    {1, 2, 4, 16, 8, 31, true, {2.0, 2.0}, NCHW0},      /* scale 1/2, 31 columns */
    {2, 2, 3, 16, 3, 16, false, {0, 0}, NCHW0},         /* same size */
    {1, 2, 3, 16, 6, 16, false, {0, 0}, NCHW0},         /* x1 along x */
    /* x2 both ways at the fast paths' edges */
    {1, 2, 1, 16, 2, 32, false, {0, 0}, NCHW0},         /* one image row */
    {3, 2, 7, 8, 14, 16, false, {0, 0}, NCHW0},         /* 16 bytes of 16-bit source a row */
    {2, 1, 2, 24, 4, 48, false, {0, 0}, NCHW0},
    /* the x2 image walk (8-byte items): a wave across several rows, rows
     * across several waves, one item a row, a wave's tail past the end */
    {2, 3, 5, 8, 10, 16, false, {0, 0}, NCHW0},
    {1, 2, 3, 136, 6, 272, false, {0, 0}, NCHW0},
    {2, 1, 4, 268, 8, 536, true, {2.0, 2.0}, NCHW0},
    {1, 2, 3, 4, 6, 8, false, {0, 0}, NCHW0},
    {1, 1, 1, 12, 2, 24, false, {0, 0}, NCHW0},
    {3, 1, 3, 2, 6, 4, false, {0, 0}, NCHW0},
};

static void resize_operands(const struct resize_case *c, kp_dtype dt, struct operand *src,
                            struct operand *dst)
{
    int64_t ishape[4] = {c->n, c->c, c->h, c->w}, oshape[4] = {c->n, c->c, c->h_out, c->w_out};
    operand_make(src, dt, 4, ishape, c->layout);
    operand_make(dst, dt, 4, oshape, c->layout);
    operand_random(src);
    operand_poison(dst);
}

static void check_nearest(const struct resize_case *c, kp_dtype dt)
{
    char what[128];
    snprintf(what, sizeof(what), "upsample_nearest2d %s %s", kp_dtype_name(dt), layout_names[c->layout]);
    struct operand src, dst;
    resize_operands(c, dt, &src, &dst);
    const double *scales = c->has_scales ? c->scales : NULL;
    CK_OK(kp_upsample_nearest2d(gpu_stream, &dst.t, &src.t, scales));
    output_fetch(&dst, what);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = image_view(&dst.t, NULL);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < c->h_out; y++)
                for (int64_t x = 0; x < c->w_out; x++) {
                    int64_t sy = ref_nearest_index(y, c->h, c->h_out, scales ? &scales[0] : NULL);
                    int64_t sx = ref_nearest_index(x, c->w, c->w_out, scales ? &scales[1] : NULL);
                    ck_assert_msg(same_bits(&dst, view_at(&dv, n, ch, y, x), src.buf.host,
                                            view_at(&sv, n, ch, sy, sx)),
                                  "%s: (%lld, %lld, %lld, %lld) is not src (.., %lld, %lld)", what,
                                  (long long)n, (long long)ch, (long long)y, (long long)x,
                                  (long long)sy, (long long)sx);
                }
    operand_free(&src);
    operand_free(&dst);
}

static void check_bilinear(const struct resize_case *c, kp_dtype dt, bool align)
{
    char what[128];
    snprintf(what, sizeof(what), "upsample_bilinear2d %s %s%s", kp_dtype_name(dt),
             layout_names[c->layout], align ? " align_corners" : "");
    struct operand src, dst;
    resize_operands(c, dt, &src, &dst);
    const double *scales = c->has_scales ? c->scales : NULL;
    CK_OK(kp_upsample_bilinear2d(gpu_stream, &dst.t, &src.t, align, scales));
    output_fetch(&dst, what);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = image_view(&dst.t, NULL);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t ch = 0; ch < c->c; ch++)
            for (int64_t y = 0; y < c->h_out; y++)
                for (int64_t x = 0; x < c->w_out; x++) {
                    double want = ref_bilinear(&sv, c->h_out, c->w_out, align, scales, n, ch, y, x);
                    int64_t at = view_at(&dv, n, ch, y, x);
                    /* Values are within [-8, 8]; 4 products and sums, plus the
                     * f32 coordinate's last bit moving the weights. */
                    expect_close(host_get(dt, dst.buf.host, (size_t)at), want,
                                 tolerance(dt, 8.0, 8) + (dt == KP_DTYPE_F64 ? 0 : 8.0 * 0x1p-21),
                                 what, at);
                }
    operand_free(&src);
    operand_free(&dst);
}

START_TEST(test_nearest)
{
    rng_seed(15 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(all_dtypes); d++)
        check_nearest(&resize_cases[_i], all_dtypes[d]);
}
END_TEST

START_TEST(test_bilinear)
{
    rng_seed(16 + (uint64_t)_i);
    for (size_t d = 0; d < COUNT(float_dtypes); d++) {
        check_bilinear(&resize_cases[_i], float_dtypes[d], false);
        check_bilinear(&resize_cases[_i], float_dtypes[d], true);
    }
}
END_TEST

/* 64-bit element offsets: a nearest x2 upsampling whose output has more
 * than 2^32 elements, checked along rows near the end. */
START_TEST(test_nearest_64bit)
{
    const int64_t side = 32769, out = 2 * side;
    const uint64_t bytes = (uint64_t)side * side + (uint64_t)out * out;
    if (gpu_skip_big("test_nearest_64bit", bytes + (1ull << 30)))
        return;
    struct operand src, dst;
    struct resize_case c = {1, 1, side, side, out, out, false, {0, 0}, NCHW};
    resize_operands(&c, KP_DTYPE_U8, &src, &dst);
    CK_OK(kp_upsample_nearest2d(gpu_stream, &dst.t, &src.t, NULL));
    gpu_buf_download(&dst.buf);
    struct img_view sv = image_view(&src.t, src.buf.host), dv = image_view(&dst.t, NULL);
    const int64_t rows[] = {0, 12345, out - 2, out - 1};
    for (size_t r = 0; r < COUNT(rows); r++)
        for (int64_t x = 0; x < out; x++)
            ck_assert_msg(same_bits(&dst, view_at(&dv, 0, 0, rows[r], x), src.buf.host,
                                    view_at(&sv, 0, 0, rows[r] / 2, x / 2)),
                          "64-bit nearest: (%lld, %lld) differs", (long long)rows[r], (long long)x);
    operand_free(&src);
    operand_free(&dst);
}
END_TEST

static Suite *spatial_suite(void)
{
    Suite *s = suite_create("gpu_spatial");
    TCase *tc = tcase_create("spatial");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, test_im2col, 0, (int)COUNT(unfold_cases));
    tcase_add_loop_test(tc, test_col2im, 0, (int)COUNT(unfold_cases));
    tcase_add_loop_test(tc, test_max_pool, 0, (int)COUNT(pool_cases));
    tcase_add_loop_test(tc, test_avg_pool, 0, (int)COUNT(pool_cases));
    tcase_add_loop_test(tc, test_nearest, 0, (int)COUNT(resize_cases));
    tcase_add_loop_test(tc, test_bilinear, 0, (int)COUNT(resize_cases));
    tcase_add_test(tc, test_nearest_64bit);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    int st = gpu_setup();
    if (st)
        return st;
    st = gpu_run_suite(spatial_suite());
    gpu_teardown();
    return st;
}
