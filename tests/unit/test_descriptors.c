/* The embedded module descriptors are complete and consistent: with the
 * configured targets, with each other, and with every kernel the launchers
 * can ask for. */
#include "unit_util.h"
#include "kernel_families.h"

START_TEST(test_every_module_is_described)
{
    ck_assert_uint_eq(kp_module_count(), KP_MODULE_COUNT);
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        const struct kp_module_desc *d = kp_builtin_modules[i];
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(d->version, KP_MODULE_DESC_VERSION);
        ck_assert(strlen(d->name) > 0);
        ck_assert_uint_ge(d->object_count, 1);
        ck_assert_uint_ge(d->kernel_count, 1);
    }
}
END_TEST

START_TEST(test_code_objects_match_configured_targets)
{
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        const struct kp_module_desc *d = kp_builtin_modules[i];
        for (size_t o = 0; o < d->object_count; o++) {
            const struct kp_code_object *c = &d->objects[o];
            ck_assert_ptr_nonnull(c->data);
            ck_assert_uint_gt(c->size, 64);
            if (KP_BACKEND_ROCM) {
                ck_assert_int_eq(c->format, KP_CODE_HSACO_BUNDLE);
                ck_assert_str_eq(c->archs, KP_BUILT_TARGETS);
                ck_assert_mem_eq(c->data, "__CLANG_OFFLOAD_BUNDLE__", 24);
            } else if (strcmp(KP_CODE_FORMAT, "ptx") == 0) {
                ck_assert_int_eq(c->format, KP_CODE_PTX);
                ck_assert_int_eq(c->data[c->size - 1], '\0');
                ck_assert_ptr_nonnull(strstr((const char *)c->data, ".entry"));
            } else {
                ck_assert_int_eq(c->format, KP_CODE_FATBIN);
                /* every configured arch has SASS in the fatbin's arch list */
                char targets[256];
                snprintf(targets, sizeof(targets), "%s", KP_BUILT_TARGETS);
                for (char *t = strtok(targets, ","); t; t = strtok(NULL, ",")) {
                    char sm[32];
                    snprintf(sm, sizeof(sm), "sm_%s", t);
                    ck_assert_msg(strstr(c->archs, sm), "%s lacks %s", c->archs, sm);
                }
                ck_assert_ptr_nonnull(strstr(c->archs, "compute_"));
                uint32_t magic;
                memcpy(&magic, c->data, 4);
                ck_assert_uint_eq(magic, 0xBA55ED50u);
            }
        }
    }
}
END_TEST

START_TEST(test_kernel_tables_sorted_and_unique)
{
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        const struct kp_module_desc *d = kp_builtin_modules[i];
        for (size_t k = 1; k < d->kernel_count; k++)
            ck_assert_msg(strcmp(d->kernels[k - 1].name, d->kernels[k].name) < 0, "%s: %s !< %s",
                          d->name, d->kernels[k - 1].name, d->kernels[k].name);
    }
}
END_TEST

/* Parameter sizes read from the compiled code: every built-in kernel takes
 * arguments, each a pointer, a scalar or a small struct. */
START_TEST(test_kernel_parameters_read_back)
{
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        const struct kp_module_desc *d = kp_builtin_modules[i];
        for (size_t k = 0; k < d->kernel_count; k++) {
            const kp_kernel_desc *kd = &d->kernels[k];
            ck_assert_msg(kd->param_count > 0 && kd->param_sizes, "%s has no parameters", kd->name);
            for (uint32_t p = 0; p < kd->param_count; p++)
                ck_assert_msg(kd->param_sizes[p] >= 1 && kd->param_sizes[p] <= 4096,
                              "%s: parameter %u is %u bytes", kd->name, p, kd->param_sizes[p]);
        }
    }
}
END_TEST

START_TEST(test_every_launcher_kernel_exists)
{
    int checked = 0;
    for (int f = 0; f < KP_KF_COUNT; f++) {
        const struct kp_kernel_family *fam = &kp_kernel_families[f];
        const struct kp_module_desc *d = kp_builtin_modules[fam->module];
        for (size_t s = 0; kp_suffix(fam->suffixes, s); s++) {
            char name[KP_KERNEL_NAME_MAX];
            snprintf(name, sizeof(name), fam->pattern, kp_suffix(fam->suffixes, s));
            ck_assert_msg(kp_module_kernel_index(d, name) >= 0, "module %s lacks %s", d->name, name);
            checked++;
        }
    }
    ck_assert_int_gt(checked, 0);
}
END_TEST

