/* Two GPUs in one process: each device loads its own modules (counted from
 * kernelpack's debug log), ops on both devices' streams run at once from two
 * threads and match the CPU, a peer copy round-trips bit-exactly, and
 * operands of two devices in one op are refused with nothing written.
 * Skips (77) unless two devices are present. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "user_module.h"

static kp_device *dev[2];
static kp_stream *stream[2];

/* ---- module loads per device, from the "loaded module 'M' (...) on device D" lines */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static int loads[2][2];  /* [device][0: built-in affine, 1: the user module] */

static void count_loads(void *user, kp_log_level level, const char *msg)
{
    (void)user;
    (void)level;
    char module[64];
    int device = -1;
    const char *on = strstr(msg, " on device ");
    if (sscanf(msg, "loaded module '%63[^']'", module) != 1 || !on || sscanf(on, " on device %d", &device) != 1)
        return;
    if (device < 0 || device > 1)
        return;
    pthread_mutex_lock(&log_lock);
    if (strcmp(module, "affine") == 0)
        loads[device][0]++;
    else if (strcmp(module, kp_test_user_module.name) == 0)
        loads[device][1]++;
    pthread_mutex_unlock(&log_lock);
}

START_TEST(test_each_device_loads_its_own_modules)
{
    kp_kernel *k[2] = {NULL, NULL};
    for (int round = 0; round < 2; round++) {
        for (int d = 0; d < 2; d++) {
            CK_OK(kp_device_load_module(dev[d], "affine"));
            CK_OK(kp_device_get_kernel(dev[d], &kp_test_user_module, "test_axpb_f32", &k[d]));
        }
    }
    ck_assert_ptr_ne(k[0], k[1]);
    for (int d = 0; d < 2; d++) {
        ck_assert_msg(loads[d][0] == 1, "device %d loaded affine %d times", d, loads[d][0]);
        ck_assert_msg(loads[d][1] == 1, "device %d loaded the user module %d times", d, loads[d][1]);
    }
}
END_TEST

/* ---- two threads, one per device */
#define WORK_N ((size_t)6 << 20)
#define ROUNDS 8
static pthread_barrier_t start;

struct worker {
    int d;
    char failure[256];
};

static void *work(void *arg)
{
    struct worker *w = arg;
    kp_device *dv = dev[w->d];
    kp_stream *s = stream[w->d];
    kp_buffer *x = NULL, *y = NULL, *z = NULL;
    float *hx = malloc(WORK_N * 4), *hz = malloc(WORK_N * 4);
    kp_kernel *k = NULL;
    kp_status st = hx && hz ? KP_OK : KP_ERR_OUT_OF_MEMORY;
    if (st == KP_OK) st = kp_buffer_alloc(dv, WORK_N * 4, &x);
    if (st == KP_OK) st = kp_buffer_alloc(dv, WORK_N * 4, &y);
    if (st == KP_OK) st = kp_buffer_alloc(dv, WORK_N * 4, &z);
    if (st == KP_OK) st = kp_device_get_kernel(dv, &kp_test_user_module, "test_axpb_f32", &k);
    for (size_t i = 0; hx && i < WORK_N; i++)
        hx[i] = (float)((i * 2654435761u + (size_t)w->d * 977) % 2048) / 64.0f - 16.0f;
    if (st == KP_OK) st = kp_memcpy_h2d(s, x, 0, hx, WORK_N * 4);
    if (st == KP_OK) st = kp_stream_synchronize(s);
    pthread_barrier_wait(&start);
    for (int r = 0; st == KP_OK && r < ROUNDS; r++) {
        /* y = (r + 1) x + d with a built-in op, z = 0.5 y + 1 with the user kernel;
         * every value is exact in f32, so the check is exact too */
        kp_tensor tx = {x, KP_DTYPE_F32, {1, {(int64_t)WORK_N}, {1}, 0}};
        kp_tensor ty = {y, KP_DTYPE_F32, {1, {(int64_t)WORK_N}, {1}, 0}};
        float a = 0.5f, b = 1.0f;
        uint64_t n = WORK_N;
        kp_kernel_arg args[] = {kp_arg_buffer(z, 0), kp_arg_buffer(y, 0), kp_arg_value(&a, 4),
                                kp_arg_value(&b, 4), kp_arg_value(&n, 8)};
        kp_launch_config cfg = {{264, 1, 1}, {256, 1, 1}, 0};
        st = kp_affine(s, &ty, &tx, r + 1, w->d);
        if (st == KP_OK) st = kp_kernel_launch(s, k, &cfg, args, 5);
        if (st == KP_OK) st = kp_memcpy_d2h(s, hz, z, 0, WORK_N * 4);
        if (st == KP_OK) st = kp_stream_synchronize(s);
        for (size_t i = 0; st == KP_OK && i < WORK_N; i++) {
            float want = 0.5f * ((float)(r + 1) * hx[i] + (float)w->d) + 1.0f;
            if (hz[i] != want) {
                snprintf(w->failure, sizeof(w->failure), "device %d round %d: z[%zu] = %g, want %g",
                         w->d, r, i, hz[i], want);
                break;
            }
        }
        if (w->failure[0])
            break;
    }
    if (st != KP_OK)
        snprintf(w->failure, sizeof(w->failure), "device %d: %s: %s", w->d, kp_status_string(st),
                 kp_last_error_message());
    kp_buffer_destroy(&z);
    kp_buffer_destroy(&y);
    kp_buffer_destroy(&x);
    free(hz);
    free(hx);
    return NULL;
}

