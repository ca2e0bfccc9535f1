/* kp-bench cases of the quantized module, on the shapes of an 8B-class
 * model (hidden 4096, FFN 14336, vocabulary 128256), whatever --elements
 * says: the point is the bandwidth of real layer sizes.
 *
 * Keeping the quantized side out of the GPU's cache: one weight matrix is
 * 19-67 MB, about the size of an H100's 50 MB L2, so timing the same one
 * run after run would partly read it from L2. Each case therefore rotates
 * through copies of the side it reads (the weights; quantize's f32 source)
 * totalling at least ROTATE_BYTES, and get_rows through sets of ids naming
 * disjoint rows, so every timed run reads memory no recent run touched. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAX_COPIES MAX_ROTATION
#define EACH_FORMAT ((kp_qformat)0)  /* in a row: one case per format (0 is GGUF's f32) */

enum qkind { QMATVEC, QMATMUL, QMOE, DEQUANTIZE, QUANTIZE, GET_ROWS };
/* In a row: one case per format of the mat-mat's list (prompt-batch sizes
 * are compute-bound, so fewer formats than the mat-vec's every one). */
#define MM_FORMATS ((kp_qformat)-1)
static const kp_qformat mm_formats[] = {KP_QFORMAT_Q4_0, KP_QFORMAT_Q8_0, KP_QFORMAT_Q4_K,
                                        KP_QFORMAT_Q6_K};
#define N_MM_FORMATS (sizeof(mm_formats) / sizeof(mm_formats[0]))

/* One row of the table; a row of EACH_FORMAT is one case per format, in
 * kp_qformat_at's order. */
struct qcase {
    enum qkind kind;
    const char *op;           /* the name --ops selects */
    kp_qformat format;
    int64_t rows, cols;       /* the quantized matrix */
    int64_t n;                /* qmatvec, qmatmul: batch; qmoe: experts; get_rows: ids */
    kp_dtype dtype;           /* the float side: x and dst, dst, or src */
    int64_t k;                /* qmoe: experts per token (rows, cols: an expert's) */
    int64_t tokens;           /* qmoe */
};

static const struct qcase qcases[] = {
    {QMATVEC, "qmatvec", EACH_FORMAT, 4096, 14336, 1, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", EACH_FORMAT, 4096, 14336, 8, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", EACH_FORMAT, 14336, 4096, 1, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", EACH_FORMAT, 14336, 4096, 8, KP_DTYPE_F32},
    /* more of the mat-vec's batch range: 2 (two sequences, or a token and
     * its draft) for every format, 4 for the mat-mat's formats */
    {QMATVEC, "qmatvec", EACH_FORMAT, 4096, 14336, 2, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", EACH_FORMAT, 14336, 4096, 2, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", MM_FORMATS, 4096, 14336, 4, KP_DTYPE_F32},
    {QMATVEC, "qmatvec", MM_FORMATS, 14336, 4096, 4, KP_DTYPE_F32},
    /* batches around the mat-vec/mat-mat crossover and the tile choice
     * (runs_matvec, launch_matmul in src/ops/quantized_products.c) */
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 8, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 9, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 12, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 16, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 24, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 32, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 64, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 128, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 512, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 4096, 4096, 2048, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 8, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 9, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 12, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 16, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 24, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 32, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 64, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 128, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 512, KP_DTYPE_BF16},
    {QMATMUL, "qmatmul", MM_FORMATS, 14336, 4096, 2048, KP_DTYPE_BF16},
    /* a Mixtral-style FFN up projection, 2 of 8 experts a token: generation
     * (one token), a few tokens, a prompt */
    {QMOE, "qmoe", MM_FORMATS, 14336, 4096, 8, KP_DTYPE_F32, 2, 1},
    {QMOE, "qmoe", MM_FORMATS, 14336, 4096, 8, KP_DTYPE_BF16, 2, 16},
    {QMOE, "qmoe", MM_FORMATS, 14336, 4096, 8, KP_DTYPE_BF16, 2, 512},
    {DEQUANTIZE, "dequantize", EACH_FORMAT, 4096, 14336, 0, KP_DTYPE_F16},
    {DEQUANTIZE, "dequantize", MM_FORMATS, 4096, 4096, 0, KP_DTYPE_BF16},
    {DEQUANTIZE, "dequantize", MM_FORMATS, 14336, 4096, 0, KP_DTYPE_BF16},
    {DEQUANTIZE, "dequantize", EACH_FORMAT, 4096, 14336, 0, KP_DTYPE_F32},
    {QUANTIZE, "quantize", KP_QFORMAT_Q8_0, 4096, 14336, 0, KP_DTYPE_F32},
    {QUANTIZE, "quantize", KP_QFORMAT_Q4_0, 4096, 14336, 0, KP_DTYPE_F32},
    {GET_ROWS, "get_rows", KP_QFORMAT_Q4_K, 128256, 4096, 512, KP_DTYPE_F32},
};
#define N_QCASES (sizeof(qcases) / sizeof(qcases[0]))

