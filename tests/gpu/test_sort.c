/* argsort on the GPU against a CPU reference: row lengths on both sides of
 * the one-block limit (1 .. 2^20 + 3), both directions, every dtype,
 * strided/offset/broadcast layouts, stability under many equal keys, and
 * the placement of NaN, +-Inf and -0. The reference defines the order the
 * same way as the header: stable, -0 == +0, every NaN equal and above +Inf.
 * Indices must match exactly; dst elements outside the view keep their
 * poison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))
static const kp_dtype float_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
#define N_FLOAT_DTYPES (sizeof(float_dtypes) / sizeof(float_dtypes[0]))

enum fill { FILL_RANDOM, FILL_FEW, FILL_SPECIAL };

struct sort_case {
    const char *name;
    int rank;
    int64_t shape[3];
    int64_t src_strides[3], dst_strides[3];  /* all zero = contiguous */
    int64_t src_offset, dst_offset;
};

/* ---- reference order */

static kp_dtype ref_dtype;
static const void *ref_values;
static const size_t *ref_offsets;  /* element offset of each column of the row */
static int ref_descending;

/* Ascending comparison of two keys: NaN above everything, -0 == +0. */
static int compare_keys(size_t a, size_t b)
{
    if (ref_dtype == KP_DTYPE_I64) {
        int64_t x = ((const int64_t *)ref_values)[a], y = ((const int64_t *)ref_values)[b];
        return (x > y) - (x < y);
    }
    double x = host_get(ref_dtype, ref_values, a), y = host_get(ref_dtype, ref_values, b);
    if (isnan(x) || isnan(y))
        return isnan(x) - isnan(y);
    return (x > y) - (x < y);
}

static int compare_columns(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    int c = compare_keys(ref_offsets[a], ref_offsets[b]);
    if (ref_descending)
        c = -c;
    if (c)
        return c;
    return (a > b) - (a < b);  /* stable: ties keep column order */
}

/* ---- values */

static void set_special(kp_dtype dt, void *base, size_t i)
{
    /* NaNs with several payloads and both signs, infinities, zeros of both
     * signs, and ordinary values between them. */
    static const uint32_t f32_bits[] = {0x7fc00000u, 0xffc00000u, 0x7f800001u, 0x7fc00123u,
                                        0x7f800000u, 0xff800000u, 0x80000000u, 0x00000000u,
                                        0x3f800000u, 0xbf800000u, 0x00000001u, 0x7f7fffffu};
    static const uint64_t f64_bits[] = {0x7ff8000000000000ull, 0xfff8000000000000ull,
                                        0x7ff0000000000001ull, 0x7ff8000000000123ull,
                                        0x7ff0000000000000ull, 0xfff0000000000000ull,
                                        0x8000000000000000ull, 0x0000000000000000ull,
                                        0x3ff0000000000000ull, 0xbff0000000000000ull,
                                        0x0000000000000001ull, 0x7fefffffffffffffull};
    static const uint16_t f16_bits[] = {0x7e00, 0xfe00, 0x7c01, 0x7e12, 0x7c00, 0xfc00,
                                        0x8000, 0x0000, 0x3c00, 0xbc00, 0x0001, 0x7bff};
    static const uint16_t bf16_bits[] = {0x7fc0, 0xffc0, 0x7f81, 0x7fc3, 0x7f80, 0xff80,
                                         0x8000, 0x0000, 0x3f80, 0xbf80, 0x0001, 0x7f7f};
    size_t k = (size_t)(rng_next() % 12);
    switch (dt) {
    case KP_DTYPE_F32: ((uint32_t *)base)[i] = f32_bits[k]; break;
    case KP_DTYPE_F64: ((uint64_t *)base)[i] = f64_bits[k]; break;
    case KP_DTYPE_F16: ((uint16_t *)base)[i] = f16_bits[k]; break;
    default: ((uint16_t *)base)[i] = bf16_bits[k]; break;
    }
}

