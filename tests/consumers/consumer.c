/* A program outside kernelpack that uses it the way an application would:
 * found through pkg-config (consumers/pkgconfig) or built as a Meson
 * subproject (consumers/subproject). It checks that the library it linked
 * is the one the build system described, that the calls that need no GPU
 * work, and that its own kernel (kernels/scale.cu, built by kp-build-module)
 * was built for the library's targets; with a GPU it runs that kernel and
 * checks the result. Passes on machines without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kernelpack/kernelpack.h>
#include "scale_module.h"

#if !defined(EXPECTED_BACKEND) || !defined(EXPECTED_VERSION) || !defined(EXPECTED_TARGETS) || \
    !defined(EXPECTED_FORMAT)
#error "define EXPECTED_BACKEND, EXPECTED_VERSION, EXPECTED_TARGETS and EXPECTED_FORMAT from the dependency"
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

/* Is `item` one entry of the comma-separated `list`? */
static int list_has(const char *list, const char *item)
{
    size_t n = strlen(item);
    for (const char *p = list;; p++) {
        if (strncmp(p, item, n) == 0 && (p[n] == ',' || p[n] == '\0'))
            return 1;
        p = strchr(p, ',');
        if (!p)
            return 0;
    }
}

static size_t list_length(const char *list)
{
    size_t n = 1;
    for (const char *p = list; (p = strchr(p, ',')) != NULL; p++)
        n++;
    return n;
}

/* The code object holds what the library's own modules hold for the
 * dependency's gpu_targets ("90,100" or "gfx90a,gfx1030") and code_format:
 *   fatbin  sm_90,sm_100 plus the PTX of the newest (compute_100);
 *   ptx     compute_<oldest> alone;
 *   hsaco   exactly the gfx targets. */
static void check_archs(const kp_code_object *obj)
{
    char detail[512], want[64], targets[256];
    snprintf(detail, sizeof(detail), "code object for \"%s\", library targets \"%s\", format %s",
             obj->archs ? obj->archs : "(null)", EXPECTED_TARGETS, EXPECTED_FORMAT);
    if (!obj->archs || !obj->data || obj->size == 0) {
        expect(0, "the code object has targets and bytes", detail);
        return;
    }
    snprintf(targets, sizeof(targets), "%s", EXPECTED_TARGETS);
    size_t count = 0;
    long oldest = -1, newest = -1;
    int ok = 1;
    for (char *t = strtok(targets, ","); t; t = strtok(NULL, ","), count++) {
        long number = strtol(t, NULL, 10);
        if (oldest < 0 || number < oldest) oldest = number;
        if (number > newest) newest = number;
        snprintf(want, sizeof(want), "sm_%s", t);
        if (strcmp(EXPECTED_FORMAT, "fatbin") == 0)
            ok &= list_has(obj->archs, want);
        else if (strcmp(EXPECTED_FORMAT, "hsaco") == 0)
            ok &= list_has(obj->archs, t);
    }
    if (strcmp(EXPECTED_FORMAT, "fatbin") == 0) {
        snprintf(want, sizeof(want), "compute_%ld", newest);
        ok &= obj->format == KP_CODE_FATBIN && list_has(obj->archs, want) &&
              list_length(obj->archs) == count + 1;
    } else if (strcmp(EXPECTED_FORMAT, "ptx") == 0) {
        snprintf(want, sizeof(want), "compute_%ld", oldest);
        ok &= obj->format == KP_CODE_PTX && strcmp(obj->archs, want) == 0;
    } else {
        ok &= obj->format == KP_CODE_HSACO_BUNDLE && list_length(obj->archs) == count;
    }
    expect(ok, "the module has code for exactly the library's targets", detail);
}

/* The descriptor kp-build-module wrote: one kernel, scale_f32(float *y,
 * const float *x, float a, float b, unsigned long long n), in one code
 * object for the library's targets. */
