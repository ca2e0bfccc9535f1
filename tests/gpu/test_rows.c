/* softmax, log_softmax, rmsnorm, layernorm and rope on the GPU against a CPU
 * reference in double, for every float dtype over contiguous, strided
 * (transposed), broadcast, offset (unaligned), in-place, empty, odd and very
 * long rows.
 *
 * Tolerances: the kernels accumulate in f32 (f64 for f64) in blocked order,
 * so a row of n elements carries a relative error of about
 * tol(n) = (2 sqrt(n) + 16) eps(acc) + 2 eps(dtype); outputs are compared
 * against that, scaled by the size of the terms involved (see each check).
 * Softmax rows must also sum to 1 within 2 tol(n) + eps(dtype). */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define POISON 0xA5

static const kp_dtype float_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
#define N_FLOATS 4

static double eps_of(kp_dtype dt)
{
    switch (dt) {
    case KP_DTYPE_F32: return 1.2e-7;
    case KP_DTYPE_F64: return 2.3e-16;
    case KP_DTYPE_F16: return 9.8e-4;
    default: return 7.9e-3;
    }
}
static double acc_eps_of(kp_dtype dt) { return dt == KP_DTYPE_F64 ? 2.3e-16 : 1.2e-7; }
/* Smallest spacing of a dtype near 0 (f16 subnormals are coarse). */
static double abs_floor_of(kp_dtype dt) { return dt == KP_DTYPE_F16 ? 1.2e-7 : 1e-30; }

static double row_tol(kp_dtype dt, uint64_t n)
{
    return (2 * sqrt((double)n) + 16) * acc_eps_of(dt) + 2 * eps_of(dt);
}

/* Every case runs the first N_ROW_OPS; the cases marked norm_variants
 * also the norms' other weight and bias combinations. */
enum row_op {
    OP_SOFTMAX, OP_LOG_SOFTMAX, OP_RMSNORM, OP_LAYERNORM, OP_LAYERNORM_NO_AFFINE, N_ROW_OPS,
    OP_RMSNORM_NO_WEIGHT = N_ROW_OPS, OP_LAYERNORM_WEIGHT, OP_LAYERNORM_BIAS, N_ALL_OPS
};
#define N_VARIANT_OPS (N_ALL_OPS - N_ROW_OPS)
static const char *const row_op_names[] = {"softmax", "log_softmax", "rmsnorm", "layernorm",
                                           "layernorm (no weight, bias)", "rmsnorm (no weight)",
                                           "layernorm (weight, no bias)", "layernorm (bias, no weight)"};

static bool is_rmsnorm(enum row_op op) { return op == OP_RMSNORM || op == OP_RMSNORM_NO_WEIGHT; }
static bool uses_weight(enum row_op op)
{
    return op == OP_RMSNORM || op == OP_LAYERNORM || op == OP_LAYERNORM_WEIGHT;
}
static bool uses_bias(enum row_op op) { return op == OP_LAYERNORM || op == OP_LAYERNORM_BIAS; }

struct row_case {
    const char *name;
    int rank;
    int64_t shape[3];
    int64_t src_strides[3];  /* all zero: contiguous */
    int64_t src_offset;
    int64_t dst_strides[3];
    int64_t dst_offset;
    bool in_place;           /* dst is src */
    double shift;            /* added to src's random values, [-8, 8) */
    bool norm_variants;      /* also run OP_RMSNORM_NO_WEIGHT.. */
};