static void fill_values(kp_dtype dt, void *base, size_t n, enum fill mode)
{
    if (mode == FILL_RANDOM) {
        host_random(dt, base, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (mode == FILL_FEW)
            host_set(dt, base, i, (double)(rng_next() % 4));  /* many equal keys */
        else
            set_special(dt, base, i);
    }
}

/* ---- one run */

static int64_t extent(int rank, const int64_t *shape, const int64_t *strides, int64_t offset)
{
    int64_t last = offset;
    for (int d = 0; d < rank; d++) {
        if (shape[d] == 0)
            return offset;
        last += (shape[d] - 1) * strides[d];
    }
    return last + 1;
}

static kp_tensor view(struct gpu_buf *b, kp_dtype dt, const struct sort_case *c,
                      const int64_t *strides, int64_t offset)
{
    int zero = 1;
    for (int d = 0; d < c->rank; d++)
        zero &= strides[d] == 0;
    return gpu_tensor(b, dt, c->rank, c->shape, zero ? NULL : strides, offset);
}

static void run_sort(const struct sort_case *c, kp_dtype dt, int descending, enum fill mode)
{
    size_t es = kp_dtype_size(dt);
    struct gpu_buf shape_only = {0};
    kp_tensor s0 = view(&shape_only, dt, c, c->src_strides, c->src_offset);
    kp_tensor d0 = view(&shape_only, KP_DTYPE_U32, c, c->dst_strides, c->dst_offset);
    size_t src_elems = (size_t)extent(c->rank, s0.layout.shape, s0.layout.strides, c->src_offset);
    size_t dst_elems = (size_t)extent(c->rank, d0.layout.shape, d0.layout.strides, c->dst_offset);

    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, src_elems * es);
    gpu_buf_alloc(&dst, dst_elems * 4);
    fill_values(dt, src.host, src_elems, mode);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    kp_tensor s = view(&src, dt, c, c->src_strides, c->src_offset);
    kp_tensor d = view(&dst, KP_DTYPE_U32, c, c->dst_strides, c->dst_offset);

    size_t ws_bytes = 1;
    CK_OK(kp_argsort_workspace_size(&s, &ws_bytes));
    uint64_t n = tensor_numel(&s), ncols = c->rank ? (uint64_t)c->shape[c->rank - 1] : 1;
    uint64_t rows = ncols ? n / ncols : 0;
    ck_assert_msg((ws_bytes == 0) == (ncols <= 2048 || rows == 0),
                  "%s: workspace of %zu bytes for %llu rows of %llu", c->name, ws_bytes,
                  (unsigned long long)rows, (unsigned long long)ncols);
    kp_buffer *ws = NULL;
    if (ws_bytes)
        CK_OK(kp_buffer_alloc(gpu_dev, ws_bytes, &ws));
    CK_OK(kp_argsort(gpu_stream, &d, &s, descending != 0, ws));
    gpu_buf_download(&dst);
    kp_buffer_destroy(&ws);

    size_t *offsets = malloc((ncols ? ncols : 1) * sizeof(size_t));
    uint32_t *want = malloc((ncols ? ncols : 1) * sizeof(uint32_t));
    unsigned char *written = calloc(dst_elems ? dst_elems : 1, 1);
    const uint32_t *got = dst.host;
    ref_dtype = dt;
    ref_values = src.host;
    ref_offsets = offsets;
    ref_descending = descending;
    for (uint64_t r = 0; r < rows; r++) {
        for (uint64_t k = 0; k < ncols; k++) {
            offsets[k] = tensor_offset(&s, r * ncols + k);
            want[k] = (uint32_t)k;
        }
        qsort(want, ncols, sizeof(uint32_t), compare_columns);
        for (uint64_t k = 0; k < ncols; k++) {
            size_t di = tensor_offset(&d, r * ncols + k);
            written[di] = 1;
            if (got[di] != want[k]) {
                double gv = got[di] < ncols ? host_get(dt, src.host, offsets[got[di]]) : NAN;
                ck_abort_msg("%s %s %s: row %llu position %llu: got column %u (value %.17g), "
                             "want column %u (value %.17g)",
                             c->name, kp_dtype_name(dt), descending ? "descending" : "ascending",
                             (unsigned long long)r, (unsigned long long)k, got[di], gv, want[k],
                             host_get(dt, src.host, offsets[want[k]]));
            }
        }
    }
    const unsigned char *bytes = dst.host;
    for (size_t i = 0; i < dst.bytes; i++)
        if (!written[i / 4])
            ck_assert_msg(bytes[i] == POISON, "%s %s: dst byte %zu outside the view was overwritten",
                          c->name, kp_dtype_name(dt), i);
    free(offsets);
    free(want);
    free(written);
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}

/* ---- cases */

/* Row lengths around the block limit (2048) and far beyond; rows of 100 to
 * 2048 share a block's tile 16 to 1 at a time (128 to 2048 positions). */
static const struct sort_case length_cases[] = {
    {"1 row of 1", 1, {1}, {0}, {0}, 0, 0},
    {"37 rows of 7", 2, {37, 7}, {0}, {0}, 0, 0},
    {"9 rows of 100", 2, {9, 100}, {0}, {0}, 0, 0},
    {"11 rows of 200", 2, {11, 200}, {0}, {0}, 0, 0},
    {"5 rows of 1000", 2, {5, 1000}, {0}, {0}, 0, 0},
    {"3 rows of 2048", 2, {3, 2048}, {0}, {0}, 0, 0},
    {"2 rows of 2049", 2, {2, 2049}, {0}, {0}, 0, 0},
    {"3 rows of 8193", 2, {3, 8193}, {0}, {0}, 0, 0},
    {"1 row of 100000", 1, {100000}, {0}, {0}, 0, 0},
    {"1 row of 2^20+3", 1, {(1 << 20) + 3}, {0}, {0}, 0, 0},
};
#define N_LENGTHS (sizeof(length_cases) / sizeof(length_cases[0]))

