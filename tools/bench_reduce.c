/* kp-bench cases of sum and max over each dim of a 3-d tensor, sized by
 * --elements: [64, 1024, N] (many short outer slices) and [8, 4096, N] (a
 * few large ones), N what fills --elements (4096 and 8192 at the default).
 * Reducing dim 0 or 1 walks strided columns, dim 2 contiguous rows. The
 * source rotates through copies spanning 512 MB. Bytes: src read once and
 * the (keepdim) result written once. */
#include <stdio.h>

#include "bench.h"

static const int64_t outer[][2] = {{64, 1024}, {8, 4096}};  /* the first two dims */
#define N_SHAPES (sizeof(outer) / sizeof(outer[0]))
static const kp_reduce_op ops[] = {KP_REDUCE_SUM, KP_REDUCE_MAX};
static const char *const op_names[] = {"sum", "max"};
#define N_OPS (sizeof(ops) / sizeof(ops[0]))
#define RANK 3

struct rcase {
    size_t op, shape;
    int dim;
    kp_dtype dtype;
};

/* Case i: op-major, then shape, dim, dtype. */
static struct rcase locate(size_t i)
{
    struct rcase c;
    c.dtype = float_dtypes[i % N_FLOAT_DTYPES];
    i /= N_FLOAT_DTYPES;
    c.dim = (int)(i % RANK);
    i /= RANK;
    c.shape = i % N_SHAPES;
    c.op = i / N_SHAPES;
    return c;
}

static size_t reduce_count(void)
{
    return N_OPS * N_SHAPES * RANK * N_FLOAT_DTYPES;
}

static void reduce_describe(size_t i, struct bench_entry *e)
{
    const struct rcase c = locate(i);
    e->op = op_names[c.op];
    e->dtype = c.dtype;
    snprintf(e->variant, sizeof(e->variant), "dim%d of %lldx%lldxN", c.dim, (long long)outer[c.shape][0],
             (long long)outer[c.shape][1]);
}

struct rctx {
    kp_reduce_op op;
    int dim;
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], dst;
    int sets;
};

static kp_status run_reduce(void *ctx, int i)
{
    struct rctx *q = ctx;
    return kp_reduce(q->stream, q->op, &q->dst, &q->src[i % q->sets], &q->dim, 1);
}

static void reduce_run(struct bench *b, size_t i, struct result *r)
{
    const struct rcase c = locate(i);
    struct bench_entry e;
    reduce_describe(i, &e);
    const int64_t inner = (int64_t)(b->opt->elements / (uint64_t)(outer[c.shape][0] * outer[c.shape][1]));
    int64_t s[RANK] = {outer[c.shape][0], outer[c.shape][1], inner > 0 ? inner : 1}, d[RANK];
    for (int k = 0; k < RANK; k++)
        d[k] = k == c.dim ? 1 : s[k];
    const uint64_t es = kp_dtype_size(c.dtype), n = (uint64_t)(s[0] * s[1] * s[2]);
    const uint64_t out_n = (uint64_t)(d[0] * d[1] * d[2]);
    if (!result_begin(b, &e, n, (n + out_n) * es, r))
        return;

    struct rctx q = {ops[c.op], c.dim, b->stream, {{0}}, {0}, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *db = NULL;
    kp_status st = alloc_rotation(b, rotation_copies(b, n * es), (size_t)(n * es), fill_random, c.dtype,
                                  srcs, NULL, &q.sets);
    for (int k = 0; st == KP_OK && k < q.sets; k++)
        st = view_contiguous(srcs[k], c.dtype, RANK, s, &q.src[k]);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(out_n * es), &db);
    if (st == KP_OK)
        st = view_contiguous(db, c.dtype, RANK, d, &q.dst);
    r->sets = q.sets;
    time_case(b, st, run_reduce, &q, r);
    destroy_rotation(srcs);
    kp_buffer_destroy(&db);
}

const struct bench_table bench_reduce_table = {reduce_count, reduce_describe, reduce_run};
