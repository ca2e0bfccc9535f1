/* The quantized module on the GPU against the CPU reference of quant_ref.c
 * (itself checked against the gguf package): dequantize and get_rows bit
 * for bit for every format and f32/f16/bf16 destinations of any layout;
 * quantize byte for byte for the six writable formats from every source
 * dtype and layout; the mat-vec for batch 1..8 within a stated tolerance of
 * an f64 dot of the dequantized weights with the Q8_1-rounded activations.
 * Shapes: 1, 5, 7, 37 and 4097 rows; rows of 1 block and of 65 blocks (the
 * mat-vec also 3, 1031 rows; 3, 40, 96 and 300 blocks: several weight tiles
 * and a short last one); padded row strides and byte offsets; strided
 * activations and outputs, over padded or dense weights. Bytes outside
 * every output keep their poison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "operands.h"
#include "quant_ref.h"

#define POISON 0xA5

static const kp_dtype qfloats[] = {KP_DTYPE_F32, KP_DTYPE_F16, KP_DTYPE_BF16};
#define N_QFLOATS 3

static kp_qformat_info info_of(kp_qformat f)
{
    kp_qformat_info info;
    CK_OK(kp_qformat_get_info(f, &info));
    return info;
}

/* A quantized matrix with random blocks in a device buffer of exactly the
 * bytes it spans; rows start `pad` bytes apart beyond a row's bytes. */
struct qmat {
    struct gpu_buf buf;
    kp_qmatrix m;
    size_t row_bytes;
};

static void qmat_make(struct qmat *q, kp_qformat f, int64_t rows, int64_t cols, size_t offset,
                      size_t pad, int random)
{
    kp_qformat_info info = info_of(f);
    q->row_bytes = (size_t)(cols / info.block_elems) * info.block_bytes;
    size_t stride = q->row_bytes + pad;
    size_t bytes = offset + (rows ? (size_t)(rows - 1) * stride + q->row_bytes : 0);
    gpu_buf_alloc(&q->buf, bytes ? bytes : 1);
    memset(q->buf.host, POISON, q->buf.bytes);
    uint64_t seed = rng_next();
    if (random)
        for (int64_t r = 0; r < rows; r++)
            quant_ref_random_blocks((int)f, (char *)q->buf.host + offset + (size_t)r * stride,
                                    (size_t)(cols / info.block_elems), &seed);
    gpu_buf_upload(&q->buf);
    q->m = (kp_qmatrix){q->buf.dev, offset, f, rows, cols, stride};
}

static const unsigned char *qmat_row(const struct qmat *q, int64_t r)
{
    return (const unsigned char *)q->buf.host + q->m.offset + (size_t)r * q->m.row_stride;
}

/* Bits of an f32 reference value stored as `dtype`. */
static uint32_t ref_bits(kp_dtype dtype, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return dtype == KP_DTYPE_F32 ? u : dtype == KP_DTYPE_F16 ? f32_to_f16(v) : f32_to_bf16(v);
}

static uint32_t elem_bits(kp_dtype dtype, const void *base, size_t i)
{
    if (dtype == KP_DTYPE_F32) {
        uint32_t u;
        memcpy(&u, (const char *)base + 4 * i, 4);
        return u;
    }
    uint16_t h;
    memcpy(&h, (const char *)base + 2 * i, 2);
    return h;
}

/* ---- dequantize and get_rows */

struct deq_case {
    int64_t rows, blocks;   /* blocks per row */
    size_t offset, pad;     /* of the quantized matrix, bytes */
    int transposed;         /* dst stored column-major */
    int64_t dst_offset;
};
/* Dense rows on both sides from 16-byte boundaries (the first, third and
 * last) take kp_dequant_tiles, whose tiles are 8192 elements: 37 x 65
 * blocks end in a partial tile; the others the per-group kernel, with
 * 16-byte stores into dense dst rows for the fourth and sixth (src 4 bytes
 * off a 16-byte boundary; src rows padded). */
static const struct deq_case deq_cases[] = {
    {1, 1, 0, 0, 0, 0},
    {7, 1, 2 * 4, 4 * 4, 1, 3},
    {37, 65, 0, 0, 0, 0},
    {37, 65, 4, 0, 0, 0},
    {7, 65, 4 * 4, 12, 1, 1},
    {33, 9, 0, 16, 0, 8},
    {4097, 1, 0, 0, 0, 8},
};
#define N_DEQ (sizeof(deq_cases) / sizeof(deq_cases[0]))

