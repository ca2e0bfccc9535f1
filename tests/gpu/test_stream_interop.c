/* kernelpack on a stream another library owns (kp_stream_wrap), and another
 * library on kernelpack's stream (kp_stream_native_handle): work queued by
 * both, with no synchronisation between them, runs in queue order. The
 * buffers are large so that a missing order would show as stale values. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "native_runtime.h"

#define N ((size_t)48 << 20)  /* floats: 192 MiB per buffer */

static uint32_t bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static kp_tensor vec(kp_buffer *b)
{
    kp_tensor t = {b, KP_DTYPE_F32, {1, {(int64_t)N}, {1}, 0}};
    return t;
}

/* owner memset x = v -> kernelpack y = 2x + 1 -> owner copies y back; all
 * queued on `native` (through `kp` for kernelpack's op) before one wait. */
static void round_trip(kp_stream *kp, void *native, kp_buffer *x, kp_buffer *y, float *host)
{
    for (int round = 0; round < 3; round++) {
        float v = 1.5f + (float)round;
        ck_assert_int_eq(native_memset32_async(kp_buffer_device_ptr(x), bits(v), N, native), 0);
        kp_tensor tx = vec(x), ty = vec(y);
        CK_OK(kp_affine(kp, &ty, &tx, 2.0, 1.0));
        ck_assert_int_eq(native_memcpy_d2h_async(host, kp_buffer_device_ptr(y), N * 4, native), 0);
        ck_assert_int_eq(native_stream_synchronize(native), 0);
        for (size_t i = 0; i < N; i += 4099)
            ck_assert_msg(host[i] == 2 * v + 1, "round %d: y[%zu] = %g, want %g", round, i, host[i], 2 * v + 1);
        ck_assert(host[N - 1] == 2 * v + 1);
    }
}

static kp_buffer *x, *y;
static float *host;

static void setup_buffers(void)
{
    CK_OK(kp_buffer_alloc(gpu_dev, N * 4, &x));
    CK_OK(kp_buffer_alloc(gpu_dev, N * 4, &y));
    host = malloc(N * 4);
    ck_assert_ptr_nonnull(host);
    CK_OK(kp_memset(gpu_stream, x, 0, 0, N * 4));
    CK_OK(kp_memset(gpu_stream, y, 0, 0, N * 4));
    CK_OK(kp_stream_synchronize(gpu_stream));
}

static void free_buffers(void)
{
    free(host);
    kp_buffer_destroy(&y);
    kp_buffer_destroy(&x);
}

START_TEST(test_kernelpack_on_a_wrapped_stream)
{
    setup_buffers();
    void *native = NULL;
    ck_assert_int_eq(native_stream_create(&native), 0);
    kp_stream *wrapped = NULL;
    CK_OK(kp_stream_wrap(gpu_dev, native, &wrapped));
    ck_assert_ptr_eq(kp_stream_native_handle(wrapped), native);
    round_trip(wrapped, native, x, y, host);
    kp_stream_destroy(&wrapped);
    /* still the owner's: it takes more work after kernelpack let go */
    ck_assert_int_eq(native_memset32_async(kp_buffer_device_ptr(x), 0, N, native), 0);
    ck_assert_int_eq(native_stream_synchronize(native), 0);
    ck_assert_int_eq(native_stream_destroy(native), 0);
    free_buffers();
}
END_TEST

START_TEST(test_another_library_on_kernelpacks_stream)
{
    setup_buffers();
    void *native = kp_stream_native_handle(gpu_stream);
    ck_assert_ptr_nonnull(native);
    round_trip(gpu_stream, native, x, y, host);
    free_buffers();
}
END_TEST

START_TEST(test_the_default_stream_wrapped)
{
    setup_buffers();
    kp_stream *deflt = NULL;
    CK_OK(kp_stream_wrap(gpu_dev, NULL, &deflt));
    round_trip(deflt, NULL, x, y, host);
    kp_stream_destroy(&deflt);
    free_buffers();
}
END_TEST

int main(void)
{
    int rc = gpu_setup();
    if (rc)
        return rc;
    kp_device_info info;
    kp_device_get_info(gpu_dev, &info);
    if (native_open(info.ordinal) != 0) {
        gpu_teardown();
        return 1;
    }
    Suite *s = suite_create("gpu_stream_interop");
    TCase *tc = tcase_create("stream_interop");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_kernelpack_on_a_wrapped_stream);
    tcase_add_test(tc, test_another_library_on_kernelpacks_stream);
    tcase_add_test(tc, test_the_default_stream_wrapped);
    suite_add_tcase(s, tc);
    rc = gpu_run_suite(s);
    gpu_teardown();
    return rc;
}
