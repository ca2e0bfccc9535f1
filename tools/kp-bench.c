/* kp-bench: throughput of kernelpack ops, measured against the device's own
 * device-to-device copy bandwidth in the same run, and module load times.
 *
 * Adding an op: write a run function (a few lines calling the op on the
 * tensors in `struct bench_io`) and add a row to `cases[]` below with the op
 * name, a variant name, the dtypes it accepts, its inputs and output, and its
 * byte count (bytes_elementwise fits ops that read each input once and write
 * each output element once). The harness allocates, fills with random
 * non-zero data, times and reports every (case, dtype) pair.
 *
 * Cases that need shapes or buffers of their own (the quantized module's)
 * live in small per-module files (bench_<module>.c) exposing a bench_table
 * (bench.h), listed in `tables[]` below; they use the same timing, copy
 * reference and report. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <kernelpack/kernelpack.h>

#include "bench.h"

#define MAX_INPUTS 3
#define SAME 0                /* in a case row: the case's own dtype */
#define FIXED(dtype) ((dtype) + 1)  /* in a case row: always this dtype */
#define ALL_DTYPES (DT(KP_DTYPE_COUNT) - 1u)
#define EXIT_SKIP 77          /* meson's "skipped" */

/* What a run function works on: contiguous 1-D tensors of the case's sizes. */
struct bench_io {
    kp_stream *stream;
    kp_dtype dtype;                   /* the case dtype */
    uint64_t n;                       /* elements of each input */
    const kp_tensor *in;              /* case->inputs tensors, one buffer set */
    const kp_tensor *out;
    const void *scalar;               /* one random non-zero element of `dtype` */
};

struct bench_case {
    const char *op;                   /* the name --ops selects */
    const char *variant;              /* tells the cases of one op apart */
    unsigned dtypes;                  /* accepted case dtypes, DT() bits */
    int inputs;                       /* input tensors of n elements, 0..MAX_INPUTS */
    int input_dtype[MAX_INPUTS];      /* SAME or FIXED(kp_dtype) */
    int output_dtype;                 /* SAME or FIXED(kp_dtype) */
    uint64_t (*output_elements)(uint64_t n);  /* NULL: n (reductions return fewer) */
    /* Bytes one run reads plus writes. */
    uint64_t (*bytes)(const struct bench_case *c, kp_dtype dtype, uint64_t n);
    kp_status (*run)(const struct bench_io *io);
    /* Optional: turns the random inputs of one buffer set into valid ones
     * (e.g. in-range indices), once, before timing. */
    kp_status (*prepare)(const struct bench_io *io);
};

static kp_dtype input_dtype(const struct bench_case *c, int k, kp_dtype dtype)
{
    return c->input_dtype[k] == SAME ? dtype : (kp_dtype)(c->input_dtype[k] - 1);
}

static kp_dtype output_dtype(const struct bench_case *c, kp_dtype dtype)
{
    return c->output_dtype == SAME ? dtype : (kp_dtype)(c->output_dtype - 1);
}

static uint64_t output_elements(const struct bench_case *c, uint64_t n)
{
    return c->output_elements ? c->output_elements(n) : n;
}

/* ---- byte counts */

static uint64_t bytes_elementwise(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    uint64_t b = output_elements(c, n) * kp_dtype_size(output_dtype(c, dtype));
    for (int k = 0; k < c->inputs; k++)
        b += n * kp_dtype_size(input_dtype(c, k, dtype));
    return b;
}

/* The largest rows x cols with cols a power of two near sqrt(n), rows * cols <= n. */
static void square_shape(uint64_t n, int64_t *rows, int64_t *cols)
{
    uint64_t c = 1;
    while (c * c * 4 <= n)
        c *= 2;
    *cols = (int64_t)c;
    *rows = (int64_t)(n / c);
}

static uint64_t bytes_transposed(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    (void)c;
    int64_t rows, cols;
    square_shape(n, &rows, &cols);
    return 2 * (uint64_t)rows * (uint64_t)cols * kp_dtype_size(dtype);
}

/* ---- run functions */

static kp_status run_affine(const struct bench_io *io)
{
    return kp_affine(io->stream, io->out, &io->in[0], 3.0, 1.0);  /* whole numbers: valid for every dtype */
}

static kp_status run_fill(const struct bench_io *io)
{
    return kp_fill(io->stream, io->out, io->scalar);
}

static kp_status run_copy(const struct bench_io *io)
{
    return kp_copy(io->stream, io->out, &io->in[0]);
}

/* dst (rows x cols, row-major) = the transpose of src (cols x rows, row-major). */
static kp_status run_copy_transposed(const struct bench_io *io)
{
    int64_t rows, cols;
    square_shape(io->n, &rows, &cols);
    kp_tensor dst = *io->out, src = io->in[0];
    int64_t shape[2] = {rows, cols};
    kp_status st = kp_layout_contiguous(&dst.layout, 2, shape);
    if (st == KP_OK)
        st = kp_layout_contiguous(&src.layout, 2, shape);
    src.layout.strides[0] = 1;
    src.layout.strides[1] = rows;
    return st == KP_OK ? kp_copy(io->stream, &dst, &src) : st;
}

static kp_status run_cast(const struct bench_io *io)
{
    return kp_cast(io->stream, io->out, &io->in[0]);
}

/* Binary ops: one run function per op. */
#define BINARY_RUN(name, op)                                                          \
    static kp_status run_##name(const struct bench_io *io)                            \
    {                                                                                 \
        return kp_binary(io->stream, op, io->out, &io->in[0], &io->in[1]);            \
    }
BINARY_RUN(add, KP_BINARY_ADD)
BINARY_RUN(sub, KP_BINARY_SUB)
BINARY_RUN(mul, KP_BINARY_MUL)
BINARY_RUN(div, KP_BINARY_DIV)
BINARY_RUN(minimum, KP_BINARY_MINIMUM)
BINARY_RUN(maximum, KP_BINARY_MAXIMUM)
BINARY_RUN(eq, KP_BINARY_EQ)
BINARY_RUN(ne, KP_BINARY_NE)
BINARY_RUN(lt, KP_BINARY_LT)
BINARY_RUN(le, KP_BINARY_LE)
BINARY_RUN(gt, KP_BINARY_GT)
BINARY_RUN(ge, KP_BINARY_GE)

/* dst = lhs + rhs over rows x cols, all contiguous but rhs, whose strides
 * are rhs_strides (a 0 broadcasts it along that dim): the strided path. */