/* dst (n x cols) with the case's layout in a poisoned buffer. */
static kp_tensor dst_matrix(struct gpu_buf *b, kp_dtype dtype, int64_t n, int64_t cols,
                            int transposed, int64_t offset)
{
    int64_t shape[2] = {n, cols};
    int64_t strides[2] = {transposed ? 1 : cols, transposed ? n : 1};
    gpu_buf_alloc(b, ((size_t)(n * cols + offset) ? (size_t)(n * cols + offset) : 1) *
                         kp_dtype_size(dtype));
    memset(b->host, POISON, b->bytes);
    gpu_buf_upload(b);
    return gpu_tensor(b, dtype, 2, shape, strides, offset);
}

/* dst row i must be the reference of source row src_row[i] (-1: zeros). */
static void check_rows(const kp_tensor *dst, struct gpu_buf *db, const struct qmat *q,
                       const int64_t *src_row, int64_t n, const char *what)
{
    int64_t cols = q->m.cols;
    float *ref = malloc((size_t)(cols ? cols : 1) * sizeof(float));
    unsigned char *written = calloc(db->bytes / kp_dtype_size(dst->dtype) + 1, 1);
    gpu_buf_download(db);
    for (int64_t i = 0; i < n; i++) {
        if (src_row[i] >= 0)
            quant_ref_dequantize_row((int)q->m.format, qmat_row(q, src_row[i]), ref, cols);
        else
            for (int64_t c = 0; c < cols; c++) ref[c] = 0.0f;
        for (int64_t c = 0; c < cols; c++) {
            size_t at = (size_t)(dst->layout.offset + i * dst->layout.strides[0] +
                                 c * dst->layout.strides[1]);
            uint32_t got = elem_bits(dst->dtype, db->host, at), want = ref_bits(dst->dtype, ref[c]);
            ck_assert_msg(got == want, "%s %s -> %s: row %lld col %lld: got 0x%x, want 0x%x (%g)",
                          what, info_of(q->m.format).name, kp_dtype_name(dst->dtype),
                          (long long)i, (long long)c, got, want, (double)ref[c]);
            written[at] = 1;
        }
    }
    check_untouched(db, written, kp_dtype_size(dst->dtype), POISON, what);
    free(written);
    free(ref);
}

START_TEST(test_dequantize)
{
    size_t nf = kp_qformat_count();
    kp_qformat f = kp_qformat_at((size_t)_i % nf);
    kp_dtype dtype = qfloats[(size_t)_i / nf % N_QFLOATS];
    const struct deq_case *c = &deq_cases[(size_t)_i / nf / N_QFLOATS];
    rng_seed(1000 + (uint64_t)_i);
    int64_t cols = c->blocks * info_of(f).block_elems;
    struct qmat q;
    qmat_make(&q, f, c->rows, cols, c->offset, c->pad, 1);
    struct gpu_buf db;
    kp_tensor dst = dst_matrix(&db, dtype, c->rows, cols, c->transposed, c->dst_offset);
    CK_OK(kp_dequantize(gpu_stream, &dst, &q.m));
    int64_t *rows = malloc((size_t)c->rows * sizeof(int64_t));
    for (int64_t r = 0; r < c->rows; r++) rows[r] = r;
    check_rows(&dst, &db, &q, rows, c->rows, "dequantize");
    free(rows);
    gpu_buf_free(&db);
    gpu_buf_free(&q.buf);
}
END_TEST

START_TEST(test_get_rows)
{
    size_t nf = kp_qformat_count();
    kp_qformat f = kp_qformat_at((size_t)_i % nf);
    kp_dtype dtype = qfloats[(size_t)_i / nf % N_QFLOATS];
    kp_dtype ids_dtype = (size_t)_i / nf / N_QFLOATS ? KP_DTYPE_I64 : KP_DTYPE_U32;
    rng_seed(2000 + (uint64_t)_i);
    const int64_t table_rows = 33, n = 12, cols = 2 * info_of(f).block_elems;
    struct qmat q;
    qmat_make(&q, f, table_rows, cols, 4, 4, 1);
    /* ids every other element (stride 2); two invalid ones: 33 and -1 / 2^32-1 */
    int64_t want_row[12] = {0, 32, 5, 5, 33, 17, -1, 1, 2, 3, 31, 9};
    struct gpu_buf ib;
    size_t es = kp_dtype_size(ids_dtype);
    gpu_buf_alloc(&ib, 2 * (size_t)n * es);
    for (int64_t i = 0; i < n; i++) {
        if (ids_dtype == KP_DTYPE_U32) {
            uint32_t v = (uint32_t)want_row[i];
            memcpy((char *)ib.host + 2 * (size_t)i * es, &v, es);
        } else {
            memcpy((char *)ib.host + 2 * (size_t)i * es, &want_row[i], es);
        }
    }
    gpu_buf_upload(&ib);
    int64_t ids_shape[1] = {n}, ids_strides[1] = {2};
    kp_tensor ids = gpu_tensor(&ib, ids_dtype, 1, ids_shape, ids_strides, 0);
    want_row[4] = want_row[6] = -1;  /* the invalid ids give zero rows */
    struct gpu_buf db;
    kp_tensor dst = dst_matrix(&db, dtype, n, cols, (int)(_i & 1), 2);
    kp_index_status *status;
    CK_OK(kp_index_status_create(gpu_dev, &status));
    CK_OK(kp_quantized_get_rows(gpu_stream, &dst, &q.m, &ids, status));
    kp_index_report rep;
    CK_OK(kp_index_status_read(gpu_stream, status, &rep));
    ck_assert_msg(rep.out_of_range && rep.first_position == 4,
                  "status: out_of_range %d first %llu, want 1 and 4", (int)rep.out_of_range,
                  (unsigned long long)rep.first_position);
    check_rows(&dst, &db, &q, want_row, n, "get_rows");
    kp_index_status_destroy(&status);
    gpu_buf_free(&db);
    gpu_buf_free(&ib);
    gpu_buf_free(&q.buf);
}
END_TEST