static void check_own_module(void)
{
    char detail[512];
    const kp_module_desc *m = &scale_module;
    snprintf(detail, sizeof(detail), "version %u, name %s, %zu kernels, %zu objects", m->version,
             m->name ? m->name : "(null)", m->kernel_count, m->object_count);
    expect(m->version == KP_MODULE_DESC_VERSION && m->name && strcmp(m->name, "scale") == 0 &&
               m->kernel_count == 1 && m->object_count == 1,
           "the generated descriptor describes the module", detail);
    if (m->kernel_count != 1 || m->object_count != 1)
        return;
    static const uint32_t sizes[] = {8, 8, 4, 4, 8};
    const kp_kernel_desc *k = &m->kernels[0];
    int same = k->param_count == 5 && k->param_sizes != NULL;
    for (uint32_t i = 0; same && i < 5; i++)
        same = k->param_sizes[i] == sizes[i];
    snprintf(detail, sizeof(detail), "kernel %s with %u parameters", k->name ? k->name : "(null)",
             k->param_count);
    expect(k->name && strcmp(k->name, "scale_f32") == 0 && same,
           "the kernel and its parameter sizes (8,8,4,4,8) were read from the compiled code", detail);
    check_archs(&m->objects[0]);
}

/* y = 3x - 1 on the GPU with the project's own kernel, against the CPU. */
static void run_own_kernel(void)
{
    enum { N = 100003 };
    char detail[512];
    kp_device *dev = NULL;
    kp_stream *stream = NULL;
    kp_buffer *x = NULL, *y = NULL;
    kp_kernel *kernel = NULL;
    float *host = malloc(2 * N * sizeof(float));
    kp_status st = host ? kp_device_open(0, &dev) : KP_ERR_OUT_OF_MEMORY;
    if (st == KP_OK) st = kp_stream_create(dev, &stream);
    if (st == KP_OK) st = kp_buffer_alloc(dev, N * sizeof(float), &x);
    if (st == KP_OK) st = kp_buffer_alloc(dev, N * sizeof(float), &y);
    if (st == KP_OK) st = kp_device_get_kernel(dev, &scale_module, "scale_f32", &kernel);
    for (int i = 0; host && i < N; i++)
        host[i] = (float)(i % 1000) * 0.25f;
    if (st == KP_OK) st = kp_memcpy_h2d(stream, x, 0, host, N * sizeof(float));
    float a = 3.0f, b = -1.0f;
    unsigned long long n = N;
    kp_kernel_arg args[] = {kp_arg_buffer(y, 0), kp_arg_buffer(x, 0), kp_arg_value(&a, sizeof(a)),
                            kp_arg_value(&b, sizeof(b)), kp_arg_value(&n, sizeof(n))};
    kp_launch_config config = {{(N + 255) / 256, 1, 1}, {256, 1, 1}, 0};
    if (st == KP_OK) st = kp_kernel_launch(stream, kernel, &config, args, 5);
    if (st == KP_OK) st = kp_memcpy_d2h(stream, host + N, y, 0, N * sizeof(float));
    if (st == KP_OK) st = kp_stream_synchronize(stream);
    snprintf(detail, sizeof(detail), "%s: %s", kp_status_string(st), kp_last_error_message());
    expect(st == KP_OK, "the project's own kernel loads and runs", detail);
    int wrong = 0;
    for (int i = 0; st == KP_OK && i < N; i++)
        wrong += host[N + i] != 3.0f * host[i] - 1.0f;  /* exact: multiples of 1/4 */
    snprintf(detail, sizeof(detail), "%d of %d elements differ", wrong, N);
    expect(wrong == 0, "the project's own kernel matches the CPU", detail);
    if (st == KP_OK)
        printf("own kernel: %d elements checked on the GPU\n", N);
    kp_buffer_destroy(&y);
    kp_buffer_destroy(&x);
    kp_stream_destroy(&stream);
    kp_device_close(&dev);
    free(host);
}

int main(void)
{
    printf("kernelpack %s, backend %s, %zu modules\n", kp_version(), kp_backend_name(),
           kp_module_count());
    check_identity();
    check_modules();
    check_devices();
    check_own_module();
    int devices = 0;
    if (kp_device_count(&devices) == KP_OK && devices > 0)
        run_own_kernel();
    if (failures) {
        fprintf(stderr, "%d check(s) failed\n", failures);
        return 1;
    }
    printf("all consumer checks passed\n");
    return 0;
}
