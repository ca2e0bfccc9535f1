/* kp_conv, kp_conv_transpose: validation and launch of the conv module.
 * Both run one implicit-GEMM kernel (kernels/conv.cu); a 1-d convolution
 * is passed as a 2-d one of height 1. */
#include <stdio.h>
#include <string.h>

#include "kernel_families.h"
#include "kp_conv_abi.h"

/* One spatial dim of a convolution, as checked. */
struct conv_dim {
    int64_t in, out, k, stride, pad, dil, out_pad;
};

/* The problem after validation. */
struct conv_problem {
    int rank;                     /* 3 or 4 */
    int64_t n, c_in, c_out, groups;
    struct conv_dim d[2];         /* h, w (h is 1 for 1-d) */
};

static kp_status check_tensors(const char *fn, kp_stream *stream, const kp_tensor *dst,
                               const kp_tensor *src, const kp_tensor *weight, const kp_tensor *bias,
                               const kp_conv_params *params)
{
    uint64_t n;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "src", src, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "weight", weight, stream->device, &n);
    if (st == KP_OK && bias)
        st = kp_check_tensor(fn, "bias", bias, stream->device, &n);
    if (st != KP_OK)
        return st;
    if (!params)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: params is NULL", fn);
    int rank = src->layout.rank;
    if (rank != 3 && rank != 4)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: src has rank %d; it must be 4 (N, C, H, W) or 3 (N, C, L)", fn, rank);
    if (weight->layout.rank != rank || dst->layout.rank != rank)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has rank %d but weight has %d and dst %d",
                       fn, rank, weight->layout.rank, dst->layout.rank);
    if (bias && bias->layout.rank != 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bias has rank %d; it must be 1 (C_out)", fn,
                       bias->layout.rank);
    kp_dtype dt = src->dtype;
    if (dt != KP_DTYPE_F32 && dt != KP_DTYPE_F64 && dt != KP_DTYPE_F16 && dt != KP_DTYPE_BF16)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: src is %s; convolutions take f32, f64, f16 or bf16",
                       fn, kp_dtype_name(dt));
    if (weight->dtype != dt)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: weight is %s but src is %s", fn,
                       kp_dtype_name(weight->dtype), kp_dtype_name(dt));
    if (bias && bias->dtype != dt)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bias is %s but src is %s", fn,
                       kp_dtype_name(bias->dtype), kp_dtype_name(dt));
    return kp_check_same_dtype(fn, dst, src);
}

/* Checks one spatial dim's parameters and computes its output size. */
static kp_status check_dim(const char *fn, bool transpose, const char *name, struct conv_dim *d)
{
    if (d->stride < 1 || d->dil < 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s stride %lld and dilation %lld must be >= 1",
                       fn, name, (long long)d->stride, (long long)d->dil);
    if (d->pad < 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s padding %lld is negative", fn, name,
                       (long long)d->pad);
    if (!transpose && d->out_pad != 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s output_padding is %lld; it is for kp_conv_transpose only (set 0)",
                       fn, name, (long long)d->out_pad);
    if (transpose && (d->out_pad < 0 || (d->out_pad >= d->stride && d->out_pad >= d->dil)))
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s output_padding %lld must be >= 0 and below the stride or the dilation",
                       fn, name, (long long)d->out_pad);
    /* Every coordinate the kernels form stays well inside 32 bits. */
    const int64_t lim = INT32_MAX / 4;
    if (d->in > lim || d->k > lim || d->stride > lim || d->pad > lim || d->dil > lim ||
        d->dil * (d->k - 1) + 1 > lim)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: %s sizes or parameters of 2^29 and more are not supported",
                       fn, name);
    int64_t extent = d->dil * (d->k - 1) + 1;
    if (transpose)
        d->out = (d->in - 1) * d->stride - 2 * d->pad + extent + d->out_pad;
    else {
        int64_t span = d->in + 2 * d->pad - extent;  /* floor division, also when negative */
        d->out = (span >= 0 ? span / d->stride : -((-span + d->stride - 1) / d->stride)) + 1;
    }
    if (d->out < 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s output size would be %lld (input %lld, kernel %lld, stride %lld, "
                       "padding %lld, dilation %lld); it must be >= 1",
                       fn, name, (long long)d->out, (long long)d->in,
                       (long long)d->k, (long long)d->stride, (long long)d->pad, (long long)d->dil);
    if (d->out > lim)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: %s output size %lld is 2^29 or more: not supported",
                       fn, name, (long long)d->out);
    return KP_OK;
}

