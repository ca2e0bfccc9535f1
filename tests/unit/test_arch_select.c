/* Choosing the code object for a device arch. */
#include "unit_util.h"

static bool runs(kp_code_format format, const char *archs, const char *device)
{
    struct kp_code_object obj = {format, archs, (const unsigned char *)"", 1};
    return kp_code_object_runs_on(&obj, device);
}

START_TEST(test_cuda_sass_needs_same_major)
{
    ck_assert(runs(KP_CODE_FATBIN, "sm_80", "sm_80"));
    ck_assert(runs(KP_CODE_FATBIN, "sm_80", "sm_86"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_86", "sm_80"));
    /* the default archs leave Ada (sm_89) to sm_86's code */
    ck_assert(runs(KP_CODE_FATBIN, "sm_75,sm_80,sm_86,sm_90,compute_120", "sm_89"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_80", "sm_90"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_90", "sm_100"));
    ck_assert(runs(KP_CODE_FATBIN, "sm_100", "sm_103"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_120", "sm_100"));
}
END_TEST

START_TEST(test_cuda_ptx_runs_on_newer)
{
    ck_assert(runs(KP_CODE_PTX, "compute_75", "sm_90"));
    ck_assert(runs(KP_CODE_FATBIN, "sm_80,sm_90,compute_90", "sm_120"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_80,sm_90,compute_90", "sm_75"));
    ck_assert(!runs(KP_CODE_PTX, "compute_90", "sm_89"));
    ck_assert(!runs(KP_CODE_FATBIN, "sm_90", "gfx90a"));
}
END_TEST

START_TEST(test_amd_target_ids)
{
    ck_assert(runs(KP_CODE_HSACO_BUNDLE, "gfx900,gfx90a", "gfx90a:sramecc+:xnack-"));
    ck_assert(runs(KP_CODE_HSACO_BUNDLE, "gfx90a:xnack-", "gfx90a:sramecc+:xnack-"));
    ck_assert(!runs(KP_CODE_HSACO_BUNDLE, "gfx90a:xnack+", "gfx90a:sramecc+:xnack-"));
    ck_assert(runs(KP_CODE_HSACO_BUNDLE, "gfx90a:xnack+", "gfx90a"));
    ck_assert(!runs(KP_CODE_HSACO_BUNDLE, "gfx900,gfx1030", "gfx1031"));
    ck_assert(!runs(KP_CODE_HSACO_BUNDLE, "gfx1030", "gfx103"));
    ck_assert(!runs(KP_CODE_HSACO_BUNDLE, "gfx90a", "sm_90"));
}
END_TEST

START_TEST(test_select_first_match)
{
    struct kp_code_object objs[] = {
        {KP_CODE_FATBIN, "sm_80", (const unsigned char *)"a", 1},
        {KP_CODE_PTX, "compute_75", (const unsigned char *)"b", 1},
    };
    struct kp_module_desc d = {KP_MODULE_DESC_VERSION, "t", objs, 2, NULL, 0, NULL, 0};
    ck_assert_ptr_eq(kp_select_code_object(&d, "sm_86"), &objs[0]);
    ck_assert_ptr_eq(kp_select_code_object(&d, "sm_90"), &objs[1]);
    ck_assert_ptr_null(kp_select_code_object(&d, "sm_70"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("arch_select");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_cuda_sass_needs_same_major);
    tcase_add_test(tc, test_cuda_ptx_runs_on_newer);
    tcase_add_test(tc, test_amd_target_ids);
    tcase_add_test(tc, test_select_first_match);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
