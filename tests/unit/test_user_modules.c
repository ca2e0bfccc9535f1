/* Users' modules, wrapped streams and peer copies on the host-side fake
 * backend: loading once per device, lookup errors, every launch check (and
 * that a rejected launch queues nothing), argument passing. */
#include <pthread.h>
#include <stdlib.h>

#include "unit_util.h"

static const uint32_t scale_params[] = {8, 8, 4, 8};  /* out, in, alpha, n */
static const uint32_t fill_params[] = {8, 4};
static const kp_kernel_desc test_kernels[] = {
    {"fill_u32", 2, fill_params},
    {"scale_f32", 4, scale_params},
};
static kp_code_object test_object;
static kp_module_desc test_module;

/* A descriptor like kp-build-module writes, for the arch the fake device reports. */
static void make_module(const char *archs)
{
    static const unsigned char code[] = "not really code";
    test_object = (kp_code_object){KP_BACKEND_ROCM ? KP_CODE_HSACO_BUNDLE : KP_CODE_FATBIN, archs,
                                   code, sizeof(code)};
    test_module = (kp_module_desc){KP_MODULE_DESC_VERSION, "test_module", &test_object, 1,
                                   test_kernels, 2, NULL, 0};
}

static kp_device *open_device(const char *arch)
{
    static char archs[64];
    snprintf(archs, sizeof(archs), "%s", arch);
    make_module(archs);
    kp_device *dev = NULL;
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    return dev;
}

static kp_device *open_built(void)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    return open_device(arch);
}

START_TEST(test_loaded_once_per_device)
{
    kp_device *a = open_built(), *b = NULL;
    ck_assert_int_eq(kp_device_open(0, &b), KP_OK);  /* a second handle: its own cache */
    kp_kernel *ka = NULL, *ka2 = NULL, *kb = NULL, *fill = NULL;
    ck_assert_int_eq(kp_device_get_kernel(a, &test_module, "scale_f32", &ka), KP_OK);
    ck_assert_int_eq(kp_device_get_kernel(a, &test_module, "scale_f32", &ka2), KP_OK);
    ck_assert_int_eq(kp_device_get_kernel(a, &test_module, "fill_u32", &fill), KP_OK);
    ck_assert_int_eq(kp_device_load_user_module(a, &test_module), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.module_loads), 1);
    ck_assert_ptr_eq(ka, ka2);
    ck_assert_ptr_ne(ka, fill);
    ck_assert_str_eq(kp_kernel_get_name(ka), "scale_f32");
    ck_assert_uint_eq(kp_kernel_get_param_count(ka), 4);
    ck_assert_int_eq(kp_device_get_kernel(b, &test_module, "scale_f32", &kb), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.module_loads), 2);
    ck_assert_ptr_ne(ka, kb);
    kp_device_close(&b);
    kp_device_close(&a);
}
END_TEST

#define THREADS 8
static kp_device *shared_dev;
static pthread_barrier_t barrier;

static void *race_lookup(void *arg)
{
    (void)arg;
    kp_kernel *k = NULL;
    pthread_barrier_wait(&barrier);
    kp_status st = kp_device_get_kernel(shared_dev, &test_module, "fill_u32", &k);
    return st == KP_OK ? k : NULL;
}

START_TEST(test_threads_race_one_load)
{
    shared_dev = open_built();
    fake.load_delay_us = 20000;
    pthread_t t[THREADS];
    void *got[THREADS];
    pthread_barrier_init(&barrier, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, race_lookup, NULL), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], &got[i]);
    pthread_barrier_destroy(&barrier);
    for (int i = 0; i < THREADS; i++) {
        ck_assert_ptr_nonnull(got[i]);
        ck_assert_ptr_eq(got[i], got[0]);
    }
    ck_assert_int_eq(atomic_load(&fake.module_loads), 1);
    kp_device_close(&shared_dev);
}
END_TEST

