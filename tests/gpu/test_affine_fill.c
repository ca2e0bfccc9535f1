/* affine, fill, copy and copy2d on the GPU against a CPU reference, for
 * every dtype and contiguous, strided, broadcast, offset and empty layouts.
 * Outputs are poisoned first; elements outside the written view must keep
 * the poison. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "operands.h"

#define POISON 0xA5

static const kp_dtype all_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                      KP_DTYPE_U8, KP_DTYPE_U32, KP_DTYPE_I64};
#define N_DTYPES (sizeof(all_dtypes) / sizeof(all_dtypes[0]))

/* Reference affine in the dtype's compute type. */
static void affine_ref(kp_dtype dt, const void *x, size_t xi, void *y, size_t yi, double mul, double add)
{
    switch (dt) {
    case KP_DTYPE_U8: {
        uint32_t v = (uint32_t)host_get(dt, x, xi) * (uint32_t)mul + (uint32_t)add;
        ((uint8_t *)y)[yi] = (uint8_t)v;
        break;
    }
    case KP_DTYPE_U32:
        ((uint32_t *)y)[yi] = ((const uint32_t *)x)[xi] * (uint32_t)mul + (uint32_t)add;
        break;
    case KP_DTYPE_I64:
        ((int64_t *)y)[yi] = (int64_t)((uint64_t)((const int64_t *)x)[xi] * (uint64_t)(int64_t)mul +
                                       (uint64_t)(int64_t)add);
        break;
    case KP_DTYPE_F64:
        ((double *)y)[yi] = ((const double *)x)[xi] * mul + add;
        break;
    default:  /* f32 math, then rounding into the dtype */
        host_set(dt, y, yi, (double)fmaf((float)host_get(dt, x, xi), (float)mul, (float)add));
        break;
    }
}

/* Allowed difference: exact for integers; for floats one unit in the last
 * place of the dtype, relative to `scale` = |x*mul| + |add| (the GPU may or
 * may not fuse the multiply-add, which matters when the terms cancel). */
static int close_enough(kp_dtype dt, double got, double want, double scale)
{
    if (isnan(want))
        return isnan(got);
    double ulp;
    switch (dt) {
    case KP_DTYPE_F32: ulp = 1.2e-7; break;
    case KP_DTYPE_F64: ulp = 2.3e-16; break;
    case KP_DTYPE_F16: ulp = 9.8e-4; break;
    case KP_DTYPE_BF16: ulp = 7.9e-3; break;
    default: return got == want;
    }
    return fabs(got - want) <= ulp * fmax(fabs(want), scale) + 1e-300;
}

