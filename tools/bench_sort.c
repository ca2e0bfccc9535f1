/* kp-bench cases of argsort (ascending, stable, u32 indices) over short rows
 * (64, 1024: a top-k over experts or a block) and vocabulary rows (32000,
 * 128256, 151936: sorting a step's logits for sampling), with 1 and 8 rows
 * (one decoding step) and many (about 2^24 elements), whatever --elements
 * says. The source rotates through copies spanning 512 MB, so a few rows are
 * read from memory, not from the cache a previous run filled. Bytes: src
 * read once and the u32 indices written once (the radix passes' workspace
 * traffic is the op's own cost, not counted). */
#include <stdio.h>

#include "bench.h"

static const int64_t widths[] = {64, 1024, 32000, 128256, 151936};
#define N_WIDTHS (sizeof(widths) / sizeof(widths[0]))
static const int64_t row_counts[] = {1, 8, 0};  /* 0: many */
#define N_ROW_COUNTS (sizeof(row_counts) / sizeof(row_counts[0]))
#define MANY_ELEMENTS (1ll << 24)

struct scase {
    int64_t rows, width;
    kp_dtype dtype;
};

/* Case i: width-major, then row count, dtype. */
static struct scase locate(size_t i)
{
    struct scase c;
    c.dtype = float_dtypes[i % N_FLOAT_DTYPES];
    i /= N_FLOAT_DTYPES;
    const int64_t rows = row_counts[i % N_ROW_COUNTS];
    c.width = widths[i / N_ROW_COUNTS];
    c.rows = rows ? rows : MANY_ELEMENTS / c.width;
    return c;
}

static size_t sort_count(void)
{
    return N_WIDTHS * N_ROW_COUNTS * N_FLOAT_DTYPES;
}

static void sort_describe(size_t i, struct bench_entry *e)
{
    const struct scase c = locate(i);
    e->op = "argsort";
    e->dtype = c.dtype;
    snprintf(e->variant, sizeof(e->variant), "w%lld x%lld", (long long)c.width, (long long)c.rows);
}

struct sctx {
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], dst;
    kp_buffer *workspace;
    int sets;
};

static kp_status run_argsort(void *ctx, int i)
{
    struct sctx *q = ctx;
    return kp_argsort(q->stream, &q->dst, &q->src[i % q->sets], false, q->workspace);
}

static void sort_run(struct bench *b, size_t i, struct result *r)
{
    const struct scase c = locate(i);
    struct bench_entry e;
    sort_describe(i, &e);
    const uint64_t n = (uint64_t)(c.rows * c.width), bytes = n * kp_dtype_size(c.dtype);
    if (!result_begin(b, &e, n, bytes + 4 * n, r))
        return;
    r->out_dtype = KP_DTYPE_U32;

    struct sctx q = {b->stream, {{0}}, {0}, NULL, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *db = NULL;
    const int64_t shape[2] = {c.rows, c.width};
    size_t ws = 0;
    kp_status st = alloc_rotation(b, rotation_copies(b, bytes), (size_t)bytes, fill_random, c.dtype,
                                  srcs, NULL, &q.sets);
    for (int k = 0; st == KP_OK && k < q.sets; k++)
        st = view_contiguous(srcs[k], c.dtype, 2, shape, &q.src[k]);
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(4 * n), &db);
    if (st == KP_OK)
        st = view_contiguous(db, KP_DTYPE_U32, 2, shape, &q.dst);
    if (st == KP_OK)
        st = kp_argsort_workspace_size(&q.src[0], &ws);
    if (st == KP_OK && ws > 0)
        st = kp_buffer_alloc(b->dev, ws, &q.workspace);
    r->sets = q.sets;
    time_case(b, st, run_argsort, &q, r);
    destroy_rotation(srcs);
    kp_buffer_destroy(&db);
    kp_buffer_destroy(&q.workspace);
}

const struct bench_table bench_sort_table = {sort_count, sort_describe, sort_run};