static size_t row_cases(const struct qcase *c)
{
    return c->format == EACH_FORMAT ? kp_qformat_count() : c->format == MM_FORMATS ? N_MM_FORMATS : 1;
}

static size_t quantized_count(void)
{
    size_t n = 0;
    for (size_t r = 0; r < N_QCASES; r++)
        n += row_cases(&qcases[r]);
    return n;
}

/* Case i: its row and format. */
static const struct qcase *locate(size_t i, kp_qformat *format)
{
    for (size_t r = 0; r < N_QCASES; r++) {
        size_t k = row_cases(&qcases[r]);
        if (i < k) {
            *format = qcases[r].format == EACH_FORMAT ? kp_qformat_at(i)
                      : qcases[r].format == MM_FORMATS ? mm_formats[i]
                                                        : qcases[r].format;
            return &qcases[r];
        }
        i -= k;
    }
    return NULL;
}

static void describe_case(const struct qcase *c, const char *fname, struct bench_entry *e)
{
    long long rows = (long long)c->rows, cols = (long long)c->cols, n = (long long)c->n;
    e->op = c->op;
    e->dtype = c->dtype;
    if (c->kind == QMATVEC || c->kind == QMATMUL)
        snprintf(e->variant, sizeof(e->variant), "%s %lldx%lld b%lld", fname, rows, cols, n);
    else if (c->kind == QMOE)
        snprintf(e->variant, sizeof(e->variant), "%s %lldx%lld %lld/%lld t%lld", fname, rows, cols,
                 (long long)c->k, n, (long long)c->tokens);
    else if (c->kind == GET_ROWS)
        snprintf(e->variant, sizeof(e->variant), "%s %lld of %lldx%lld", fname, n, rows, cols);
    else
        snprintf(e->variant, sizeof(e->variant), "%s %lldx%lld", fname, rows, cols);
}

static void quantized_describe(size_t i, struct bench_entry *e)
{
    kp_qformat format = EACH_FORMAT;
    const struct qcase *c = locate(i, &format);
    kp_qformat_info info = {"?", 0, 0, 0};
    kp_qformat_get_info(format, &info);  /* formats come from the library's own list */
    describe_case(c, info.name, e);
}

/* ---- buffers */

/* Fills buf with random bytes that have bit 6 clear. Whatever a format's
 * layout, every f16 (or Q8_K's f32) scale then has the top bit of its
 * exponent clear: finite and below 2 in magnitude, so no NaN or Inf in the
 * results (it would not change the timing, but keeps outputs sane). Any
 * dtype: a fill_fn, for alloc_rotation. */
static kp_status fill_blocks(struct bench *b, kp_buffer *buf, kp_dtype dtype)
{
    (void)dtype;
    unsigned char *p = b->chunk;
    for (size_t i = 0; i + 8 <= b->chunk_bytes; i += 8) {
        uint64_t r = next_random(b) & 0xBFBFBFBFBFBFBFBFull;
        memcpy(p + i, &r, 8);
    }
    return upload_chunk(b, buf);
}

static kp_tensor matrix(kp_buffer *buf, kp_dtype dtype, int64_t rows, int64_t cols)
{
    kp_tensor t = {buf, dtype, {0}};
    int64_t shape[2] = {rows, cols};
    kp_layout_contiguous(&t.layout, 2, shape);
    return t;
}

/* ids for get_rows: a shuffle of every row of the table, so id set s
 * (elements s * n ..) names rows no other set does. */