static kp_status run_add_broadcast(const struct bench_io *io, const int64_t rhs_strides[2])
{
    int64_t rows, cols;
    square_shape(io->n, &rows, &cols);
    int64_t shape[2] = {rows, cols};
    kp_tensor dst = *io->out, lhs = io->in[0], rhs = io->in[1];
    kp_status st = kp_layout_contiguous(&dst.layout, 2, shape);
    if (st == KP_OK)
        st = kp_layout_contiguous(&lhs.layout, 2, shape);
    if (st == KP_OK)
        st = kp_layout_contiguous(&rhs.layout, 2, shape);
    rhs.layout.strides[0] = rhs_strides[0];
    rhs.layout.strides[1] = rhs_strides[1];
    return st == KP_OK ? kp_binary(io->stream, KP_BINARY_ADD, &dst, &lhs, &rhs) : st;
}

/* One row of rhs broadcast down the rows (a bias add). */
static kp_status run_add_row_broadcast(const struct bench_io *io)
{
    return run_add_broadcast(io, (const int64_t[2]){0, 1});
}

static uint64_t bytes_row_broadcast(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    (void)c;
    int64_t rows, cols;
    square_shape(n, &rows, &cols);
    return (2 * (uint64_t)rows + 1) * (uint64_t)cols * kp_dtype_size(dtype);
}

/* One value of rhs a row, broadcast along it (x[M, N] + b[M, 1], a per-row
 * scale or shift): rhs's innermost stride is 0. */
static kp_status run_add_col_broadcast(const struct bench_io *io)
{
    return run_add_broadcast(io, (const int64_t[2]){1, 0});
}

static uint64_t bytes_col_broadcast(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    (void)c;
    int64_t rows, cols;
    square_shape(n, &rows, &cols);
    return (2 * (uint64_t)cols + 1) * (uint64_t)rows * kp_dtype_size(dtype);
}

static kp_status run_where(const struct bench_io *io)
{
    return kp_where(io->stream, io->out, &io->in[0], &io->in[1], &io->in[2]);
}

/* Unary ops: one run function per op. */
#define UNARY_RUN(name, op)                                                         \
    static kp_status run_##name(const struct bench_io *io)                          \
    {                                                                               \
        return kp_unary(io->stream, op, io->out, &io->in[0], 1.5);                  \
    }
UNARY_RUN(neg, KP_UNARY_NEG)
UNARY_RUN(recip, KP_UNARY_RECIP)
UNARY_RUN(abs, KP_UNARY_ABS)
UNARY_RUN(sign, KP_UNARY_SIGN)
UNARY_RUN(sqr, KP_UNARY_SQR)
UNARY_RUN(sqrt, KP_UNARY_SQRT)
UNARY_RUN(rsqrt, KP_UNARY_RSQRT)
UNARY_RUN(exp, KP_UNARY_EXP)
UNARY_RUN(log, KP_UNARY_LOG)
UNARY_RUN(sin, KP_UNARY_SIN)
UNARY_RUN(cos, KP_UNARY_COS)
UNARY_RUN(tanh, KP_UNARY_TANH)
UNARY_RUN(erf, KP_UNARY_ERF)
UNARY_RUN(ceil, KP_UNARY_CEIL)
UNARY_RUN(floor, KP_UNARY_FLOOR)
UNARY_RUN(round, KP_UNARY_ROUND)
UNARY_RUN(relu, KP_UNARY_RELU)
UNARY_RUN(gelu, KP_UNARY_GELU)
UNARY_RUN(gelu_erf, KP_UNARY_GELU_ERF)
UNARY_RUN(silu, KP_UNARY_SILU)
UNARY_RUN(sigmoid, KP_UNARY_SIGMOID)
UNARY_RUN(elu, KP_UNARY_ELU)
UNARY_RUN(powf, KP_UNARY_POWF)

/* index_select: 4096-wide rows; a table of n / 4096 rows, half as many
 * random ids, so the output is n / 2 elements. */
#define SELECT_COLS 4096
static uint64_t half(uint64_t n) { return n / 2 / SELECT_COLS * SELECT_COLS; }
static uint64_t select_rows(uint64_t n) { return half(n) / SELECT_COLS; }

static uint64_t bytes_index_select(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    (void)c;
    return 2 * half(n) * kp_dtype_size(dtype) + select_rows(n) * 4;
}

static kp_status prepare_index_select(const struct bench_io *io)
{
    uint64_t rows = select_rows(io->n), table_rows = io->n / SELECT_COLS;
    uint32_t *ids = malloc(rows * sizeof(*ids));
    if (!ids)
        return KP_ERR_OUT_OF_MEMORY;
    uint64_t x = 0x2545F4914F6CDD1Dull;
    for (uint64_t i = 0; i < rows; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        ids[i] = (uint32_t)(x % table_rows);
    }
    kp_status st = kp_memcpy_h2d(io->stream, io->in[1].buffer, 0, ids, rows * sizeof(*ids));
    if (st == KP_OK)
        st = kp_stream_synchronize(io->stream);
    free(ids);
    return st;
}

static kp_status run_index_select(const struct bench_io *io)
{
    int64_t table[2] = {(int64_t)(io->n / SELECT_COLS), SELECT_COLS};
    int64_t out[2] = {(int64_t)select_rows(io->n), SELECT_COLS}, nids = out[0];
    kp_tensor src = io->in[0], ids = io->in[1], dst = *io->out;
    kp_status st = kp_layout_contiguous(&src.layout, 2, table);
    if (st == KP_OK)
        st = kp_layout_contiguous(&ids.layout, 1, &nids);
    if (st == KP_OK)
        st = kp_layout_contiguous(&dst.layout, 2, out);
    return st == KP_OK ? kp_index_select(io->stream, &dst, &src, &ids, 0, NULL) : st;
}

/* Row ops on rows of 4096: reductions to one value per row, softmax and the
 * norms (weight and bias read once, a negligible 4096 elements). */
#define ROW_LEN 4096
static uint64_t per_row(uint64_t n) { return n / ROW_LEN; }
static uint64_t just_one(uint64_t n) { (void)n; return 1; }

static kp_status view_rows(kp_tensor *t, uint64_t n, int64_t cols)
{
    int64_t shape[2] = {(int64_t)(n / ROW_LEN), cols};
    return kp_layout_contiguous(&t->layout, 2, shape);
}

