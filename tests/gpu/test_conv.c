/* kp_conv and kp_conv_transpose on the GPU against a CPU reference in
 * double, for every float dtype: plain, 1x1, kernels larger than the
 * input, strides larger than the kernel, dilation, depthwise and grouped,
 * with and without bias, 1x1 images, channel counts that are not
 * multiples of the tiles, channels per group multiples of 16 (the
 * tap-major reduction), 1-d, channels-last src and strided dst, the
 * 16-bit tile's input halo (stride-1 convs of 16-channel groups over a
 * 4-byte-aligned src with contiguous rows: tiles across two images, a
 * partial last tile, odd widths, row-padded src, padding 0, more than 8
 * taps, and the shapes it leaves to the gather: 1xW and Hx1 images,
 * halos too large for it), and the
 * transposed conv with stride, output_padding, dilation, groups and 1-d
 * (through both of its paths: one conv per output phase where stride or
 * dilation is 1, the gather kernel otherwise), including phases that no
 * tap reaches (stride above the kernel size: bias only).
 *
 * Tolerance of an output whose reference is r and whose terms (products and
 * bias) have absolute sum S:
 *   |got - r| <= terms * u_acc * S + u_out * |r| + tiny
 * with u_acc the accumulator's unit roundoff (2^-24 for f32, f16, bf16,
 * whose products are exact in f32; 2^-53 for f64), terms the number of
 * summands (a worst-case sum-order bound), and u_out the rounding of the
 * result to dst's dtype (2^-24 f32, 2^-53 f64, 2^-11 f16, 2^-8 bf16); tiny
 * covers f16 subnormals. Inputs are the dtype's values, so only the sums
 * and the final rounding differ from the reference.
 *
 * dst is poisoned first; bytes outside its view must keep the poison. A
 * conv over more than 2^31 pixels checks the 64-bit indexing. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operands.h"

#define POISON 0x5A

/* SRC_CONTIGUOUS starts one element into its buffer (an odd address for
 * 16-bit dtypes); SRC_ALIGNED at the buffer's start; SRC_ROW_GAPS too,
 * each row followed by a gap that makes the row stride even. */
enum src_layout { SRC_CONTIGUOUS, SRC_CHANNELS_LAST, SRC_ALIGNED, SRC_ROW_GAPS };
enum dst_layout { DST_CONTIGUOUS, DST_GAPS };

struct conv_case {
    const char *name;
    bool transpose;
    int rank;                 /* 4: 2-d, 3: 1-d (h and its parameters unused) */
    int64_t n, c_in, c_out, h, w, kh, kw;
    int64_t stride[2], pad[2], dil[2], out_pad[2], groups;
    bool bias;
    enum src_layout src;
    enum dst_layout dst;
};

