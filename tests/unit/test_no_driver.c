/* Without the vendor driver library every entry point reports
 * KP_ERR_NO_DRIVER with a message, nothing aborts, and nothing is printed. */
#include <stdlib.h>
#include <unistd.h>

#include "unit_util.h"

static int log_calls;
static void count_logs(void *user, kp_log_level level, const char *msg)
{
    (void)user; (void)level; (void)msg;
    log_calls++;
}

START_TEST(test_no_driver_is_a_status)
{
    setenv(KP_BACKEND_CUDA ? "KP_CUDA_LIBRARY" : "KP_HIP_LIBRARY", "/nonexistent/libgpu.so", 1);
    /* capture stderr: the library must not write to it */
    FILE *capture = tmpfile();
    ck_assert_ptr_nonnull(capture);
    int saved = dup(2);
    dup2(fileno(capture), 2);

    int count = -1;
    kp_status st = kp_device_count(&count);
    kp_device *dev = (kp_device *)&count;
    kp_status st_open = kp_device_open(0, &dev);

    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ck_assert_int_eq(st, KP_ERR_NO_DRIVER);
    ck_assert_int_eq(count, 0);
    ck_assert_int_eq(st_open, KP_ERR_NO_DRIVER);
    ck_assert_ptr_null(dev);
    ck_assert_ptr_nonnull(strstr(kp_last_error_message(), "/nonexistent/libgpu.so"));
    ck_assert_str_eq(kp_status_string(st), "no driver");
    ck_assert_int_eq(ftell(capture), 0);
    fclose(capture);

    /* a log callback, when asked for, does receive the failure */
    kp_set_log_callback(count_logs, NULL, KP_LOG_ERROR);
    ck_assert_int_eq(kp_device_count(&count), KP_ERR_NO_DRIVER);
    kp_set_log_callback(NULL, NULL, KP_LOG_ERROR);
    ck_assert_int_eq(log_calls, 1);
}
END_TEST

START_TEST(test_status_strings)
{
    for (int s = KP_OK; s <= KP_ERR_INTERNAL; s++)
        ck_assert_str_ne(kp_status_string((kp_status)s), "unknown status");
    ck_assert_str_eq(kp_status_string((kp_status)1000), "unknown status");
    ck_assert_str_eq(kp_version(), KP_VERSION);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("no_driver");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_no_driver_is_a_status);
    tcase_add_test(tc, test_status_strings);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