static kp_status run_row_reduce(const struct bench_io *io, kp_reduce_op op)
{
    kp_tensor src = io->in[0], dst = *io->out;
    const int dims[1] = {1};
    kp_status st = view_rows(&src, io->n, ROW_LEN);
    if (st == KP_OK)
        st = view_rows(&dst, io->n, 1);
    return st == KP_OK ? kp_reduce(io->stream, op, &dst, &src, dims, 1) : st;
}
static kp_status run_row_sum(const struct bench_io *io) { return run_row_reduce(io, KP_REDUCE_SUM); }
static kp_status run_row_max(const struct bench_io *io) { return run_row_reduce(io, KP_REDUCE_MAX); }

static kp_status run_full_sum(const struct bench_io *io)
{
    const int dims[1] = {0};
    return kp_reduce(io->stream, KP_REDUCE_SUM, io->out, &io->in[0], dims, 1);
}

/* A rank-1 view of the first ROW_LEN elements of an input (weight, bias). */
static kp_tensor row_param(const kp_tensor *t)
{
    kp_tensor p = *t;
    int64_t len = ROW_LEN;
    kp_layout_contiguous(&p.layout, 1, &len);
    return p;
}

static kp_status run_softmax(const struct bench_io *io)
{
    kp_tensor src = io->in[0], dst = *io->out;
    kp_status st = view_rows(&src, io->n, ROW_LEN);
    if (st == KP_OK)
        st = view_rows(&dst, io->n, ROW_LEN);
    return st == KP_OK ? kp_softmax(io->stream, &dst, &src) : st;
}

static kp_status run_rmsnorm(const struct bench_io *io)
{
    kp_tensor src = io->in[0], dst = *io->out, w = row_param(&io->in[1]);
    kp_status st = view_rows(&src, io->n, ROW_LEN);
    if (st == KP_OK)
        st = view_rows(&dst, io->n, ROW_LEN);
    return st == KP_OK ? kp_rmsnorm(io->stream, &dst, &src, &w, 1e-5f) : st;
}

static kp_status run_layernorm(const struct bench_io *io)
{
    kp_tensor src = io->in[0], dst = *io->out, w = row_param(&io->in[1]), b = row_param(&io->in[2]);
    kp_status st = view_rows(&src, io->n, ROW_LEN);
    if (st == KP_OK)
        st = view_rows(&dst, io->n, ROW_LEN);
    return st == KP_OK ? kp_layernorm(io->stream, &dst, &src, &w, &b, 1e-5f) : st;
}

/* Bytes: src once and dst once; weight/bias rows are ROW_LEN elements. */
static uint64_t bytes_rows(const struct bench_case *c, kp_dtype dtype, uint64_t n)
{
    uint64_t es = kp_dtype_size(dtype);
    return n * es + output_elements(c, n) * kp_dtype_size(output_dtype(c, dtype)) +
           (uint64_t)(c->inputs - 1) * ROW_LEN * es;
}

/* ---- the cases
 *
 * One row per case. For example, a binary op would add
 *     static kp_status run_add(const struct bench_io *io)
 *     { return kp_add(io->stream, io->out, &io->in[0], &io->in[1]); }
 * and the row
 *     {"add", "contiguous", ALL_DTYPES, 2, {SAME, SAME}, SAME, NULL, bytes_elementwise, run_add},
 * `where` would take inputs {FIXED(KP_DTYPE_U8), SAME, SAME}; a reduction
 * over rows would set output_elements (n / row length) and view the input as
 * rows x cols in its run function, as run_copy_transposed reshapes. */