START_TEST(test_two_threads_two_devices)
{
    pthread_t t[2];
    struct worker w[2] = {{0, ""}, {1, ""}};
    pthread_barrier_init(&start, NULL, 2);
    for (int d = 0; d < 2; d++)
        ck_assert_int_eq(pthread_create(&t[d], NULL, work, &w[d]), 0);
    for (int d = 0; d < 2; d++)
        pthread_join(t[d], NULL);
    pthread_barrier_destroy(&start);
    for (int d = 0; d < 2; d++)
        ck_assert_msg(w[d].failure[0] == '\0', "%s", w[d].failure);
}
END_TEST

START_TEST(test_peer_copy_round_trip)
{
    const size_t bytes = ((size_t)64 << 20) + 13;
    unsigned char *src = malloc(bytes), *back = malloc(bytes);
    ck_assert(src && back);
    rng_seed(5);
    for (size_t i = 0; i < bytes; i++)
        src[i] = (unsigned char)rng_next();
    kp_buffer *a = NULL, *b = NULL, *a2 = NULL;
    CK_OK(kp_buffer_alloc(dev[0], bytes, &a));
    CK_OK(kp_buffer_alloc(dev[1], bytes + 8, &b));
    CK_OK(kp_buffer_alloc(dev[0], bytes, &a2));
    CK_OK(kp_memcpy_h2d(stream[0], a, 0, src, bytes));
    CK_OK(kp_stream_synchronize(stream[0]));
    CK_OK(kp_memcpy_peer(stream[1], b, 5, a, 0, bytes));   /* queued on the destination's device */
    CK_OK(kp_stream_synchronize(stream[1]));
    CK_OK(kp_memcpy_peer(stream[1], a2, 0, b, 5, bytes));  /* and on the source's */
    CK_OK(kp_stream_synchronize(stream[1]));
    CK_OK(kp_memcpy_d2h(stream[0], back, a2, 0, bytes));
    CK_OK(kp_stream_synchronize(stream[0]));
    ck_assert_msg(memcmp(src, back, bytes) == 0, "the peer copy round trip changed bytes");
    kp_buffer_destroy(&a2);
    kp_buffer_destroy(&b);
    kp_buffer_destroy(&a);
    free(back);
    free(src);
}
END_TEST

