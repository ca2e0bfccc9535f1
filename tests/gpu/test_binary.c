/* kp_binary on the GPU against a CPU reference: every op x dtype x layout
 * (contiguous odd sizes, offsets, transposed, broadcast rows, columns and
 * scalars through stride 0, strided outputs, rank 0, empty), inputs mixed
 * with NaN, +-Inf, -0, zeros and integer extremes, then hand-written edge
 * cases, in-place use and indices past 2^31.
 *
 * Tolerances: integers and comparisons exact. f32/f64 results exact bits
 * (add/sub/mul/div are correctly rounded, minimum/maximum select an input);
 * a NaN must be a NaN, any payload. f16/bf16: the reference does the math in
 * f32 and rounds to the 16-bit type as the kernels do; add/sub/mul/div may
 * differ by 1 ulp of the 16-bit type, minimum/maximum must match exactly.
 * Outputs are poisoned first; every element of the view must be written and
 * every byte outside it keep the poison. Inputs must come back unchanged. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "operands.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))

static bool is_compare(kp_binary_op op) { return op >= KP_BINARY_EQ; }
static bool is_float(kp_dtype dt) { return dt <= KP_DTYPE_BF16; }

/* ---- input values */

static void set_i64(void *base, size_t i, int64_t v) { ((int64_t *)base)[i] = v; }

/* Small values (so that equal pairs, zeros and i64 -1 divisors are common),
 * specials, else the harness's random values for the dtype. */
static void fill_input(kp_dtype dt, void *base, size_t n)
{
    static const double small_float[] = {0.0, 1.0, -1.0, 0.5};
    static const double special_float[] = {NAN, INFINITY, -INFINITY, -0.0, 60000.0, -60000.0};
    static const int64_t small_int[] = {0, 1, -1, 3};
    static const int64_t special_i64[] = {INT64_MIN, INT64_MAX, INT64_MIN + 1, -7};
    static const double special_u8[] = {255, 128, 254, 16};
    static const double special_u32[] = {4294967295.0, 2147483648.0, 65536, 4294967294.0};
    size_t es = kp_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
        unsigned kind = (unsigned)(rng_next() % 16), pick = (unsigned)(rng_next() % 4);
        if (kind < 4) {  /* small */
            if (dt == KP_DTYPE_I64)
                set_i64(base, i, small_int[pick]);
            else if (is_float(dt))
                host_set(dt, base, i, small_float[pick]);
            else
                host_set(dt, base, i, (double)pick);
        } else if (kind < 6) {  /* special */
            switch (dt) {
            case KP_DTYPE_I64: set_i64(base, i, special_i64[pick]); break;
            case KP_DTYPE_U8: host_set(dt, base, i, special_u8[pick]); break;
            case KP_DTYPE_U32: host_set(dt, base, i, special_u32[pick]); break;
            default: host_set(dt, base, i, special_float[rng_next() % 6]); break;
            }
        } else {
            host_random(dt, (unsigned char *)base + i * es, 1);
        }
    }
}

/* ---- reference */

