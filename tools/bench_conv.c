/* kp-bench cases of the conv module: the shapes of common vision and
 * speech layers, whatever --elements says. Compute-bound, so each result
 * carries its FLOP count (2 per multiply-add) and kp-bench shows GFLOP/s;
 * bytes count src, weight and dst once each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

struct ccase {
    const char *op;             /* the name --ops selects */
    const char *variant;
    bool transpose;
    int rank;                   /* 4: 2-d, 3: 1-d */
    int64_t n, c_in, c_out, h, w, k, stride, pad;
};

static const struct ccase ccases[] = {
    {"conv2d", "3x3", false, 4, 32, 128, 128, 56, 56, 3, 1, 1},
    {"conv2d", "1x1", false, 4, 32, 128, 128, 56, 56, 1, 1, 0},
    {"conv1d", "whisper", false, 3, 1, 80, 384, 1, 3000, 3, 1, 1},
    {"conv_transpose2d", "k4s2", true, 4, 8, 256, 128, 32, 32, 4, 2, 1},
};
#define N_CCASES (sizeof(ccases) / sizeof(ccases[0]))
static const kp_dtype cdtypes[] = {KP_DTYPE_F32, KP_DTYPE_BF16, KP_DTYPE_F16};
#define N_CDTYPES (sizeof(cdtypes) / sizeof(cdtypes[0]))

static size_t conv_count(void)
{
    return N_CCASES * N_CDTYPES;
}

static void conv_describe(size_t i, struct bench_entry *e)
{
    const struct ccase *c = &ccases[i / N_CDTYPES];
    e->op = c->op;
    e->dtype = cdtypes[i % N_CDTYPES];
    snprintf(e->variant, sizeof(e->variant), "%s", c->variant);
}

static int64_t out_size(const struct ccase *c, int64_t in)
{
    return c->transpose ? (in - 1) * c->stride - 2 * c->pad + c->k
                        : (in + 2 * c->pad - c->k) / c->stride + 1;
}

struct cctx {
    const struct ccase *c;
    kp_stream *stream;
    kp_tensor src, weight, bias, dst;
    kp_conv_params params;
};

static kp_status run_conv(void *ctx, int i)
{
    struct cctx *q = ctx;
    (void)i;
    if (q->c->transpose)
        return kp_conv_transpose(q->stream, &q->dst, &q->src, &q->weight, &q->bias, &q->params);
    return kp_conv(q->stream, &q->dst, &q->src, &q->weight, &q->bias, &q->params);
}

/* A contiguous tensor of `shape` over a new buffer filled with random values. */
static kp_status alloc_tensor(struct bench *b, kp_dtype dtype, int rank, const int64_t *shape,
                              kp_buffer **buf, kp_tensor *t)
{
    uint64_t n = 1;
    for (int d = 0; d < rank; d++)
        n *= (uint64_t)shape[d];
    kp_status st = kp_buffer_alloc(b->dev, (size_t)n * kp_dtype_size(dtype), buf);
    if (st == KP_OK)
        st = fill_random(b, *buf, dtype);
    *t = (kp_tensor){*buf, dtype, {0}};
    if (st == KP_OK)
        st = kp_layout_contiguous(&t->layout, rank, shape);
    return st;
}

static void conv_run(struct bench *b, size_t i, struct result *r)
{
    const struct ccase *c = &ccases[i / N_CDTYPES];
    kp_dtype dt = cdtypes[i % N_CDTYPES];
    memset(r, 0, sizeof(*r));
    r->op = c->op;
    snprintf(r->variant, sizeof(r->variant), "%s", c->variant);
    r->dtype = r->out_dtype = dt;

    int rank = c->rank;
    int64_t oh = rank == 4 ? out_size(c, c->h) : 1, ow = out_size(c, c->w);
    int64_t kh = rank == 4 ? c->k : 1;
    int64_t ss[4] = {c->n, c->c_in}, ws[4], ds[4] = {c->n, c->c_out}, bs[1] = {c->c_out};
    ws[0] = c->transpose ? c->c_in : c->c_out;
    ws[1] = c->transpose ? c->c_out : c->c_in;
    if (rank == 4) {
        ss[2] = c->h;
        ss[3] = c->w;
        ws[2] = ws[3] = c->k;
        ds[2] = oh;
        ds[3] = ow;
    } else {
        ss[2] = c->w;
        ws[2] = c->k;
        ds[2] = ow;
    }
    const uint64_t es = kp_dtype_size(dt);
    const uint64_t n_src = (uint64_t)(c->n * c->c_in * (rank == 4 ? c->h : 1) * c->w);
    const uint64_t n_w = (uint64_t)(c->c_in * c->c_out * kh * c->k);
    const uint64_t n_dst = (uint64_t)(c->n * c->c_out * oh * ow);
    r->elements = n_dst;
    r->bytes = (n_src + n_w + n_dst) * es;
    /* 2 * outputs * (C_in / groups) * kH * kW for every case. For the
     * transposed conv that counts every tap of every output, stride^2 times
     * the multiply-adds that land on an input pixel: compare its times. */
    r->flops = 2.0 * (double)n_dst * (double)c->c_in * (double)(kh * c->k);
    r->sets = 1;
    kp_status st = measure_copy(b, r->bytes, &r->copy_ms);
    if (st != KP_OK) {
        result_fail(r, "copy reference", st);
        return;
    }

    struct cctx q = {c, b->stream, {0}, {0}, {0}, {0},
                     {{c->stride, c->stride}, {c->pad, c->pad}, {1, 1}, {0, 0}, 1}};
    kp_buffer *sb = NULL, *wb = NULL, *bb = NULL, *db = NULL;
    st = alloc_tensor(b, dt, rank, ss, &sb, &q.src);
    if (st == KP_OK)
        st = alloc_tensor(b, dt, rank, ws, &wb, &q.weight);
    if (st == KP_OK)
        st = alloc_tensor(b, dt, 1, bs, &bb, &q.bias);
    if (st == KP_OK)
        st = alloc_tensor(b, dt, rank, ds, &db, &q.dst);
    time_case(b, st, run_conv, &q, r);
    kp_buffer_destroy(&sb);
    kp_buffer_destroy(&wb);
    kp_buffer_destroy(&bb);
    kp_buffer_destroy(&db);
}

const struct bench_table bench_conv_table = {conv_count, conv_describe, conv_run};