/* ---- quantize */

static const kp_qformat quantize_formats[] = {KP_QFORMAT_Q4_0, KP_QFORMAT_Q4_1, KP_QFORMAT_Q5_0,
                                              KP_QFORMAT_Q5_1, KP_QFORMAT_Q8_0, KP_QFORMAT_Q8_1};
#define N_QUANTIZE 6

/* Row r of the quantize input: random values of varied scale, with blocks
 * that are all zero, constant, one spike, negative-led, and exact halves. */
static float quant_input(int64_t r, int64_t c)
{
    int64_t kind = (r + c / 32) % 6;
    double scale = ldexp(1.0, (int)(rng_next() % 12) - 6);
    switch (kind) {
    case 0: return 0.0f;
    case 1: return (float)(0.75 * scale);
    case 2: return c % 32 == 5 ? (float)(-100.0 * scale) : (float)rng_uniform(-scale, scale);
    case 3: return (float)((double)((int64_t)(rng_next() % 33) - 16) * 0.5 * scale);
    default: return (float)rng_uniform(-scale, scale);
    }
}

START_TEST(test_quantize)
{
    kp_qformat f = quantize_formats[(size_t)_i % N_QUANTIZE];
    kp_dtype dtype = qfloats[(size_t)_i / N_QUANTIZE % N_QFLOATS];
    int transposed = (int)((size_t)_i / N_QUANTIZE / N_QFLOATS);
    rng_seed(3000 + (uint64_t)_i);
    const int64_t rows = transposed ? 7 : 37, cols = transposed ? 32 : 65 * 32;
    /* Source values, rounded to the source dtype first: the reference
     * quantizes exactly what the GPU reads. */
    struct gpu_buf sb;
    int64_t shape[2] = {rows, cols}, strides[2] = {transposed ? 1 : cols, transposed ? rows : 1};
    gpu_buf_alloc(&sb, (size_t)(rows * cols + 1) * kp_dtype_size(dtype));
    kp_tensor src = gpu_tensor(&sb, dtype, 2, shape, strides, 1);
    float *x = malloc((size_t)(rows * cols) * sizeof(float));
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++) {
            size_t at = (size_t)(1 + r * strides[0] + c * strides[1]);
            host_set(dtype, sb.host, at, quant_input(r, c));
            x[r * cols + c] = (float)host_get(dtype, sb.host, at);
        }
    gpu_buf_upload(&sb);
    struct qmat q;
    qmat_make(&q, f, rows, cols, 8, 8, 0);
    CK_OK(kp_quantize(gpu_stream, &q.m, &src));
    gpu_buf_download(&q.buf);
    unsigned char *want = malloc(q.row_bytes);
    for (int64_t r = 0; r < rows; r++) {
        quant_ref_quantize_row((int)f, x + r * cols, want, cols);
        const unsigned char *got = qmat_row(&q, r);
        for (size_t k = 0; k < q.row_bytes; k++)
            ck_assert_msg(got[k] == want[k], "quantize %s from %s: row %lld byte %zu: 0x%02x, want 0x%02x",
                          info_of(f).name, kp_dtype_name(dtype), (long long)r, k, got[k], want[k]);
        /* the padding after the row keeps its poison */
        if (r + 1 < rows)
            for (size_t k = q.row_bytes; k < q.m.row_stride; k++)
                ck_assert_msg(got[k] == POISON, "quantize wrote into row padding");
    }
    for (size_t k = 0; k < q.m.offset; k++)
        ck_assert_msg(((unsigned char *)q.buf.host)[k] == POISON, "quantize wrote before dst");
    free(want);
    free(x);
    gpu_buf_free(&q.buf);
    gpu_buf_free(&sb);
}
END_TEST