static const struct sort_case layout_cases[] = {
    /* src stored column-major: the sorted dim has stride 9 */
    {"transposed src", 2, {9, 300}, {1, 9}, {0}, 2, 0},
    {"transposed src, long rows", 2, {3, 5000}, {1, 3}, {0}, 0, 0},
    {"row gaps and offsets", 2, {11, 70}, {75, 1}, {80, 1}, 3, 5},
    {"strided dst, long rows", 2, {2, 4099}, {0}, {1, 2}, 0, 1},
    {"outer dims that do not merge", 3, {3, 4, 33}, {200, 40, 1}, {0}, 1, 0},
    {"broadcast rows", 2, {6, 3000}, {0, 1}, {0}, 0, 0},
    {"all keys equal (stride 0)", 2, {4, 2500}, {2500, 0}, {0}, 0, 0},
    {"scalar", 0, {0}, {0}, {0}, 3, 2},
    {"empty rows", 2, {5, 0}, {0}, {0}, 0, 0},
    {"no rows", 2, {0, 5000}, {0}, {0}, 0, 0},
};
#define N_LAYOUTS (sizeof(layout_cases) / sizeof(layout_cases[0]))

START_TEST(test_lengths)
{
    /* _i = ((length * N_DTYPES) + dtype) * 2 + direction */
    rng_seed(100 + (uint64_t)_i);
    int desc = _i % 2;
    kp_dtype dt = all_dtypes[(_i / 2) % N_DTYPES];
    run_sort(&length_cases[_i / 2 / N_DTYPES], dt, desc, FILL_RANDOM);
}
END_TEST

START_TEST(test_layouts)
{
    rng_seed(200 + (uint64_t)_i);
    int desc = _i % 2;
    kp_dtype dt = all_dtypes[(_i / 2) % N_DTYPES];
    run_sort(&layout_cases[_i / 2 / N_DTYPES], dt, desc, FILL_RANDOM);
}
END_TEST

/* Keys from {0, 1, 2, 3}: long runs of equal keys must keep column order. */
START_TEST(test_stability)
{
    static const struct sort_case cases[] = {
        {"duplicates, 13 rows of 1000", 2, {13, 1000}, {0}, {0}, 0, 0},
        {"duplicates, 2 rows of 100000", 2, {2, 100000}, {0}, {0}, 0, 0},
    };
    rng_seed(300 + (uint64_t)_i);
    int desc = _i % 2;
    kp_dtype dt = all_dtypes[(_i / 2) % N_DTYPES];
    run_sort(&cases[_i / 2 / N_DTYPES], dt, desc, FILL_FEW);
}
END_TEST

/* NaNs (several payloads, both signs), +-Inf, +-0 among ordinary values. */
START_TEST(test_nan_inf_zero)
{
    static const struct sort_case cases[] = {
        {"specials, 7 rows of 50", 2, {7, 50}, {0}, {0}, 0, 0},
        {"specials, 2 rows of 5000", 2, {2, 5000}, {0}, {0}, 0, 0},
    };
    rng_seed(400 + (uint64_t)_i);
    int desc = _i % 2;
    kp_dtype dt = float_dtypes[(_i / 2) % N_FLOAT_DTYPES];
    run_sort(&cases[_i / 2 / N_FLOAT_DTYPES], dt, desc, FILL_SPECIAL);
}
END_TEST

/* A fixed row whose order is written out by hand. */
START_TEST(test_known_order)
{
    const float v[8] = {2.0f, NAN, -INFINITY, -0.0f, 0.0f, INFINITY, -NAN, 2.0f};
    const uint32_t ascending[8] = {2, 3, 4, 0, 7, 5, 1, 6};
    const uint32_t descending[8] = {1, 6, 5, 0, 7, 3, 4, 2};
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, sizeof(v));
    gpu_buf_alloc(&dst, 8 * 4);
    memcpy(src.host, v, sizeof(v));
    gpu_buf_upload(&src);
    kp_tensor s = gpu_tensor(&src, KP_DTYPE_F32, 1, (int64_t[]){8}, NULL, 0);
    kp_tensor d = gpu_tensor(&dst, KP_DTYPE_U32, 1, (int64_t[]){8}, NULL, 0);
    for (int desc = 0; desc < 2; desc++) {
        CK_OK(kp_argsort(gpu_stream, &d, &s, desc, NULL));
        gpu_buf_download(&dst);
        const uint32_t *want = desc ? descending : ascending, *got = dst.host;
        for (int k = 0; k < 8; k++)
            ck_assert_msg(got[k] == want[k], "%s position %d: got column %u want %u",
                          desc ? "descending" : "ascending", k, got[k], want[k]);
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("sort");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_known_order);
    tcase_add_loop_test(tc, test_lengths, 0, (int)(N_LENGTHS * N_DTYPES * 2));
    tcase_add_loop_test(tc, test_layouts, 0, (int)(N_LAYOUTS * N_DTYPES * 2));
    tcase_add_loop_test(tc, test_stability, 0, (int)(2 * N_DTYPES * 2));
    tcase_add_loop_test(tc, test_nan_inf_zero, 0, (int)(2 * N_FLOAT_DTYPES * 2));
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