#define P2(a, b) {a, b}
static const struct conv_case cases[] = {
    {"3x3 pad 1", false, 4, 2, 8, 16, 9, 11, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"1x1", false, 4, 2, 32, 70, 7, 5, 1, 1, P2(1, 1), P2(0, 0), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"kernel larger than input, padded", false, 4, 1, 3, 5, 2, 3, 5, 6, P2(1, 1), P2(2, 3), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"stride larger than kernel", false, 4, 2, 4, 6, 17, 13, 2, 3, P2(4, 5), P2(1, 0), P2(1, 1), P2(0, 0), 1, false, 0, 0},
    {"dilation 2", false, 4, 1, 5, 7, 12, 14, 3, 3, P2(1, 2), P2(2, 1), P2(2, 2), P2(0, 0), 1, true, 0, 0},
    {"depthwise", false, 4, 2, 12, 12, 10, 9, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 12, true, 0, 0},
    {"groups 2", false, 4, 1, 6, 10, 8, 8, 3, 3, P2(2, 1), P2(1, 1), P2(1, 1), P2(0, 0), 2, false, 0, 0},
    {"1x1 images", false, 4, 5, 7, 9, 1, 1, 1, 1, P2(1, 1), P2(0, 0), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"odd channels 3 -> 5", false, 4, 3, 3, 5, 13, 7, 3, 2, P2(1, 1), P2(1, 0), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"130 channels, several tiles", false, 4, 2, 37, 130, 15, 11, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"1-d", false, 3, 3, 10, 20, 1, 301, 1, 5, P2(2, 99), P2(2, 99), P2(1, 99), P2(0, 99), 1, true, 0, 0},
    {"1-d, dilation 3, groups 5", false, 3, 2, 15, 10, 1, 50, 1, 4, P2(1, 0), P2(3, 0), P2(3, 0), P2(0, 0), 5, false, 0, 0},
    {"channels-last src, strided dst", false, 4, 2, 6, 9, 9, 8, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_CHANNELS_LAST, DST_GAPS},
    {"channels-last 1-d src, strided dst", false, 3, 2, 7, 4, 1, 40, 1, 3, P2(2, 0), P2(0, 0), P2(1, 0), P2(0, 0), 1, true, SRC_CHANNELS_LAST, DST_GAPS},
    {"deep reduction (300 x 3 x 3)", false, 4, 1, 300, 70, 6, 6, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    /* channels per group a multiple of the steps' depth: the tap-major
     * reduction, with more than one channel tile and taps on both sides */
    {"3x3, 48 channels, 150 out", false, 4, 2, 48, 150, 13, 11, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"2x2 stride 2, groups 2 of 16", false, 4, 2, 32, 20, 9, 10, 2, 2, P2(2, 2), P2(0, 1), P2(1, 1), P2(0, 0), 2, false, 0, 0},
    {"3x3 stride 2 dilation 2, 16 channels", false, 4, 1, 16, 9, 15, 12, 3, 3, P2(2, 2), P2(2, 1), P2(2, 2), P2(0, 0), 1, true, 0, 0},
    {"5x5, 16 channels (25 taps)", false, 4, 1, 16, 24, 9, 9, 5, 5, P2(1, 1), P2(2, 2), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    /* the input halo of the 16-bit tile */
    {"halo: 9x56 images, tiles across them, batch 3", false, 4, 3, 32, 40, 9, 56, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ALIGNED, 0},
    {"halo: 8x16 images, one tile each", false, 4, 2, 32, 24, 8, 16, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ALIGNED, 0},
    {"halo: 19x7, row-padded src", false, 4, 2, 48, 20, 19, 7, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ROW_GAPS, 0},
    {"halo: 57x3 output, padding 0", false, 4, 2, 32, 24, 59, 5, 3, 3, P2(1, 1), P2(0, 0), P2(1, 1), P2(0, 0), 1, false, SRC_ROW_GAPS, 0},
    {"halo (not taken): 1x100", false, 4, 2, 32, 16, 1, 100, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ALIGNED, 0},
    {"halo (not taken): 40x1", false, 4, 2, 32, 16, 40, 1, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ROW_GAPS, 0},
    {"halo: groups 2 of 16, padding 0", false, 4, 2, 32, 24, 16, 14, 3, 3, P2(1, 1), P2(0, 0), P2(1, 1), P2(0, 0), 2, true, SRC_ALIGNED, 0},
    {"halo: 5x5 (25 taps), 150 out", false, 4, 2, 32, 150, 12, 14, 5, 5, P2(1, 1), P2(2, 2), P2(1, 1), P2(0, 0), 1, true, SRC_ALIGNED, 0},
    {"halo (not taken): 200 wide, too large for it", false, 4, 2, 16, 8, 3, 200, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, SRC_ALIGNED, 0},
    {"transpose k3 s1 p1", true, 4, 2, 8, 6, 7, 9, 3, 3, P2(1, 1), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"transpose k4 s2 p1", true, 4, 2, 16, 8, 8, 8, 4, 4, P2(2, 2), P2(1, 1), P2(1, 1), P2(0, 0), 1, true, 0, 0},
    {"transpose s2 output_padding 1", true, 4, 1, 5, 7, 5, 6, 3, 3, P2(2, 2), P2(1, 0), P2(1, 1), P2(1, 1), 1, false, 0, 0},
    {"transpose s3 dilation 2", true, 4, 2, 4, 3, 4, 5, 3, 2, P2(3, 2), P2(2, 1), P2(2, 2), P2(1, 0), 1, true, 0, 0},
    {"transpose groups 2", true, 4, 1, 6, 4, 5, 5, 3, 3, P2(2, 1), P2(0, 1), P2(1, 1), P2(0, 0), 2, true, 0, 0},
    {"transpose 1-d", true, 3, 3, 9, 5, 1, 33, 1, 5, P2(3, 0), P2(2, 0), P2(1, 0), P2(2, 0), 1, true, 0, 0},
    {"transpose channels-last src, strided dst", true, 4, 2, 5, 70, 6, 5, 2, 3, P2(2, 2), P2(0, 1), P2(1, 1), P2(0, 1), 1, true, SRC_CHANNELS_LAST, DST_GAPS},
    {"transpose stride 3 > kernel 2 (taps-free phases)", true, 4, 2, 4, 6, 5, 4, 2, 2, P2(3, 3), P2(0, 1), P2(1, 1), P2(2, 1), 1, true, 0, 0},
    {"transpose 1-d s2 dilation 3 groups 3", true, 3, 2, 6, 9, 1, 20, 1, 4, P2(2, 0), P2(1, 0), P2(3, 0), P2(1, 0), 3, true, 0, 0},
    {"transpose depthwise", true, 4, 1, 8, 8, 6, 7, 3, 3, P2(2, 2), P2(1, 1), P2(1, 1), P2(1, 1), 8, false, 0, 0},
};
#undef P2
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static const kp_dtype dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
#define N_DTYPES (sizeof(dtypes) / sizeof(dtypes[0]))

/* Output size of one spatial dim (the header's formulas). */
static int64_t out_size(const struct conv_case *c, int d, int64_t in, int64_t k)
{
    int64_t e = c->dil[d] * (k - 1) + 1;
    if (c->transpose)
        return (in - 1) * c->stride[d] - 2 * c->pad[d] + e + c->out_pad[d];
    return (in + 2 * c->pad[d] - e) / c->stride[d] + 1;
}

/* The problem as 2-d: 1-d cases have h = kh = 1 and use parameter [0] for w. */
struct dims {
    int64_t h, w, kh, kw, oh, ow;
    int64_t sh, sw, ph, pw, dh, dw;
};

static struct dims problem_dims(const struct conv_case *c)
{
    struct dims d;
    int wi = c->rank == 4 ? 1 : 0;
    d.h = c->rank == 4 ? c->h : 1;
    d.kh = c->rank == 4 ? c->kh : 1;
    d.w = c->w;
    d.kw = c->kw;
    d.sh = c->rank == 4 ? c->stride[0] : 1;
    d.ph = c->rank == 4 ? c->pad[0] : 0;
    d.dh = c->rank == 4 ? c->dil[0] : 1;
    d.sw = c->stride[wi];
    d.pw = c->pad[wi];
    d.dw = c->dil[wi];
    d.oh = c->rank == 4 ? out_size(c, 0, c->h, c->kh) : 1;
    d.ow = out_size(c, wi, c->w, c->kw);
    return d;
}

/* Element offset of (n, ch, y, x) in t (rank 3: y ignored). */
static size_t at(const kp_tensor *t, int64_t n, int64_t ch, int64_t y, int64_t x)
{
    const int64_t *s = t->layout.strides;
    int64_t off = t->layout.offset + n * s[0] + ch * s[1];
    off += t->layout.rank == 4 ? y * s[2] + x * s[3] : x * s[2];
    return (size_t)off;
}

static size_t weight_at(const kp_tensor *t, int64_t a, int64_t b, int64_t i, int64_t j)
{
    return at(t, a, b, i, j);
}

/* Reference output (n, o, y, x): *sum in double, *abs_sum of |terms|. */
static void reference(const struct conv_case *c, const struct dims *d, kp_dtype dt,
                      const kp_tensor *s, const void *sh, const kp_tensor *w, const void *wh,
                      const kp_tensor *b, const void *bh, int64_t n, int64_t o, int64_t y,
                      int64_t x, double *sum, double *abs_sum)
{
    int64_t cin_g = c->c_in / c->groups, cout_g = c->c_out / c->groups, g = o / cout_g;
    double acc = 0, mag = 0;
    if (c->bias) {
        acc = host_get(dt, bh, (size_t)(b->layout.offset + o * b->layout.strides[0]));
        mag = fabs(acc);
    }
    for (int64_t cc = 0; cc < cin_g; cc++) {
        int64_t ci = g * cin_g + cc;
        for (int64_t i = 0; i < d->kh; i++)
            for (int64_t j = 0; j < d->kw; j++) {
                int64_t iy, ix;
                if (c->transpose) {
                    int64_t ty = y + d->ph - i * d->dh, tx = x + d->pw - j * d->dw;
                    if (ty < 0 || tx < 0 || ty % d->sh || tx % d->sw)
                        continue;
                    iy = ty / d->sh;
                    ix = tx / d->sw;
                } else {
                    iy = y * d->sh - d->ph + i * d->dh;
                    ix = x * d->sw - d->pw + j * d->dw;
                }
                if (iy < 0 || iy >= d->h || ix < 0 || ix >= d->w)
                    continue;
                double v = host_get(dt, sh, at(s, n, ci, iy, ix));
                double k = c->transpose ? host_get(dt, wh, weight_at(w, ci, o - g * cout_g, i, j))
                                        : host_get(dt, wh, weight_at(w, o, cc, i, j));
                acc += v * k;
                mag += fabs(v * k);
            }
    }
    *sum = acc;
    *abs_sum = mag;
}

static double unit_out(kp_dtype dt)
{
    switch (dt) {
    case KP_DTYPE_F64: return ldexp(1, -53);
    case KP_DTYPE_F16: return ldexp(1, -11);
    case KP_DTYPE_BF16: return ldexp(1, -8);
    default: return ldexp(1, -24);
    }
}

/* Strides of a layout kind for shape (n, c, [h,] w). */
static void layout_strides(int rank, const int64_t *shape, int kind, int64_t *strides)
{
    int64_t c = shape[1], h = rank == 4 ? shape[2] : 1, w = shape[rank - 1];
    int64_t cs = kind == DST_GAPS ? c + 1 : c;  /* a gap after each pixel's channels */
    strides[0] = cs * h * w;
    strides[1] = 1;
    if (rank == 4)
        strides[2] = w * cs;
    strides[rank - 1] = cs;
}

/* NCHW strides with each row's stride rounded up to the next even number
 * above its width. */
static void row_gap_strides(int rank, const int64_t *shape, int64_t *strides)
{
    int64_t c = shape[1], h = rank == 4 ? shape[2] : 1, w = shape[rank - 1];
    int64_t row = (w + 2) / 2 * 2;
    strides[rank - 1] = 1;
    if (rank == 4)
        strides[2] = row;
    strides[1] = row * h;
    strides[0] = row * h * c;
}

static kp_tensor make_operand(struct gpu_buf *b, kp_dtype dt, int rank, const int64_t *shape,
                              int kind, int64_t offset)
{
    int64_t strides[4];
    if (kind == SRC_ALIGNED || kind == SRC_ROW_GAPS)
        offset = 0;
    if (kind == SRC_ALIGNED)
        kind = 0;
    if (kind == SRC_ROW_GAPS)
        row_gap_strides(rank, shape, strides);
    else if (kind)
        layout_strides(rank, shape, kind, strides);
    kp_tensor shape_only = gpu_tensor(&(struct gpu_buf){0}, dt, rank, shape, kind ? strides : NULL, offset);
    gpu_buf_alloc(b, tensor_extent(&shape_only) * kp_dtype_size(dt));
    return gpu_tensor(b, dt, rank, shape, kind ? strides : NULL, offset);
}

static void run_case(const struct conv_case *c, kp_dtype dt)
{
    struct dims d = problem_dims(c);
    int r = c->rank;
    size_t es = kp_dtype_size(dt);
    int64_t ss[4] = {c->n, c->c_in}, ws[4], ds[4] = {c->n, c->c_out};
    ws[0] = c->transpose ? c->c_in : c->c_out;
    ws[1] = c->transpose ? c->c_out / c->groups : c->c_in / c->groups;
    if (r == 4) {
        ss[2] = d.h, ss[3] = d.w, ws[2] = d.kh, ws[3] = d.kw, ds[2] = d.oh, ds[3] = d.ow;
    } else {
        ss[2] = d.w, ws[2] = d.kw, ds[2] = d.ow;
    }
    struct gpu_buf sb, wb, bb, db;
    kp_tensor s = make_operand(&sb, dt, r, ss, c->src, 1);
    kp_tensor w = make_operand(&wb, dt, r, ws, 0, 0);
    kp_tensor b = make_operand(&bb, dt, 1, &c->c_out, 0, 2);
    kp_tensor dst = make_operand(&db, dt, r, ds, c->dst, 3);
    host_random(dt, sb.host, sb.bytes / es);
    host_random(dt, wb.host, wb.bytes / es);
    host_random(dt, bb.host, bb.bytes / es);
    memset(db.host, POISON, db.bytes);
    gpu_buf_upload(&sb);
    gpu_buf_upload(&wb);
    gpu_buf_upload(&bb);
    gpu_buf_upload(&db);

    kp_conv_params p = {{c->stride[0], c->stride[1]}, {c->pad[0], c->pad[1]},
                        {c->dil[0], c->dil[1]}, {c->out_pad[0], c->out_pad[1]}, c->groups};
    const kp_tensor *bias = c->bias ? &b : NULL;
    if (c->transpose)
        CK_OK(kp_conv_transpose(gpu_stream, &dst, &s, &w, bias, &p));
    else
        CK_OK(kp_conv(gpu_stream, &dst, &s, &w, bias, &p));
    gpu_buf_download(&db);

    char context[200];
    snprintf(context, sizeof(context), "%s %s, case '%s'", c->transpose ? "kp_conv_transpose" : "kp_conv",
             kp_dtype_name(dt), c->name);
    const double u_acc = dt == KP_DTYPE_F64 ? ldexp(1, -53) : ldexp(1, -24), u_out = unit_out(dt);
    const double terms = (double)(c->c_in / c->groups * d.kh * d.kw + 1);
    unsigned char *written = calloc(db.bytes / es, 1);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t o = 0; o < c->c_out; o++)
            for (int64_t y = 0; y < d.oh; y++)
                for (int64_t x = 0; x < d.ow; x++) {
                    double want, mag;
                    reference(c, &d, dt, &s, sb.host, &w, wb.host, &b, bb.host, n, o, y, x, &want, &mag);
                    size_t di = at(&dst, n, o, y, x);
                    written[di] = 1;
                    double got = host_get(dt, db.host, di);
                    double tol = terms * u_acc * mag + u_out * fabs(want) + 1e-6 * u_out;
                    if (!(fabs(got - want) <= tol))
                        ck_abort_msg("%s: dst[%lld, %lld, %lld, %lld] is %.17g, want %.17g (tolerance %.3g)",
                                     context, (long long)n, (long long)o, (long long)y, (long long)x,
                                     got, want, tol);
                }
    check_untouched(&db, written, es, POISON, context);
    free(written);
    gpu_buf_free(&sb);
    gpu_buf_free(&wb);
    gpu_buf_free(&bb);
    gpu_buf_free(&db);
}

START_TEST(test_conv_cases)
{
    rng_seed(4100 + (uint64_t)_i);
    run_case(&cases[_i / N_DTYPES], dtypes[_i % N_DTYPES]);
}
END_TEST

/* N = 0 is valid and writes nothing. */
START_TEST(test_conv_empty_batch)
{
    struct gpu_buf sb, wb, db;
    int64_t ss[4] = {0, 3, 5, 5}, ws[4] = {4, 3, 3, 3}, ds[4] = {0, 4, 3, 3};
    kp_tensor s = make_operand(&sb, KP_DTYPE_F32, 4, ss, 0, 0);
    kp_tensor w = make_operand(&wb, KP_DTYPE_F32, 4, ws, 0, 0);
    kp_tensor d = make_operand(&db, KP_DTYPE_F32, 4, ds, 0, 0);
    kp_conv_params p = {{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1};
    CK_OK(kp_conv(gpu_stream, &d, &s, &w, NULL, &p));
    CK_OK(kp_stream_synchronize(gpu_stream));
    gpu_buf_free(&sb);
    gpu_buf_free(&wb);
    gpu_buf_free(&db);
}
END_TEST

/* 64-bit pixel indices and offsets: a 1x1 f16 conv over 46341^2 pixels
 * (2^31 + 4633), dst = 2 * src + 0.5 exactly, checked over the first and
 * last rows and a stride through the middle. */
START_TEST(test_conv_64bit)
{
    const int64_t side = 46341;
    const uint64_t pixels = (uint64_t)side * side;
    if (gpu_skip_big("test_conv_64bit", 2 * pixels * 2 + (1ull << 30)))
        return;
    struct gpu_buf sb, wb, bb, db;
    gpu_buf_alloc(&sb, pixels * 2);
    gpu_buf_alloc(&db, pixels * 2);
    gpu_buf_alloc(&wb, 2);
    gpu_buf_alloc(&bb, 2);
    uint16_t *sh = sb.host;
    for (uint64_t i = 0; i < pixels; i++)
        sh[i] = f32_to_f16((float)(i % 61) * 0.25f);
    ((uint16_t *)wb.host)[0] = f32_to_f16(2.0f);
    ((uint16_t *)bb.host)[0] = f32_to_f16(0.5f);
    gpu_buf_upload(&sb);
    gpu_buf_upload(&wb);
    gpu_buf_upload(&bb);
    const int64_t img[4] = {1, 1, side, side}, one[4] = {1, 1, 1, 1}, nb[1] = {1};
    kp_tensor s = gpu_tensor(&sb, KP_DTYPE_F16, 4, img, NULL, 0);
    kp_tensor d = gpu_tensor(&db, KP_DTYPE_F16, 4, img, NULL, 0);
    kp_tensor w = gpu_tensor(&wb, KP_DTYPE_F16, 4, one, NULL, 0);
    kp_tensor b = gpu_tensor(&bb, KP_DTYPE_F16, 1, nb, NULL, 0);
    kp_conv_params p = {{1, 1}, {0, 0}, {1, 1}, {0, 0}, 1};
    CK_OK(kp_conv(gpu_stream, &d, &s, &w, &b, &p));
    gpu_buf_download(&db);
    const uint16_t *dh = db.host;
    for (uint64_t i = 0; i < pixels; i += (i < (uint64_t)side || i >= pixels - (uint64_t)side) ? 1 : 9973) {
        float want = (float)(i % 61) * 0.5f + 0.5f;
        ck_assert_msg(f16_to_f32(dh[i]) == want, "64-bit conv: pixel %llu is %g, want %g",
                      (unsigned long long)i, f16_to_f32(dh[i]), want);
    }
    gpu_buf_free(&sb);
    gpu_buf_free(&wb);
    gpu_buf_free(&bb);
    gpu_buf_free(&db);
}
END_TEST

int main(void)
{
    int st = gpu_setup();
    if (st)
        return st;
    Suite *s = suite_create("conv");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_conv_cases, 0, (int)(N_CASES * N_DTYPES));
    tcase_add_test(tc, test_conv_empty_batch);
    tcase_add_test(tc, test_conv_64bit);
    suite_add_tcase(s, tc);
    int failed = gpu_run_suite(s);
    gpu_teardown();
    return failed;
}