static const struct dst_src_case cases[] = {
    {"contiguous odd", 1, {100003}, {0}, {0}, 0, 0},
    {"contiguous offset", 2, {33, 65}, {0}, {0}, 3, 1},
    {"transposed src", 2, {37, 53}, {0}, {1, 37}, 0, 5},
    {"transposed many tiles", 2, {1000, 777}, {800, 1}, {1, 1003}, 3, 2},
    {"transposed even strides", 2, {200, 130}, {0}, {1, 200}, 0, 0},  /* 16-bit words, edge tiles */
    {"transposed odd dst offset", 2, {128, 64}, {0}, {1, 128}, 1, 0},
    {"batched transpose", 3, {3, 70, 65}, {0}, {4550, 1, 70}, 0, 0},
    {"batched transpose even strides", 3, {2, 128, 66}, {0}, {8448, 1, 128}, 0, 0},
    {"batched transpose into channels-last", 3, {2, 40, 96}, {3840, 1, 40}, {0}, 0, 2},
    {"batched transpose wide tiles", 3, {2, 70, 260}, {0}, {18200, 1, 70}, 0, 0},  /* 16-bit: 64 x 128 */
    /* 70000 matrices of one tile: more than the grid's 65535 rows of blocks */
    {"batched transpose past the grid", 3, {70000, 2, 3}, {0}, {6, 1, 2}, 0, 0},
    {"permuted rows", 3, {5, 7, 136}, {0}, {136, 680, 1}, 0, 0},  /* [S, H, D] -> [H, S, D] */
    {"permuted rows aligned offsets", 3, {4, 6, 128}, {0}, {128, 512, 1}, 8, 24},
    {"permuted rows odd offsets", 3, {4, 6, 128}, {0}, {128, 512, 1}, 1, 3},
    {"permuted long rows", 3, {3, 2, 3000}, {0}, {3000, 9000, 1}, 0, 0},
    {"short rows", 3, {2000, 3, 3}, {0}, {9, 1, 3}, 0, 0},
    {"strided dst", 2, {19, 23}, {47, 2}, {0}, 1, 0},
    {"broadcast src", 3, {4, 5, 129}, {0}, {0, 129, 1}, 0, 0},
    {"row gaps both", 3, {3, 7, 9}, {100, 12, 1}, {70, 10, 1}, 2, 7},
    {"scalar", 0, {0}, {0}, {0}, 4, 9},
    {"empty", 2, {0, 17}, {0}, {0}, 0, 0},
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

/* Runs `op` for one dtype and layout case; checks every element. */
enum op_kind { OP_AFFINE, OP_COPY, OP_FILL };

static void run_case(enum op_kind op, kp_dtype dt, const struct dst_src_case *c)
{
    size_t es = kp_dtype_size(dt);
    struct gpu_buf src, dst;
    kp_tensor tmp_d = case_dst_tensor(&(struct gpu_buf){0}, dt, c);
    kp_tensor tmp_s = case_src_tensor(&(struct gpu_buf){0}, dt, c);
    size_t dst_elems = (size_t)tensor_extent(&tmp_d), src_elems = (size_t)tensor_extent(&tmp_s);
    gpu_buf_alloc(&src, src_elems * es);
    gpu_buf_alloc(&dst, dst_elems * es);
    host_random(dt, src.host, src_elems);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    kp_tensor s = case_src_tensor(&src, dt, c);
    kp_tensor d = case_dst_tensor(&dst, dt, c);

    double mul = dt == KP_DTYPE_U8 ? 3 : dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16 ? 1.5 : -2.25;
    double add = dt == KP_DTYPE_U8 || dt == KP_DTYPE_U32 ? 7 : dt == KP_DTYPE_I64 ? -11 : 0.75;
    if (dt == KP_DTYPE_U32 || dt == KP_DTYPE_I64)
        mul = 3;
    unsigned char value[8];
    host_random(dt, value, 1);
    switch (op) {
    case OP_AFFINE: CK_OK(kp_affine(gpu_stream, &d, &s, mul, add)); break;
    case OP_COPY: CK_OK(kp_copy(gpu_stream, &d, &s)); break;
    case OP_FILL: CK_OK(kp_fill(gpu_stream, &d, value)); break;
    }
    gpu_buf_download(&dst);

    unsigned char *written = calloc(dst_elems, 1);
    unsigned char want[8];
    uint64_t n = tensor_numel(&d);
    for (uint64_t i = 0; i < n; i++) {
        size_t di = tensor_offset(&d, i), si = tensor_offset(&s, i);
        written[di] = 1;
        if (op == OP_AFFINE) {
            affine_ref(dt, src.host, si, want, 0, mul, add);
        } else {
            memcpy(want, op == OP_COPY ? (unsigned char *)src.host + si * es : value, es);
        }
        double g = host_get(dt, dst.host, di), w = host_get(dt, want, 0);
        if (op == OP_AFFINE)
            ck_assert_msg(close_enough(dt, g, w, fabs(host_get(dt, src.host, si) * mul) + fabs(add)),
                          "%s %s #%llu: got %.17g want %.17g", c->name,
                          kp_dtype_name(dt), (unsigned long long)i, g, w);
        else
            ck_assert_msg(memcmp((unsigned char *)dst.host + di * es, want, es) == 0,
                          "%s %s #%llu: got %.17g want %.17g", c->name, kp_dtype_name(dt),
                          (unsigned long long)i, g, w);
    }
    check_untouched(&dst, written, es, POISON, c->name);
    free(written);
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}

START_TEST(test_affine)
{
    rng_seed(1000 + (uint64_t)_i);
    kp_dtype dt = all_dtypes[_i % N_DTYPES];
    const struct dst_src_case *c = &cases[_i / N_DTYPES];
    run_case(OP_AFFINE, dt, c);
}
END_TEST

START_TEST(test_copy)
{
    rng_seed(2000 + (uint64_t)_i);
    run_case(OP_COPY, all_dtypes[_i % N_DTYPES], &cases[_i / N_DTYPES]);
}
END_TEST

START_TEST(test_fill)
{
    rng_seed(3000 + (uint64_t)_i);
    const struct dst_src_case *c = &cases[_i / N_DTYPES];
    run_case(OP_FILL, all_dtypes[_i % N_DTYPES], c);
}
END_TEST

START_TEST(test_affine_in_place_and_nan)
{
    float h[5] = {1.0f, NAN, INFINITY, -INFINITY, -0.0f};
    struct gpu_buf b;
    gpu_buf_alloc(&b, sizeof(h));
    memcpy(b.host, h, sizeof(h));
    gpu_buf_upload(&b);
    kp_tensor t = gpu_tensor(&b, KP_DTYPE_F32, 1, (int64_t[]){5}, NULL, 0);
    CK_OK(kp_affine(gpu_stream, &t, &t, 2.0, 1.0));
    gpu_buf_download(&b);
    const float *r = b.host;
    ck_assert_float_eq(r[0], 3.0f);
    ck_assert(isnan(r[1]));
    ck_assert(isinf(r[2]) && r[2] > 0);
    ck_assert(isinf(r[3]) && r[3] < 0);
    ck_assert_float_eq(r[4], 1.0f);
    gpu_buf_free(&b);
}
END_TEST

START_TEST(test_copy2d)
{
    rng_seed(77);
    const size_t rows = 300, cols = 77, sstride = 91, dstride = 80;
    struct gpu_buf src, dst;
    gpu_buf_alloc(&src, (rows * sstride + 5) * 2);
    gpu_buf_alloc(&dst, (rows * dstride + 3) * 2);
    host_random(KP_DTYPE_BF16, src.host, rows * sstride + 5);
    memset(dst.host, POISON, dst.bytes);
    gpu_buf_upload(&src);
    gpu_buf_upload(&dst);
    CK_OK(kp_copy2d(gpu_stream, KP_DTYPE_BF16, dst.dev, 3, dstride, src.dev, 5, sstride, rows, cols));
    gpu_buf_download(&dst);
    const uint16_t *s = src.host, *d = dst.host;
    for (size_t r = 0; r < rows; r++) {
        for (size_t c = 0; c < dstride; c++) {
            size_t di = 3 + r * dstride + c;
            if (c < cols)
                ck_assert_uint_eq(d[di], s[5 + r * sstride + c]);
            else if (di < rows * dstride + 3)
                ck_assert_uint_eq(d[di], 0xA5A5);
        }
    }
    gpu_buf_free(&src);
    gpu_buf_free(&dst);
}
END_TEST

START_TEST(test_module_preload)
{
    CK_OK(kp_device_load_module(gpu_dev, "affine"));
    CK_OK(kp_device_load_module(gpu_dev, "fill"));
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("affine_fill");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_module_preload);
    tcase_add_loop_test(tc, test_affine, 0, (int)(N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_copy, 0, (int)(N_DTYPES * N_CASES));
    tcase_add_loop_test(tc, test_fill, 0, (int)(N_DTYPES * N_CASES));
    tcase_add_test(tc, test_affine_in_place_and_nan);
    tcase_add_test(tc, test_copy2d);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