START_TEST(test_lookup_errors)
{
    kp_device *dev = open_built();
    kp_kernel *k = (kp_kernel *)&k;
    EXPECT(kp_device_get_kernel(dev, &test_module, "scale_f16", &k), KP_ERR_INVALID_ARGUMENT,
           "no kernel 'scale_f16'; its kernels: fill_u32, scale_f32");
    ck_assert_ptr_null(k);
    EXPECT(kp_device_get_kernel(dev, &test_module, NULL, &k), KP_ERR_INVALID_ARGUMENT, "name is NULL");
    EXPECT(kp_device_get_kernel(NULL, &test_module, "fill_u32", &k), KP_ERR_INVALID_ARGUMENT, "device");

    kp_module_desc old = test_module;
    old.version = 99;
    EXPECT(kp_device_get_kernel(dev, &old, "fill_u32", &k), KP_ERR_INVALID_ARGUMENT, "version 99");
    kp_kernel_desc unsorted[] = {test_kernels[1], test_kernels[0]};
    kp_module_desc bad = test_module;
    bad.kernels = unsorted;
    EXPECT(kp_device_load_user_module(dev, &bad), KP_ERR_INVALID_ARGUMENT, "not sorted");
    bad = test_module;
    bad.object_count = 0;
    EXPECT(kp_device_load_user_module(dev, &bad), KP_ERR_INVALID_ARGUMENT, "lacks");
    ck_assert_int_eq(atomic_load(&fake.module_loads), 0);
    kp_device_close(&dev);
}
END_TEST

START_TEST(test_no_code_for_arch_names_both)
{
    const char *foreign = KP_BACKEND_CUDA ? "sm_10" : "gfx000";
    fake_install(foreign);
    kp_device *dev = open_device(KP_BACKEND_CUDA ? "sm_80,sm_90,compute_90" : "gfx90a,gfx1030");
    kp_kernel *k = NULL;
    EXPECT(kp_device_get_kernel(dev, &test_module, "fill_u32", &k), KP_ERR_NO_CODE_FOR_ARCH, foreign);
    EXPECT(kp_device_load_user_module(dev, &test_module), KP_ERR_NO_CODE_FOR_ARCH,
           KP_BACKEND_CUDA ? "built for sm_80,sm_90,compute_90" : "built for gfx90a,gfx1030");
    ck_assert_ptr_null(k);
    ck_assert_int_eq(atomic_load(&fake.module_loads), 0);
    kp_device_close(&dev);
}
END_TEST

/* What the kernel would receive: the bytes behind each argument pointer. */
static void *seen_out, *seen_in;
static float seen_alpha;
static uint64_t seen_n;
static void record_scale_args(void **args)
{
    memcpy(&seen_out, args[0], sizeof(void *));
    memcpy(&seen_in, args[1], sizeof(void *));
    memcpy(&seen_alpha, args[2], sizeof(float));
    memcpy(&seen_n, args[3], sizeof(uint64_t));
}

START_TEST(test_launch_passes_arguments)
{
    kp_device *dev = open_built();
    kp_stream *s = NULL;
    kp_buffer *out = NULL, *in = NULL;
    ck_assert_int_eq(kp_stream_create(dev, &s), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 256, &out), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 256, &in), KP_OK);
    kp_kernel *k = NULL;
    ck_assert_int_eq(kp_device_get_kernel(dev, &test_module, "scale_f32", &k), KP_OK);
    float alpha = 2.5f;
    uint64_t n = 60;
    kp_kernel_arg args[] = {kp_arg_buffer(out, 16), kp_arg_buffer(in, 0), kp_arg_value(&alpha, sizeof(alpha)),
                            kp_arg_value(&n, sizeof(n))};
    kp_launch_config cfg = {{3, 2, 1}, {128, 2, 1}, 1024};
    fake.launch_hook = record_scale_args;
    ck_assert_int_eq(kp_kernel_launch(s, k, &cfg, args, 4), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1);
    ck_assert_str_eq(fake.last_kernel, "scale_f32");
    ck_assert_uint_eq(fake.last_dims.grid[0], 3);
    ck_assert_uint_eq(fake.last_dims.grid[1], 2);
    ck_assert_uint_eq(fake.last_dims.block[0], 128);
    ck_assert_uint_eq(fake.last_dims.block[1], 2);
    ck_assert_uint_eq(fake.last_dims.shared_bytes, 1024);
    ck_assert_ptr_eq(seen_out, (char *)kp_buffer_device_ptr(out) + 16);
    ck_assert_ptr_eq(seen_in, kp_buffer_device_ptr(in));
    ck_assert_float_eq(seen_alpha, 2.5f);
    ck_assert_uint_eq(seen_n, 60);
    kp_buffer_destroy(&in);
    kp_buffer_destroy(&out);
    kp_stream_destroy(&s);
    kp_device_close(&dev);
}
END_TEST