START_TEST(test_backend_slots_all_filled)
{
    const struct kp_backend *be = &kp_backend_builtin;
    ck_assert_str_eq(be->name, kp_backend_name());
    ck_assert_str_eq(be->name, KP_BACKEND_CUDA ? "cuda" : "rocm");
#define CHECK_SLOT(ret, name, params) ck_assert_msg(be->name != NULL, "slot " #name " is NULL");
    KP_BACKEND_SLOTS(CHECK_SLOT)
#undef CHECK_SLOT
}
END_TEST

START_TEST(test_public_introspection)
{
    kp_module_info info;
    ck_assert_int_eq(kp_module_get_info(0, &info), KP_OK);
    ck_assert_str_eq(info.name, kp_builtin_modules[0]->name);
    ck_assert_int_eq(kp_module_get_info(KP_MODULE_COUNT, &info), KP_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(kp_module_kernel_name(0, info.kernel_count));
    kp_code_object_info co;
    ck_assert_int_eq(kp_module_get_code_object(0, info.code_object_count, &co), KP_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(kp_module_get_code_object(0, 0, &co), KP_OK);
    ck_assert_str_eq(kp_code_format_name(co.format), KP_BACKEND_ROCM ? "hsaco-bundle" : KP_CODE_FORMAT);
}
END_TEST

/* One resource row per kernel and compiled target, naming a kernel of the
 * module and a target the build made SASS/HSACO for; none for PTX. */
START_TEST(test_resource_tables)
{
    int compiled_targets = 0;
    char targets[256];
    snprintf(targets, sizeof(targets), "%s", KP_BUILT_TARGETS);
    for (char *t = strtok(targets, ","); t; t = strtok(NULL, ","))
        compiled_targets++;
    if (!KP_BACKEND_ROCM && strcmp(KP_CODE_FORMAT, "ptx") == 0)
        compiled_targets = 0;
    for (int i = 0; i < KP_MODULE_COUNT; i++) {
        const struct kp_module_desc *d = kp_builtin_modules[i];
        ck_assert_uint_eq(kp_module_resource_count((size_t)i), d->kernel_count * (size_t)compiled_targets);
        for (size_t r = 0; r < kp_module_resource_count((size_t)i); r++) {
            kp_kernel_resources k;
            ck_assert_int_eq(kp_module_get_resources((size_t)i, r, &k), KP_OK);
            ck_assert_msg(kp_module_kernel_index(d, k.kernel) >= 0, "%s: row %zu names %s", d->name, r,
                          k.kernel);
            const char *arch = strncmp(k.target, "sm_", 3) == 0 ? k.target + 3 : k.target;
            char listed[256];
            snprintf(listed, sizeof(listed), ",%s,", KP_BUILT_TARGETS);
            char want[64];
            snprintf(want, sizeof(want), ",%s,", arch);
            ck_assert_msg(strstr(listed, want), "%s: row %zu has target %s", d->name, r, k.target);
            ck_assert_int_gt(k.max_threads, 0);
            ck_assert_int_eq(k.wave_size, KP_BACKEND_ROCM && strncmp(k.target, "gfx9", 4) == 0 ? 64 : 32);
            /* spill stores may exceed the frame: a slot can be stored to more than once */
            ck_assert_int_ge(k.local_bytes, 0);
            ck_assert_int_ge(k.spill_bytes, 0);
            ck_assert_msg(k.spill_bytes == 0 || k.local_bytes > 0, "%s/%s spills without local memory",
                          k.kernel, k.target);
        }
        kp_kernel_resources k;
        ck_assert_int_eq(kp_module_get_resources((size_t)i, kp_module_resource_count((size_t)i), &k),
                         KP_ERR_INVALID_ARGUMENT);
    }
    ck_assert_uint_eq(kp_module_resource_count(KP_MODULE_COUNT), 0);
    ck_assert_int_eq(kp_module_get_resources(0, 0, NULL), KP_ERR_INVALID_ARGUMENT);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("descriptors");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_every_module_is_described);
    tcase_add_test(tc, test_code_objects_match_configured_targets);
    tcase_add_test(tc, test_kernel_tables_sorted_and_unique);
    tcase_add_test(tc, test_kernel_parameters_read_back);
    tcase_add_test(tc, test_every_launcher_kernel_exists);
    tcase_add_test(tc, test_backend_slots_all_filled);
    tcase_add_test(tc, test_public_introspection);
    tcase_add_test(tc, test_resource_tables);
    suite_add_tcase(s, tc);
    return run_suite(s);
}