static kp_status upload_ids(struct bench *b, kp_buffer *buf, int64_t rows)
{
    uint32_t *ids = malloc((size_t)rows * sizeof(*ids));
    if (!ids)
        return KP_ERR_OUT_OF_MEMORY;
    for (int64_t r = 0; r < rows; r++)
        ids[r] = (uint32_t)r;
    for (int64_t r = rows - 1; r > 0; r--) {  /* Fisher-Yates */
        int64_t j = (int64_t)(next_random(b) % (uint64_t)(r + 1));
        uint32_t t = ids[r];
        ids[r] = ids[j];
        ids[j] = t;
    }
    kp_status st = kp_memcpy_h2d(b->stream, buf, 0, ids, (size_t)rows * sizeof(*ids));
    if (st == KP_OK)
        st = kp_stream_synchronize(b->stream);
    free(ids);
    return st;
}

/* ids for qmoe: each token's k experts distinct, spread evenly over all of
 * them (token t takes experts t * k .. t * k + k - 1, modulo n), as a
 * router balanced by its training would. */
static kp_status upload_expert_ids(struct bench *b, kp_buffer *buf, int64_t tokens, int64_t k,
                                   int64_t n)
{
    uint32_t *ids = malloc((size_t)(tokens * k) * sizeof(*ids));
    if (!ids)
        return KP_ERR_OUT_OF_MEMORY;
    for (int64_t i = 0; i < tokens * k; i++)
        ids[i] = (uint32_t)(i % n);
    kp_status st = kp_memcpy_h2d(b->stream, buf, 0, ids, (size_t)(tokens * k) * sizeof(*ids));
    if (st == KP_OK)
        st = kp_stream_synchronize(b->stream);
    free(ids);
    return st;
}

/* ---- timing */

struct qctx {
    const struct qcase *c;
    kp_stream *stream;
    int sets, next;
    kp_qmatrix q[MAX_COPIES];      /* the quantized side; rotates for qmatvec, dequantize */
    kp_tensor f[MAX_COPIES];       /* quantize's source; rotates */
    kp_tensor x, dst, ids;
    kp_buffer *workspace;
};

static kp_status run_qcase(void *ctx, int i)
{
    /* Rotates by its own count: time_runs numbers the timed runs from 0
     * again after the warm-ups, so `i` would reread the last warm-up's copy. */
    (void)i;
    struct qctx *q = ctx;
    int k = q->next++ % q->sets;
    switch (q->c->kind) {
    case QMATVEC:
        return kp_quantized_matvec(q->stream, &q->dst, &q->q[k], &q->x, q->workspace);
    case QMATMUL:
        return kp_quantized_matmul(q->stream, &q->dst, &q->q[k], &q->x, q->workspace);
    case QMOE:
        return kp_quantized_moe(q->stream, &q->dst, &q->q[k], q->c->n, &q->ids, &q->x, q->workspace,
                                NULL);
    case DEQUANTIZE:
        return kp_dequantize(q->stream, &q->dst, &q->q[k]);
    case QUANTIZE:
        return kp_quantize(q->stream, &q->q[0], &q->f[k]);
    case GET_ROWS: {
        kp_tensor ids = q->ids;
        ids.layout.offset = (int64_t)k * q->c->n;
        return kp_quantized_get_rows(q->stream, &q->dst, &q->q[0], &ids, NULL);
    }
    }
    return KP_ERR_INTERNAL;
}