static float min_f32(float a, float b)
{
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static float max_f32(float a, float b)
{
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}
static double min_f64(double a, double b)
{
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? a : b;
    return a < b ? a : b;
}
static double max_f64(double a, double b)
{
    if (isnan(a) || isnan(b)) return NAN;
    if (a == b) return signbit(a) ? b : a;
    return a > b ? a : b;
}

/* f32 arithmetic: host float operations are IEEE single, correctly rounded. */
static float arith_f32(kp_binary_op op, float a, float b)
{
    switch (op) {
    case KP_BINARY_ADD: return a + b;
    case KP_BINARY_SUB: return a - b;
    case KP_BINARY_MUL: return a * b;
    case KP_BINARY_DIV: return a / b;
    case KP_BINARY_MINIMUM: return min_f32(a, b);
    default: return max_f32(a, b);
    }
}
static double arith_f64(kp_binary_op op, double a, double b)
{
    switch (op) {
    case KP_BINARY_ADD: return a + b;
    case KP_BINARY_SUB: return a - b;
    case KP_BINARY_MUL: return a * b;
    case KP_BINARY_DIV: return a / b;
    case KP_BINARY_MINIMUM: return min_f64(a, b);
    default: return max_f64(a, b);
    }
}
/* Unsigned arithmetic in 32 bits (u8 results are then truncated). */
static uint32_t arith_u32(kp_binary_op op, uint32_t a, uint32_t b)
{
    switch (op) {
    case KP_BINARY_ADD: return a + b;
    case KP_BINARY_SUB: return a - b;
    case KP_BINARY_MUL: return a * b;
    case KP_BINARY_DIV: return b ? a / b : 0;
    case KP_BINARY_MINIMUM: return a < b ? a : b;
    default: return a > b ? a : b;
    }
}
/* Two's-complement wrapping i64; x / 0 = 0, INT64_MIN / -1 = INT64_MIN. */
static int64_t arith_i64(kp_binary_op op, int64_t a, int64_t b)
{
    uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (op) {
    case KP_BINARY_ADD: return (int64_t)(ua + ub);
    case KP_BINARY_SUB: return (int64_t)(ua - ub);
    case KP_BINARY_MUL: return (int64_t)(ua * ub);
    case KP_BINARY_DIV:
        if (b == 0) return 0;
        if (b == -1) return (int64_t)(0 - ua);
        return a / b;
    case KP_BINARY_MINIMUM: return a < b ? a : b;
    default: return a > b ? a : b;
    }
}

/* -1, 0, 1 for a < b, a == b, a > b; 2 when unordered (a NaN). */
static int order(kp_dtype dt, const void *a, size_t ai, const void *b, size_t bi)
{
    if (dt == KP_DTYPE_I64) {
        int64_t x = ((const int64_t *)a)[ai], y = ((const int64_t *)b)[bi];
        return (x > y) - (x < y);
    }
    double x = host_get(dt, a, ai), y = host_get(dt, b, bi);  /* exact for the other dtypes */
    if (isnan(x) || isnan(y))
        return 2;
    return (x > y) - (x < y);
}

static bool compare_ref(kp_binary_op op, int ord)
{
    if (ord == 2)
        return op == KP_BINARY_NE;
    switch (op) {
    case KP_BINARY_EQ: return ord == 0;
    case KP_BINARY_NE: return ord != 0;
    case KP_BINARY_LT: return ord < 0;
    case KP_BINARY_LE: return ord <= 0;
    case KP_BINARY_GT: return ord > 0;
    default: return ord >= 0;
    }
}

/* Writes op(lhs[ai], rhs[bi]) as element 0 of `out` (dst's dtype). */
static void reference(kp_binary_op op, kp_dtype dt, const void *a, size_t ai, const void *b,
                      size_t bi, void *out)
{
    if (is_compare(op)) {
        *(uint8_t *)out = compare_ref(op, order(dt, a, ai, b, bi)) ? 1 : 0;
        return;
    }
    switch (dt) {
    case KP_DTYPE_F32:
        *(float *)out = arith_f32(op, ((const float *)a)[ai], ((const float *)b)[bi]);
        break;
    case KP_DTYPE_F64:
        *(double *)out = arith_f64(op, ((const double *)a)[ai], ((const double *)b)[bi]);
        break;
    case KP_DTYPE_F16:
    case KP_DTYPE_BF16:  /* f32 math, rounded to the 16-bit type */
        host_set(dt, out, 0,
                 arith_f32(op, (float)host_get(dt, a, ai), (float)host_get(dt, b, bi)));
        break;
    case KP_DTYPE_U8:
        *(uint8_t *)out = (uint8_t)arith_u32(op, ((const uint8_t *)a)[ai], ((const uint8_t *)b)[bi]);
        break;
    case KP_DTYPE_U32:
        *(uint32_t *)out = arith_u32(op, ((const uint32_t *)a)[ai], ((const uint32_t *)b)[bi]);
        break;
    default:
        *(int64_t *)out = arith_i64(op, ((const int64_t *)a)[ai], ((const int64_t *)b)[bi]);
        break;
    }
}

/* Position of a 16-bit float on the number line in ulps (-0 and +0 both 0). */
static int ulp_key16(uint16_t bits)
{
    return bits & 0x8000 ? -(int)(bits & 0x7fff) : (int)bits;
}

/* Does `got` (element 0) match `want` within the stated tolerance? */
static bool matches(kp_binary_op op, kp_dtype out_dt, const void *got, const void *want)
{
    size_t es = kp_dtype_size(out_dt);
    if (memcmp(got, want, es) == 0)
        return true;
    if (!is_float(out_dt))
        return false;
    double g = host_get(out_dt, got, 0), w = host_get(out_dt, want, 0);
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g);
    if ((out_dt == KP_DTYPE_F16 || out_dt == KP_DTYPE_BF16) && op <= KP_BINARY_DIV)
        return abs(ulp_key16(*(const uint16_t *)got) - ulp_key16(*(const uint16_t *)want)) <= 1;
    return false;
}

/* ---- layout cases: one shape, a layout per operand */