static kp_status check_shapes(const char *fn, bool transpose, const kp_tensor *dst,
                              const kp_tensor *src, const kp_tensor *weight, const kp_tensor *bias,
                              const kp_conv_params *params, struct conv_problem *p)
{
    const int64_t *ss = src->layout.shape, *ws = weight->layout.shape;
    int rank = src->layout.rank, spatial = rank - 2;
    char a[96], b[96];
    p->rank = rank;
    p->n = ss[0];
    p->c_in = ss[1];
    p->groups = params->groups;
    if (p->n < 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has a negative batch size", fn);
    for (int i = 1; i < rank; i++)
        if (ss[i] < 1)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src is %s; every size but N must be >= 1",
                           fn, kp_format_shape(a, sizeof(a), rank, ss));
    for (int i = 0; i < rank; i++)
        if (ws[i] < 1)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: weight is %s; every size must be >= 1",
                           fn, kp_format_shape(a, sizeof(a), rank, ws));
    if (p->groups < 1)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: groups is %lld; it must be >= 1", fn,
                       (long long)p->groups);
    if (p->c_in % p->groups)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %lld input channels are not divisible by groups %lld",
                       fn, (long long)p->c_in, (long long)p->groups);
    p->c_out = transpose ? ws[1] * p->groups : ws[0];
    /* The weight shape the other sizes imply, its kernel sizes taken as given. */
    int64_t want[4] = {transpose ? p->c_in : p->c_out,
                       transpose ? p->c_out / p->groups : p->c_in / p->groups, ws[2],
                       rank == 4 ? ws[3] : 0};
    if (!transpose && p->c_out % p->groups)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %lld output channels are not divisible by groups %lld",
                       fn, (long long)p->c_out, (long long)p->groups);
    if (ws[0] != want[0] || ws[1] != want[1])
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: weight is %s but must be %s for %lld input channels in %lld groups",
                       fn, kp_format_shape(a, sizeof(a), rank, ws), kp_format_shape(b, sizeof(b), rank, want),
                       (long long)p->c_in, (long long)p->groups);
    if (bias && bias->layout.shape[0] != p->c_out)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bias has %lld elements but there are %lld output channels",
                       fn, (long long)bias->layout.shape[0], (long long)p->c_out);
    if (p->c_in / p->groups > INT32_MAX / 4 || p->c_out / p->groups > INT32_MAX / 4)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: 2^29 or more channels per group are not supported", fn);
    /* 1-d: height 1; element [0] of each pair describes the length. */
    p->d[0] = (struct conv_dim){1, 1, 1, 1, 0, 1, 0};
    static const char *const names[2][2] = {{"length", ""}, {"height", "width"}};
    for (int s = 0; s < spatial; s++) {
        struct conv_dim *d = &p->d[2 - spatial + s];
        *d = (struct conv_dim){ss[2 + s], 0, ws[2 + s], params->stride[s], params->padding[s],
                               params->dilation[s], params->output_padding[s]};
        kp_status st = check_dim(fn, transpose, names[spatial - 1][s], d);
        if (st != KP_OK)
            return st;
    }
    int64_t k_total = p->c_in / p->groups * p->d[0].k * p->d[1].k;
    if (k_total > INT32_MAX / 4)
        return kp_fail(KP_ERR_UNSUPPORTED, "%s: weight rows of %lld elements (2^29 or more) are not supported",
                       fn, (long long)k_total);
    int64_t out_shape[4] = {p->n, p->c_out, p->d[2 - spatial].out, p->d[1].out};
    return kp_check_shape_is(fn, "dst", dst, rank, out_shape);
}

