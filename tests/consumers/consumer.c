/* A program outside kernelpack that uses it the way an application would:
 * found through pkg-config (consumers/pkgconfig) or built as a Meson
 * subproject (consumers/subproject). It checks that the library it linked
 * is the one the build system described, and that the calls that need no
 * GPU work. Passes on machines with or without a GPU. */
#include <stdio.h>
#include <string.h>

#include <kernelpack/kernelpack.h>

#if !defined(EXPECTED_BACKEND) || !defined(EXPECTED_VERSION)
#error "define EXPECTED_BACKEND and EXPECTED_VERSION from the dependency's variables"
#endif

static int failures;

static void expect(int ok, const char *what, const char *detail)
{
    if (!ok) {
        fprintf(stderr, "FAIL: %s (%s)\n", what, detail);
        failures++;
    }
}

static void check_identity(void)
{
    const char *backend = kp_backend_name();
    char detail[256];
    snprintf(detail, sizeof(detail), "kp_backend_name() = \"%s\", gpu_backend variable = \"%s\"",
             backend ? backend : "(null)", EXPECTED_BACKEND);
    expect(backend && strcmp(backend, EXPECTED_BACKEND) == 0,
           "library backend matches the dependency's gpu_backend", detail);
    snprintf(detail, sizeof(detail), "kp_version() = \"%s\", dependency version = \"%s\"",
             kp_version(), EXPECTED_VERSION);
    expect(strcmp(kp_version(), EXPECTED_VERSION) == 0,
           "library version matches the dependency's version", detail);
}

static void check_modules(void)
{
    size_t count = kp_module_count();
    char detail[256];
    snprintf(detail, sizeof(detail), "kp_module_count() = %zu", count);
    expect(count > 0, "the library has built-in kernel modules", detail);
    for (size_t m = 0; m < count; m++) {
        kp_module_info info;
        kp_status st = kp_module_get_info(m, &info);
        snprintf(detail, sizeof(detail), "module %zu: %s: %s", m, kp_status_string(st),
                 kp_last_error_message());
        expect(st == KP_OK, "kp_module_get_info succeeds", detail);
        if (st != KP_OK)
            continue;
        snprintf(detail, sizeof(detail), "module %zu \"%s\": %zu kernels, %zu code objects", m,
                 info.name ? info.name : "(null)", info.kernel_count, info.code_object_count);
        expect(info.name && info.name[0] && info.kernel_count > 0 && info.code_object_count > 0,
               "a module has a name, kernels and code objects", detail);
    }
    kp_module_info past_end;
    kp_status st = kp_module_get_info(count, &past_end);
    snprintf(detail, sizeof(detail), "index %zu gave %s", count, kp_status_string(st));
    expect(st == KP_ERR_INVALID_ARGUMENT, "an out-of-range module index is rejected", detail);
}

static void check_devices(void)
{
    char detail[512];
    int count = -1;
    kp_status st = kp_device_count(&count);
    snprintf(detail, sizeof(detail), "kp_device_count: %s (%s), count %d", kp_status_string(st),
             kp_last_error_message(), count);
    /* Without a driver the call fails cleanly; with one it counts (maybe 0). */
    expect((st == KP_OK && count >= 0) || (st == KP_ERR_NO_DRIVER && count == 0),
           "kp_device_count reports devices or a missing driver", detail);
    if (st == KP_ERR_NO_DRIVER)
        expect(kp_last_error_message()[0] != '\0', "a missing driver comes with a message", detail);
    printf("devices: %s, %d\n", kp_status_string(st), count);

    st = kp_device_count(NULL);
    snprintf(detail, sizeof(detail), "kp_device_count(NULL) gave %s", kp_status_string(st));
    expect(st == KP_ERR_INVALID_ARGUMENT, "a NULL count is rejected", detail);
}

int main(void)
{
    printf("kernelpack %s, backend %s, %zu modules\n", kp_version(), kp_backend_name(),
           kp_module_count());
    check_identity();
    check_modules();
    check_devices();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all consumer checks passed\n");
    return 0;
}