struct binary_case {
    const char *name;
    int rank;
    int64_t shape[CASE_MAX_RANK];
    struct operand_layout dst, lhs, rhs;
};

#define C OPERAND_CONTIGUOUS
#define S OPERAND_STRIDED
static const struct binary_case cases[] = {
    {"contiguous odd size", 1, {100003}, C(0), C(0), C(0)},
    {"contiguous, 16-byte aligned offsets", 1, {1001}, C(16), C(32), C(48)},
    {"contiguous, odd offsets", 2, {33, 65}, C(3), C(1), C(2)},
    {"transposed lhs", 2, {37, 53}, C(0), S(5, 1, 37), C(0)},
    {"rhs row broadcast (stride 0)", 2, {41, 67}, C(0), C(0), S(3, 0, 1)},
    {"rhs column broadcast (stride 0)", 2, {41, 67}, C(1), C(0), S(0, 1, 0)},
    {"rhs column broadcast, whole vectors a row", 2, {41, 64}, C(0), C(0), S(0, 1, 0)},
    {"lhs column broadcast, odd rows", 2, {23, 45}, C(0), S(2, 1, 0), C(0)},
    {"lhs scalar broadcast, transposed rhs", 2, {29, 31}, C(0), S(5, 0, 0), S(0, 1, 29)},
    {"strided dst, offset rhs", 2, {19, 23}, S(1, 47, 2), C(0), C(4)},
    {"rank 3: gaps everywhere, rhs broadcast", 3, {3, 7, 9}, S(2, 100, 12, 1), S(7, 70, 10, 1),
     S(0, 0, 9, 1)},
    {"rank 0", 0, {0}, C(4), C(9), C(1)},
    {"empty", 2, {0, 17}, C(0), C(0), C(0)},
};
#undef C
#undef S
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static void run_case(kp_binary_op op, kp_dtype dt, const struct binary_case *c)
{
    kp_dtype out_dt = is_compare(op) ? KP_DTYPE_U8 : dt;
    size_t es = kp_dtype_size(dt), os = kp_dtype_size(out_dt);
    size_t nd = operand_extent(c->rank, c->shape, &c->dst);
    size_t nl = operand_extent(c->rank, c->shape, &c->lhs);
    size_t nr = operand_extent(c->rank, c->shape, &c->rhs);
    struct gpu_buf db, lb, rb;
    gpu_buf_alloc(&db, nd * os);
    gpu_buf_alloc(&lb, nl * es);
    gpu_buf_alloc(&rb, nr * es);
    fill_input(dt, lb.host, nl);
    fill_input(dt, rb.host, nr);
    memset(db.host, POISON, db.bytes);
    gpu_buf_upload(&db);
    gpu_buf_upload(&lb);
    gpu_buf_upload(&rb);
    void *l_sent = malloc(lb.bytes), *r_sent = malloc(rb.bytes);
    memcpy(l_sent, lb.host, lb.bytes);
    memcpy(r_sent, rb.host, rb.bytes);

    kp_tensor d = operand_tensor(&db, out_dt, c->rank, c->shape, &c->dst);
    kp_tensor l = operand_tensor(&lb, dt, c->rank, c->shape, &c->lhs);
    kp_tensor r = operand_tensor(&rb, dt, c->rank, c->shape, &c->rhs);
    CK_OK(kp_binary(gpu_stream, op, &d, &l, &r));
    gpu_buf_download(&db);
    gpu_buf_download(&lb);
    gpu_buf_download(&rb);

    char context[160];
    snprintf(context, sizeof(context), "%s %s, case '%s'", kp_binary_op_name(op), kp_dtype_name(dt),
             c->name);
    ck_assert_msg(memcmp(lb.host, l_sent, lb.bytes) == 0, "%s: lhs was modified", context);
    ck_assert_msg(memcmp(rb.host, r_sent, rb.bytes) == 0, "%s: rhs was modified", context);

    unsigned char *written = calloc(nd, 1);
    unsigned char want[8];
    uint64_t n = tensor_numel(&d);
    for (uint64_t i = 0; i < n; i++) {
        size_t di = tensor_offset(&d, i), li = tensor_offset(&l, i), ri = tensor_offset(&r, i);
        written[di] = 1;
        reference(op, dt, lb.host, li, rb.host, ri, want);
        const unsigned char *got = (const unsigned char *)db.host + di * os;
        if (!matches(op, out_dt, got, want)) {
            char a[64], b[64], g[64], w[64];
            ck_abort_msg("%s: element %llu: %s(%s, %s): got %s, want %s", context,
                         (unsigned long long)i, kp_binary_op_name(op),
                         format_element(dt, lb.host, li, a, sizeof(a)),
                         format_element(dt, rb.host, ri, b, sizeof(b)),
                         format_element(out_dt, got, 0, g, sizeof(g)),
                         format_element(out_dt, want, 0, w, sizeof(w)));
        }
    }
    check_untouched(&db, written, os, POISON, context);
    free(written);
    free(l_sent);
    free(r_sent);
    gpu_buf_free(&db);
    gpu_buf_free(&lb);
    gpu_buf_free(&rb);
}