static kp_status check_overlaps(const char *fn, const kp_tensor *dst, const kp_tensor *src,
                                const kp_tensor *weight, const kp_tensor *bias)
{
    kp_status st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "dst", dst, "src", src);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "dst", dst, "weight", weight);
    if (st == KP_OK && bias)
        st = kp_check_disjoint(fn, "dst", dst, "bias", bias);
    return st;
}

/* Strides of a rank-3 or rank-4 tensor as (n, c, h, w); h is 0 for 1-d. */
static void strides4(const kp_tensor *t, int64_t out[4])
{
    const int64_t *s = t->layout.strides;
    out[0] = s[0];
    out[1] = s[1];
    out[2] = t->layout.rank == 4 ? s[2] : 0;
    out[3] = s[t->layout.rank - 1];
}

/* One launch of `family` running l->conv[0 .. count - 1] on grid z, each
 * over its pixels (grids beyond these limits loop inside the kernel). */
static kp_status launch_convs(kp_stream *stream, enum kp_family_id family, const kp_tensor *src,
                              struct kp_conv_launch *l, int count, void *w, const kp_tensor *bias,
                              void *d)
{
    int64_t tile_n = src->dtype == KP_DTYPE_F64 ? KP_CONV_TILE_N_F64 : KP_CONV_TILE_N;
    int64_t gx = 1, gy = (int64_t)l->conv[0].m_tiles * l->conv[0].groups;
    for (int z = 0; z < count; z++) {
        int64_t tiles = (l->conv[z].pixels + tile_n - 1) / tile_n;
        gx = tiles > gx ? tiles : gx;
    }
    struct kp_launch_dims dims = {{(unsigned)(gx < (1 << 22) ? gx : (1 << 22)),
                                   (unsigned)(gy < 65535 ? gy : 65535), (unsigned)count},
                                  {KP_CONV_BLOCK, 1, 1}, 0};
    void *s = kp_tensor_base(src), *b = bias ? kp_tensor_base(bias) : NULL;
    void *args[] = {l, &s, &w, &b, &d};
    return kp_launch_family(stream, family, src->dtype, &dims, args);
}

static kp_status launch_one(kp_stream *stream, enum kp_family_id family, const kp_tensor *src,
                            const struct kp_conv_args *a, void *w, const kp_tensor *bias, void *d)
{
    struct kp_conv_launch l;
    memset(&l, 0, sizeof(l));
    l.conv[0] = *a;
    return launch_convs(stream, family, src, &l, 1, w, bias, d);
}

/* One output phase of a transposed dim: the outputs y = phase + stride * yy
 * receive exactly the taps i = first + stride * ii (when the dilation is 1;
 * with stride 1 there is one phase and every tap), from input
 * iy = yy + shift - ii * dilation: a convolution with stride 1, padding
 * -shift and dilation -dilation over a kernel of `taps` taps. */
struct conv_phase {
    int64_t outputs, first, taps, shift;
};

static struct conv_phase phase_of(const struct conv_dim *d, int64_t phase)
{
    struct conv_phase ph;
    ph.outputs = phase < d->out ? (d->out - phase + d->stride - 1) / d->stride : 0;
    ph.first = (phase + d->pad) % d->stride;
    ph.taps = ph.first < d->k ? (d->k - ph.first + d->stride - 1) / d->stride : 0;
    ph.shift = (phase + d->pad - ph.first) / d->stride;
    return ph;
}

/* The transposed conv as one plain conv per output phase (stride_h x
 * stride_w of them), each over only the taps that land on an input pixel:
 * no work on the stride^2 - 1 of every stride^2 products that the gather
 * would multiply by 0. Needs stride 1 or dilation 1 in each dim. The
 * phases share launches, KP_CONV_MAX_PHASES at a time: one phase alone
 * often fills too few blocks to occupy the device. */
