/* kp-bench cases of rope, 32 heads of 128, in each of kp_rope's layouts
 * (interleaved pairs and half-split pairs over (b, h, t, d); half-split over
 * (b, t, h, d)), at a prefill (1 x 4096 positions), a batch of prompts
 * (32 x 512) and a decoding step (32 x 1), whatever --elements says. The
 * source rotates through copies spanning 512 MB; the cos and sin tables,
 * (t, d/2) each, are one pair. Bytes: src read and dst written once, both
 * tables read once. */
#include <stdio.h>

#include "bench.h"

#define HEADS 32
#define HEAD_DIM 128
static const char *const layout_names[] = {"interleaved", "half", "thd"};
static const int64_t shapes[][2] = {{1, 4096}, {32, 512}, {32, 1}};  /* batch, positions */
#define N_SHAPES (sizeof(shapes) / sizeof(shapes[0]))

struct rcase {
    kp_rope_layout layout;
    int64_t batch, seq;
    kp_dtype dtype;
};

/* Case i: layout-major, then shape, dtype. */
static struct rcase locate(size_t i)
{
    struct rcase c;
    c.dtype = float_dtypes[i % N_FLOAT_DTYPES];
    i /= N_FLOAT_DTYPES;
    c.batch = shapes[i % N_SHAPES][0];
    c.seq = shapes[i % N_SHAPES][1];
    c.layout = (kp_rope_layout)(i / N_SHAPES);
    return c;
}

static size_t rope_count(void)
{
    return KP_ROPE_LAYOUT_COUNT * N_SHAPES * N_FLOAT_DTYPES;
}

static void rope_describe(size_t i, struct bench_entry *e)
{
    const struct rcase c = locate(i);
    e->op = "rope";
    e->dtype = c.dtype;
    snprintf(e->variant, sizeof(e->variant), "%s b%lld t%lld", layout_names[c.layout],
             (long long)c.batch, (long long)c.seq);
}

struct rctx {
    kp_rope_layout layout;
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], dst, cos, sin;
    int sets;
};

static kp_status run_rope(void *ctx, int i)
{
    struct rctx *q = ctx;
    return kp_rope(q->stream, q->layout, &q->dst, &q->src[i % q->sets], &q->cos, &q->sin);
}

static void rope_run(struct bench *b, size_t i, struct result *r)
{
    const struct rcase c = locate(i);
    struct bench_entry e;
    rope_describe(i, &e);
    const uint64_t es = kp_dtype_size(c.dtype);
    const uint64_t n = (uint64_t)(c.batch * HEADS * c.seq * HEAD_DIM), table_n = (uint64_t)c.seq * HEAD_DIM / 2;
    if (!result_begin(b, &e, n, (2 * n + 2 * table_n) * es, r))
        return;

    struct rctx q = {c.layout, b->stream, {{0}}, {0}, {0}, {0}, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *db = NULL, *cb = NULL, *sb = NULL;
    const int64_t bhtd[4] = {c.batch, HEADS, c.seq, HEAD_DIM}, bthd[4] = {c.batch, c.seq, HEADS, HEAD_DIM};
    const int64_t *shape = c.layout == KP_ROPE_THD ? bthd : bhtd, tshape[2] = {c.seq, HEAD_DIM / 2};
    kp_status st = alloc_rotation(b, rotation_copies(b, n * es), (size_t)(n * es), fill_random, c.dtype,
                                  srcs, NULL, &q.sets);
    for (int k = 0; st == KP_OK && k < q.sets; k++)
        st = view_contiguous(srcs[k], c.dtype, 4, shape, &q.src[k]);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(n * es), &db);
    if (st == KP_OK)
        st = view_contiguous(db, c.dtype, 4, shape, &q.dst);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(table_n * es), &cb);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(table_n * es), &sb);
    if (st == KP_OK)  /* values in +-[0.5, 2): not a real table, the same work */
        st = fill_random(b, cb, c.dtype);
    if (st == KP_OK)
        st = fill_random(b, sb, c.dtype);
    if (st == KP_OK)
        st = view_contiguous(cb, c.dtype, 2, tshape, &q.cos);
    if (st == KP_OK)
        st = view_contiguous(sb, c.dtype, 2, tshape, &q.sin);
    r->sets = q.sets;
    time_case(b, st, run_rope, &q, r);
    destroy_rotation(srcs);
    kp_buffer_destroy(&db);
    kp_buffer_destroy(&cb);
    kp_buffer_destroy(&sb);
}

const struct bench_table bench_rope_table = {rope_count, rope_describe, rope_run};
