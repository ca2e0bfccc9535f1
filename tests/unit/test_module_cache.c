/* The module cache loads each module once per device, however many threads
 * race on first use, and names the arch when no code object fits. */
#include <pthread.h>

#include "unit_util.h"

#define THREADS 16

static kp_device *dev;
static pthread_barrier_t start;

static void *first_use(void *arg)
{
    (void)arg;
    void *fn = NULL;
    pthread_barrier_wait(&start);
    kp_status st = kp_module_function(dev, KP_MODULE_AFFINE, "affine_f32", &fn);
    return (st == KP_OK && fn) ? (void *)1 : NULL;
}

START_TEST(test_threads_race_one_load)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    fake.load_delay_us = 20000;
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    pthread_t t[THREADS];
    pthread_barrier_init(&start, NULL, THREADS);
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, first_use, NULL), 0);
    for (int i = 0; i < THREADS; i++) {
        void *ok = NULL;
        pthread_join(t[i], &ok);
        ck_assert_ptr_nonnull(ok);
    }
    pthread_barrier_destroy(&start);
    ck_assert_int_eq(atomic_load(&fake.module_loads), 1);
    /* a second module is a second load; repeating either is none */
    void *fn;
    ck_assert_int_eq(kp_module_function(dev, KP_MODULE_FILL, "fill_x32", &fn), KP_OK);
    ck_assert_int_eq(kp_module_function(dev, KP_MODULE_FILL, "fill_x8", &fn), KP_OK);
    ck_assert_int_eq(kp_module_function(dev, KP_MODULE_AFFINE, "affine_u8", &fn), KP_OK);
    ck_assert_str_eq((const char *)fn, "affine_u8");
    ck_assert_int_eq(atomic_load(&fake.module_loads), 2);
    kp_device_close(&dev);
    ck_assert_ptr_null(dev);
}
END_TEST

START_TEST(test_no_code_for_arch_names_both)
{
    const char *foreign = KP_BACKEND_CUDA ? "sm_10" : "gfx000";
    fake_install(foreign);
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    void *fn = NULL;
    ck_assert_int_eq(kp_module_function(dev, KP_MODULE_AFFINE, "affine_f32", &fn),
                     KP_ERR_NO_CODE_FOR_ARCH);
    const char *msg = kp_last_error_message();
    ck_assert_ptr_nonnull(strstr(msg, foreign));
    ck_assert_ptr_nonnull(strstr(msg, kp_builtin_modules[KP_MODULE_AFFINE]->objects[0].archs));
    ck_assert_int_eq(atomic_load(&fake.module_loads), 0);
    /* and through the public preload call */
    ck_assert_int_eq(kp_device_load_module(dev, "fill"), KP_ERR_NO_CODE_FOR_ARCH);
    ck_assert_int_eq(kp_device_load_module(dev, "nonexistent"), KP_ERR_INVALID_ARGUMENT);
    kp_device_close(&dev);
}
END_TEST

START_TEST(test_unknown_kernel_is_internal_error)
{
    char arch[64];
    built_arch(arch, sizeof(arch));
    fake_install(arch);
    ck_assert_int_eq(kp_device_open(0, &dev), KP_OK);
    void *fn = NULL;
    ck_assert_int_eq(kp_module_function(dev, KP_MODULE_AFFINE, "affine_c128", &fn), KP_ERR_INTERNAL);
    ck_assert_int_eq(atomic_load(&fake.module_loads), 0);
    kp_device_close(&dev);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("module_cache");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 20);
    tcase_add_test(tc, test_threads_race_one_load);
    tcase_add_test(tc, test_no_code_for_arch_names_both);
    tcase_add_test(tc, test_unknown_kernel_is_internal_error);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