/* ---- mat-vec */

struct mv_case {
    int64_t rows, blocks;
    int strided;            /* x: col stride 2, padded batch stride; dst transposed;
                               1: w padded and offset too, 2: w dense */
};
/* The last three: an odd count of rows of 40 blocks (a single short tile
 * for the 32-element formats), few rows of many tiles (3 x 96), and strided
 * activations and dst over dense, aligned weights (the other strided cases
 * pad and offset the weights too). */
static const struct mv_case mv_cases[] = {
    {1, 1, 0},
    {7, 1, 1},
    {37, 65, 0},
    {4097, 3, 1},
    {5, 300, 1},  /* several tiles and a short last one at every tile width */
    {1031, 40, 0},
    {3, 96, 0},
    {1031, 40, 2},
};
#define N_MV (sizeof(mv_cases) / sizeof(mv_cases[0]))
#define MV_TOLERANCE 2e-5  /* relative to sum |w * x| over the row */

/* n rows of cols values as the products see them: rounded through Q8_1
 * (d as binary16 times q), in f64. */
static double *q8_1_rounded(const float *xf, int64_t n, int64_t cols)
{
    double *xq = malloc((size_t)(n * cols + 1) * sizeof(double));
    kp_block_q8_1 *blocks = malloc((size_t)(cols / 32 + 1) * sizeof(kp_block_q8_1));
    for (int64_t b = 0; b < n; b++) {
        quant_ref_quantize_row(KP_QF_Q8_1, xf + b * cols, blocks, cols);
        for (int64_t k = 0; k < cols; k++)
            xq[b * cols + k] = (double)quant_ref_f16_to_f32(blocks[k / 32].d) * blocks[k / 32].qs[k % 32];
    }
    free(blocks);
    return xq;
}

/* Whether a product's result `got` (in y_dtype) matches the f64 dot of the
 * dequantized weight row w with the rounded activations xq, within
 * MV_TOLERANCE of sum |w * x| plus y_dtype's rounding; *want and *tol say
 * what it was compared with. */
static bool dot_matches(double got, const float *w, const double *xq, int64_t cols, kp_dtype y_dtype,
                        double *want, double *tol)
{
    double sum = 0.0, mag = 0.0;
    for (int64_t k = 0; k < cols; k++) {
        sum += (double)w[k] * xq[k];
        mag += fabs((double)w[k] * xq[k]);
    }
    double rounding = y_dtype == KP_DTYPE_F32 ? 0.0 : y_dtype == KP_DTYPE_F16 ? 0x1p-11 : 0x1p-8;
    *tol = MV_TOLERANCE * mag + rounding * fabs(sum) + 1e-30;
    /* f16 overflow: past 65520 (65504 + half its last step) it rounds to inf */
    if (y_dtype == KP_DTYPE_F16 && fabs(sum) - *tol >= 65520.0)
        sum = copysign(INFINITY, sum);
    *want = sum;
    return fabs(got - sum) <= *tol || got == sum;
}

/* dst = w x for a random w of format f (rows x blocks blocks) and x (batch
 * rows), through kp_quantized_matvec (matmul false) or
 * kp_quantized_matmul, checked against the f64 dot of the dequantized
 * weights with the Q8_1-rounded x. */