START_TEST(test_binary_layouts)
{
    rng_seed(5000 + (uint64_t)_i);
    kp_binary_op op = (kp_binary_op)(_i % KP_BINARY_OP_COUNT);
    kp_dtype dt = all_dtypes[(_i / KP_BINARY_OP_COUNT) % N_DTYPES];
    const struct binary_case *c = &cases[_i / (KP_BINARY_OP_COUNT * N_DTYPES)];
    run_case(op, dt, c);
}
END_TEST

/* ---- hand-written edge cases, independent of the reference above */

/* Runs op on k (lhs, rhs) pairs, each pair repeated 32 times so that the
 * contiguous kernel takes its vector path for every dtype (up to 16 lanes);
 * then again writing every other element of dst (strided kernel). The
 * results of pair j go to element j of got_contiguous and got_strided. */
static void run_pairs(kp_binary_op op, kp_dtype dt, const void *lhs, const void *rhs, size_t k,
                      void *got_contiguous, void *got_strided)
{
    kp_dtype out_dt = is_compare(op) ? KP_DTYPE_U8 : dt;
    size_t es = kp_dtype_size(dt), os = kp_dtype_size(out_dt), n = 32 * k;
    struct gpu_buf db, lb, rb;
    gpu_buf_alloc(&db, 2 * n * os);
    gpu_buf_alloc(&lb, n * es);
    gpu_buf_alloc(&rb, n * es);
    for (size_t i = 0; i < n; i++) {
        memcpy((char *)lb.host + i * es, (const char *)lhs + (i % k) * es, es);
        memcpy((char *)rb.host + i * es, (const char *)rhs + (i % k) * es, es);
    }
    gpu_buf_upload(&lb);
    gpu_buf_upload(&rb);
    for (int pass = 0; pass < 2; pass++) {
        memset(db.host, POISON, db.bytes);
        gpu_buf_upload(&db);
        int64_t shape[1] = {(int64_t)n}, stride[1] = {pass ? 2 : 1};
        kp_tensor d = gpu_tensor(&db, out_dt, 1, shape, stride, 0);
        kp_tensor l = gpu_tensor(&lb, dt, 1, shape, NULL, 0);
        kp_tensor r = gpu_tensor(&rb, dt, 1, shape, NULL, 0);
        CK_OK(kp_binary(gpu_stream, op, &d, &l, &r));
        gpu_buf_download(&db);
        void *out = pass ? got_strided : got_contiguous;
        for (size_t i = 0; i < n; i++) {
            const char *e = (const char *)db.host + i * (size_t)stride[0] * os;
            if (i < k)
                memcpy((char *)out + i * os, e, os);
            else  /* every repetition of a pair gives the same result */
                ck_assert_msg(memcmp(e, (const char *)out + (i % k) * os, os) == 0,
                              "%s %s pass %d: element %zu differs from element %zu",
                              kp_binary_op_name(op), kp_dtype_name(dt), pass, i, i % k);
        }
    }
    gpu_buf_free(&db);
    gpu_buf_free(&lb);
    gpu_buf_free(&rb);
}

struct float_edge {
    kp_binary_op op;
    double lhs, rhs, want;  /* comparisons: want is 1 or 0 */
};