static kp_status launch_phases(kp_stream *stream, const struct conv_problem *p, const kp_tensor *src,
                               const struct kp_conv_args *base, void *w, const kp_tensor *bias,
                               void *d, const int64_t ws[4])
{
    struct kp_conv_launch l;
    memset(&l, 0, sizeof(l));
    int count = 0;
    for (int64_t py = 0; py < p->d[0].stride; py++)
        for (int64_t px = 0; px < p->d[1].stride; px++) {
            struct conv_phase h = phase_of(&p->d[0], py), x = phase_of(&p->d[1], px);
            if (h.outputs == 0 || x.outputs == 0)
                continue;
            struct kp_conv_args *a = &l.conv[count++];
            *a = *base;
            bool taps = h.taps > 0 && x.taps > 0;  /* none: dst gets the bias only */
            a->out_h = (int32_t)h.outputs;
            a->out_w = (int32_t)x.outputs;
            a->pixels = p->n * h.outputs * x.outputs;
            a->k_h = taps ? (int32_t)h.taps : 1;
            a->k_w = taps ? (int32_t)x.taps : 1;
            a->k_total = taps ? a->c_in_group * a->k_h * a->k_w : 0;
            a->stride_h = a->stride_w = 1;
            a->pad_h = (int32_t)-h.shift;
            a->pad_w = (int32_t)-x.shift;
            a->dil_h = (int32_t)-p->d[0].dil;
            a->dil_w = (int32_t)-p->d[1].dil;
            a->w_stride_i = p->d[0].stride * ws[2];
            a->w_stride_j = p->d[1].stride * ws[3];
            a->dst_stride[2] = p->d[0].stride * base->dst_stride[2];
            a->dst_stride[3] = p->d[1].stride * base->dst_stride[3];
            a->w_offset = taps ? h.first * ws[2] + x.first * ws[3] : 0;
            a->dst_offset = py * base->dst_stride[2] + px * base->dst_stride[3];
            if (count == KP_CONV_MAX_PHASES) {
                kp_status st = launch_convs(stream, KP_KF_CONV, src, &l, count, w, bias, d);
                if (st != KP_OK)
                    return st;
                count = 0;
            }
        }
    return count ? launch_convs(stream, KP_KF_CONV, src, &l, count, w, bias, d) : KP_OK;
}

/* Columns of the 16-bit tile's input halo for a stride-1, dilation-1 conv:
 * input x from -pad_w rounded down to even (its 32-bit loads take pixel
 * pairs from an even x) to out_w - 1 - pad_w + k_w - 1, rounded up to
 * pairs. The kernel derives the same first column. */
static int64_t halo_cols(const struct kp_conv_args *a)
{
    int64_t first = (a->pad_w + 1) / 2 * 2;
    int64_t cols = a->out_w + a->k_w - 1 + first - a->pad_w;
    return (cols + 1) / 2 * 2;
}

/* Sets halo_w where the 16-bit tile can stage its input as a halo shared
 * by all taps. A tile's 128 pixels span at most `rows` output rows (an
 * image boundary counts as a row boundary) of at most two images (an
 * image has at least 128 pixels); its halo holds each image's part with
 * k_h - 1 rows more and must fit KP_CONV_HALO_PIXELS. Fewer than 8 taps
 * gain little from sharing (and the kernel fills a chunk's halo during
 * taps 1..4 of the chunk before). It reads pixel pairs as aligned 32-bit
 * words: src's rows must be contiguous, its other strides even and its
 * base 4-byte aligned. */
static void plan_halo(struct kp_conv_args *a, const kp_tensor *src)
{
    int64_t img = (int64_t)a->out_h * a->out_w;
    const int64_t *s = a->src_stride;
    if ((src->dtype != KP_DTYPE_F16 && src->dtype != KP_DTYPE_BF16) || a->stride_h != 1 ||
        a->stride_w != 1 || a->dil_h != 1 || a->dil_w != 1 || a->c_in_group % 16 ||
        a->k_h * a->k_w < 8 || img < KP_CONV_TILE_N || img > INT32_MAX / 2)
        return;
    if (s[3] != 1 || (s[0] | s[1] | s[2]) % 2 || (uintptr_t)kp_tensor_base(src) % 4)
        return;
    int64_t rows = (a->out_w - 1 + KP_CONV_TILE_N - 1) / a->out_w + 1;
    int64_t cols = halo_cols(a);
    if ((rows + 2 * (a->k_h - 1)) * cols > KP_CONV_HALO_PIXELS)
        return;
    a->halo_w = (int32_t)cols;
}

