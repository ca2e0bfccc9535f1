/* kp-bench cases of gather, scatter, scatter_add and index_add on the
 * shapes models use them at, whatever --elements says: embedding-like rows
 * (4096 rows of a 32000 x 4096 table, the ids of a row broadcast along it
 * with stride 0, as torch's expand gives), picks along the last dim of
 * [tokens, vocab] logits (1024 of 32000 per row), and MoE's combine (8192
 * rows of 4096, two experts' outputs per token, added into 4096 tokens).
 *
 * Ids are u32, spread: consecutive ids step 7919 apart modulo the range (an
 * odd prime not dividing 32000), from a random start per row, so a row
 * repeats none until the range is used up (scatter stays well-defined) and
 * 8192 ids over 4096 tokens name each exactly twice. The side read (src and
 * its ids) rotates through copies spanning 512 MB; dst is one buffer
 * (scatter_add and index_add keep adding into it; values stay small).
 * Bytes: ids read once; gather: the picked src elements read once and dst
 * written; scatter: src read and the named dst elements written; the adds:
 * src read and the named dst elements read and written once each. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

enum iop { GATHER, SCATTER, SCATTER_ADD, INDEX_ADD };
static const char *const op_names[] = {"gather", "scatter", "scatter_add", "index_add"};
#define ID_STEP 7919

struct icase {
    enum iop op;
    const char *variant;
    int dim;
    int64_t src[2], dst[2];  /* shapes */
    int64_t range;           /* ids are in [0, range): the size of the dim indexed */
    bool row_ids;            /* ids: one per row, broadcast along it (stride 0); index_add: rank 1 */
};

static const struct icase icases[] = {
    {GATHER, "rows 4096 of 32000x4096", 0, {32000, 4096}, {4096, 4096}, 32000, true},
    {GATHER, "dim1 1024 of 4096x32000", 1, {4096, 32000}, {4096, 1024}, 32000, false},
    {SCATTER, "rows 4096 to 32000x4096", 0, {4096, 4096}, {32000, 4096}, 32000, true},
    {SCATTER, "dim1 1024 to 4096x32000", 1, {4096, 1024}, {4096, 32000}, 32000, false},
    {SCATTER_ADD, "moe 8192 rows to 4096", 0, {8192, 4096}, {4096, 4096}, 4096, true},
    {SCATTER_ADD, "dim1 1024 to 4096x32000", 1, {4096, 1024}, {4096, 32000}, 32000, false},
    {INDEX_ADD, "moe 8192 rows to 4096", 0, {8192, 4096}, {4096, 4096}, 4096, true},
    {INDEX_ADD, "rows 4096 to 32000x4096", 0, {4096, 4096}, {32000, 4096}, 32000, true},
};
#define N_ICASES (sizeof(icases) / sizeof(icases[0]))

static size_t indexing_count(void)
{
    return N_ICASES * N_FLOAT_DTYPES;
}

static void indexing_describe(size_t i, struct bench_entry *e)
{
    const struct icase *c = &icases[i / N_FLOAT_DTYPES];
    e->op = op_names[c->op];
    e->dtype = float_dtypes[i % N_FLOAT_DTYPES];
    snprintf(e->variant, sizeof(e->variant), "%s", c->variant);
}

/* The ids' shape: dst's for gather, src's for the others (one per row of
 * it where row_ids); index_add's is rank 1. */
static void id_shape(const struct icase *c, int64_t shape[2])
{
    const int64_t *s = c->op == GATHER ? c->dst : c->src;
    shape[0] = s[0];
    shape[1] = s[1];
}

/* Elements each ids copy holds: one per row, or the ids' full shape. */
static int64_t id_count(const struct icase *c)
{
    int64_t shape[2];
    id_shape(c, shape);
    return c->row_ids ? shape[0] : shape[0] * shape[1];
}

struct ictx {
    const struct icase *c;
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], ids[MAX_ROTATION], dst;
    int sets;
};

static kp_status run_index_op(void *ctx, int i)
{
    struct ictx *q = ctx;
    const kp_tensor *src = &q->src[i % q->sets], *ids = &q->ids[i % q->sets];
    switch (q->c->op) {
    case GATHER: return kp_gather(q->stream, &q->dst, src, ids, q->c->dim, NULL);
    case SCATTER: return kp_scatter(q->stream, &q->dst, src, ids, q->c->dim, NULL);
    case SCATTER_ADD: return kp_scatter_add(q->stream, &q->dst, src, ids, q->c->dim, NULL);
    default: return kp_index_add(q->stream, &q->dst, src, ids, q->c->dim, NULL);
    }
}

