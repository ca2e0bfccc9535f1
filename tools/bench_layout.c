/* kp-bench cases of permuted copies (kp_copy from a permuted view into a
 * contiguous dst), sized by --elements: a 3-d [B, S, C] -> [B, C, S]
 * (channels first), attention's split heads [B, S, H, D] -> [B, H, S, D]
 * (transpose(1, 2)), and images NCHW -> NHWC. The source rotates through
 * copies spanning 512 MB. The variant names the free dim by its letter in
 * capitals (8xSx1024); the elements column gives its size. Bytes: src read
 * and dst written once. */
#include <stdio.h>

#include "bench.h"

struct pcase {
    const char *name;
    int rank;
    int64_t shape[4];   /* src's; a 0 is what --elements leaves for it */
    int perm[4];        /* dst dim k is src dim perm[k] */
};

static const struct pcase pcases[] = {
    {"bsc>bcs", 3, {8, 0, 1024}, {0, 2, 1}},
    {"bshd>bhsd", 4, {8, 0, 32, 128}, {0, 2, 1, 3}},
    {"nchw>nhwc", 4, {0, 256, 64, 64}, {0, 2, 3, 1}},
};
#define N_PCASES (sizeof(pcases) / sizeof(pcases[0]))

/* src's shape for n elements: the 0 becomes what fills n (at least 1). */
static void src_shape(const struct pcase *c, uint64_t n, int64_t shape[4])
{
    int64_t fixed = 1;
    for (int k = 0; k < c->rank; k++)
        fixed *= c->shape[k] ? c->shape[k] : 1;
    for (int k = 0; k < c->rank; k++)
        shape[k] = c->shape[k] ? c->shape[k] : ((int64_t)n / fixed > 0 ? (int64_t)n / fixed : 1);
}

static size_t layout_count(void)
{
    return N_PCASES * N_FLOAT_DTYPES;
}

static void layout_describe(size_t i, struct bench_entry *e)
{
    const struct pcase *c = &pcases[i / N_FLOAT_DTYPES];
    e->op = "permute";
    e->dtype = float_dtypes[i % N_FLOAT_DTYPES];
    int len = snprintf(e->variant, sizeof(e->variant), "%s ", c->name);
    for (int k = 0; k < c->rank && len > 0 && (size_t)len < sizeof(e->variant); k++)
        len += c->shape[k]  /* the dim --elements sizes: its letter, in capitals */
                   ? snprintf(e->variant + len, sizeof(e->variant) - (size_t)len, "%s%lld", k ? "x" : "",
                              (long long)c->shape[k])
                   : snprintf(e->variant + len, sizeof(e->variant) - (size_t)len, "%s%c", k ? "x" : "",
                              c->name[k] - 'a' + 'A');
}

struct pctx {
    kp_stream *stream;
    kp_tensor src[MAX_ROTATION], dst;
    int sets;
};

static kp_status run_permute(void *ctx, int i)
{
    struct pctx *q = ctx;
    return kp_copy(q->stream, &q->dst, &q->src[i % q->sets]);
}

static void layout_run(struct bench *b, size_t i, struct result *r)
{
    const struct pcase *c = &pcases[i / N_FLOAT_DTYPES];
    struct bench_entry e;
    layout_describe(i, &e);
    int64_t s[4], d[4];
    src_shape(c, b->opt->elements, s);
    uint64_t n = 1;
    for (int k = 0; k < c->rank; k++) {
        d[k] = s[c->perm[k]];
        n *= (uint64_t)s[k];
    }
    const uint64_t bytes = n * kp_dtype_size(e.dtype);
    if (!result_begin(b, &e, n, 2 * bytes, r))
        return;

    struct pctx q = {b->stream, {{0}}, {0}, 0};
    kp_buffer *srcs[MAX_ROTATION] = {NULL}, *db = NULL;
    kp_status st = alloc_rotation(b, rotation_copies(b, bytes), (size_t)bytes, fill_random, e.dtype, srcs,
                                  NULL, &q.sets);
    for (int k = 0; st == KP_OK && k < q.sets; k++) {
        kp_tensor t;
        st = view_contiguous(srcs[k], e.dtype, c->rank, s, &t);
        q.src[k] = t;  /* the permuted view: dst's dim j walks src's dim perm[j] */
        for (int j = 0; j < c->rank; j++) {
            q.src[k].layout.shape[j] = t.layout.shape[c->perm[j]];
            q.src[k].layout.strides[j] = t.layout.strides[c->perm[j]];
        }
    }
    if (st == KP_OK)
        st = kp_buffer_alloc(b->dev, (size_t)bytes, &db);
    if (st == KP_OK)
        st = view_contiguous(db, e.dtype, c->rank, d, &q.dst);
    r->sets = q.sets;
    time_case(b, st, run_permute, &q, r);
    destroy_rotation(srcs);
    kp_buffer_destroy(&db);
}

const struct bench_table bench_layout_table = {layout_count, layout_describe, layout_run};
