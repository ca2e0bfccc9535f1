/* kp_reduce on the GPU against a CPU reference, for every op and dtype over
 * contiguous, strided (transposed), broadcast, offset, empty and odd layouts,
 * one or several (also non-innermost) reduced dims, very long rows and full
 * reductions (two passes), NaN and infinities.
 *
 * Float inputs are whole numbers in [-8, 8] (many ties for the arg ops): the
 * f32/f64 accumulators then sum them exactly, so sums must equal the
 * reference rounded once to the output dtype, and a lost or repeated element
 * shows. A second test sums real-valued data with the tolerance
 * (n + 16) * eps(acc) * sum|x| + eps(dtype) * |sum|. Outputs are poisoned
 * first; elements outside the written view must keep the poison. */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))
static const kp_reduce_op all_ops[] = {KP_REDUCE_SUM, KP_REDUCE_MEAN, KP_REDUCE_MIN, KP_REDUCE_MAX,
                                       KP_REDUCE_ARGMIN, KP_REDUCE_ARGMAX};
#define N_OPS (sizeof(all_ops) / sizeof(all_ops[0]))
static const char *const op_names[] = {"sum", "mean", "min", "max", "argmin", "argmax"};

static bool is_float(kp_dtype dt) { return dt <= KP_DTYPE_BF16; }
static bool is_arg(kp_reduce_op op) { return op == KP_REDUCE_ARGMIN || op == KP_REDUCE_ARGMAX; }

/* Relative rounding unit of a float dtype. */
static double eps_of(kp_dtype dt)
{
    switch (dt) {
    case KP_DTYPE_F32: return 1.2e-7;
    case KP_DTYPE_F64: return 2.3e-16;
    case KP_DTYPE_F16: return 9.8e-4;
    case KP_DTYPE_BF16: return 7.9e-3;
    default: return 0;
    }
}
/* ... and of the accumulator the kernels use for it. */
static double acc_eps_of(kp_dtype dt) { return dt == KP_DTYPE_F64 ? 2.3e-16 : 1.2e-7; }

/* v rounded as the dtype stores it. */
static double round_to(kp_dtype dt, double v)
{
    unsigned char tmp[8];
    host_set(dt, tmp, 0, v);
    return host_get(dt, tmp, 0);
}

struct red_case {
    const char *name;
    int rank;
    int64_t shape[4];
    int64_t src_strides[4];  /* all zero: contiguous */
    int64_t src_offset;
    int ndims;
    int dims[4];
    int64_t dst_strides[4];  /* all zero: contiguous over dst's shape */
    int64_t dst_offset;
};