/* The spread ids (see the top), rows of `per_row`. */
static uint32_t *make_ids(struct bench *b, const struct icase *c)
{
    int64_t shape[2];
    id_shape(c, shape);
    const int64_t rows = c->row_ids ? 1 : shape[0], per_row = c->row_ids ? shape[0] : shape[1];
    uint32_t *ids = malloc((size_t)(rows * per_row) * sizeof(*ids));
    for (int64_t r = 0; ids && r < rows; r++) {
        uint64_t at = next_random(b) % (uint64_t)c->range;
        for (int64_t k = 0; k < per_row; k++, at = (at + ID_STEP) % (uint64_t)c->range)
            ids[r * per_row + k] = (uint32_t)at;
    }
    return ids;
}

static uint64_t case_bytes(const struct icase *c, uint64_t es)
{
    const uint64_t ids = (uint64_t)id_count(c) * 4;
    const uint64_t moved = (uint64_t)(c->op == GATHER ? c->dst[0] * c->dst[1] : c->src[0] * c->src[1]);
    if (c->op == GATHER || c->op == SCATTER)
        return ids + 2 * moved * es;
    /* the adds: dst elements named, once each however often (all of the
     * dim's range when the ids cover it) */
    const int64_t along = c->src[c->dim] < c->range ? c->src[c->dim] : c->range;
    const uint64_t named = (uint64_t)(along * c->src[1 - c->dim]);
    return ids + moved * es + 2 * named * es;
}

static void indexing_run(struct bench *b, size_t i, struct result *r)
{
    const struct icase *c = &icases[i / N_FLOAT_DTYPES];
    struct bench_entry e;
    indexing_describe(i, &e);
    const kp_dtype dt = e.dtype;
    const uint64_t es = kp_dtype_size(dt);
    const uint64_t src_n = (uint64_t)(c->src[0] * c->src[1]), dst_n = (uint64_t)(c->dst[0] * c->dst[1]);
    if (!result_begin(b, &e, c->op == GATHER ? dst_n : src_n, case_bytes(c, es), r))
        return;

    struct ictx q = {c, b->stream, {{0}}, {{0}}, {0}, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *idb[MAX_ROTATION] = {NULL}, *db = NULL;
    const size_t id_bytes = (size_t)id_count(c) * 4;
    uint32_t *ids = make_ids(b, c);
    kp_status st = ids ? KP_OK : KP_ERR_OUT_OF_MEMORY;
    if (st == KP_OK)
        st = alloc_rotation(b, rotation_copies(b, src_n * es + id_bytes), (size_t)(src_n * es),
                            fill_random, dt, srcs, NULL, &q.sets);
    if (st == KP_OK)
        st = upload_copies(b, ids, id_bytes, q.sets, idb);
    free(ids);
    int64_t ishape[2];
    id_shape(c, ishape);
    for (int k = 0; st == KP_OK && k < q.sets; k++) {
        st = view_contiguous(srcs[k], dt, 2, c->src, &q.src[k]);
        if (st == KP_OK && c->op == INDEX_ADD) {
            st = view_contiguous(idb[k], KP_DTYPE_U32, 1, ishape, &q.ids[k]);
        } else if (st == KP_OK) {
            st = view_contiguous(idb[k], KP_DTYPE_U32, 2, ishape, &q.ids[k]);
            if (c->row_ids)  /* one id a row, broadcast along it */
                q.ids[k].layout.strides[0] = 1, q.ids[k].layout.strides[1] = 0;
        }
    }
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)(dst_n * es), &db);
    if (st == KP_OK && c->op != GATHER)  /* scatter and the adds update it in place */
        st = fill_random(b, db, dt);
    if (st == KP_OK)
        st = view_contiguous(db, dt, 2, c->dst, &q.dst);
    r->sets = q.sets;
    time_case(b, st, run_index_op, &q, r);
    destroy_rotation(srcs);
    destroy_rotation(idb);
    kp_buffer_destroy(&db);
}

const struct bench_table bench_indexing_table = {indexing_count, indexing_describe, indexing_run};