/* Every value here is exact in f16 and bf16 too. */
static const struct float_edge float_edges[] = {
    {KP_BINARY_ADD, INFINITY, -INFINITY, NAN},
    {KP_BINARY_ADD, INFINITY, 1.0, INFINITY},
    {KP_BINARY_ADD, -0.0, -0.0, -0.0},
    {KP_BINARY_ADD, NAN, 1.0, NAN},
    {KP_BINARY_SUB, INFINITY, INFINITY, NAN},
    {KP_BINARY_SUB, 0.0, 0.0, 0.0},
    {KP_BINARY_SUB, -0.0, 0.0, -0.0},
    {KP_BINARY_SUB, 1.0, -INFINITY, INFINITY},
    {KP_BINARY_MUL, 0.0, INFINITY, NAN},
    {KP_BINARY_MUL, -0.0, 5.0, -0.0},
    {KP_BINARY_MUL, -2.0, INFINITY, -INFINITY},
    {KP_BINARY_MUL, 1.5, NAN, NAN},
    {KP_BINARY_DIV, 1.0, 0.0, INFINITY},
    {KP_BINARY_DIV, -1.0, 0.0, -INFINITY},
    {KP_BINARY_DIV, 1.0, -0.0, -INFINITY},
    {KP_BINARY_DIV, 0.0, 0.0, NAN},
    {KP_BINARY_DIV, INFINITY, INFINITY, NAN},
    {KP_BINARY_DIV, 3.0, INFINITY, 0.0},
    {KP_BINARY_DIV, -3.0, INFINITY, -0.0},
    {KP_BINARY_DIV, 1.0, 4.0, 0.25},
    {KP_BINARY_MINIMUM, NAN, 1.0, NAN},
    {KP_BINARY_MINIMUM, 1.0, NAN, NAN},
    {KP_BINARY_MINIMUM, -INFINITY, NAN, NAN},
    {KP_BINARY_MINIMUM, -0.0, 0.0, -0.0},
    {KP_BINARY_MINIMUM, 0.0, -0.0, -0.0},
    {KP_BINARY_MINIMUM, -INFINITY, 3.0, -INFINITY},
    {KP_BINARY_MINIMUM, 2.0, 3.0, 2.0},
    {KP_BINARY_MINIMUM, 3.0, -2.0, -2.0},
    {KP_BINARY_MAXIMUM, NAN, -INFINITY, NAN},
    {KP_BINARY_MAXIMUM, INFINITY, NAN, NAN},
    {KP_BINARY_MAXIMUM, -0.0, 0.0, 0.0},
    {KP_BINARY_MAXIMUM, 0.0, -0.0, 0.0},
    {KP_BINARY_MAXIMUM, INFINITY, 3.0, INFINITY},
    {KP_BINARY_MAXIMUM, -2.0, -3.0, -2.0},
    {KP_BINARY_EQ, NAN, NAN, 0},
    {KP_BINARY_EQ, -0.0, 0.0, 1},
    {KP_BINARY_EQ, INFINITY, INFINITY, 1},
    {KP_BINARY_EQ, 1.0, 1.5, 0},
    {KP_BINARY_NE, NAN, NAN, 1},
    {KP_BINARY_NE, NAN, 1.0, 1},
    {KP_BINARY_NE, 2.0, 2.0, 0},
    {KP_BINARY_NE, -0.0, 0.0, 0},
    {KP_BINARY_LT, NAN, 1.0, 0},
    {KP_BINARY_LT, 1.0, NAN, 0},
    {KP_BINARY_LT, -INFINITY, INFINITY, 1},
    {KP_BINARY_LT, -0.0, 0.0, 0},
    {KP_BINARY_LE, 1.0, NAN, 0},
    {KP_BINARY_LE, -0.0, 0.0, 1},
    {KP_BINARY_LE, 2.0, 1.0, 0},
    {KP_BINARY_GT, NAN, NAN, 0},
    {KP_BINARY_GT, INFINITY, 3.0, 1},
    {KP_BINARY_GT, -1.0, -0.5, 0},
    {KP_BINARY_GE, NAN, -INFINITY, 0},
    {KP_BINARY_GE, INFINITY, INFINITY, 1},
    {KP_BINARY_GE, -0.5, -1.0, 1},
};
#define N_FLOAT_EDGES (sizeof(float_edges) / sizeof(float_edges[0]))

static bool same_float(double got, double want)
{
    if (isnan(want))
        return isnan(got);
    return got == want && signbit(got) == signbit(want);
}

START_TEST(test_float_edge_cases)
{
    kp_dtype dt = all_dtypes[_i];  /* the four float dtypes */
    for (size_t e = 0; e < N_FLOAT_EDGES; e++) {
        const struct float_edge *fe = &float_edges[e];
        unsigned char a[8], b[8], gc[8], gs[8];
        host_set(dt, a, 0, fe->lhs);
        host_set(dt, b, 0, fe->rhs);
        run_pairs(fe->op, dt, a, b, 1, gc, gs);
        kp_dtype out_dt = is_compare(fe->op) ? KP_DTYPE_U8 : dt;
        for (int pass = 0; pass < 2; pass++) {
            double got = host_get(out_dt, pass ? gs : gc, 0);
            ck_assert_msg(same_float(got, fe->want),
                          "%s %s(%g, %g) %s: got %g (sign %d), want %g (sign %d)", kp_dtype_name(dt),
                          kp_binary_op_name(fe->op), fe->lhs, fe->rhs, pass ? "strided" : "contiguous",
                          got, signbit(got) != 0, fe->want, signbit(fe->want) != 0);
        }
    }
}
END_TEST