START_TEST(test_launch_checks_queue_nothing)
{
    kp_device *dev = open_built(), *other = NULL;
    ck_assert_int_eq(kp_device_open(0, &other), KP_OK);
    kp_stream *s = NULL, *other_s = NULL;
    kp_buffer *buf = NULL, *other_buf = NULL;
    ck_assert_int_eq(kp_stream_create(dev, &s), KP_OK);
    ck_assert_int_eq(kp_stream_create(other, &other_s), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(dev, 64, &buf), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(other, 64, &other_buf), KP_OK);
    fake.function_max_threads = 256;
    fake.function_static_shared = 40 * 1024;
    fake.function_cluster_blocks = 4;  /* as if built with KP_CLUSTER_DIMS(4) */
    kp_kernel *k = NULL;
    ck_assert_int_eq(kp_device_get_kernel(dev, &test_module, "fill_u32", &k), KP_OK);
    uint32_t value = 7;
    uint64_t wide = 7;
    kp_kernel_arg args[] = {kp_arg_buffer(buf, 0), kp_arg_value(&value, sizeof(value))};
    kp_launch_config ok = {{8, 1, 1}, {256, 1, 1}, 0};

    EXPECT(kp_kernel_launch(other_s, k, &ok, args, 2), KP_ERR_DEVICE_MISMATCH, "loaded on device");
    EXPECT(kp_kernel_launch(s, k, &ok, args, 1), KP_ERR_INVALID_ARGUMENT, "fill_u32 takes 2 arguments, got 1");
    kp_kernel_arg wrong_size[] = {kp_arg_buffer(buf, 0), kp_arg_value(&wide, sizeof(wide))};
    EXPECT(kp_kernel_launch(s, k, &ok, wrong_size, 2), KP_ERR_INVALID_ARGUMENT,
           "argument 1 is 8 bytes, the kernel's parameter 1 is 4 bytes");
    kp_kernel_arg foreign[] = {kp_arg_buffer(other_buf, 0), kp_arg_value(&value, sizeof(value))};
    EXPECT(kp_kernel_launch(s, k, &ok, foreign, 2), KP_ERR_DEVICE_MISMATCH, "argument 0 is a buffer");
    kp_kernel_arg past_end[] = {kp_arg_buffer(buf, 65), kp_arg_value(&value, sizeof(value))};
    EXPECT(kp_kernel_launch(s, k, &ok, past_end, 2), KP_ERR_BUFFER_TOO_SMALL, "offset 65");
    kp_kernel_arg no_value[] = {kp_arg_buffer(buf, 0), kp_arg_value(NULL, sizeof(value))};
    EXPECT(kp_kernel_launch(s, k, &ok, no_value, 2), KP_ERR_INVALID_ARGUMENT, "argument 1 has no value");
    EXPECT(kp_kernel_launch(s, k, &ok, NULL, 2), KP_ERR_INVALID_ARGUMENT, "args is NULL");

    kp_launch_config zero_grid = {{0, 1, 1}, {32, 1, 1}, 0};
    EXPECT(kp_kernel_launch(s, k, &zero_grid, args, 2), KP_ERR_INVALID_ARGUMENT, "grid x = 0");
    kp_launch_config tall_grid = {{1, 70000, 1}, {32, 1, 1}, 0};
    EXPECT(kp_kernel_launch(s, k, &tall_grid, args, 2), KP_ERR_INVALID_ARGUMENT, "grid y = 70000");
    kp_launch_config deep_block = {{1, 1, 1}, {1, 1, 65}, 0};
    EXPECT(kp_kernel_launch(s, k, &deep_block, args, 2), KP_ERR_INVALID_ARGUMENT, "block z = 65");
    kp_launch_config big_block = {{4, 1, 1}, {128, 4, 1}, 0};
    EXPECT(kp_kernel_launch(s, k, &big_block, args, 2), KP_ERR_INVALID_ARGUMENT, "the kernel allows 256");
    kp_launch_config part_cluster = {{6, 1, 1}, {32, 1, 1}, 0};
    EXPECT(kp_kernel_launch(s, k, &part_cluster, args, 2), KP_ERR_INVALID_ARGUMENT,
           "grid x = 6; the kernel runs in clusters of 4 blocks");
    kp_launch_config big_shared = {{4, 1, 1}, {32, 1, 1}, 9 * 1024};
    EXPECT(kp_kernel_launch(s, k, &big_shared, args, 2), KP_ERR_INVALID_ARGUMENT,
           "9216 bytes of dynamic shared memory plus 40960 static");
    EXPECT(kp_kernel_launch(s, k, NULL, args, 2), KP_ERR_INVALID_ARGUMENT, "config is NULL");
    EXPECT(kp_kernel_launch(NULL, k, &ok, args, 2), KP_ERR_INVALID_ARGUMENT, "stream is NULL");
    ck_assert_int_eq(atomic_load(&fake.launches), 0);

    ck_assert_int_eq(kp_kernel_launch(s, k, &ok, args, 2), KP_OK);
    ck_assert_int_eq(atomic_load(&fake.launches), 1);
    kp_buffer_destroy(&other_buf);
    kp_buffer_destroy(&buf);
    kp_stream_destroy(&other_s);
    kp_stream_destroy(&s);
    kp_device_close(&other);
    kp_device_close(&dev);
}
END_TEST