static void check_product(kp_qformat f, int64_t batch, int64_t rows, int64_t blocks, int strided,
                          kp_dtype x_dtype, kp_dtype y_dtype, bool matmul)
{
    const char *op = matmul ? "matmul" : "matvec";
    int64_t cols = blocks * info_of(f).block_elems;
    struct qmat q;
    qmat_make(&q, f, rows, cols, strided == 1 ? 4 : 0, strided == 1 ? 8 : 0, 1);

    /* x: batch x cols; strided: every other column, rows 2 * cols + 6 apart */
    int64_t xs[2] = {strided ? 2 * cols + 6 : cols, strided ? 2 : 1};
    struct gpu_buf xb;
    gpu_buf_alloc(&xb, (size_t)(batch * xs[0] + 1) * kp_dtype_size(x_dtype));
    int64_t x_shape[2] = {batch, cols};
    bool vector = batch == 1 && !strided;
    kp_tensor x = gpu_tensor(&xb, x_dtype, vector ? 1 : 2, vector ? x_shape + 1 : x_shape,
                             vector ? NULL : xs, 1);
    float *xf = malloc((size_t)(batch * cols) * sizeof(float));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t k = 0; k < cols; k++) {
            size_t at = (size_t)(1 + b * xs[0] + k * xs[1]);
            host_set(x_dtype, xb.host, at, rng_uniform(-2.0, 2.0));
            xf[b * cols + k] = (float)host_get(x_dtype, xb.host, at);
        }
    gpu_buf_upload(&xb);
    struct gpu_buf db;
    kp_tensor dst = dst_matrix(&db, y_dtype, batch, rows, strided, 3);
    size_t ws_bytes;
    if (matmul)
        CK_OK(kp_quantized_matmul_workspace_size(batch, cols, &ws_bytes));
    else
        CK_OK(kp_quantized_matvec_workspace_size(batch, cols, &ws_bytes));
    struct gpu_buf wsb;
    gpu_buf_alloc(&wsb, ws_bytes ? ws_bytes : 1);
    /* The workspace starts as arbitrary bytes, and first serves a product
     * of other activations: the checked one must not reuse what that left. */
    memset(wsb.host, 0x5a, wsb.bytes);
    gpu_buf_upload(&wsb);
    struct gpu_buf decoy;
    gpu_buf_alloc(&decoy, xb.bytes);
    for (size_t i = 0; i < xb.bytes / kp_dtype_size(x_dtype); i++)
        host_set(x_dtype, decoy.host, i, rng_uniform(-3.0, 3.0));
    gpu_buf_upload(&decoy);
    kp_tensor x_decoy = x;
    x_decoy.buffer = decoy.dev;
    for (int run = 0; run < 2; run++) {
        const kp_tensor *xr = run ? &x : &x_decoy;
        if (matmul)
            CK_OK(kp_quantized_matmul(gpu_stream, &dst, &q.m, xr, wsb.dev));
        else
            CK_OK(kp_quantized_matvec(gpu_stream, &dst, &q.m, xr, wsb.dev));
    }
    gpu_buf_download(&db);
    gpu_buf_free(&decoy);

    double *xq = q8_1_rounded(xf, batch, cols);
    float *w = malloc((size_t)cols * sizeof(float));
    unsigned char *written = calloc(db.bytes, 1);
    for (int64_t r = 0; r < rows; r++) {
        quant_ref_dequantize_row((int)f, qmat_row(&q, r), w, cols);
        for (int64_t b = 0; b < batch; b++) {
            size_t at = (size_t)(dst.layout.offset + b * dst.layout.strides[0] + r * dst.layout.strides[1]);
            double got = host_get(y_dtype, db.host, at), want, tol;
            ck_assert_msg(dot_matches(got, w, xq + b * cols, cols, y_dtype, &want, &tol),
                          "%s %s batch %lld (%s x -> %s) rows %lld cols %lld: [%lld, %lld] = %.9g, "
                          "want %.9g (tolerance %.3g)", op, info_of(f).name, (long long)batch,
                          kp_dtype_name(x_dtype), kp_dtype_name(y_dtype), (long long)rows,
                          (long long)cols, (long long)b, (long long)r, got, want, tol);
            written[at] = 1;
        }
    }
    check_untouched(&db, written, kp_dtype_size(y_dtype), POISON, op);
    free(written);
    free(w);
    free(xq);
    free(xf);
    gpu_buf_free(&wsb);
    gpu_buf_free(&db);
    gpu_buf_free(&xb);
    gpu_buf_free(&q.buf);
}

START_TEST(test_matvec)
{
    size_t nf = kp_qformat_count();
    kp_qformat f = kp_qformat_at((size_t)_i % nf);
    int64_t batch = 1 + (int64_t)((size_t)_i / nf % KP_QMATVEC_MAX_BATCH);
    const struct mv_case *c = &mv_cases[(size_t)_i / nf / KP_QMATVEC_MAX_BATCH];
    rng_seed(4000 + (uint64_t)_i);
    check_product(f, batch, c->rows, c->blocks, c->strided, qfloats[(size_t)_i % N_QFLOATS],
                  qfloats[(size_t)_i / 7 % N_QFLOATS], false);
}
END_TEST

/* ---- kp_quantized_matmul: batches of 9 and 16 (two mat-vec launches),
 * then the mat-mat with both batch tiles (the large one where 64 x 64 tiles
 * still give each multiprocessor of today's GPUs a block: 2200 x 260), tiles
 * past the rows, the batch and the columns (a step is 4 items: 3, 9 and 65
 * items leave partial steps) */

struct mm_case {
    int64_t batch, rows, blocks;
    int strided, big;
};
static const struct mm_case mm_cases[] = {
    {9, 1, 1, 0, 0},      {16, 65, 3, 1, 0},   {33, 130, 65, 0, 0},
    {100, 37, 9, 1, 0},   {512, 70, 5, 0, 0},  {260, 2200, 2, 1, 0},
    {4096, 67, 2, 0, 1},
};
#define N_MM (sizeof(mm_cases) / sizeof(mm_cases[0]))