static const struct red_case cases[] = {
    {"rows 37x1000", 2, {37, 1000}, {0}, 0, 1, {1}, {0}, 0},
    {"rows of length 1", 2, {4099, 1}, {0}, 0, 1, {1}, {0}, 3},
    {"odd rows 3x4097 offset 1", 2, {3, 4097}, {0}, 1, 1, {1}, {0}, 0},
    {"short rows 300x5", 2, {300, 5}, {0}, 2, 1, {1}, {0}, 1},
    {"rows 64x4096", 2, {64, 4096}, {0}, 0, 1, {1}, {0}, 0},
    {"long row 2x(2^20+3)", 2, {2, 1048579}, {0}, 0, 1, {1}, {0}, 0},
    {"full 2^22+5", 1, {4194309}, {0}, 3, 1, {0}, {0}, 0},
    {"transposed 300x70 over last", 2, {300, 70}, {1, 300}, 0, 1, {1}, {0}, 0},
    {"outer dim of 1000x300", 2, {1000, 300}, {0}, 0, 1, {0}, {0}, 0},
    {"outer dim of 3x20 (few outputs)", 2, {3, 20}, {0}, 0, 1, {0}, {0}, 0},
    /* 16-byte runs of outputs (reduce_cols_* taking 16 bytes a thread) */
    {"outer dim of 1000x256", 2, {1000, 256}, {0}, 0, 1, {0}, {0}, 0},
    {"middle dim of 8x300x64", 3, {8, 300, 64}, {0}, 0, 1, {1}, {0}, 0},
    {"outer dim of 4096x256 (split)", 2, {4096, 256}, {0}, 0, 1, {0}, {0}, 0},
    {"outer dim of 1000x256 offset 1", 2, {1000, 256}, {0}, 1, 1, {0}, {0}, 0},
    /* short runs for kp_column_fold's ring of 4: 5 elements take its tail
     * alone; 11 one steady step, the drain and a tail of 3 */
    {"outer dim of 5x1024 (short runs)", 2, {5, 1024}, {0}, 0, 1, {0}, {0}, 0},
    {"middle dim of 3x11x512", 3, {3, 11, 512}, {0}, 0, 1, {1}, {0}, 0},
    /* ... with the reduced dim in slices across the block (uneven slices,
     * a part-filled block; then chunks of splits not a multiple of slices) */
    {"middle dim of 5x99x200 (slices)", 3, {5, 99, 200}, {0}, 0, 1, {1}, {0}, 0},
    {"middle dim of 2x3001x128 (slices, split)", 3, {2, 3001, 128}, {0}, 0, 1, {1}, {0}, 0},
    {"dims 0,2 of 6x7x8x9", 4, {6, 7, 8, 9}, {0}, 0, 2, {0, 2}, {0}, 0},
    {"dims 3,1 of permuted 5x6x7x8", 4, {5, 6, 7, 8}, {7, 280, 1, 35}, 4, 2, {3, 1}, {0}, 0},
    {"all dims of transposed 9x10x11", 3, {9, 10, 11}, {1, 99, 9}, 0, 3, {0, 1, 2}, {0}, 0},
    {"broadcast src over reduced dim", 2, {500, 300}, {0, 1}, 0, 1, {0}, {0}, 0},
    {"broadcast src over kept dim", 2, {40, 77}, {0, 1}, 5, 1, {1}, {0}, 0},
    {"strided dst", 3, {6, 50, 9}, {0}, 0, 1, {1}, {40, 0, 3}, 2},
    {"stride-2 rows 2x20000 (split gather)", 2, {2, 20000}, {1, 2}, 0, 1, {1}, {0}, 0},
    {"empty reduced set", 2, {5, 0}, {0}, 0, 1, {1}, {0}, 0},
    {"empty output", 2, {0, 7}, {0}, 0, 1, {1}, {0}, 0},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* src and dst tensors of a case (over b's buffer, or none to size it). */
static kp_tensor case_src(const struct red_case *c, struct gpu_buf *b, kp_dtype dt)
{
    return gpu_tensor(b, dt, c->rank, c->shape, case_strides(c->src_strides, c->rank), c->src_offset);
}

static kp_tensor case_dst(const struct red_case *c, struct gpu_buf *b, kp_dtype dt)
{
    int64_t shape[4];
    for (int d = 0; d < c->rank; d++)
        shape[d] = c->shape[d];
    for (int i = 0; i < c->ndims; i++)
        shape[c->dims[i]] = 1;
    return gpu_tensor(b, dt, c->rank, shape, case_strides(c->dst_strides, c->rank), c->dst_offset);
}

/* Whole numbers in [-8, 8] for floats, the harness's values otherwise. */
static void fill_exact(kp_dtype dt, void *base, size_t n)
{
    if (!is_float(dt)) {
        host_random(dt, base, n);
        return;
    }
    for (size_t i = 0; i < n; i++)
        host_set(dt, base, i, (double)(int)(rng_next() % 17) - 8.0);
}

/* The reference of one output. `at(k)` is element k (row-major over the
 * reduced dims) of the output's reduced set. */
struct ref {
    double value;     /* float result (NaN-propagating for min/max) */
    uint64_t bits;    /* integer sum, min, max: exact, wrapped */
    uint64_t index;   /* arg ops */
    double abs_sum;   /* sum of |x| */
};

static bool better(kp_reduce_op op, double a, uint64_t ia, double b, uint64_t ib)
{
    bool an = isnan(a), bn = isnan(b);
    if (an || bn)
        return an && (!bn || ia < ib);
    bool wins = op == KP_REDUCE_ARGMAX ? a > b : a < b;
    return wins || (a == b && ia < ib);
}

static void reduce_ref(kp_reduce_op op, kp_dtype dt, const void *src, const size_t *offsets, uint64_t n,
                       struct ref *r)
{
    memset(r, 0, sizeof(*r));
    bool integer = !is_float(dt);
    double acc = op == KP_REDUCE_MIN ? INFINITY : op == KP_REDUCE_MAX ? -INFINITY : 0;
    uint64_t ibits = 0;
    int64_t imin = INT64_MAX, imax = INT64_MIN;
    uint64_t umin = UINT64_MAX, umax = 0;
    double best = NAN;
    uint64_t best_i = UINT64_MAX;
    for (uint64_t k = 0; k < n; k++) {
        size_t o = offsets[k];
        double v = host_get(dt, src, o);
        r->abs_sum += fabs(v);
        if (integer) {
            uint64_t u = dt == KP_DTYPE_U8 ? ((const uint8_t *)src)[o]
                         : dt == KP_DTYPE_U32 ? ((const uint32_t *)src)[o]
                                              : (uint64_t)((const int64_t *)src)[o];
            ibits += u;
            if (dt == KP_DTYPE_I64) {
                int64_t s = (int64_t)u;
                imin = s < imin ? s : imin;
                imax = s > imax ? s : imax;
            } else {
                umin = u < umin ? u : umin;
                umax = u > umax ? u : umax;
            }
        }
        switch (op) {
        case KP_REDUCE_SUM: case KP_REDUCE_MEAN: acc += v; break;
        case KP_REDUCE_MIN: acc = (v < acc || isnan(v) || isnan(acc)) ? (isnan(acc) ? acc : v) : acc; break;
        case KP_REDUCE_MAX: acc = (v > acc || isnan(v) || isnan(acc)) ? (isnan(acc) ? acc : v) : acc; break;
        default:
            if (k == 0 || better(op, v, k, best, best_i)) {
                best = v;
                best_i = k;
            }
            break;
        }
    }
    r->value = op == KP_REDUCE_MEAN ? acc / (double)n : acc;
    r->index = best_i;
    if (integer) {
        if (op == KP_REDUCE_SUM)
            r->bits = ibits;
        else if (op == KP_REDUCE_MIN)
            r->bits = dt == KP_DTYPE_I64 ? (uint64_t)imin : umin;
        else
            r->bits = dt == KP_DTYPE_I64 ? (uint64_t)imax : umax;
    }
}

/* Offsets (elements) of the reduced set of output o, row-major over the
 * reduced dims. */
static uint64_t reduced_offsets(const struct red_case *c, const kp_tensor *src, const kp_tensor *dst,
                                uint64_t o, size_t *out)
{
    bool red[4] = {false};
    for (int i = 0; i < c->ndims; i++)
        red[c->dims[i]] = true;
    int64_t idx[4] = {0};
    uint64_t q = o;
    for (int d = c->rank - 1; d >= 0; d--) {
        uint64_t s = (uint64_t)dst->layout.shape[d];
        idx[d] = (int64_t)(q % s);
        q /= s;
    }
    uint64_t n = 1;
    for (int d = 0; d < c->rank; d++)
        if (red[d])
            n *= (uint64_t)c->shape[d];
    for (uint64_t k = 0; k < n; k++) {
        uint64_t rest = k;
        for (int d = c->rank - 1; d >= 0; d--) {
            if (!red[d])
                continue;
            idx[d] = (int64_t)(rest % (uint64_t)c->shape[d]);
            rest /= (uint64_t)c->shape[d];
        }
        size_t off = (size_t)src->layout.offset;
        for (int d = 0; d < c->rank; d++)
            off += (size_t)idx[d] * (size_t)src->layout.strides[d];
        out[k] = off;
    }
    return n;
}

static bool valid_combo(kp_reduce_op op, kp_dtype dt, const struct red_case *c)
{
    if (op == KP_REDUCE_MEAN && !is_float(dt))
        return false;
    if (is_arg(op) && c->ndims != 1)
        return false;
    uint64_t n_red = 1;
    for (int i = 0; i < c->ndims; i++)
        n_red *= (uint64_t)c->shape[c->dims[i]];
    return n_red > 0 || op == KP_REDUCE_SUM || op == KP_REDUCE_MEAN;
}

/* Compares one output; returns 0 or prints the mismatch and returns 1. */
static int check_output(const char *what, kp_reduce_op op, kp_dtype dt, const void *dst_host, size_t di,
                        uint64_t o, const struct ref *r, uint64_t n, bool exact_data)
{
    char msg[256];
    if (is_arg(op)) {
        uint32_t got = ((const uint32_t *)dst_host)[di];
        if (got == r->index)
            return 0;
        snprintf(msg, sizeof(msg), "index %u, want %llu", got, (unsigned long long)r->index);
    } else if (!is_float(dt)) {
        uint64_t got = dt == KP_DTYPE_U8 ? ((const uint8_t *)dst_host)[di]
                       : dt == KP_DTYPE_U32 ? ((const uint32_t *)dst_host)[di]
                                            : (uint64_t)((const int64_t *)dst_host)[di];
        uint64_t want = dt == KP_DTYPE_U8 ? (uint8_t)r->bits : dt == KP_DTYPE_U32 ? (uint32_t)r->bits : r->bits;
        if (got == want)
            return 0;
        snprintf(msg, sizeof(msg), "got %llu, want %llu", (unsigned long long)got, (unsigned long long)want);
    } else {
        double got = host_get(dt, dst_host, di), want = r->value;
        double tol;
        if (isnan(want)) {
            if (isnan(got))
                return 0;
            tol = -1;
        } else if (op == KP_REDUCE_MIN || op == KP_REDUCE_MAX) {
            tol = 0;
        } else if (op == KP_REDUCE_SUM && exact_data) {
            want = round_to(dt, want);  /* exact accumulation, one rounding */
            tol = 0;
        } else if (op == KP_REDUCE_MEAN && exact_data) {
            tol = 2 * eps_of(dt) * fabs(want);
        } else {
            tol = ((double)n + 16) * acc_eps_of(dt) * r->abs_sum / (op == KP_REDUCE_MEAN ? (double)n : 1) +
                  eps_of(dt) * fabs(want);
        }
        if (tol >= 0 && (got == want || fabs(got - want) <= tol))
            return 0;
        snprintf(msg, sizeof(msg), "got %.17g, want %.17g (tolerance %.3g)", got, want, tol);
    }
    printf("FAIL %s: %s %s output #%llu (n = %llu): %s\n", what, op_names[op], kp_dtype_name(dt),
           (unsigned long long)o, (unsigned long long)n, msg);
    return 1;
}

static void run_case(kp_reduce_op op, kp_dtype dt, const struct red_case *c, bool exact_data)
{
    if (!valid_combo(op, dt, c))
        return;
    kp_dtype out_dt = is_arg(op) ? KP_DTYPE_U32 : dt;
    struct gpu_buf none = {0}, src, dst;
    kp_tensor s0 = case_src(c, &none, dt), d0 = case_dst(c, &none, out_dt);
    size_t src_elems = (size_t)tensor_extent(&s0), dst_elems = (size_t)tensor_extent(&d0);
    size_t es = kp_dtype_size(dt), oes = kp_dtype_size(out_dt);
    gpu_buf_alloc(&src, src_elems * es);
    gpu_buf_alloc(&dst, dst_elems * oes);
    if (exact_data)
        fill_exact(dt, src.host, src_elems);
    else
        host_random(dt, src.host, src_elems);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    kp_tensor s = case_src(c, &src, dt), d = case_dst(c, &dst, out_dt);
    CK_OK(kp_reduce(gpu_stream, op, &d, &s, c->dims, c->ndims));
    gpu_buf_download(&dst);

    uint64_t n_out = tensor_numel(&d), n_red = 1;
    for (int i = 0; i < c->ndims; i++)
        n_red *= (uint64_t)c->shape[c->dims[i]];
    size_t *offs = malloc((n_red ? n_red : 1) * sizeof(size_t));
    unsigned char *written = calloc(dst_elems, 1);
    int failures = 0;
    char what[160];
    snprintf(what, sizeof(what), "%s%s", c->name, exact_data ? "" : " (real data)");
    for (uint64_t o = 0; o < n_out; o++) {
        struct ref r;
        uint64_t n = reduced_offsets(c, &s, &d, o, offs);
        reduce_ref(op, dt, src.host, offs, n, &r);
        size_t di = tensor_offset(&d, o);
        written[di] = 1;
        if (failures < 10)
            failures += check_output(what, op, dt, dst.host, di, o, &r, n, exact_data);
    }
    for (size_t i = 0; i < dst.bytes && failures < 10; i++)
        if (!written[i / oes] && ((unsigned char *)dst.host)[i] != POISON) {
            printf("FAIL %s: %s %s: byte %zu outside the output view was overwritten\n", what,
                   op_names[op], kp_dtype_name(dt), i);
            failures++;
        }
    free(offs);
    free(written);
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
    ck_assert_msg(failures == 0, "%s: %s %s: %d mismatches (see the lines above)", what, op_names[op],
                  kp_dtype_name(dt), failures);
}

START_TEST(test_reduce_cases)
{
    const struct red_case *c = &cases[_i / (int)(N_DTYPES * N_OPS)];
    kp_dtype dt = all_dtypes[(_i / (int)N_OPS) % N_DTYPES];
    kp_reduce_op op = all_ops[_i % (int)N_OPS];
    rng_seed(5000 + (uint64_t)_i);
    run_case(op, dt, c, true);
}
END_TEST

/* Real-valued floats: sums and means within the length-derived tolerance. */
START_TEST(test_reduce_real_data)
{
    static const int picks[] = {0, 2, 5, 6, 8, 11};
    const struct red_case *c = &cases[picks[_i / 8]];
    kp_dtype dt = all_dtypes[(_i / 2) % 4];
    rng_seed(6000 + (uint64_t)_i);
    run_case(_i % 2 ? KP_REDUCE_MEAN : KP_REDUCE_SUM, dt, c, false);
}
END_TEST

/* NaN and infinities: sums follow IEEE, min/max propagate NaN, the arg ops
 * return the first NaN's index, ties go to the smallest index. */
START_TEST(test_reduce_nan_inf)
{
    kp_dtype dt = _i ? KP_DTYPE_BF16 : KP_DTYPE_F32;
    enum { ROWS = 8, COLS = 3001 };
    struct gpu_buf src;
    gpu_buf_alloc(&src, (size_t)ROWS * COLS * kp_dtype_size(dt));
    rng_seed(77);
    fill_exact(dt, src.host, (size_t)ROWS * COLS);
    void *h = src.host;
    host_set(dt, h, 0 * COLS + 1500, NAN);                                  /* one NaN */
    host_set(dt, h, 1 * COLS + 10, NAN);                                    /* two NaNs */
    host_set(dt, h, 1 * COLS + 2999, NAN);
    host_set(dt, h, 2 * COLS + 7, INFINITY);                                /* +inf and -inf: sum NaN */
    host_set(dt, h, 2 * COLS + 2000, -INFINITY);
    host_set(dt, h, 3 * COLS + 3000, INFINITY);                             /* +inf last */
    for (int j = 0; j < COLS; j++)
        host_set(dt, h, 4 * (size_t)COLS + j, -INFINITY);                   /* all -inf: ties */
    host_set(dt, h, 5 * COLS + 0, NAN);                                     /* NaN first */
    host_set(dt, h, 6 * COLS + 3000, NAN);                                  /* NaN last */
    host_set(dt, h, 6 * COLS + 5, -INFINITY);
    for (int j = 0; j < COLS; j++)
        host_set(dt, h, 7 * (size_t)COLS + j, 3.0);                         /* all equal */
    gpu_buf_upload(&src);
    kp_tensor s = gpu_tensor(&src, dt, 2, (int64_t[]){ROWS, COLS}, NULL, 0);
    for (size_t k = 0; k < N_OPS; k++) {
        kp_reduce_op op = all_ops[k];
        kp_dtype out_dt = is_arg(op) ? KP_DTYPE_U32 : dt;
        struct gpu_buf dst;
        gpu_buf_alloc(&dst, ROWS * kp_dtype_size(out_dt));
        memset(dst.host, POISON, dst.bytes);
        gpu_buf_upload(&dst);
        kp_tensor d = gpu_tensor(&dst, out_dt, 2, (int64_t[]){ROWS, 1}, NULL, 0);
        CK_OK(kp_reduce(gpu_stream, op, &d, &s, (int[]){1}, 1));
        gpu_buf_download(&dst);
        int failures = 0;
        size_t offs[COLS];
        for (int r = 0; r < ROWS; r++) {
            for (int j = 0; j < COLS; j++)
                offs[j] = (size_t)r * COLS + (size_t)j;
            struct ref ref;
            reduce_ref(op, dt, h, offs, COLS, &ref);
            failures += check_output("NaN/inf rows", op, dt, dst.host, (size_t)r, (uint64_t)r, &ref, COLS, true);
        }
        gpu_buf_free(&dst);
        ck_assert_msg(failures == 0, "NaN/inf rows: %s %s: %d mismatches (see the lines above)",
                      op_names[op], kp_dtype_name(dt), failures);
    }
    gpu_buf_free(&src);
}
END_TEST

/* 64-bit indexing: two rows of 2^31 + 50 u8 elements (2^32 + 100 in all).
 * The row maxima sit beyond 2^31 in each row, and the full sum wraps
 * modulo 256. Skipped on devices with less than 12 GiB. */
START_TEST(test_reduce_beyond_2_32_elements)
{
    if (gpu_skip_big("test_reduce_beyond_2_32_elements", (uint64_t)12 << 30))
        return;
    const int64_t cols = ((int64_t)1 << 31) + 50;
    const size_t n = 2 * (size_t)cols;
    struct gpu_buf src, out;
    gpu_buf_alloc(&src, n);
    gpu_buf_alloc(&out, 16);
    uint8_t *h = src.host;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        h[i] = (uint8_t)((i * 2654435761u) >> 24) % 200;  /* < 200 everywhere ... */
        sum += h[i];
    }
    const size_t peak0 = (size_t)cols - 7, peak1 = (size_t)cols + ((size_t)1 << 31) + 3;
    sum += 250 - h[peak0];
    h[peak0] = 250;  /* ... except the two maxima */
    sum += 251 - h[peak1];
    h[peak1] = 251;
    gpu_buf_upload(&src);
    memset(out.host, POISON, out.bytes);
    gpu_buf_upload(&out);
    kp_tensor rows = gpu_tensor(&src, KP_DTYPE_U8, 2, (int64_t[]){2, cols}, NULL, 0);
    kp_tensor idx = gpu_tensor(&out, KP_DTYPE_U32, 2, (int64_t[]){2, 1}, NULL, 0);
    CK_OK(kp_reduce(gpu_stream, KP_REDUCE_ARGMAX, &idx, &rows, (int[]){1}, 1));
    kp_tensor flat = gpu_tensor(&src, KP_DTYPE_U8, 1, (int64_t[]){(int64_t)n}, NULL, 0);
    kp_tensor total = gpu_tensor(&out, KP_DTYPE_U8, 1, (int64_t[]){1}, NULL, 8);
    CK_OK(kp_reduce(gpu_stream, KP_REDUCE_SUM, &total, &flat, (int[]){0}, 1));
    kp_tensor row_max = gpu_tensor(&out, KP_DTYPE_U8, 2, (int64_t[]){2, 1}, NULL, 10);
    CK_OK(kp_reduce(gpu_stream, KP_REDUCE_MAX, &row_max, &rows, (int[]){1}, 1));
    gpu_buf_download(&out);
    const uint32_t *ix = out.host;
    const uint8_t *ob = out.host;
    ck_assert_msg(ix[0] == (uint32_t)peak0, "argmax of row 0 over 2^31+50 u8: got %u, want %zu", ix[0], peak0);
    ck_assert_msg(ix[1] == (uint32_t)(peak1 - (size_t)cols), "argmax of row 1: got %u, want %zu", ix[1],
                  peak1 - (size_t)cols);
    ck_assert_msg(ob[8] == (uint8_t)sum, "sum of 2^32+100 u8 (mod 256): got %u, want %u", ob[8],
                  (unsigned)(uint8_t)sum);
    ck_assert_msg(ob[10] == 250 && ob[11] == 251, "row maxima: got %u %u, want 250 251", ob[10], ob[11]);
    ck_assert_msg(ob[9] == POISON && ob[12] == POISON, "bytes between the outputs were overwritten");
    gpu_buf_free(&src);
    gpu_buf_free(&out);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "reduce"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("reduce");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_reduce_cases, 0, (int)(N_CASES * N_DTYPES * N_OPS));
    tcase_add_loop_test(tc, test_reduce_real_data, 0, 6 * 8);
    tcase_add_loop_test(tc, test_reduce_nan_inf, 0, 2);
    tcase_add_test(tc, test_reduce_beyond_2_32_elements);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