START_TEST(test_mixed_devices_refused)
{
    const size_t n = 1 << 20;
    kp_buffer *x0 = NULL, *y1 = NULL, *y0 = NULL;
    CK_OK(kp_buffer_alloc(dev[0], n * 4, &x0));
    CK_OK(kp_buffer_alloc(dev[1], n * 4, &y1));
    CK_OK(kp_buffer_alloc(dev[0], n * 4, &y0));
    CK_OK(kp_memset(stream[0], x0, 0, 0, n * 4));
    CK_OK(kp_memset(stream[1], y1, 0, 0x3c, n * 4));
    CK_OK(kp_memset(stream[0], y0, 0, 0x3c, n * 4));
    CK_OK(kp_stream_synchronize(stream[0]));
    CK_OK(kp_stream_synchronize(stream[1]));
    kp_tensor tx0 = {x0, KP_DTYPE_F32, {1, {(int64_t)n}, {1}, 0}};
    kp_tensor ty1 = {y1, KP_DTYPE_F32, {1, {(int64_t)n}, {1}, 0}};
    ck_assert_int_eq(kp_affine(stream[0], &ty1, &tx0, 2, 1), KP_ERR_DEVICE_MISMATCH);
    ck_assert_int_eq(kp_affine(stream[1], &ty1, &tx0, 2, 1), KP_ERR_DEVICE_MISMATCH);
    kp_kernel *k0 = NULL;
    CK_OK(kp_device_get_kernel(dev[0], &kp_test_user_module, "test_axpb_f32", &k0));
    float a = 2, b = 1;
    uint64_t count = n;
    kp_launch_config cfg = {{64, 1, 1}, {256, 1, 1}, 0};
    kp_kernel_arg args[] = {kp_arg_buffer(y0, 0), kp_arg_buffer(x0, 0), kp_arg_value(&a, 4),
                            kp_arg_value(&b, 4), kp_arg_value(&count, 8)};
    ck_assert_int_eq(kp_kernel_launch(stream[1], k0, &cfg, args, 5), KP_ERR_DEVICE_MISMATCH);
    args[0] = kp_arg_buffer(y1, 0);
    ck_assert_int_eq(kp_kernel_launch(stream[0], k0, &cfg, args, 5), KP_ERR_DEVICE_MISMATCH);
    unsigned char *host = malloc(n * 4);
    ck_assert_ptr_nonnull(host);
    for (int d = 0; d < 2; d++) {
        CK_OK(kp_memcpy_d2h(stream[d], host, d ? y1 : y0, 0, n * 4));
        CK_OK(kp_stream_synchronize(stream[d]));
        for (size_t i = 0; i < n * 4; i++)
            ck_assert_msg(host[i] == 0x3c, "device %d: byte %zu was written", d, i);
    }
    free(host);
    kp_buffer_destroy(&y0);
    kp_buffer_destroy(&y1);
    kp_buffer_destroy(&x0);
}
END_TEST

int main(void)
{
    int count = 0;
    kp_status st = kp_device_count(&count);
    if (st == KP_ERR_NO_DRIVER || (st == KP_OK && count < 2)) {
        printf("SKIP: two %s devices needed, %d present%s%s\n", kp_backend_name(), count,
               st == KP_OK ? "" : ": ", st == KP_OK ? "" : kp_last_error_message());
        return 77;
    }
    kp_set_log_callback(count_loads, NULL, KP_LOG_DEBUG);
    for (int d = 0; d < 2; d++) {
        if (kp_device_open(d, &dev[d]) != KP_OK || kp_stream_create(dev[d], &stream[d]) != KP_OK) {
            printf("FAIL: opening device %d: %s\n", d, kp_last_error_message());
            return 1;
        }
        kp_device_info info;
        kp_device_get_info(dev[d], &info);
        printf("device %d: %s (%s)\n", d, info.name, info.arch);
    }
    Suite *s = suite_create("gpu_multi_gpu");
    TCase *tc = tcase_create("multi_gpu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_each_device_loads_its_own_modules);
    tcase_add_test(tc, test_two_threads_two_devices);
    tcase_add_test(tc, test_peer_copy_round_trip);
    tcase_add_test(tc, test_mixed_devices_refused);
    suite_add_tcase(s, tc);
    int rc = gpu_run_suite(s);
    for (int d = 0; d < 2; d++) {
        kp_stream_destroy(&stream[d]);
        kp_device_close(&dev[d]);
    }
    kp_set_log_callback(NULL, NULL, KP_LOG_ERROR);
    return rc;
}
