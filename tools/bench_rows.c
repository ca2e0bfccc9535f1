/* kp-bench cases of the row ops over the widths real models use (a
 * vocabulary's logits: 32000, 128256, 151936; hidden sizes 5120; an odd
 * 1000), with few rows (8: one decoding step of a small batch) and many
 * (about 2^25 elements), whatever --elements says. The source rotates
 * through copies spanning 512 MB, as the quantized cases' weights do, so a
 * few rows are read from memory, not from the cache a previous run filled.
 * Bytes: src read once, dst written once (weight and bias, one row each,
 * are not counted). */
#include <stdio.h>
#include <string.h>

#include "bench.h"

enum row_op { SOFTMAX, LOG_SOFTMAX, RMSNORM, LAYERNORM };
static const char *const op_names[] = {"softmax", "log_softmax", "rmsnorm", "layernorm"};
#define N_OPS 4

static const int64_t widths[] = {1000, 5120, 32000, 128256, 151936};
#define N_WIDTHS (sizeof(widths) / sizeof(widths[0]))
#define FEW_ROWS 8
#define MANY_ELEMENTS (1ll << 25)
#define N_ROW_COUNTS 2  /* few, many */

struct rcase {
    enum row_op op;
    int64_t rows, width;
    kp_dtype dtype;
};

/* Case i: op-major, then width, row count, dtype. */
static struct rcase locate(size_t i)
{
    struct rcase c;
    c.dtype = float_dtypes[i % N_FLOAT_DTYPES];
    i /= N_FLOAT_DTYPES;
    const bool many = i % N_ROW_COUNTS;
    i /= N_ROW_COUNTS;
    c.width = widths[i % N_WIDTHS];
    c.op = (enum row_op)(i / N_WIDTHS);
    c.rows = many ? MANY_ELEMENTS / c.width : FEW_ROWS;
    return c;
}

static size_t rows_count(void)
{
    return N_OPS * N_WIDTHS * N_ROW_COUNTS * N_FLOAT_DTYPES;
}

static void rows_describe(size_t i, struct bench_entry *e)
{
    const struct rcase c = locate(i);
    e->op = op_names[c.op];
    e->dtype = c.dtype;
    snprintf(e->variant, sizeof(e->variant), "w%lld x%lld", (long long)c.width, (long long)c.rows);
}

struct rctx {
    const struct rcase *c;
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], dst, weight, bias;
    int sets;
};

static kp_status run_row_op(void *ctx, int i)
{
    struct rctx *q = ctx;
    const kp_tensor *src = &q->src[i % q->sets];
    switch (q->c->op) {
    case SOFTMAX: return kp_softmax(q->stream, &q->dst, src);
    case LOG_SOFTMAX: return kp_log_softmax(q->stream, &q->dst, src);
    case RMSNORM: return kp_rmsnorm(q->stream, &q->dst, src, &q->weight, 1e-5f);
    default: return kp_layernorm(q->stream, &q->dst, src, &q->weight, &q->bias, 1e-5f);
    }
}

/* A contiguous tensor of `rank` dims over `buf`. */
static kp_status view(kp_buffer *buf, kp_dtype dtype, int rank, const int64_t *shape, kp_tensor *t)
{
    *t = (kp_tensor){buf, dtype, {0}};
    return kp_layout_contiguous(&t->layout, rank, shape);
}

/* One row of random values (a norm's weight or bias) in a new buffer. */
static kp_status random_row(struct bench *b, const struct rcase *c, kp_buffer **buf, kp_tensor *t)
{
    kp_status st = kp_buffer_alloc(b->dev, (size_t)c->width * kp_dtype_size(c->dtype), buf);
    if (st == KP_OK)
        st = fill_random(b, *buf, c->dtype);
    return st == KP_OK ? view(*buf, c->dtype, 1, &c->width, t) : st;
}

static void rows_run(struct bench *b, size_t i, struct result *r)
{
    const struct rcase c = locate(i);
    struct bench_entry e;
    rows_describe(i, &e);
    memset(r, 0, sizeof(*r));
    r->op = e.op;
    memcpy(r->variant, e.variant, sizeof(r->variant));
    r->dtype = r->out_dtype = c.dtype;
    const uint64_t n = (uint64_t)(c.rows * c.width), bytes = n * kp_dtype_size(c.dtype);
    r->elements = n;
    r->bytes = 2 * bytes;
    kp_status st = measure_copy(b, r->bytes, &r->copy_ms);
    if (st != KP_OK) {
        result_fail(r, "copy reference", st);
        return;
    }

    struct rctx q = {&c, b->stream, {{0}}, {0}, {0}, {0}, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *db = NULL, *wb = NULL, *bb = NULL;
    const int64_t shape[2] = {c.rows, c.width};
    st = alloc_rotation(b, rotation_copies(b, bytes), (size_t)bytes, fill_random, c.dtype, srcs, NULL,
                        &q.sets);
    for (int k = 0; st == KP_OK && k < q.sets; k++)
        st = view(srcs[k], c.dtype, 2, shape, &q.src[k]);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)bytes, &db);
    if (st == KP_OK)
        st = view(db, c.dtype, 2, shape, &q.dst);
    if (st == KP_OK)
        st = random_row(b, &c, &wb, &q.weight);
    if (st == KP_OK)
        st = random_row(b, &c, &bb, &q.bias);
    r->sets = q.sets;
    time_case(b, st, run_row_op, &q, r);
    destroy_rotation(srcs);
    kp_buffer_destroy(&db);
    kp_buffer_destroy(&wb);
    kp_buffer_destroy(&bb);
}

const struct bench_table bench_rows_table = {rows_count, rows_describe, rows_run};