static const struct bench_case cases[] = {
    {"affine", "contiguous", ALL_DTYPES, 1, {SAME}, SAME, NULL, bytes_elementwise, run_affine},
    {"copy", "contiguous", ALL_DTYPES, 1, {SAME}, SAME, NULL, bytes_elementwise, run_copy},
    {"copy", "transposed", ALL_DTYPES, 1, {SAME}, SAME, NULL, bytes_transposed, run_copy_transposed},
    {"fill", "contiguous", ALL_DTYPES, 0, {SAME}, SAME, NULL, bytes_elementwise, run_fill},
    {"cast", "to f32", ALL_DTYPES & ~DT(KP_DTYPE_F32), 1, {SAME}, FIXED(KP_DTYPE_F32), NULL,
     bytes_elementwise, run_cast},
    {"cast", "to f16", ALL_DTYPES & ~DT(KP_DTYPE_F16), 1, {SAME}, FIXED(KP_DTYPE_F16), NULL,
     bytes_elementwise, run_cast},
    {"cast", "to bf16", ALL_DTYPES & ~DT(KP_DTYPE_BF16), 1, {SAME}, FIXED(KP_DTYPE_BF16), NULL,
     bytes_elementwise, run_cast},
#define BINARY_ROW(name, out) \
    {#name, "contiguous", ALL_DTYPES, 2, {SAME, SAME}, out, NULL, bytes_elementwise, run_##name}
    BINARY_ROW(add, SAME),
    BINARY_ROW(sub, SAME),
    BINARY_ROW(mul, SAME),
    BINARY_ROW(div, SAME),
    BINARY_ROW(minimum, SAME),
    BINARY_ROW(maximum, SAME),
    BINARY_ROW(eq, FIXED(KP_DTYPE_U8)),
    BINARY_ROW(ne, FIXED(KP_DTYPE_U8)),
    BINARY_ROW(lt, FIXED(KP_DTYPE_U8)),
    BINARY_ROW(le, FIXED(KP_DTYPE_U8)),
    BINARY_ROW(gt, FIXED(KP_DTYPE_U8)),
    BINARY_ROW(ge, FIXED(KP_DTYPE_U8)),
#undef BINARY_ROW
    {"add", "row broadcast", ALL_DTYPES, 2, {SAME, SAME}, SAME, NULL, bytes_row_broadcast,
     run_add_row_broadcast},
    {"add", "col broadcast", ALL_DTYPES, 2, {SAME, SAME}, SAME, NULL, bytes_col_broadcast,
     run_add_col_broadcast},
    {"where", "u8 cond", ALL_DTYPES, 3, {FIXED(KP_DTYPE_U8), SAME, SAME}, SAME, NULL,
     bytes_elementwise, run_where},
#define FLOAT_DTYPES (DT(KP_DTYPE_F32) | DT(KP_DTYPE_F64) | DT(KP_DTYPE_F16) | DT(KP_DTYPE_BF16))
#define UNARY_ROW(name) \
    {#name, "contiguous", FLOAT_DTYPES, 1, {SAME}, SAME, NULL, bytes_elementwise, run_##name}
    UNARY_ROW(neg), UNARY_ROW(recip), UNARY_ROW(abs), UNARY_ROW(sign), UNARY_ROW(sqr),
    UNARY_ROW(sqrt), UNARY_ROW(rsqrt), UNARY_ROW(exp), UNARY_ROW(log), UNARY_ROW(sin),
    UNARY_ROW(cos), UNARY_ROW(tanh), UNARY_ROW(erf), UNARY_ROW(ceil), UNARY_ROW(floor),
    UNARY_ROW(round), UNARY_ROW(relu), UNARY_ROW(gelu), UNARY_ROW(gelu_erf), UNARY_ROW(silu),
    UNARY_ROW(sigmoid), UNARY_ROW(elu), UNARY_ROW(powf),
#undef UNARY_ROW
    {"index_select", "rows of 4096", ALL_DTYPES, 2, {SAME, FIXED(KP_DTYPE_U32)}, SAME, half,
     bytes_index_select, run_index_select, prepare_index_select},
    {"sum", "rows of 4096", ALL_DTYPES, 1, {SAME}, SAME, per_row, bytes_rows, run_row_sum},
    {"max", "rows of 4096", ALL_DTYPES, 1, {SAME}, SAME, per_row, bytes_rows, run_row_max},
    {"sum", "whole tensor", ALL_DTYPES, 1, {SAME}, SAME, just_one, bytes_rows, run_full_sum},
    {"softmax", "rows of 4096", FLOAT_DTYPES, 1, {SAME}, SAME, NULL, bytes_rows, run_softmax},
    {"rmsnorm", "rows of 4096", FLOAT_DTYPES, 2, {SAME, SAME}, SAME, NULL, bytes_rows, run_rmsnorm},
    {"layernorm", "rows of 4096", FLOAT_DTYPES, 3, {SAME, SAME, SAME}, SAME, NULL, bytes_rows,
     run_layernorm},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Module tables (bench.h): cases with fixed shapes, after the ones above. */
static const struct bench_table *const tables[] = {
    &bench_quantized_table, &bench_conv_table, &bench_spatial_table, &bench_rows_table, &bench_sort_table,
    &bench_indexing_table,  &bench_rope_table, &bench_layout_table,  &bench_reduce_table};
#define N_TABLES (sizeof(tables) / sizeof(tables[0]))

/* ---- options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: kp-bench [--ops a,b] [--dtypes f32,bf16] [--elements N] [--iters N]\n"
            "                [--warmup N] [--json] [--list] [--help]\n"
            "Times kernelpack ops on device 0 and compares their bandwidth (bytes read +\n"
            "written per second) with kp_memcpy_d2d moving the same bytes in the same run\n"
            "(through buffers rotated over 512 MB, so from memory, not the GPU's cache).\n"
            "Also reports cold and warm module load times.\n"
            "  --ops a,b       ops to run (default: all; --list shows them)\n"
            "  --dtypes a,b    case dtypes (default: f32,f16,bf16; for cast, the source; for\n"
            "                  the quantized cases, the float side: see below)\n"
            "  --elements N    elements per tensor (default 268435456 = 2^28; suffixes k, M, G\n"
            "                  multiply by 2^10, 2^20, 2^30)\n"
            "  --iters N       timed runs per case, the median is reported (default 20)\n"
            "  --warmup N      untimed runs first (default 3)\n"
            "  --json          print the results as JSON\n"
            "  --list          list the cases and their dtypes, then exit\n"
            "Quantized cases (qmatvec, qmatmul, qmoe, dequantize, quantize, get_rows) run on\n"
            "fixed model shapes whatever --elements says: the variant names the format, the\n"
            "weight matrix (rows x cols) and for qmatvec/qmatmul the batch (qmoe: experts\n"
            "used/stacked, one token); the dtype column is the float side (x and dst of the\n"
            "products, dst of dequantize and get_rows, src of quantize), which is what\n"
            "--dtypes selects. qmatvec's and qmoe's bytes are the weight bytes read alone (the\n"
            "JSON's total_bytes adds x and dst); qmatmul also shows GFLOP/s (2 x batch x rows\n"
            "x cols per run); the others count everything read and written. The\n"
            "side read rotates through copies of 512 MB in all, or one per run if fewer\n"
            "(get_rows: sets of ids naming disjoint rows), so no run finds it in the cache;\n"
            "the sets column counts them.\n"
            "Row cases with a variant wN xR (softmax, log_softmax, rmsnorm, layernorm) run on\n"
            "R rows of width N (vocabulary and hidden widths; 8 rows and about 2^25 elements)\n"
            "whatever --elements says, their source rotating in the same way.\n"
            "argsort (wN xR), gather, scatter, scatter_add, index_add and rope also run on\n"
            "fixed shapes the variant names; permute (permuted copies) and the 3-d sum and\n"
            "max (dimK of AxBxN) size their free dim (a capital letter) by --elements. Their\n"
            "sources rotate likewise; bench_<module>.c says what each counts as bytes.\n"
            "Exit status: 0 all cases ran, 1 a case failed, 2 bad usage, 77 no GPU.\n");
}

static bool parse_count(const char *s, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K') shift = 10;
    else if (*end == 'm' || *end == 'M') shift = 20;
    else if (*end == 'g' || *end == 'G') shift = 30;
    if (shift)
        end++;
    if (errno || end == s || *end || s[0] == '-' || v > (max >> shift))
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

static bool parse_dtypes(const char *list, unsigned *out)
{
    char buf[256];
    snprintf(buf, sizeof(buf), "%s", list);
    *out = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int found = -1;
        for (int d = 0; d < KP_DTYPE_COUNT; d++)
            if (strcmp(tok, kp_dtype_name((kp_dtype)d)) == 0)
                found = d;
        if (found < 0) {
            fprintf(stderr, "kp-bench: unknown dtype '%s' (f32 f64 f16 bf16 u8 u32 i64)\n", tok);
            return false;
        }
        *out |= DT(found);
    }
    return *out != 0;
}

static bool op_exists(const char *op)
{
    for (size_t c = 0; c < N_CASES; c++)
        if (strcmp(op, cases[c].op) == 0)
            return true;
    for (size_t t = 0; t < N_TABLES; t++) {
        for (size_t i = 0; i < tables[t]->count(); i++) {
            struct bench_entry e;
            tables[t]->describe(i, &e);
            if (strcmp(op, e.op) == 0)
                return true;
        }
    }
    return false;
}

/* Whether --ops (as parse_ops checked it) names `op`. */
static bool op_selected(const struct options *o, const char *op)
{
    if (!o->ops)
        return true;
    size_t len = strlen(op);
    for (const char *p = o->ops; *p;) {
        size_t tok = strcspn(p, ",");
        if (tok == len && strncmp(p, op, len) == 0)
            return true;
        p += tok + (p[tok] == ',');
    }
    return false;
}

static bool parse_ops(const char *list, const char **selected)
{
    char buf[256];
    if (strlen(list) >= sizeof(buf)) {
        fprintf(stderr, "kp-bench: --ops list too long\n");
        return false;
    }
    snprintf(buf, sizeof(buf), "%s", list);
    *selected = list;
    int count = 0;
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (!op_exists(tok)) {
            fprintf(stderr, "kp-bench: unknown op '%s'; --list shows the ops\n", tok);
            return false;
        }
        count++;
    }
    return count > 0;
}

static void list_cases(void)
{
    printf("%-19s %-24s %s\n", "op", "variant", "dtypes");
    for (size_t c = 0; c < N_CASES; c++) {
        printf("%-19s %-24s", cases[c].op, cases[c].variant);
        for (int d = 0; d < KP_DTYPE_COUNT; d++)
            if (cases[c].dtypes & DT(d))
                printf(" %s", kp_dtype_name((kp_dtype)d));
        printf("\n");
    }
    for (size_t t = 0; t < N_TABLES; t++) {
        for (size_t i = 0; i < tables[t]->count(); i++) {
            struct bench_entry e;
            tables[t]->describe(i, &e);
            printf("%-19s %-24s %s\n", e.op, e.variant, kp_dtype_name(e.dtype));
        }
    }
}

/* Returns -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct options *o)
{
    o->ops = NULL;
    o->dtypes = DT(KP_DTYPE_F32) | DT(KP_DTYPE_F16) | DT(KP_DTYPE_BF16);
    o->elements = 1ull << 28;
    o->iters = 20;
    o->warmup = 3;
    o->json = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t num = 0;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--list") == 0) {
            list_cases();
            return 0;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
            continue;
        }
        bool ok = v != NULL;
        if (strcmp(a, "--ops") == 0) {
            ok = ok && parse_ops(v, &o->ops);
        } else if (strcmp(a, "--dtypes") == 0) {
            ok = ok && parse_dtypes(v, &o->dtypes);
        } else if (strcmp(a, "--elements") == 0) {
            ok = ok && parse_count(v, 1ull << 40, &num) && num > 0;
            o->elements = num;
        } else if (strcmp(a, "--iters") == 0) {
            ok = ok && parse_count(v, 100000, &num) && num > 0;
            o->iters = (int)num;
        } else if (strcmp(a, "--warmup") == 0) {
            ok = ok && parse_count(v, 100000, &num);
            o->warmup = (int)num;
        } else {
            fprintf(stderr, "kp-bench: unknown argument '%s'\n", a);
            usage(stderr);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "kp-bench: bad or missing value for %s\n", a);
            return 2;
        }
        i++;
    }
    return -1;
}

/* ---- device state and measurements */

struct module_time {
    const char *name;
    double cold_ms, warm_ms;
    kp_status status;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint64_t next_random(struct bench *b)
{
    uint64_t x = b->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return b->rng = x;
}

/* One random non-zero element of `dtype` into out: floats in +-[0.5, 2). */
static void random_element(struct bench *b, kp_dtype dtype, void *out)
{
    uint64_t r = next_random(b);
    uint64_t sign = r >> 63, exp_bit = (r >> 62) & 1;
    switch (dtype) {
    case KP_DTYPE_F32: {
        uint32_t bits = (uint32_t)(sign << 31 | (126 + exp_bit) << 23 | (r & 0x7fffff));
        memcpy(out, &bits, 4);
        break;
    }
    case KP_DTYPE_F64: {
        uint64_t bits = sign << 63 | (1022 + exp_bit) << 52 | (r & 0xfffffffffffffull);
        memcpy(out, &bits, 8);
        break;
    }
    case KP_DTYPE_F16: {
        uint16_t bits = (uint16_t)(sign << 15 | (14 + exp_bit) << 10 | (r & 0x3ff));
        memcpy(out, &bits, 2);
        break;
    }
    case KP_DTYPE_BF16: {
        uint16_t bits = (uint16_t)(sign << 15 | (126 + exp_bit) << 7 | (r & 0x7f));
        memcpy(out, &bits, 2);
        break;
    }
    case KP_DTYPE_U8: *(uint8_t *)out = (uint8_t)(1 + r % 255); break;
    case KP_DTYPE_U32: { uint32_t v = (uint32_t)r | 1; memcpy(out, &v, 4); break; }
    default: { uint64_t v = r | 1; memcpy(out, &v, 8); break; }
    }
}

kp_status upload_chunk(struct bench *b, kp_buffer *buf)
{
    size_t size = kp_buffer_size(buf);
    kp_status st = KP_OK;
    for (size_t off = 0; st == KP_OK && off < size; off += b->chunk_bytes) {
        size_t len = size - off < b->chunk_bytes ? size - off : b->chunk_bytes;
        st = kp_memcpy_h2d(b->stream, buf, off, b->chunk, len);
    }
    return st == KP_OK ? kp_stream_synchronize(b->stream) : st;
}

/* Fills a buffer with random non-zero elements of `dtype` (a staging chunk
 * of fresh values, uploaded as often as the buffer needs). */
kp_status fill_random(struct bench *b, kp_buffer *buf, kp_dtype dtype)
{
    size_t es = kp_dtype_size(dtype);
    for (size_t i = 0; i < b->chunk_bytes / es; i++)
        random_element(b, dtype, (char *)b->chunk + i * es);
    return upload_chunk(b, buf);
}

static int compare_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median milliseconds of opt->iters runs after opt->warmup, each between
 * its own pair of events. */
kp_status time_runs(struct bench *b, timed_fn fn, void *ctx, double *median_ms)
{
    kp_status st = KP_OK;
    for (int i = 0; st == KP_OK && i < b->opt->warmup; i++)
        st = fn(ctx, i);
    if (st == KP_OK)
        st = kp_stream_synchronize(b->stream);
    for (int i = 0; st == KP_OK && i < b->opt->iters; i++) {
        st = kp_event_record(b->start[i], b->stream);
        if (st == KP_OK)
            st = fn(ctx, i);
        if (st == KP_OK)
            st = kp_event_record(b->end[i], b->stream);
    }
    if (st == KP_OK)
        st = kp_stream_synchronize(b->stream);
    for (int i = 0; st == KP_OK && i < b->opt->iters; i++)
        st = kp_event_elapsed_ms(b->start[i], b->end[i], &b->ms[i]);
    if (st != KP_OK)
        return st;
    qsort(b->ms, (size_t)b->opt->iters, sizeof(float), compare_float);
    int n = b->opt->iters;
    *median_ms = n % 2 ? b->ms[n / 2] : 0.5 * ((double)b->ms[n / 2 - 1] + (double)b->ms[n / 2]);
    return KP_OK;
}

/* ---- the copy reference: kp_memcpy_d2d moving `bytes` (half read, half written) */

struct copy_ctx {
    kp_stream *stream;
    kp_buffer *src[MAX_ROTATION], *dst[MAX_ROTATION];
    int sets;
    size_t size;
};

static kp_status run_memcpy(void *ctx, int i)
{
    struct copy_ctx *c = ctx;
    return kp_memcpy_d2d(c->stream, c->dst[i % c->sets], 0, c->src[i % c->sets], 0, c->size);
}

/* Measured once per byte count (cases that move the same bytes share it).
 * A case of a few tens of megabytes fits the GPU's cache, so copying the
 * same buffers run after run would measure the cache; the pairs rotate as
 * the quantized cases' inputs do. */
kp_status measure_copy(struct bench *b, uint64_t bytes, double *ms)
{
    for (int i = 0; i < b->copies; i++) {
        if (b->copy_bytes[i] == bytes) {
            *ms = b->copy_ms[i];
            return KP_OK;
        }
    }
    struct copy_ctx c = {b->stream, {NULL}, {NULL}, 0, (size_t)((bytes + 1) / 2)};
    kp_status st = alloc_rotation(b, rotation_copies(b, 2 * (uint64_t)c.size), c.size, fill_random,
                                  KP_DTYPE_U32, c.src, c.dst, &c.sets);
    if (st == KP_OK)
        st = time_runs(b, run_memcpy, &c, ms);
    if (st == KP_OK) {
        *ms *= (double)bytes / (2.0 * (double)c.size);  /* it moved 2 * c.size bytes */
        if (b->copies < MAX_COPY_SIZES) {
            b->copy_bytes[b->copies] = bytes;
            b->copy_ms[b->copies++] = *ms;
        }
    }
    for (int s = 0; s < MAX_ROTATION; s++) {
        kp_buffer_destroy(&c.src[s]);
        kp_buffer_destroy(&c.dst[s]);
    }
    return st;
}

void result_fail(struct result *r, const char *what, kp_status st)
{
    r->status = st;
    snprintf(r->error, sizeof(r->error), "%s%s%s: %s", what ? what : "", what ? ": " : "",
             kp_status_string(st), kp_last_error_message());
}

/* ---- one case */

struct case_ctx {
    const struct bench_case *c;
    struct bench_io io[INPUT_SETS];
    kp_tensor in[INPUT_SETS][MAX_INPUTS];
    int sets;
};

static kp_status run_case_once(void *ctx, int i)
{
    struct case_ctx *cc = ctx;
    return cc->c->run(&cc->io[i % cc->sets]);
}

static kp_tensor vector_tensor(kp_buffer *buf, kp_dtype dtype, uint64_t n)
{
    kp_tensor t = {buf, dtype, {0}};
    int64_t shape[1] = {(int64_t)n};
    kp_layout_contiguous(&t.layout, 1, shape);
    return t;
}

static void bench_case(struct bench *b, const struct bench_case *c, kp_dtype dtype, struct result *r)
{
    const uint64_t n = b->opt->elements, n_out = output_elements(c, n);
    memset(r, 0, sizeof(*r));
    r->op = c->op;
    snprintf(r->variant, sizeof(r->variant), "%s", c->variant);
    r->dtype = dtype;
    r->out_dtype = output_dtype(c, dtype);
    r->elements = n;
    r->bytes = c->bytes(c, dtype, n);
    kp_status cst = measure_copy(b, r->bytes, &r->copy_ms);
    if (cst != KP_OK) {
        result_fail(r, "copy reference", cst);
        return;
    }

    struct case_ctx cc = {c, {{0}}, {{{0}}}, 0};
    kp_buffer *bufs[INPUT_SETS][MAX_INPUTS] = {{NULL}}, *out = NULL;
    unsigned char scalar[8];
    random_element(b, dtype, scalar);
    kp_status st = kp_buffer_alloc(b->dev, n_out * kp_dtype_size(r->out_dtype), &out);
    for (int s = 0; st == KP_OK && s < INPUT_SETS; s++) {
        for (int k = 0; st == KP_OK && k < c->inputs; k++) {
            kp_dtype dt = input_dtype(c, k, dtype);
            st = kp_buffer_alloc(b->dev, n * kp_dtype_size(dt), &bufs[s][k]);
            if (st == KP_OK)
                st = fill_random(b, bufs[s][k], dt);
            cc.in[s][k] = vector_tensor(bufs[s][k], dt, n);
        }
        if (st == KP_ERR_OUT_OF_MEMORY && s > 0) {  /* no room for another set: time with fewer */
            for (int k = 0; k < c->inputs; k++)
                kp_buffer_destroy(&bufs[s][k]);
            st = KP_OK;
            break;
        }
        if (st == KP_OK) {
            cc.io[s] = (struct bench_io){b->stream, dtype, n, cc.in[s], NULL, scalar};
            cc.sets = s + 1;
            if (c->prepare)
                st = c->prepare(&cc.io[s]);
        }
    }
    kp_tensor out_t = vector_tensor(out, r->out_dtype, n_out);
    for (int s = 0; s < cc.sets; s++)
        cc.io[s].out = &out_t;
    if (st == KP_OK)
        st = time_runs(b, run_case_once, &cc, &r->ms);
    if (st != KP_OK)
        result_fail(r, NULL, st);
    r->sets = cc.sets;
    for (int s = 0; s < INPUT_SETS; s++)
        for (int k = 0; k < MAX_INPUTS; k++)
            kp_buffer_destroy(&bufs[s][k]);
    kp_buffer_destroy(&out);
}

/* ---- module load times */

static kp_status load_modules(kp_device *dev, struct module_time *t, size_t count, bool cold)
{
    kp_status worst = KP_OK;
    for (size_t m = 0; m < count; m++) {
        double t0 = now_ms();
        kp_status st = kp_device_load_module(dev, t[m].name);
        double ms = now_ms() - t0;
        if (cold)
            t[m].cold_ms = ms;
        else
            t[m].warm_ms = ms;
        if (st != KP_OK) {
            t[m].status = st;
            worst = st;
            fprintf(stderr, "kp-bench: loading module %s: %s: %s\n", t[m].name, kp_status_string(st),
                    kp_last_error_message());
        }
    }
    return worst;
}

/* ---- output */

static void dtype_label(const struct result *r, char *buf, size_t size)
{
    if (r->out_dtype == r->dtype)
        snprintf(buf, size, "%s", kp_dtype_name(r->dtype));
    else
        snprintf(buf, size, "%s->%s", kp_dtype_name(r->dtype), kp_dtype_name(r->out_dtype));
}

static double gbps(uint64_t bytes, double ms)
{
    return ms > 0 ? (double)bytes / (ms * 1e6) : 0.0;
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            printf("\\%c", ch);
        else if (ch < 0x20)
            printf("\\u%04x", ch);
        else
            putchar(ch);
    }
    putchar('"');
}

static void print_header(const struct bench *b, const kp_device_info *info)
{
    const struct options *o = b->opt;
    printf("kp-bench: kernelpack %s, backend %s\n", kp_version(), kp_backend_name());
    printf("device %d: %s, arch %s, %d multiprocessors, %.1f GiB\n", info->ordinal, info->name,
           info->arch, info->multiprocessors, (double)info->total_memory / (1u << 30));
    printf("%llu elements per tensor; median of %d timed runs after %d warm-ups; inputs alternate\n"
           "between %d buffer sets (the sets column says when fewer fitted).\n",
           (unsigned long long)o->elements, o->iters, o->warmup, INPUT_SETS);
    if (o->elements * 4 < (256ull << 20))
        printf("note: tensors this small may stay in the GPU's cache; the default --elements\n"
               "measures memory bandwidth.\n");
    printf("GB/s = bytes read + written / median time. copy GB/s: kp_memcpy_d2d moving the same\n"
           "bytes in this run, through buffers rotated over 512 MB (from memory, not cache).\n"
           "%% copy = GB/s / copy GB/s.\n"
           "Quantized cases: fixed shapes (elements = the matrix's, get_rows: those gathered),\n"
           "dtype = the float side, sets = copies rotated through; qmatvec and qmoe count\n"
           "the weight bytes alone (--help says more).\n\n");
}

static void print_modules_text(const struct module_time *t, size_t count)
{
    printf("module load (wall clock): cold = first load in this process, warm = again after\n"
           "kp_device_close + kp_device_open\n");
    printf("  %-10s %10s %10s\n", "module", "cold ms", "warm ms");
    for (size_t m = 0; m < count; m++) {
        if (t[m].status != KP_OK)
            printf("  %-10s FAILED: %s\n", t[m].name, kp_status_string(t[m].status));
        else
            printf("  %-10s %10.3f %10.3f\n", t[m].name, t[m].cold_ms, t[m].warm_ms);
    }
    printf("\n%-19s %-24s %-10s %12s %10s %9s %10s %7s %5s\n", "op", "variant", "dtype", "elements",
           "time ms", "GB/s", "copy GB/s", "% copy", "sets");
    fflush(stdout);
}

static void print_result_text(const struct result *r)
{
    char dt[32];
    dtype_label(r, dt, sizeof(dt));
    printf("%-19s %-24s %-10s %12llu ", r->op, r->variant, dt, (unsigned long long)r->elements);
    if (r->status != KP_OK) {
        printf("FAILED: %s\n", r->error);
    } else {
        double g = gbps(r->bytes, r->ms), cg = gbps(r->bytes, r->copy_ms);
        printf("%10.4f %9.1f %10.1f %7.1f %5d", r->ms, g, cg, cg > 0 ? 100.0 * g / cg : 0.0, r->sets);
        if (r->flops > 0)
            printf(" %10.1f GFLOP/s", r->flops / (r->ms * 1e6));
        putchar('\n');
    }
    fflush(stdout);
}

static void print_json(const struct bench *b, const kp_device_info *info, const struct module_time *t,
                       size_t modules, const struct result *r, size_t results)
{
    const struct options *o = b->opt;
    printf("{\n  \"kernelpack\": ");
    print_json_string(kp_version());
    printf(",\n  \"backend\": ");
    print_json_string(kp_backend_name());
    printf(",\n  \"device\": {\"ordinal\": %d, \"name\": ", info->ordinal);
    print_json_string(info->name);
    printf(", \"arch\": ");
    print_json_string(info->arch);
    printf(", \"multiprocessors\": %d, \"memory_bytes\": %llu},\n", info->multiprocessors,
           (unsigned long long)info->total_memory);
    printf("  \"settings\": {\"elements\": %llu, \"iters\": %d, \"warmup\": %d, \"input_sets\": %d, "
           "\"time\": \"median\", \"bytes\": \"read + written\", "
           "\"copy\": \"kp_memcpy_d2d moving the same bytes\", "
           "\"quantized\": \"fixed shapes; dtype = the float side; qmatvec bytes = weight bytes, "
           "total_bytes adds x and dst\"},\n",
           (unsigned long long)o->elements, o->iters, o->warmup, INPUT_SETS);
    printf("  \"module_load_ms\": [");
    for (size_t m = 0; m < modules; m++) {
        printf("%s\n    {\"module\": ", m ? "," : "");
        print_json_string(t[m].name);
        if (t[m].status != KP_OK) {
            printf(", \"error\": ");
            print_json_string(kp_status_string(t[m].status));
            printf("}");
        } else {
            printf(", \"cold\": %.4f, \"warm\": %.4f}", t[m].cold_ms, t[m].warm_ms);
        }
    }
    printf("\n  ],\n  \"cases\": [");
    for (size_t i = 0; i < results; i++) {
        printf("%s\n    {\"op\": ", i ? "," : "");
        print_json_string(r[i].op);
        printf(", \"variant\": ");
        print_json_string(r[i].variant);
        if (r[i].format) {
            printf(", \"format\": ");
            print_json_string(r[i].format);
        }
        printf(", \"dtype\": ");
        print_json_string(kp_dtype_name(r[i].dtype));
        printf(", \"out_dtype\": ");
        print_json_string(kp_dtype_name(r[i].out_dtype));
        printf(", \"elements\": %llu, \"bytes\": %llu", (unsigned long long)r[i].elements,
               (unsigned long long)r[i].bytes);
        if (r[i].total_bytes)
            printf(", \"total_bytes\": %llu", (unsigned long long)r[i].total_bytes);
        if (r[i].flops > 0)
            printf(", \"flops\": %.0f", r[i].flops);
        if (r[i].status != KP_OK) {
            printf(", \"error\": ");
            print_json_string(r[i].error);
            printf("}");
            continue;
        }
        double g = gbps(r[i].bytes, r[i].ms), cg = gbps(r[i].bytes, r[i].copy_ms);
        printf(", \"time_ms\": %.6f, \"gb_per_s\": %.3f, \"copy_gb_per_s\": %.3f, \"copy_percent\": %.2f, "
               "\"input_sets\": %d",
               r[i].ms, g, cg, cg > 0 ? 100.0 * g / cg : 0.0, r[i].sets);
        if (r[i].flops > 0)
            printf(", \"gflop_per_s\": %.3f", r[i].flops / (r[i].ms * 1e6));
        printf("}");
    }
    printf("\n  ]\n}\n");
}

/* ---- main */

static int fail_setup(const char *what, kp_status st)
{
    fprintf(stderr, "kp-bench: %s: %s: %s\n", what, kp_status_string(st), kp_last_error_message());
    return 1;
}

int main(int argc, char **argv)
{
    struct options opt;
    int rc = parse_args(argc, argv, &opt);
    if (rc >= 0)
        return rc;

    int count = 0;
    kp_status st = kp_device_count(&count);
    if (st == KP_ERR_NO_DRIVER || (st == KP_OK && count == 0)) {
        fprintf(stderr, "kp-bench: skipped, no %s device: %s\n", kp_backend_name(),
               st == KP_OK ? "the driver reports 0 devices" : kp_last_error_message());
        return EXIT_SKIP;
    }
    if (st != KP_OK)
        return fail_setup("counting devices", st);

    /* Module load times first, before anything else touches the modules. */
    size_t modules = kp_module_count();
    struct module_time *mt = calloc(modules ? modules : 1, sizeof(*mt));
    if (!mt)
        return fail_setup("out of host memory", KP_ERR_OUT_OF_MEMORY);
    for (size_t m = 0; m < modules; m++) {
        kp_module_info mi;
        kp_module_get_info(m, &mi);
        mt[m].name = mi.name;
    }
    struct bench b = {.opt = &opt, .chunk_bytes = 4u << 20, .rng = 0x9E3779B97F4A7C15ull};
    st = kp_device_open(0, &b.dev);
    if (st != KP_OK)
        return fail_setup("opening device 0", st);
    bool failed = load_modules(b.dev, mt, modules, true) != KP_OK;
    kp_device_close(&b.dev);
    st = kp_device_open(0, &b.dev);
    if (st != KP_OK)
        return fail_setup("reopening device 0", st);
    failed |= load_modules(b.dev, mt, modules, false) != KP_OK;

    kp_device_info info;
    kp_device_get_info(b.dev, &info);
    st = kp_stream_create(b.dev, &b.stream);
    b.start = calloc((size_t)opt.iters, sizeof(*b.start));
    b.end = calloc((size_t)opt.iters, sizeof(*b.end));
    b.ms = calloc((size_t)opt.iters, sizeof(*b.ms));
    b.chunk = malloc(b.chunk_bytes);
    if (st == KP_OK && (!b.start || !b.end || !b.ms || !b.chunk))
        st = KP_ERR_OUT_OF_MEMORY;
    for (int i = 0; st == KP_OK && i < opt.iters; i++) {
        st = kp_event_create(b.dev, &b.start[i]);
        if (st == KP_OK)
            st = kp_event_create(b.dev, &b.end[i]);
    }
    if (st != KP_OK)
        return fail_setup("creating the stream and events", st);

    size_t max_results = N_CASES * KP_DTYPE_COUNT;
    for (size_t t = 0; t < N_TABLES; t++)
        max_results += tables[t]->count();
    struct result *results = calloc(max_results, sizeof(*results));
    if (!results)
        return fail_setup("out of host memory", KP_ERR_OUT_OF_MEMORY);
    size_t nres = 0;
    if (!opt.json) {
        print_header(&b, &info);
        print_modules_text(mt, modules);
    }
    for (size_t c = 0; c < N_CASES; c++) {
        for (int d = 0; d < KP_DTYPE_COUNT; d++) {
            if (!op_selected(&opt, cases[c].op) || !(opt.dtypes & cases[c].dtypes & DT(d)))
                continue;
            struct result *r = &results[nres++];
            bench_case(&b, &cases[c], (kp_dtype)d, r);
            failed |= r->status != KP_OK;
            if (!opt.json)
                print_result_text(r);
        }
    }
    for (size_t t = 0; t < N_TABLES; t++) {
        for (size_t i = 0; i < tables[t]->count(); i++) {
            struct bench_entry e;
            tables[t]->describe(i, &e);
            if (!op_selected(&opt, e.op) || !(opt.dtypes & DT(e.dtype)))
                continue;
            struct result *r = &results[nres++];
            tables[t]->run(&b, i, r);
            failed |= r->status != KP_OK;
            if (!opt.json)
                print_result_text(r);
        }
    }
    if (opt.json)
        print_json(&b, &info, mt, modules, results, nres);
    else if (nres == 0)
        printf("no case accepts the chosen dtypes (--list shows which do)\n");

    for (int i = 0; i < opt.iters; i++) {
        kp_event_destroy(&b.start[i]);
        kp_event_destroy(&b.end[i]);
    }
    free(b.start);
    free(b.end);
    free(b.ms);
    free(b.chunk);
    free(results);
    free(mt);
    kp_stream_destroy(&b.stream);
    kp_device_close(&b.dev);
    return failed ? 1 : 0;
}