START_TEST(test_matmul)
{
    size_t nf = kp_qformat_count();
    kp_qformat f = kp_qformat_at((size_t)_i % nf);
    const struct mm_case *c = &mm_cases[(size_t)_i / nf];
    if (c->big && getenv("KP_TEST_SKIP_BIG"))
        return;
    rng_seed(4500 + (uint64_t)_i);
    check_product(f, c->batch, c->rows, c->blocks, c->strided, qfloats[(size_t)_i % N_QFLOATS],
                  qfloats[(size_t)_i / 5 % N_QFLOATS], true);
}
END_TEST

/* ---- mixture of experts: repeated experts, x per token or per slot, ids of
 * both types with strides, an invalid id (the last pair's: n_experts, or -1
 * as i64), dst with padded token rows; a pair a block row (few pairs per
 * expert) and the pairs listed by expert then multiplied as a mat-mat (4
 * and more per expert), in both batch tiles (up to 32 per expert, more) */

struct moe_case {
    int64_t tokens, k, experts, rows, blocks;
    int per_slot, ids64;
};
static const struct moe_case moe_cases[] = {
    {1, 1, 1, 7, 1, 0, 0},
    {3, 2, 4, 37, 3, 0, 1},
    {5, 4, 6, 65, 2, 1, 0},
    {2, 8, 3, 4097, 1, 1, 1},
    {40, 2, 4, 37, 3, 0, 1},
    {300, 2, 3, 70, 2, 1, 0},
};
#define N_MOE (sizeof(moe_cases) / sizeof(moe_cases[0]))

START_TEST(test_moe)
{
    size_t nf = kp_qformat_count();
    kp_qformat f = kp_qformat_at((size_t)_i % nf);
    const struct moe_case *c = &moe_cases[(size_t)_i / nf];
    kp_dtype x_dtype = qfloats[(size_t)_i % N_QFLOATS], y_dtype = qfloats[(size_t)_i / 5 % N_QFLOATS];
    rng_seed(6000 + (uint64_t)_i);
    const int64_t pairs = c->tokens * c->k, cols = c->blocks * info_of(f).block_elems;
    struct qmat q;
    qmat_make(&q, f, c->experts * c->rows, cols, 0, 4, 1);

    /* ids (tokens x k), slots 3 elements apart and tokens 3 * k + 1 */
    kp_dtype ids_dtype = c->ids64 ? KP_DTYPE_I64 : KP_DTYPE_U32;
    int64_t ids_strides[2] = {3 * c->k + 1, 3}, ids_shape[2] = {c->tokens, c->k};
    int64_t *want_expert = malloc((size_t)pairs * sizeof(int64_t));
    struct gpu_buf ib;
    gpu_buf_alloc(&ib, (size_t)(c->tokens * ids_strides[0]) * kp_dtype_size(ids_dtype));
    for (int64_t p = 0; p < pairs; p++) {
        int64_t id = p + 1 == pairs && pairs > 1 ? (c->ids64 ? -1 : c->experts)
                                                  : (int64_t)(rng_next() % (uint64_t)c->experts);
        want_expert[p] = id >= 0 && id < c->experts ? id : -1;
        size_t at = (size_t)(p / c->k * ids_strides[0] + p % c->k * ids_strides[1]);
        if (c->ids64)
            ((int64_t *)ib.host)[at] = id;
        else
            ((uint32_t *)ib.host)[at] = (uint32_t)id;
    }
    gpu_buf_upload(&ib);
    kp_tensor ids = gpu_tensor(&ib, ids_dtype, 2, ids_shape, ids_strides, 0);

    const int64_t x_rows = c->per_slot ? pairs : c->tokens;
    struct gpu_buf xb;
    gpu_buf_alloc(&xb, (size_t)(x_rows * cols) * kp_dtype_size(x_dtype));
    float *xf = malloc((size_t)(x_rows * cols) * sizeof(float));
    for (int64_t i = 0; i < x_rows * cols; i++) {
        host_set(x_dtype, xb.host, (size_t)i, rng_uniform(-2.0, 2.0));
        xf[i] = (float)host_get(x_dtype, xb.host, (size_t)i);
    }
    gpu_buf_upload(&xb);
    int64_t x_shape[3] = {c->tokens, c->k, cols};
    kp_tensor x = c->per_slot ? gpu_tensor(&xb, x_dtype, 3, x_shape, NULL, 0)
                              : gpu_tensor(&xb, x_dtype, 2, (int64_t[]){c->tokens, cols}, NULL, 0);

    int64_t dst_shape[3] = {c->tokens, c->k, c->rows};
    int64_t dst_strides[3] = {c->k * c->rows + 5, c->rows, 1};
    struct gpu_buf db;
    gpu_buf_alloc(&db, (size_t)(c->tokens * dst_strides[0]) * kp_dtype_size(y_dtype));
    memset(db.host, POISON, db.bytes);
    gpu_buf_upload(&db);
    kp_tensor dst = gpu_tensor(&db, y_dtype, 3, dst_shape, dst_strides, 0);

    size_t ws_bytes;
    CK_OK(kp_quantized_moe_workspace_size(c->tokens, c->k, c->experts, cols, &ws_bytes));
    struct gpu_buf wsb;
    gpu_buf_alloc(&wsb, ws_bytes);
    kp_index_status *status;
    CK_OK(kp_index_status_create(gpu_dev, &status));
    CK_OK(kp_quantized_moe(gpu_stream, &dst, &q.m, c->experts, &ids, &x, wsb.dev, status));
    kp_index_report rep;
    CK_OK(kp_index_status_read(gpu_stream, status, &rep));
    bool invalid = pairs > 1;
    ck_assert_msg(rep.out_of_range == invalid && (!invalid || rep.first_position == (uint64_t)pairs - 1),
                  "moe status: out_of_range %d first %llu, want %d and %lld", (int)rep.out_of_range,
                  (unsigned long long)rep.first_position, (int)invalid, (long long)pairs - 1);
    gpu_buf_download(&db);

    double *xq = q8_1_rounded(xf, x_rows, cols);
    float *w = malloc((size_t)cols * sizeof(float));
    unsigned char *written = calloc(db.bytes, 1);
    for (int64_t p = 0; p < pairs; p++) {
        const double *xrow = xq + (c->per_slot ? p : p / c->k) * cols;
        for (int64_t r = 0; r < c->rows; r++) {
            size_t at = (size_t)(p / c->k * dst_strides[0] + p % c->k * dst_strides[1] + r);
            double got = host_get(y_dtype, db.host, at), want = 0.0, tol = 0.0;
            bool ok = got == 0.0;
            if (want_expert[p] >= 0) {
                if (r == 0 || c->rows < 100 || r % 97 == 0 || r + 1 == c->rows) {
                    quant_ref_dequantize_row((int)f, qmat_row(&q, want_expert[p] * c->rows + r), w, cols);
                    ok = dot_matches(got, w, xrow, cols, y_dtype, &want, &tol);
                } else {
                    ok = true;  /* long experts: a sample of rows */
                }
            }
            ck_assert_msg(ok, "moe %s (%s x -> %s) pair %lld (expert %lld) row %lld: %.9g, want %.9g "
                          "(tolerance %.3g)", info_of(f).name, kp_dtype_name(x_dtype),
                          kp_dtype_name(y_dtype), (long long)p, (long long)want_expert[p], (long long)r,
                          got, want, tol);
            written[at] = 1;
        }
    }
    check_untouched(&db, written, kp_dtype_size(y_dtype), POISON, "moe dst");
    kp_index_status_destroy(&status);
    free(written);
    free(w);
    free(xq);
    free(xf);
    free(want_expert);
    gpu_buf_free(&wsb);
    gpu_buf_free(&db);
    gpu_buf_free(&xb);
    gpu_buf_free(&ib);
    gpu_buf_free(&q.buf);
}
END_TEST