struct int_edge {
    kp_binary_op op;
    kp_dtype dt;
    int64_t lhs, rhs, want;  /* u8/u32 values as non-negative numbers */
};

static const struct int_edge int_edges[] = {
    {KP_BINARY_DIV, KP_DTYPE_I64, 7, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_I64, 0, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_I64, INT64_MIN, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_I64, -7, 2, -3},
    {KP_BINARY_DIV, KP_DTYPE_I64, 7, -2, -3},
    {KP_BINARY_DIV, KP_DTYPE_I64, -7, -1, 7},
    {KP_BINARY_DIV, KP_DTYPE_I64, INT64_MIN, -1, INT64_MIN},
    {KP_BINARY_DIV, KP_DTYPE_I64, INT64_MIN, 1, INT64_MIN},
    {KP_BINARY_DIV, KP_DTYPE_I64, INT64_MAX, -1, -INT64_MAX},
    {KP_BINARY_DIV, KP_DTYPE_I64, (int64_t)1 << 62, 3, 1537228672809129301},
    {KP_BINARY_ADD, KP_DTYPE_I64, INT64_MAX, 1, INT64_MIN},
    {KP_BINARY_SUB, KP_DTYPE_I64, INT64_MIN, 1, INT64_MAX},
    {KP_BINARY_MUL, KP_DTYPE_I64, INT64_MAX, 2, -2},
    {KP_BINARY_MUL, KP_DTYPE_I64, (int64_t)1 << 32, (int64_t)1 << 32, 0},
    {KP_BINARY_MUL, KP_DTYPE_I64, -3, 5, -15},
    {KP_BINARY_MINIMUM, KP_DTYPE_I64, INT64_MIN, -1, INT64_MIN},
    {KP_BINARY_MAXIMUM, KP_DTYPE_I64, -5, -7, -5},
    {KP_BINARY_LT, KP_DTYPE_I64, -1, 0, 1},
    {KP_BINARY_GT, KP_DTYPE_I64, INT64_MIN, INT64_MAX, 0},
    {KP_BINARY_EQ, KP_DTYPE_I64, INT64_MAX, INT64_MAX - 1, 0},  /* equal as doubles */
    {KP_BINARY_NE, KP_DTYPE_I64, INT64_MAX, INT64_MAX - 1, 1},
    {KP_BINARY_DIV, KP_DTYPE_U32, 5, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_U32, 4294967295, 2, 2147483647},
    {KP_BINARY_DIV, KP_DTYPE_U32, 4294967295, 4294967295, 1},
    {KP_BINARY_SUB, KP_DTYPE_U32, 0, 1, 4294967295},
    {KP_BINARY_ADD, KP_DTYPE_U32, 4294967295, 2, 1},
    {KP_BINARY_MUL, KP_DTYPE_U32, 65536, 65536, 0},
    {KP_BINARY_MUL, KP_DTYPE_U32, 2147483649, 3, 2147483651},
    {KP_BINARY_LT, KP_DTYPE_U32, 2147483648, 1, 0},  /* unsigned: no sign bit */
    {KP_BINARY_MINIMUM, KP_DTYPE_U32, 4294967295, 1, 1},
    {KP_BINARY_MAXIMUM, KP_DTYPE_U32, 2147483648, 7, 2147483648},
    {KP_BINARY_DIV, KP_DTYPE_U8, 200, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_U8, 0, 0, 0},
    {KP_BINARY_DIV, KP_DTYPE_U8, 255, 16, 15},
    {KP_BINARY_ADD, KP_DTYPE_U8, 200, 100, 44},
    {KP_BINARY_SUB, KP_DTYPE_U8, 3, 5, 254},
    {KP_BINARY_MUL, KP_DTYPE_U8, 16, 17, 16},
    {KP_BINARY_MAXIMUM, KP_DTYPE_U8, 255, 0, 255},
    {KP_BINARY_LT, KP_DTYPE_U8, 128, 127, 0},
    {KP_BINARY_GE, KP_DTYPE_U8, 0, 0, 1},
};
#define N_INT_EDGES (sizeof(int_edges) / sizeof(int_edges[0]))

static void set_int(kp_dtype dt, void *p, int64_t v)
{
    switch (dt) {
    case KP_DTYPE_U8: *(uint8_t *)p = (uint8_t)v; break;
    case KP_DTYPE_U32: *(uint32_t *)p = (uint32_t)v; break;
    default: *(int64_t *)p = v; break;
    }
}

