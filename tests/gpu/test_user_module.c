/* A module built by kp-build-module (gpu/user_module.cu), loaded and launched
 * through kp_device_get_kernel/kp_kernel_launch and checked against a CPU
 * reference; a rejected launch must leave its output untouched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "user_module.h"

static kp_kernel *get(const char *name)
{
    kp_kernel *k = NULL;
    CK_OK(kp_device_get_kernel(gpu_dev, &kp_test_user_module, name, &k));
    ck_assert_ptr_nonnull(k);
    return k;
}

START_TEST(test_axpb_matches_cpu)
{
    const uint64_t n = 1000003;  /* odd: the grid-stride loop's tail */
    struct gpu_buf x, y;
    gpu_buf_alloc(&x, n * sizeof(float));
    gpu_buf_alloc(&y, n * sizeof(float));
    rng_seed(11);
    host_random(KP_DTYPE_F32, x.host, n);
    gpu_buf_upload(&x);
    CK_OK(kp_memset(gpu_stream, y.dev, 0, 0xff, y.bytes));
    kp_kernel *k = get("test_axpb_f32");
    ck_assert_uint_eq(kp_kernel_get_param_count(k), 5);
    float a = -1.75f, b = 0.5f;
    kp_kernel_arg args[] = {kp_arg_buffer(y.dev, 0), kp_arg_buffer(x.dev, 0), kp_arg_value(&a, sizeof(a)),
                            kp_arg_value(&b, sizeof(b)), kp_arg_value(&n, sizeof(n))};
    kp_launch_config cfg = {{120, 1, 1}, {256, 1, 1}, 0};
    CK_OK(kp_kernel_launch(gpu_stream, k, &cfg, args, 5));
    gpu_buf_download(&y);
    const float *xs = x.host, *ys = y.host;
    for (uint64_t i = 0; i < n; i++) {
        /* the GPU may contract a*x+b into one fma: allow that rounding */
        double want = (double)a * xs[i] + b;
        ck_assert_msg(fabs(ys[i] - want) <= 1e-6 * fabs(want) + 1e-7, "y[%llu] = %.9g, want %.9g",
                      (unsigned long long)i, ys[i], want);
    }
    gpu_buf_free(&y);
    gpu_buf_free(&x);
}
END_TEST

START_TEST(test_row_sum_uses_grid_y_and_shared_memory)
{
    const unsigned rows = 37, cols = 1000, block = 256;
    struct gpu_buf in, out;
    gpu_buf_alloc(&in, (size_t)rows * cols * sizeof(float));
    gpu_buf_alloc(&out, rows * sizeof(float));
    rng_seed(12);
    host_random(KP_DTYPE_F32, in.host, (size_t)rows * cols);
    gpu_buf_upload(&in);
    kp_kernel *k = get("test_row_sum_f32");
    kp_kernel_arg args[] = {kp_arg_buffer(out.dev, 0), kp_arg_buffer(in.dev, 0), kp_arg_value(&cols, sizeof(cols))};
    kp_launch_config cfg = {{1, rows, 1}, {block, 1, 1}, block * sizeof(float)};
    CK_OK(kp_kernel_launch(gpu_stream, k, &cfg, args, 3));
    gpu_buf_download(&out);
    const float *xs = in.host, *got = out.host;
    for (unsigned r = 0; r < rows; r++) {
        double want = 0, mag = 0;
        for (unsigned c = 0; c < cols; c++) {
            want += xs[(size_t)r * cols + c];
            mag += fabs(xs[(size_t)r * cols + c]);
        }
        ck_assert_msg(fabs(got[r] - want) <= 1e-5 * mag + 1e-6, "row %u: %.9g, want %.9g", r, got[r], want);
    }
    gpu_buf_free(&out);
    gpu_buf_free(&in);
}
END_TEST

START_TEST(test_rejected_launch_writes_nothing)
{
    const uint64_t n = 4096;
    struct gpu_buf x, y;
    gpu_buf_alloc(&x, n * sizeof(float));
    gpu_buf_alloc(&y, n * sizeof(float));
    CK_OK(kp_memset(gpu_stream, x.dev, 0, 0, x.bytes));
    CK_OK(kp_memset(gpu_stream, y.dev, 0, 0x7b, y.bytes));
    kp_kernel *k = get("test_axpb_f32");
    float a = 1, b = 1;
    uint32_t n32 = (uint32_t)n;
    kp_kernel_arg narrow[] = {kp_arg_buffer(y.dev, 0), kp_arg_buffer(x.dev, 0), kp_arg_value(&a, sizeof(a)),
                              kp_arg_value(&b, sizeof(b)), kp_arg_value(&n32, sizeof(n32))};
    kp_launch_config cfg = {{16, 1, 1}, {256, 1, 1}, 0};
    ck_assert_int_eq(kp_kernel_launch(gpu_stream, k, &cfg, narrow, 5), KP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(kp_last_error_message(), "argument 4 is 4 bytes"));
    kp_launch_config too_big = {{16, 1, 1}, {4096, 1, 1}, 0};
    ck_assert_int_eq(kp_kernel_launch(gpu_stream, k, &too_big, narrow, 5), KP_ERR_INVALID_ARGUMENT);
    gpu_buf_download(&y);
    const unsigned char *bytes = y.host;
    for (size_t i = 0; i < y.bytes; i++)
        ck_assert_uint_eq(bytes[i], 0x7b);
    kp_kernel *none = (kp_kernel *)&none;
    ck_assert_int_eq(kp_device_get_kernel(gpu_dev, &kp_test_user_module, "test_axpb_f16", &none),
                     KP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(kp_last_error_message(), "test_axpb_f32, test_row_sum_f32"));
    ck_assert_ptr_null(none);
    gpu_buf_free(&y);
    gpu_buf_free(&x);
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    Suite *s = suite_create("gpu_user_module");
    TCase *tc = tcase_create("user_module");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_axpb_matches_cpu);
    tcase_add_test(tc, test_row_sum_uses_grid_y_and_shared_memory);
    tcase_add_test(tc, test_rejected_launch_writes_nothing);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