static void quantized_run(struct bench *b, size_t i, struct result *r)
{
    kp_qformat format = EACH_FORMAT;
    const struct qcase *c = locate(i, &format);
    kp_qformat_info info;
    struct bench_entry e;
    memset(r, 0, sizeof(*r));
    kp_status st = kp_qformat_get_info(format, &info);
    if (st != KP_OK) {
        r->op = c->op;
        result_fail(r, "format", st);
        return;
    }
    describe_case(c, info.name, &e);
    r->op = e.op;
    memcpy(r->variant, e.variant, sizeof(r->variant));
    r->format = info.name;
    r->dtype = r->out_dtype = c->dtype;

    const uint64_t rows = (uint64_t)c->rows, cols = (uint64_t)c->cols, n = (uint64_t)c->n;
    const uint64_t row_bytes = cols / info.block_elems * info.block_bytes, es = kp_dtype_size(c->dtype);
    const uint64_t q_bytes = rows * row_bytes;  /* the whole quantized matrix */
    uint64_t rotated = 0;                       /* bytes of one copy of the rotating side */
    switch (c->kind) {
    case QMATVEC:  /* the weights; x and dst (and x's Q8_1 workspace) are small beside them */
        r->elements = rows * cols;
        r->bytes = rotated = q_bytes;
        r->total_bytes = q_bytes + n * (cols + rows) * es;
        break;
    case QMATMUL:  /* shown as TFLOP/s; bytes: the weights, x and dst */
        r->elements = rows * cols;
        rotated = q_bytes;
        r->bytes = q_bytes + n * (cols + rows) * es;
        r->flops = 2.0 * (double)n * (double)rows * (double)cols;
        break;
    case QMOE: {  /* the experts' weights read (each once at best); the stack of all n rotates */
        uint64_t pairs = (uint64_t)(c->tokens * c->k), used = pairs < n ? pairs : n;
        r->elements = used * rows * cols;
        rotated = n * q_bytes;
        r->bytes = used * q_bytes;
        r->total_bytes = r->bytes + pairs * rows * es + (uint64_t)c->tokens * cols * es;
        if (c->tokens > 1)
            r->flops = 2.0 * (double)pairs * (double)rows * (double)cols;
        break;
    }
    case DEQUANTIZE:
        r->elements = rows * cols;
        rotated = q_bytes;
        r->bytes = q_bytes + rows * cols * es;
        break;
    case QUANTIZE:
        r->elements = rows * cols;
        rotated = rows * cols * es;
        r->bytes = rotated + q_bytes;
        break;
    case GET_ROWS:  /* n rows read, n u32 ids, n rows of floats written */
        r->elements = n * cols;
        r->bytes = n * row_bytes + n * 4 + n * cols * es;
        break;
    }
    st = measure_copy(b, r->bytes, &r->copy_ms);
    if (st != KP_OK) {
        result_fail(r, "copy reference", st);
        return;
    }

    struct qctx *q = calloc(1, sizeof(*q));
    kp_buffer *copies[MAX_COPIES] = {NULL}, *single = NULL, *x = NULL, *dst = NULL, *ids = NULL,
              *workspace = NULL;
    if (!q) {
        result_fail(r, "host memory", KP_ERR_OUT_OF_MEMORY);
        return;
    }
    q->c = c;
    q->stream = b->stream;
    const char *what = "allocating";
    switch (c->kind) {
    case QMATVEC:
    case QMATMUL:
    case DEQUANTIZE:
        what = "allocating and filling the weight copies";
        st = alloc_rotation(b, rotation_copies(b, rotated), q_bytes, fill_blocks, KP_DTYPE_U8, copies, NULL,
                            &q->sets);
        for (int k = 0; st == KP_OK && k < q->sets; k++)
            st = kp_qmatrix_packed(&q->q[k], copies[k], 0, format, c->rows, c->cols);
        if (st == KP_OK && c->kind != DEQUANTIZE) {
            size_t ws = 0;
            what = "allocating x, dst and the workspace";
            st = kp_quantized_matmul_workspace_size(c->n, c->cols, &ws);
            if (st == KP_OK)
                st = kp_buffer_alloc(b->dev, (size_t)(n * cols * es), &x);
            if (st == KP_OK)
                st = fill_random(b, x, c->dtype);
            if (st == KP_OK)
                st = kp_buffer_alloc(b->dev, (size_t)(n * rows * es), &dst);
            if (st == KP_OK)
                st = kp_buffer_alloc(b->dev, ws, &workspace);
            q->x = matrix(x, c->dtype, c->n, c->cols);
            q->dst = matrix(dst, c->dtype, c->n, c->rows);
            q->workspace = workspace;
        } else if (st == KP_OK) {
            what = "allocating dst";
            st = kp_buffer_alloc(b->dev, (size_t)(rows * cols * es), &dst);
            q->dst = matrix(dst, c->dtype, c->rows, c->cols);
        }
        break;
    case QUANTIZE:
        what = "allocating and filling the source copies";
        st = alloc_rotation(b, rotation_copies(b, rotated), (size_t)rotated, fill_random, c->dtype, copies,
                            NULL, &q->sets);
        for (int k = 0; k < q->sets; k++)
            q->f[k] = matrix(copies[k], c->dtype, c->rows, c->cols);
        if (st == KP_OK) {
            what = "allocating dst";
            st = kp_buffer_alloc(b->dev, (size_t)q_bytes, &single);
        }
        if (st == KP_OK)
            st = kp_qmatrix_packed(&q->q[0], single, 0, format, c->rows, c->cols);
        break;
    case QMOE: {
        what = "allocating and filling the expert copies";
        st = alloc_rotation(b, rotation_copies(b, rotated), rotated, fill_blocks, KP_DTYPE_U8, copies,
                            NULL, &q->sets);
        for (int k = 0; st == KP_OK && k < q->sets; k++)
            st = kp_qmatrix_packed(&q->q[k], copies[k], 0, format, c->rows * c->n, c->cols);
        size_t ws = 0;
        if (st == KP_OK)
            what = "allocating ids, x, dst and the workspace";
        if (st == KP_OK)
            st = kp_quantized_moe_workspace_size(c->tokens, c->k, c->n, c->cols, &ws);
        if (st == KP_OK)
            st = kp_buffer_alloc(b->dev, (size_t)(c->tokens * c->k) * 4, &ids);
        if (st == KP_OK)
            st = upload_expert_ids(b, ids, c->tokens, c->k, c->n);
        if (st == KP_OK)
            st = kp_buffer_alloc(b->dev, (size_t)((uint64_t)c->tokens * cols * es), &x);
        if (st == KP_OK)
            st = fill_random(b, x, c->dtype);
        if (st == KP_OK)
            st = kp_buffer_alloc(b->dev, (size_t)((uint64_t)(c->tokens * c->k) * rows * es), &dst);
        if (st == KP_OK)
            st = kp_buffer_alloc(b->dev, ws, &workspace);
        int64_t ids_shape[2] = {c->tokens, c->k}, dst_shape[3] = {c->tokens, c->k, c->rows};
        q->ids = (kp_tensor){ids, KP_DTYPE_U32, {0}};
        kp_layout_contiguous(&q->ids.layout, 2, ids_shape);
        q->x = matrix(x, c->dtype, c->tokens, c->cols);
        q->dst = (kp_tensor){dst, c->dtype, {0}};
        kp_layout_contiguous(&q->dst.layout, 3, dst_shape);
        q->workspace = workspace;
        break;
    }
    case GET_ROWS: {
        /* One table (it is large; the rows read are what must be cold) and
         * rows / n sets of ids, no more than the runs of a measurement. */
        uint64_t id_sets = rows / n, runs = (uint64_t)b->opt->warmup + (uint64_t)b->opt->iters;
        q->sets = (int)(id_sets < runs ? id_sets : runs);
        what = "allocating and filling the table";
        st = kp_buffer_alloc(b->dev, (size_t)q_bytes, &single);
        if (st == KP_OK)
            st = fill_blocks(b, single, KP_DTYPE_U8);
        if (st == KP_OK)
            st = kp_qmatrix_packed(&q->q[0], single, 0, format, c->rows, c->cols);
        if (st == KP_OK) {
            what = "allocating ids and dst";
            st = kp_buffer_alloc(b->dev, (size_t)rows * 4, &ids);
        }
        if (st == KP_OK)
            st = upload_ids(b, ids, c->rows);
        if (st == KP_OK)
            st = kp_buffer_alloc(b->dev, (size_t)(n * cols * es), &dst);
        int64_t len = c->n;
        q->ids = (kp_tensor){ids, KP_DTYPE_U32, {0}};
        kp_layout_contiguous(&q->ids.layout, 1, &len);
        q->dst = matrix(dst, c->dtype, c->n, c->cols);
        break;
    }
    }
    if (st == KP_OK && q->sets < 1)
        st = KP_ERR_INTERNAL;
    if (st == KP_OK) {
        what = NULL;
        st = time_runs(b, run_qcase, q, &r->ms);
    }
    if (st != KP_OK)
        result_fail(r, what, st);
    r->sets = q->sets;
    for (int k = 0; k < MAX_COPIES; k++)
        kp_buffer_destroy(&copies[k]);
    kp_buffer_destroy(&single);
    kp_buffer_destroy(&x);
    kp_buffer_destroy(&dst);
    kp_buffer_destroy(&ids);
    kp_buffer_destroy(&workspace);
    free(q);
}

const struct bench_table bench_quantized_table = {quantized_count, quantized_describe, quantized_run};