START_TEST(test_wrapped_stream_is_not_destroyed)
{
    kp_device *dev = open_built();
    void *native = malloc(1);
    kp_stream *s = NULL;
    ck_assert_int_eq(kp_stream_wrap(dev, native, &s), KP_OK);
    ck_assert_ptr_eq(kp_stream_native_handle(s), native);
    kp_stream_destroy(&s);
    ck_assert_ptr_null(s);
    ck_assert_int_eq(atomic_load(&fake.stream_destroys), 0);
    ck_assert_int_eq(kp_stream_wrap(dev, NULL, &s), KP_OK);  /* the default stream */
    ck_assert_ptr_null(kp_stream_native_handle(s));
    kp_stream_destroy(&s);
    ck_assert_int_eq(kp_stream_create(dev, &s), KP_OK);
    ck_assert_ptr_nonnull(kp_stream_native_handle(s));
    kp_stream_destroy(&s);
    ck_assert_int_eq(atomic_load(&fake.stream_destroys), 1);
    EXPECT(kp_stream_wrap(NULL, native, &s), KP_ERR_INVALID_ARGUMENT, "device is NULL");
    free(native);
    kp_device_close(&dev);
}
END_TEST

START_TEST(test_peer_copy_checks_devices)
{
    kp_device *a = open_built(), *b = NULL, *c = NULL;
    ck_assert_int_eq(kp_device_open(0, &b), KP_OK);
    ck_assert_int_eq(kp_device_open(0, &c), KP_OK);
    kp_stream *sa = NULL, *sc = NULL;
    kp_buffer *ba = NULL, *bb = NULL;
    ck_assert_int_eq(kp_stream_create(a, &sa), KP_OK);
    ck_assert_int_eq(kp_stream_create(c, &sc), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(a, 16, &ba), KP_OK);
    ck_assert_int_eq(kp_buffer_alloc(b, 16, &bb), KP_OK);
    ck_assert_int_eq(kp_memset(sa, ba, 0, 0x5a, 16), KP_OK);
    ck_assert_int_eq(kp_memcpy_peer(sa, bb, 4, ba, 0, 8), KP_OK);
    const unsigned char *got = kp_buffer_device_ptr(bb);
    for (int i = 4; i < 12; i++)
        ck_assert_uint_eq(got[i], 0x5a);
    EXPECT(kp_memcpy_peer(sc, bb, 0, ba, 0, 8), KP_ERR_DEVICE_MISMATCH, "the stream is on device");
    EXPECT(kp_memcpy_peer(sa, bb, 12, ba, 0, 8), KP_ERR_BUFFER_TOO_SMALL, "dst range [12, +8)");
    /* an op with operands of two devices is refused too */
    EXPECT(kp_memcpy_d2d(sa, bb, 0, ba, 0, 8), KP_ERR_DEVICE_MISMATCH, "");
    kp_buffer_destroy(&bb);
    kp_buffer_destroy(&ba);
    kp_stream_destroy(&sc);
    kp_stream_destroy(&sa);
    kp_device_close(&c);
    kp_device_close(&b);
    kp_device_close(&a);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("user_modules");
    TCase *tc = tcase_create("user_modules");
    tcase_add_test(tc, test_loaded_once_per_device);
    tcase_add_test(tc, test_threads_race_one_load);
    tcase_add_test(tc, test_lookup_errors);
    tcase_add_test(tc, test_no_code_for_arch_names_both);
    tcase_add_test(tc, test_launch_passes_arguments);
    tcase_add_test(tc, test_launch_checks_queue_nothing);
    tcase_add_test(tc, test_wrapped_stream_is_not_destroyed);
    tcase_add_test(tc, test_peer_copy_checks_devices);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