static int64_t get_int(kp_dtype dt, const void *p)
{
    switch (dt) {
    case KP_DTYPE_U8: return *(const uint8_t *)p;
    case KP_DTYPE_U32: return *(const uint32_t *)p;
    default: return *(const int64_t *)p;
    }
}

START_TEST(test_integer_edge_cases)
{
    for (size_t e = 0; e < N_INT_EDGES; e++) {
        const struct int_edge *ie = &int_edges[e];
        unsigned char a[8], b[8], gc[8], gs[8];
        set_int(ie->dt, a, ie->lhs);
        set_int(ie->dt, b, ie->rhs);
        run_pairs(ie->op, ie->dt, a, b, 1, gc, gs);
        kp_dtype out_dt = is_compare(ie->op) ? KP_DTYPE_U8 : ie->dt;
        for (int pass = 0; pass < 2; pass++) {
            int64_t got = get_int(out_dt, pass ? gs : gc);
            ck_assert_msg(got == ie->want, "%s %s(%lld, %lld) %s: got %lld, want %lld",
                          kp_dtype_name(ie->dt), kp_binary_op_name(ie->op), (long long)ie->lhs,
                          (long long)ie->rhs, pass ? "strided" : "contiguous", (long long)got,
                          (long long)ie->want);
        }
    }
}
END_TEST

/* ---- in place: dst is lhs (or rhs) itself */

START_TEST(test_in_place)
{
    rng_seed(77);
    /* f32, contiguous and as the same transposed view; u8 comparison. */
    static const struct {
        kp_binary_op op;
        kp_dtype dt;
        bool transposed, into_rhs;
    } runs[] = {
        {KP_BINARY_ADD, KP_DTYPE_F32, false, false},
        {KP_BINARY_DIV, KP_DTYPE_F32, true, true},
        {KP_BINARY_MAXIMUM, KP_DTYPE_BF16, true, false},
        {KP_BINARY_LT, KP_DTYPE_U8, false, true},
        {KP_BINARY_EQ, KP_DTYPE_U8, true, false},
    };
    const int64_t rows = 45, cols = 37;
    for (size_t k = 0; k < sizeof(runs) / sizeof(runs[0]); k++) {
        kp_dtype dt = runs[k].dt;
        size_t es = kp_dtype_size(dt), n = (size_t)(rows * cols);
        struct gpu_buf xb, ob;
        gpu_buf_alloc(&xb, n * es);
        gpu_buf_alloc(&ob, n * es);
        fill_input(dt, xb.host, n);
        fill_input(dt, ob.host, n);
        gpu_buf_upload(&xb);
        gpu_buf_upload(&ob);
        void *x_sent = malloc(xb.bytes);
        memcpy(x_sent, xb.host, xb.bytes);
        int64_t shape[2] = {rows, cols}, tr[2] = {1, rows};
        kp_tensor x = gpu_tensor(&xb, dt, 2, shape, runs[k].transposed ? tr : NULL, 0);
        kp_tensor other = gpu_tensor(&ob, dt, 2, shape, NULL, 0);
        if (runs[k].into_rhs)
            CK_OK(kp_binary(gpu_stream, runs[k].op, &x, &other, &x));
        else
            CK_OK(kp_binary(gpu_stream, runs[k].op, &x, &x, &other));
        gpu_buf_download(&xb);
        for (uint64_t i = 0; i < n; i++) {
            size_t xi = tensor_offset(&x, i), oi = tensor_offset(&other, i);
            unsigned char want[8];
            if (runs[k].into_rhs)
                reference(runs[k].op, dt, ob.host, oi, x_sent, xi, want);
            else
                reference(runs[k].op, dt, x_sent, xi, ob.host, oi, want);
            kp_dtype out_dt = is_compare(runs[k].op) ? KP_DTYPE_U8 : dt;
            const unsigned char *got = (const unsigned char *)xb.host + xi * es;
            char g[64], w[64];
            ck_assert_msg(matches(runs[k].op, out_dt, got, want),
                          "in place %s %s%s: element %llu: got %s, want %s",
                          kp_binary_op_name(runs[k].op), kp_dtype_name(dt),
                          runs[k].transposed ? " transposed" : "", (unsigned long long)i,
                          format_element(out_dt, got, 0, g, sizeof(g)),
                          format_element(out_dt, want, 0, w, sizeof(w)));
        }
        free(x_sent);
        gpu_buf_free(&xb);
        gpu_buf_free(&ob);
    }
}
END_TEST

/* ---- more than 2^31 elements: 64-bit indices in both kernels */