static kp_status conv_launch(kp_stream *stream, bool transpose, const struct conv_problem *p,
                             const kp_tensor *dst, const kp_tensor *src, const kp_tensor *weight,
                             const kp_tensor *bias)
{
    struct kp_conv_args a = {0};
    int64_t ws[4];
    a.pixels = p->n * p->d[0].out * p->d[1].out;
    strides4(src, a.src_stride);
    strides4(dst, a.dst_stride);
    strides4(weight, ws);
    int64_t cin_g = p->c_in / p->groups, cout_g = p->c_out / p->groups;
    /* GEMM row m is an output channel, its depth index c an input channel. */
    a.w_stride_m = transpose ? ws[1] : ws[0];
    a.w_stride_c = transpose ? ws[0] : ws[1];
    a.w_stride_group = transpose ? cin_g * ws[0] : cout_g * ws[0];
    a.w_stride_i = ws[2];
    a.w_stride_j = ws[3];
    a.bias_stride = bias ? bias->layout.strides[0] : 0;
    a.in_h = (int32_t)p->d[0].in;
    a.in_w = (int32_t)p->d[1].in;
    a.out_h = (int32_t)p->d[0].out;
    a.out_w = (int32_t)p->d[1].out;
    a.k_h = (int32_t)p->d[0].k;
    a.k_w = (int32_t)p->d[1].k;
    a.stride_h = (int32_t)p->d[0].stride;
    a.stride_w = (int32_t)p->d[1].stride;
    a.pad_h = (int32_t)p->d[0].pad;
    a.pad_w = (int32_t)p->d[1].pad;
    a.dil_h = (int32_t)p->d[0].dil;
    a.dil_w = (int32_t)p->d[1].dil;
    a.c_in_group = (int32_t)cin_g;
    a.c_out_group = (int32_t)cout_g;
    a.k_total = (int32_t)(cin_g * a.k_h * a.k_w);
    int64_t tile_m = src->dtype == KP_DTYPE_F16 || src->dtype == KP_DTYPE_BF16 ? KP_CONV_TILE_M_16
                                                                              : KP_CONV_TILE_M;
    a.m_tiles = (int32_t)((cout_g + tile_m - 1) / tile_m);
    a.groups = (int32_t)p->groups;
    a.has_bias = bias != NULL;

    void *w = kp_tensor_base(weight), *d = kp_tensor_base(dst);
    if (!transpose) {
        plan_halo(&a, src);
        return launch_one(stream, KP_KF_CONV, src, &a, w, bias, d);
    }
    if ((p->d[0].dil == 1 || p->d[0].stride == 1) && (p->d[1].dil == 1 || p->d[1].stride == 1))
        return launch_phases(stream, p, src, &a, w, bias, d, ws);
    return launch_one(stream, KP_KF_CONV_TRANSPOSE, src, &a, w, bias, d);
}

static kp_status conv_common(const char *fn, bool transpose, kp_stream *stream, const kp_tensor *dst,
                             const kp_tensor *src, const kp_tensor *weight, const kp_tensor *bias,
                             const kp_conv_params *params)
{
    struct conv_problem p = {0};
    kp_status st = check_tensors(fn, stream, dst, src, weight, bias, params);
    if (st == KP_OK)
        st = check_shapes(fn, transpose, dst, src, weight, bias, params, &p);
    if (st == KP_OK)
        st = check_overlaps(fn, dst, src, weight, bias);
    if (st != KP_OK || p.n == 0)
        return st;
    return conv_launch(stream, transpose, &p, dst, src, weight, bias);
}

kp_status kp_conv(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                  const kp_tensor *weight, const kp_tensor *bias, const kp_conv_params *params)
{
    return conv_common("kp_conv", false, stream, dst, src, weight, bias, params);
}

kp_status kp_conv_transpose(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                            const kp_tensor *weight, const kp_tensor *bias,
                            const kp_conv_params *params)
{
    return conv_common("kp_conv_transpose", true, stream, dst, src, weight, bias, params);
}