static const struct row_case cases[] = {
    {"rows 37x1000", 2, {37, 1000}, {0}, 0, {0}, 0, false},
    /* exact fits with 1..4 slots per thread, in segments and whole blocks
     * (f32: 9x8 two slots, 7x24 three, 6x1280 one of 320 threads, 6x2560
     * two of 320, 3x5120 four of 320) */
    {"rows 9x8", 2, {9, 8}, {0}, 0, {0}, 0, false},
    {"rows 7x24", 2, {7, 24}, {0}, 0, {0}, 0, false},
    {"rows 6x1280", 2, {6, 1280}, {0}, 0, {0}, 0, false},
    {"rows 6x2560", 2, {6, 2560}, {0}, 0, {0}, 0, false},
    {"rows 3x5120", 2, {3, 5120}, {0}, 0, {0}, 0, false},
    {"rows of length 1", 2, {4099, 1}, {0}, 0, {0}, 5, false},
    {"rows 65x4096", 2, {65, 4096}, {0}, 0, {0}, 0, false},
    {"rows 9x8192", 2, {9, 8192}, {0}, 0, {0}, 0, false},
    {"rows 5x8200 (streamed)", 2, {5, 8200}, {0}, 0, {0}, 0, false},
    {"very long rows 2x(2^20+1)", 2, {2, 1048577}, {0}, 0, {0}, 0, false},
    /* vocabulary widths: contiguous rows longer than a block's slots are
     * split over several blocks, with a short last chunk; rows far from 0
     * (layernorm's variance: no cancellation across the chunks) */
    {"vocabulary rows 3x32000", 2, {3, 32000}, {0}, 0, {0}, 0, false},
    {"vocabulary rows 2x151936 in place", 2, {2, 151936}, {0}, 0, {0}, 0, true, 0, true},
    {"odd rows 3x40001, 40008 apart", 2, {3, 40001}, {40008, 1}, 0, {40008, 1}, 0, false, 0, true},
    {"one odd row 1x40001 in place", 2, {1, 40001}, {0}, 0, {0}, 0, true, 0, true},
    {"rows 4x40000 around 10^4", 2, {4, 40000}, {0}, 0, {0}, 0, false, 1e4, true},
    /* rows with 16-byte loads whose last slot is cut by the row's end
     * (16-bit: 3 and 5 elements of 8, f32 3 and 1 of 4), which the
     * strided kernels cache with their checks */
    {"odd rows 7x1003, 1008 apart", 2, {7, 1003}, {1008, 1}, 0, {1008, 1}, 0, false, 0, true},
    {"odd rows 5x3005, 3008 apart in place", 2, {5, 3005}, {3008, 1}, 0, {3008, 1}, 0, true, 0, true},
    {"wide rows 300x20008", 2, {300, 20008}, {0}, 0, {0}, 0, false},
    /* more such rows than multiprocessors: where a block may take more
     * than 128 KB of shared memory, softmax rows of up to 128 KB (18432,
     * 20008 above and 32000, f32 and 16-bit) and 16-bit rmsnorm ones take a
     * block a row, staged whole (<op>_whole_<dtype>);
     * where the GPU has clusters (else <op>_stream), other f32 rows of up to
     * 98304 take a cluster a row, chunks in registers (<op>_cluster_f32),
     * and rows of more than 128 KB (f32 layernorm: all) one with chunks in
     * shared memory (<op>_staged_<dtype>; f64 streams); chunks of whole
     * slots, all equal (18432, 32000, 151936) or the last one shorter
     * (20008 above, 128264); 16-bit layernorm rows of 32000 stream */
    {"many vocabulary rows 200x32000 around 10^4 in place", 2, {200, 32000}, {0}, 0, {0}, 0, true, 1e4, true},
    {"many rows 200x18432", 2, {200, 18432}, {0}, 0, {0}, 0, false},
    {"many vocabulary rows 160x151936", 2, {160, 151936}, {0}, 0, {0}, 0, false},
    {"many rows 160x128264 around 10^4 in place", 2, {160, 128264}, {0}, 0, {0}, 0, true, 1e4, true},
    {"odd rows 100x33 offset 1", 2, {100, 33}, {0}, 1, {0}, 3, false},
    {"short rows 1000x3", 2, {1000, 3}, {0}, 0, {0}, 0, false},
    {"transposed 50x70", 2, {50, 70}, {1, 50}, 0, {0}, 0, false},
    {"row gaps 4x5x300", 3, {4, 5, 300}, {2000, 310, 1}, 2, {1600, 320, 1}, 8, false},
    {"aligned row gaps 3x4x256", 3, {3, 4, 256}, {1600, 320, 1}, 8, {0}, 0, false},
    {"broadcast src 5x128", 2, {5, 128}, {0, 1}, 0, {0}, 0, false},
    {"in place 33x4096", 2, {33, 4096}, {0}, 0, {0}, 0, true},
    {"in place transposed 64x40", 2, {64, 40}, {1, 64}, 0, {1, 64}, 0, true},
    {"empty rows", 2, {0, 64}, {0}, 0, {0}, 0, false},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static kp_tensor make(struct gpu_buf *b, kp_dtype dt, const struct row_case *c, const int64_t *strides,
                      int64_t offset)
{
    return gpu_tensor(b, dt, c->rank, c->shape, case_strides(strides, c->rank), offset);
}

/* Reference of one row: x[] in, want[] out; returns the row's statistics. */
static void row_ref(enum row_op op, const double *x, const double *w, const double *b, double eps,
                    uint64_t n, double *want)
{
    if (op == OP_SOFTMAX || op == OP_LOG_SOFTMAX) {
        double m = -INFINITY;
        for (uint64_t j = 0; j < n; j++)
            if (x[j] > m || isnan(x[j]) || isnan(m))
                m = isnan(m) ? m : x[j];
        double s = 0;
        for (uint64_t j = 0; j < n; j++)
            s += exp(x[j] - m);
        for (uint64_t j = 0; j < n; j++)
            want[j] = op == OP_SOFTMAX ? exp(x[j] - m) / s : (x[j] - m) - log(s);
    } else if (is_rmsnorm(op)) {
        double ss = 0;
        for (uint64_t j = 0; j < n; j++)
            ss += x[j] * x[j];
        double inv = 1 / sqrt(ss / (double)n + eps);
        for (uint64_t j = 0; j < n; j++)
            want[j] = x[j] * inv * (w ? w[j] : 1);
    } else {
        double mean = 0, var = 0;
        for (uint64_t j = 0; j < n; j++)
            mean += x[j];
        mean /= (double)n;
        for (uint64_t j = 0; j < n; j++)
            var += (x[j] - mean) * (x[j] - mean);
        double inv = 1 / sqrt(var / (double)n + eps);
        for (uint64_t j = 0; j < n; j++)
            want[j] = (x[j] - mean) * inv * (w ? w[j] : 1) + (b ? b[j] : 0);
    }
}

/* Allowed error of element j (see the file comment). */
static double elem_tol(enum row_op op, kp_dtype dt, uint64_t n, const double *x, const double *w,
                       const double *b, double want, uint64_t j, double mean_abs, double inv)
{
    double t = row_tol(dt, n);
    switch (op) {
    case OP_SOFTMAX: return t * fabs(want) + abs_floor_of(dt);
    case OP_LOG_SOFTMAX: return t * (fabs(want) + 1) + abs_floor_of(dt);
    case OP_RMSNORM:
    case OP_RMSNORM_NO_WEIGHT: return t * fabs(want) + abs_floor_of(dt);
    default:  /* the mean's error scales with mean |x|, and x - mean cancels */
        return t * ((fabs(x[j]) + mean_abs) * inv * (w ? fabs(w[j]) : 1) + (b ? fabs(b[j]) : 0)) +
               abs_floor_of(dt);
    }
}

static kp_status run_op(enum row_op op, const kp_tensor *d, const kp_tensor *s, const kp_tensor *w,
                        const kp_tensor *b, float eps)
{
    switch (op) {
    case OP_SOFTMAX: return kp_softmax(gpu_stream, d, s);
    case OP_LOG_SOFTMAX: return kp_log_softmax(gpu_stream, d, s);
    case OP_RMSNORM:
    case OP_RMSNORM_NO_WEIGHT: return kp_rmsnorm(gpu_stream, d, s, uses_weight(op) ? w : NULL, eps);
    default: return kp_layernorm(gpu_stream, d, s, uses_weight(op) ? w : NULL, uses_bias(op) ? b : NULL, eps);
    }
}

static void run_case(enum row_op op, kp_dtype dt, const struct row_case *c)
{
    const size_t es = kp_dtype_size(dt);
    const int last = c->rank - 1;
    const uint64_t cols = (uint64_t)c->shape[last];
    struct gpu_buf none = {0}, src, dst, wb;
    kp_tensor s0 = make(&none, dt, c, c->src_strides, c->src_offset);
    kp_tensor d0 = make(&none, dt, c, c->dst_strides, c->dst_offset);
    size_t src_elems = (size_t)tensor_extent(&s0), dst_elems = (size_t)tensor_extent(&d0);
    gpu_buf_alloc(&src, src_elems * es);
    host_random(dt, src.host, src_elems);
    for (size_t i = 0; c->shift != 0 && i < src_elems; i++)
        host_set(dt, src.host, i, host_get(dt, src.host, i) + c->shift);
    if (c->in_place) {
        dst = src;
    } else {
        gpu_buf_alloc(&dst, dst_elems * es);
        memset(dst.host, POISON, dst.bytes);
        gpu_buf_upload(&dst);
    }
    /* weight at [0, cols) and bias at [cols + 8, 2 cols + 8) of one buffer, weight ~ [0.5, 1.5] */
    gpu_buf_alloc(&wb, (2 * cols + 8) * es + 16);
    for (uint64_t j = 0; j < 2 * cols + 8; j++)
        host_set(dt, wb.host, j, j < cols ? rng_uniform(0.5, 1.5) : rng_uniform(-1, 1));
    gpu_buf_upload(&wb);
    unsigned char *src_copy = malloc(src.bytes ? src.bytes : 1);
    memcpy(src_copy, src.host, src.bytes);
    gpu_buf_upload(&src);

    kp_tensor s = make(&src, dt, c, c->src_strides, c->src_offset);
    kp_tensor d = c->in_place ? s : make(&dst, dt, c, c->dst_strides, c->dst_offset);
    kp_tensor w = gpu_tensor(&wb, dt, 1, (int64_t[]){(int64_t)cols}, NULL, 0);
    kp_tensor b = gpu_tensor(&wb, dt, 1, (int64_t[]){(int64_t)cols}, NULL, (int64_t)cols + 8);
    const float eps = 1e-5f;
    CK_OK(run_op(op, &d, &s, &w, &b, eps));
    gpu_buf_download(&dst);

    double *x = malloc((cols + 1) * sizeof(double)), *want = malloc((cols + 1) * sizeof(double));
    double *wv = malloc((cols + 1) * sizeof(double)), *bv = malloc((cols + 1) * sizeof(double));
    const double *wr = uses_weight(op) ? wv : NULL, *br = uses_bias(op) ? bv : NULL;
    for (uint64_t j = 0; j < cols; j++) {
        wv[j] = host_get(dt, wb.host, j);
        bv[j] = host_get(dt, wb.host, cols + 8 + j);
    }
    unsigned char *written = calloc(dst_elems, 1);
    const uint64_t rows = cols ? tensor_numel(&s) / cols : 0;
    int failures = 0;
    for (uint64_t r = 0; r < rows && failures < 10; r++) {
        for (uint64_t j = 0; j < cols; j++)
            x[j] = host_get(dt, src_copy, tensor_offset(&s, r * cols + j));
        row_ref(op, x, wr, br, eps, cols, want);
        double mean = 0, var = 0, mean_abs = 0;
        for (uint64_t j = 0; j < cols; j++) {
            mean += x[j];
            mean_abs += fabs(x[j]);
        }
        mean /= (double)cols;
        mean_abs /= (double)cols;
        for (uint64_t j = 0; j < cols; j++)
            var += (x[j] - mean) * (x[j] - mean);
        double inv = 1 / sqrt(var / (double)cols + eps), total = 0;
        for (uint64_t j = 0; j < cols && failures < 10; j++) {
            size_t di = tensor_offset(&d, r * cols + j);
            written[di] = 1;
            double got = host_get(dt, dst.host, di);
            total += got;
            double tol = elem_tol(op, dt, cols, x, wr, br, want[j], j, mean_abs, inv);
            if (!(fabs(got - want[j]) <= tol)) {
                printf("FAIL %s: %s %s row %llu col %llu: got %.9g, want %.9g (x = %.9g, tolerance %.3g)\n",
                       c->name, row_op_names[op], kp_dtype_name(dt), (unsigned long long)r,
                       (unsigned long long)j, got, want[j], x[j], tol);
                failures++;
            }
        }
        if (op == OP_SOFTMAX && failures == 0 &&
            !(fabs(total - 1) <= 2 * row_tol(dt, cols) + eps_of(dt))) {
            printf("FAIL %s: softmax %s row %llu sums to %.9g\n", c->name, kp_dtype_name(dt),
                   (unsigned long long)r, total);
            failures++;
        }
    }
    if (!c->in_place)
        for (size_t i = 0; i < dst.bytes && failures < 10; i++)
            if (!written[i / es] && ((unsigned char *)dst.host)[i] != POISON) {
                printf("FAIL %s: %s %s: byte %zu outside the output view was overwritten\n", c->name,
                       row_op_names[op], kp_dtype_name(dt), i);
                failures++;
            }
    free(x);
    free(want);
    free(wv);
    free(bv);
    free(written);
    free(src_copy);
    gpu_buf_free(&wb);
    if (!c->in_place)
        gpu_buf_free(&dst);
    gpu_buf_free(&src);
    ck_assert_msg(failures == 0, "%s: %s %s: mismatches (see the lines above)", c->name, row_op_names[op],
                  kp_dtype_name(dt));
}

START_TEST(test_rows)
{
    const struct row_case *c = &cases[_i / (N_FLOATS * N_ROW_OPS)];
    kp_dtype dt = float_dtypes[(_i / N_ROW_OPS) % N_FLOATS];
    rng_seed(9000 + (uint64_t)_i);
    run_case((enum row_op)(_i % N_ROW_OPS), dt, c);
}
END_TEST

/* The cases marked norm_variants, k-th first. */
static const struct row_case *variant_case(int k)
{
    for (size_t i = 0; i < N_CASES; i++)
        if (cases[i].norm_variants && k-- == 0)
            return &cases[i];
    return NULL;
}

static int variant_cases(void)
{
    int n = 0;
    while (variant_case(n))
        n++;
    return n;
}

/* rmsnorm without weight and layernorm with only one of weight and bias,
 * over the wide rows (split over blocks where they are few). */
START_TEST(test_norm_variants)
{
    const struct row_case *c = variant_case(_i / (N_FLOATS * N_VARIANT_OPS));
    kp_dtype dt = float_dtypes[(_i / N_VARIANT_OPS) % N_FLOATS];
    rng_seed(9500 + (uint64_t)_i);
    run_case((enum row_op)(N_ROW_OPS + _i % N_VARIANT_OPS), dt, c);
}
END_TEST

/* softmax with NaN and infinities follows the formula: NaN or +inf in a row
 * makes it NaN; -inf gives 0 (log: -inf) next to finite values; an all -inf
 * row is NaN. Rows of 300 and of 40000 (split over several blocks, where
 * row 5 has whole blocks of -inf beside finite values, and row 6 a NaN
 * among them). */
START_TEST(test_softmax_special_values)
{
    kp_dtype dt = _i & 1 ? KP_DTYPE_BF16 : KP_DTYPE_F32;
    const int ROWS = 7, COLS = _i & 2 ? 40000 : 300, NEG = COLS / 4 * 3;
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, (size_t)ROWS * COLS * kp_dtype_size(dt));
    gpu_buf_alloc(&dst, (size_t)ROWS * COLS * kp_dtype_size(dt));
    rng_seed(11);
    host_random(dt, src.host, (size_t)ROWS * COLS);
    host_set(dt, src.host, 0 * COLS + 17, NAN);
    host_set(dt, src.host, 1 * COLS + COLS - 1, INFINITY);
    host_set(dt, src.host, 2 * COLS + 3, -INFINITY);
    for (int j = 0; j < COLS; j++)
        host_set(dt, src.host, 3 * COLS + j, -INFINITY);
    for (int j = 0; j < NEG; j++) {
        host_set(dt, src.host, 5 * (size_t)COLS + j, -INFINITY);
        host_set(dt, src.host, 6 * (size_t)COLS + j, j == 5 ? NAN : -INFINITY);
    }
    gpu_buf_upload(&src);
    kp_tensor s = gpu_tensor(&src, dt, 2, (int64_t[]){ROWS, COLS}, NULL, 0);
    kp_tensor d = gpu_tensor(&dst, dt, 2, (int64_t[]){ROWS, COLS}, NULL, 0);
    for (int log_op = 0; log_op < 2; log_op++) {
        const char *op = log_op ? "log_softmax" : "softmax";
        CK_OK(log_op ? kp_log_softmax(gpu_stream, &d, &s) : kp_softmax(gpu_stream, &d, &s));
        gpu_buf_download(&dst);
        for (int r = 0; r < ROWS; r++) {
            if (r == 4)
                continue;
            double sum = 0;
            for (int j = 0; j < COLS; j++) {
                double got = host_get(dt, dst.host, (size_t)r * COLS + j);
                bool want_nan = r == 0 || r == 1 || r == 3 || r == 6;
                bool want_zero = (r == 2 && j == 3) || (r == 5 && j < NEG);
                sum += log_op ? 0 : got;
                if (want_nan)
                    ck_assert_msg(isnan(got), "%s %s %dx%d row %d col %d: got %g, want NaN", op,
                                  kp_dtype_name(dt), ROWS, COLS, r, j, got);
                else if (want_zero)
                    ck_assert_msg(log_op ? (isinf(got) && got < 0) : got == 0,
                                  "%s %s %dx%d row %d col %d: -inf input gave %g", op,
                                  kp_dtype_name(dt), ROWS, COLS, r, j, got);
                else
                    ck_assert_msg(isfinite(got), "%s %s %dx%d row %d col %d: got %g", op,
                                  kp_dtype_name(dt), ROWS, COLS, r, j, got);
            }
            if (!log_op && (r == 2 || r == 5))
                ck_assert_msg(fabs(sum - 1) < 0.02, "softmax %s %dx%d row %d sums to %g",
                              kp_dtype_name(dt), ROWS, COLS, r, sum);
        }
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}
END_TEST

/* ---------------------------------------------------------------- rope */

struct rope_case {
    const char *name;
    kp_rope_layout layout;
    int64_t shape[4];        /* src shape in the layout's order */
    int64_t src_strides[4];  /* all zero: contiguous */
    int64_t src_offset;
    bool batched_tables;     /* (b, t, d/2) instead of (t, d/2) */
    bool table_transposed;   /* tables stored (d/2, t) and viewed transposed */
    bool in_place;
    bool aligned;            /* dst and both tables 16-byte aligned (vector steps) */
};

static const struct rope_case rope_cases[] = {
    {"interleaved 2x3x5x8", KP_ROPE_INTERLEAVED, {2, 3, 5, 8}, {0}, 0, false, false, false},
    {"half 2x3x5x8", KP_ROPE_HALF, {2, 3, 5, 8}, {0}, 0, false, false, false},
    {"thd 2x5x3x8", KP_ROPE_THD, {2, 5, 3, 8}, {0}, 0, false, false, false},
    {"interleaved 1x32x77x128 batched tables", KP_ROPE_INTERLEAVED, {1, 32, 77, 128}, {0}, 0, true, false,
     false},
    {"half 2x4x33x64 in place", KP_ROPE_HALF, {2, 4, 33, 64}, {0}, 1, false, false, true},
    {"thd 3x17x5x96 batched", KP_ROPE_THD, {3, 17, 5, 96}, {0}, 0, true, false, false},
    {"half with permuted src", KP_ROPE_HALF, {2, 3, 7, 10}, {210, 10, 30, 1}, 3, false, true, false},
    {"interleaved d=2", KP_ROPE_INTERLEAVED, {3, 2, 4, 2}, {0}, 0, false, false, false},
    {"thd with 600 pairs per row", KP_ROPE_THD, {1, 3, 2, 1200}, {0}, 0, false, false, false},
    {"empty", KP_ROPE_HALF, {2, 0, 5, 8}, {0}, 0, false, false, false},
    /* aligned operands: vector steps where d / 2 allows (16 bytes of x) */
    {"interleaved 2x4x33x64 aligned", KP_ROPE_INTERLEAVED, {2, 4, 33, 64}, {0}, 0, false, false, false, true},
    {"half 2x4x33x128 aligned", KP_ROPE_HALF, {2, 4, 33, 128}, {0}, 0, false, false, false, true},
    {"thd 2x9x4x64 batched aligned", KP_ROPE_THD, {2, 9, 4, 64}, {0}, 0, true, false, false, true},
    {"half 2x4x3x8 aligned in place", KP_ROPE_HALF, {2, 4, 3, 8}, {0}, 0, false, false, true, true},
    /* in place, rows of many vector steps (interleaved: KP_ROPE_STEPS a
     * thread, all loaded before any store) */
    {"interleaved 2x3x5x128 aligned in place", KP_ROPE_INTERLEAVED, {2, 3, 5, 128}, {0}, 0, false, false, true,
     true},
    {"half 2x3x5x256 aligned in place", KP_ROPE_HALF, {2, 3, 5, 256}, {0}, 0, false, false, true, true},
    {"interleaved 3x2x5x8 aligned", KP_ROPE_INTERLEAVED, {3, 2, 5, 8}, {0}, 0, false, false, false, true},
    {"thd 1x3x2x1200 aligned", KP_ROPE_THD, {1, 3, 2, 1200}, {0}, 0, false, false, false, true},
};
#define N_ROPE (sizeof(rope_cases) / sizeof(rope_cases[0]))

static void run_rope(kp_dtype dt, const struct rope_case *c)
{
    const size_t es = kp_dtype_size(dt);
    const bool thd = c->layout == KP_ROPE_THD;
    const int64_t B = c->shape[0], H = c->shape[thd ? 2 : 1], T = c->shape[thd ? 1 : 2], D = c->shape[3];
    const int64_t half = D / 2;
    struct gpu_buf src, dst, tab;
    int64_t n = B * H * T * D;
    kp_tensor probe = gpu_tensor(&(struct gpu_buf){0}, dt, 4, c->shape,
                                 case_strides(c->src_strides, 4), c->src_offset);
    size_t src_elems = (size_t)tensor_extent(&probe);
    gpu_buf_alloc(&src, src_elems * es);
    host_random(dt, src.host, src_elems);
    if (c->in_place) {
        dst = src;
    } else {
        gpu_buf_alloc(&dst, ((size_t)n + 2) * es);
        memset(dst.host, POISON, dst.bytes);
        gpu_buf_upload(&dst);
    }
    /* the sin table starts after the cos table: one element later, or at
     * the next 16 bytes for aligned cases */
    const int64_t tb = c->batched_tables ? B : 1, table = tb * T * half;
    const int64_t sin_at = c->aligned ? (table + 8) / 8 * 8 : table + 1;
    gpu_buf_alloc(&tab, (size_t)(sin_at + table) * es);
    for (int64_t i = 0; i < sin_at + table; i++)
        host_set(dt, tab.host, (size_t)i, rng_uniform(-1, 1));
    gpu_buf_upload(&tab);
    unsigned char *src_copy = malloc(src.bytes ? src.bytes : 1);
    memcpy(src_copy, src.host, src.bytes);
    gpu_buf_upload(&src);

    kp_tensor s = gpu_tensor(&src, dt, 4, c->shape, case_strides(c->src_strides, 4), c->src_offset);
    kp_tensor d = c->in_place ? s : gpu_tensor(&dst, dt, 4, c->shape, NULL, c->aligned ? 0 : 1);
    kp_tensor ct, st;
    if (c->batched_tables) {
        ct = gpu_tensor(&tab, dt, 3, (int64_t[]){B, T, half}, NULL, 0);
        st = gpu_tensor(&tab, dt, 3, (int64_t[]){B, T, half}, NULL, sin_at);
    } else if (c->table_transposed) {
        ct = gpu_tensor(&tab, dt, 2, (int64_t[]){T, half}, (int64_t[]){1, T}, 0);
        st = gpu_tensor(&tab, dt, 2, (int64_t[]){T, half}, (int64_t[]){1, T}, sin_at);
    } else {
        ct = gpu_tensor(&tab, dt, 2, (int64_t[]){T, half}, NULL, 0);
        st = gpu_tensor(&tab, dt, 2, (int64_t[]){T, half}, NULL, sin_at);
    }
    CK_OK(kp_rope(gpu_stream, c->layout, &d, &s, &ct, &st));
    gpu_buf_download(&dst);

    unsigned char *written = calloc(dst.bytes / es + 1, 1);
    int failures = 0;
    for (int64_t bi = 0; bi < B && failures < 10; bi++)
        for (int64_t hi = 0; hi < H; hi++)
            for (int64_t ti = 0; ti < T; ti++)
                for (int64_t j = 0; j < half && failures < 10; j++) {
                    int64_t e1 = c->layout == KP_ROPE_INTERLEAVED ? 2 * j : j;
                    int64_t e2 = c->layout == KP_ROPE_INTERLEAVED ? 2 * j + 1 : j + half;
                    int64_t i1[4] = {bi, thd ? ti : hi, thd ? hi : ti, e1};
                    int64_t i2[4] = {bi, thd ? ti : hi, thd ? hi : ti, e2};
                    size_t o1 = (size_t)s.layout.offset, o2 = o1, p1 = (size_t)d.layout.offset, p2 = p1;
                    for (int k = 0; k < 4; k++) {
                        o1 += (size_t)(i1[k] * s.layout.strides[k]);
                        o2 += (size_t)(i2[k] * s.layout.strides[k]);
                        p1 += (size_t)(i1[k] * d.layout.strides[k]);
                        p2 += (size_t)(i2[k] * d.layout.strides[k]);
                    }
                    int64_t cb = c->batched_tables ? bi : 0;
                    size_t co = (size_t)ct.layout.offset, so = (size_t)st.layout.offset;
                    if (c->batched_tables) {
                        co += (size_t)(cb * ct.layout.strides[0] + ti * ct.layout.strides[1] + j * ct.layout.strides[2]);
                        so += (size_t)(cb * st.layout.strides[0] + ti * st.layout.strides[1] + j * st.layout.strides[2]);
                    } else {
                        co += (size_t)(ti * ct.layout.strides[0] + j * ct.layout.strides[1]);
                        so += (size_t)(ti * st.layout.strides[0] + j * st.layout.strides[1]);
                    }
                    double x1 = host_get(dt, src_copy, o1), x2 = host_get(dt, src_copy, o2);
                    double cv = host_get(dt, tab.host, co), sv = host_get(dt, tab.host, so);
                    double w1 = x1 * cv - x2 * sv, w2 = x1 * sv + x2 * cv;
                    double scale = fabs(x1 * cv) + fabs(x2 * sv) + fabs(x1 * sv) + fabs(x2 * cv);
                    double tol = 4 * acc_eps_of(dt) * scale + eps_of(dt) * fmax(fabs(w1), fabs(w2)) + 1e-30;
                    double g1 = host_get(dt, dst.host, p1), g2 = host_get(dt, dst.host, p2);
                    written[p1] = written[p2] = 1;
                    if (!(fabs(g1 - w1) <= tol && fabs(g2 - w2) <= tol)) {
                        printf("FAIL rope %s %s (b %lld, h %lld, t %lld, pair %lld): got (%.9g, %.9g), "
                               "want (%.9g, %.9g), tolerance %.3g\n",
                               c->name, kp_dtype_name(dt), (long long)bi, (long long)hi, (long long)ti,
                               (long long)j, g1, g2, w1, w2, tol);
                        failures++;
                    }
                }
    if (!c->in_place)
        for (size_t i = 0; i < dst.bytes && failures < 10; i++)
            if (!written[i / es] && ((unsigned char *)dst.host)[i] != POISON) {
                printf("FAIL rope %s %s: byte %zu outside the output view was overwritten\n", c->name,
                       kp_dtype_name(dt), i);
                failures++;
            }
    free(written);
    free(src_copy);
    gpu_buf_free(&tab);
    if (!c->in_place)
        gpu_buf_free(&dst);
    gpu_buf_free(&src);
    ck_assert_msg(failures == 0, "rope %s %s: mismatches (see the lines above)", c->name, kp_dtype_name(dt));
}

START_TEST(test_rope)
{
    rng_seed(12000 + (uint64_t)_i);
    run_rope(float_dtypes[_i % N_FLOATS], &rope_cases[_i / N_FLOATS]);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "rows"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("rows");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_rows, 0, (int)(N_CASES * N_FLOATS * N_ROW_OPS));
    tcase_add_loop_test(tc, test_norm_variants, 0, variant_cases() * N_FLOATS * N_VARIANT_OPS);
    tcase_add_loop_test(tc, test_softmax_special_values, 0, 4);
    tcase_add_loop_test(tc, test_rope, 0, (int)(N_ROPE * N_FLOATS));
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