START_TEST(test_past_2_31_elements)
{
    const int64_t rows = ((int64_t)1 << 21) + 1, cols = 1024;  /* 2^31 + 1024 elements */
    const size_t n = (size_t)(rows * cols);
    if (gpu_skip_big("test_past_2_31_elements", 2 * n + ((size_t)1 << 30)))
        return;
    struct gpu_buf xb, rowb, yb;
    gpu_buf_alloc(&xb, n);
    gpu_buf_alloc(&rowb, (size_t)cols);
    gpu_buf_alloc(&yb, n);
    uint8_t *x = xb.host, *row = rowb.host;
    const uint8_t *y = yb.host;
    for (size_t i = 0; i < n; i++)
        x[i] = (uint8_t)((i * 2654435761u) >> 13);
    for (int64_t j = 0; j < cols; j++)
        row[j] = (uint8_t)(j * 7 + 1);
    gpu_buf_upload(&xb);
    gpu_buf_upload(&rowb);
    int64_t shape2[2] = {rows, cols}, bcast[2] = {0, 1}, shape1[1] = {(int64_t)n};
    int64_t shape_m1[1] = {(int64_t)n - 1};

    /* Strided kernel: y = x + row, the row broadcast down all rows. */
    memset(yb.host, POISON, n);
    gpu_buf_upload(&yb);
    kp_tensor y2 = gpu_tensor(&yb, KP_DTYPE_U8, 2, shape2, NULL, 0);
    kp_tensor x2 = gpu_tensor(&xb, KP_DTYPE_U8, 2, shape2, NULL, 0);
    kp_tensor r2 = gpu_tensor(&rowb, KP_DTYPE_U8, 2, shape2, bcast, 0);
    CK_OK(kp_binary(gpu_stream, KP_BINARY_ADD, &y2, &x2, &r2));
    gpu_buf_download(&yb);
    for (size_t i = 0; i < n; i++) {
        uint8_t want = (uint8_t)(x[i] + row[i % (size_t)cols]);
        if (y[i] != want)
            ck_abort_msg("u8 add, rhs row broadcast, %zu elements: element %zu: got %u, want %u", n,
                         i, (unsigned)y[i], (unsigned)want);
    }

    /* Contiguous kernel, vector path: y = x + x. */
    memset(yb.host, POISON, n);
    gpu_buf_upload(&yb);
    kp_tensor y1 = gpu_tensor(&yb, KP_DTYPE_U8, 1, shape1, NULL, 0);
    kp_tensor x1 = gpu_tensor(&xb, KP_DTYPE_U8, 1, shape1, NULL, 0);
    CK_OK(kp_binary(gpu_stream, KP_BINARY_ADD, &y1, &x1, &x1));
    gpu_buf_download(&yb);
    for (size_t i = 0; i < n; i++)
        if (y[i] != (uint8_t)(2 * x[i]))
            ck_abort_msg("u8 add, contiguous, %zu elements: element %zu: got %u, want %u", n, i,
                         (unsigned)y[i], (unsigned)(uint8_t)(2 * x[i]));

    /* Contiguous kernel, unaligned (element-wise) path: y[i] = x[i + 1] > x[i]. */
    memset(yb.host, POISON, n);
    gpu_buf_upload(&yb);
    kp_tensor ym = gpu_tensor(&yb, KP_DTYPE_U8, 1, shape_m1, NULL, 0);
    kp_tensor next = gpu_tensor(&xb, KP_DTYPE_U8, 1, shape_m1, NULL, 1);
    kp_tensor cur = gpu_tensor(&xb, KP_DTYPE_U8, 1, shape_m1, NULL, 0);
    CK_OK(kp_binary(gpu_stream, KP_BINARY_GT, &ym, &next, &cur));
    gpu_buf_download(&yb);
    for (size_t i = 0; i + 1 < n; i++)
        if (y[i] != (x[i + 1] > x[i]))
            ck_abort_msg("u8 gt, contiguous unaligned, %zu elements: element %zu: got %u, want %u",
                         n - 1, i, (unsigned)y[i], (unsigned)(x[i + 1] > x[i]));
    ck_assert_msg(y[n - 1] == POISON, "u8 gt wrote past its last element");
    gpu_buf_free(&xb);
    gpu_buf_free(&rowb);
    gpu_buf_free(&yb);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "binary"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("binary");
    TCase *tc = tcase_create("gpu");
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_binary_layouts, 0, (int)(KP_BINARY_OP_COUNT * N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_float_edge_cases, 0, 4);
    tcase_add_test(tc, test_integer_edge_cases);
    tcase_add_test(tc, test_in_place);
    tcase_add_test(tc, test_past_2_31_elements);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