/* ---- bad arguments: clear status, a message that names the problem, and
 * nothing written */

static void expect_fail(kp_status got, kp_status want, const char *needle, const char *what)
{
    ck_assert_msg(got == want, "%s: got %s, want %s (%s)", what, kp_status_string(got),
                  kp_status_string(want), kp_last_error_message());
    ck_assert_msg(strstr(kp_last_error_message(), needle), "%s: message \"%s\" lacks \"%s\"", what,
                  kp_last_error_message(), needle);
}

START_TEST(test_bad_arguments)
{
    rng_seed(5000);
    struct qmat q;
    qmat_make(&q, KP_QFORMAT_Q4_K, 4, 512, 0, 0, 1);
    struct gpu_buf db;
    kp_tensor dst = dst_matrix(&db, KP_DTYPE_F32, 4, 512, 0, 0);

    kp_qmatrix bad = q.m;
    bad.cols = 500;
    expect_fail(kp_dequantize(gpu_stream, &dst, &bad), KP_ERR_INVALID_ARGUMENT, "q4_K's block of 256",
                "cols not a multiple of the block");
    kp_qmatrix packed;
    expect_fail(kp_qmatrix_packed(&packed, q.buf.dev, 0, KP_QFORMAT_Q8_0, 1, 48),
                KP_ERR_INVALID_ARGUMENT, "q8_0's block of 32", "kp_qmatrix_packed cols");
    bad = q.m;
    bad.offset = 2;
    expect_fail(kp_dequantize(gpu_stream, &dst, &bad), KP_ERR_INVALID_ARGUMENT, "multiples of 4",
                "misaligned offset");
    bad = q.m;
    bad.rows = 5;
    expect_fail(kp_dequantize(gpu_stream, &dst, &bad), KP_ERR_BUFFER_TOO_SMALL, "buffer holds",
                "matrix past its buffer");
    bad = q.m;
    bad.format = (kp_qformat)4;
    expect_fail(kp_dequantize(gpu_stream, &dst, &bad), KP_ERR_INVALID_ARGUMENT, "not a kp_qformat",
                "unknown format");

    struct gpu_buf sb;
    int64_t shape[2] = {4, 512};
    gpu_buf_alloc(&sb, 4 * 512 * 4);
    kp_tensor src = gpu_tensor(&sb, KP_DTYPE_F32, 2, shape, NULL, 0);
    expect_fail(kp_quantize(gpu_stream, &q.m, &src), KP_ERR_UNSUPPORTED, "q4_K",
                "quantize to a K format");

    size_t ws;
    expect_fail(kp_quantized_matvec_workspace_size(9, 512, &ws), KP_ERR_INVALID_ARGUMENT, "1..8",
                "batch 9");
    expect_fail(kp_quantized_matmul_workspace_size(0, 512, &ws), KP_ERR_INVALID_ARGUMENT,
                "outside 1..", "matmul batch 0");
    expect_fail(kp_quantized_matmul_workspace_size(16, 48, &ws), KP_ERR_INVALID_ARGUMENT,
                "multiple of 32", "matmul cols");
    struct gpu_buf xb, yb;
    gpu_buf_alloc(&xb, 512 * 4);
    int64_t xs[1] = {512}, ys[1] = {4};
    kp_tensor x = gpu_tensor(&xb, KP_DTYPE_F32, 1, xs, NULL, 0);
    kp_tensor y = dst_matrix(&yb, KP_DTYPE_F32, 1, 4, 0, 0);
    y.layout.rank = 1;
    y.layout.shape[0] = ys[0];
    y.layout.strides[0] = 1;
    expect_fail(kp_quantized_matvec(gpu_stream, &y, &q.m, &x, NULL), KP_ERR_INVALID_ARGUMENT,
                "workspace is NULL", "matvec without workspace");
    struct gpu_buf small;
    gpu_buf_alloc(&small, 64);
    expect_fail(kp_quantized_matvec(gpu_stream, &y, &q.m, &x, small.dev), KP_ERR_BUFFER_TOO_SMALL,
                "workspace holds 64 bytes", "matvec with a small workspace");
    x.layout.shape[0] = 256;
    expect_fail(kp_quantized_matvec(gpu_stream, &y, &q.m, &x, small.dev), KP_ERR_INVALID_ARGUMENT,
                "do not fit w", "matvec shape mismatch");

    /* moe: 3 experts do not divide w's 4 rows; ids of rank 1 */
    struct gpu_buf mb;
    gpu_buf_alloc(&mb, 64);
    int64_t mids_shape[1] = {2};
    kp_tensor mids = gpu_tensor(&mb, KP_DTYPE_U32, 1, mids_shape, NULL, 0);
    expect_fail(kp_quantized_moe(gpu_stream, &y, &q.m, 3, &mids, &x, small.dev, NULL),
                KP_ERR_INVALID_ARGUMENT, "do not divide evenly", "moe experts");
    expect_fail(kp_quantized_moe(gpu_stream, &y, &q.m, 2, &mids, &x, small.dev, NULL),
                KP_ERR_INVALID_ARGUMENT, "must be (tokens, k)", "moe ids rank");
    gpu_buf_free(&mb);

    /* nothing was written */
    gpu_buf_download(&db);
    gpu_buf_download(&yb);
    unsigned char *none = calloc(db.bytes, 1);
    check_untouched(&db, none, 4, POISON, "failed dequantize");
    check_untouched(&yb, none, 4, POISON, "failed matvec");
    free(none);
    gpu_buf_free(&small);
    gpu_buf_free(&yb);
    gpu_buf_free(&xb);
    gpu_buf_free(&sb);
    gpu_buf_free(&db);
    gpu_buf_free(&q.buf);
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    int nf = (int)kp_qformat_count();
    Suite *s = suite_create("quantized");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_bad_arguments);
    tcase_add_loop_test(tc, test_dequantize, 0, nf * N_QFLOATS * (int)N_DEQ);
    tcase_add_loop_test(tc, test_get_rows, 0, nf * N_QFLOATS * 2);
    tcase_add_loop_test(tc, test_quantize, 0, N_QUANTIZE * N_QFLOATS * 2);
    tcase_add_loop_test(tc, test_matvec, 0, nf * KP_QMATVEC_MAX_BATCH * (int)N_MV);
    tcase_add_loop_test(tc, test_matmul, 0, nf * (int)N_MM);
    tcase_add_loop_test(tc, test_moe, 0, nf * (int)N_MOE);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
