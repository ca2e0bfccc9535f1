/* kp-info: what this kernelpack build contains and which devices it sees. */
#include <stdio.h>
#include <string.h>

#include <kernelpack/kernelpack.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: kp-info [--kernels] [--help]\n"
               "Prints the GPU backend, the devices it finds and the kernel modules\n"
               "built into kernelpack. --kernels also lists every kernel name.\n");
}

static void print_devices(void)
{
    int count = 0;
    kp_status st = kp_device_count(&count);
    if (st != KP_OK) {
        printf("devices: none (%s: %s)\n", kp_status_string(st), kp_last_error_message());
        return;
    }
    if (count == 0) {
        printf("devices: none (the %s runtime loaded but reports no GPU)\n", kp_backend_name());
        return;
    }
    printf("devices: %d\n", count);
    for (int i = 0; i < count; i++) {
        kp_device *dev = NULL;
        kp_device_info info;
        st = kp_device_open(i, &dev);
        if (st == KP_OK)
            st = kp_device_get_info(dev, &info);
        if (st != KP_OK) {
            printf("  [%d] cannot open: %s: %s\n", i, kp_status_string(st), kp_last_error_message());
            kp_device_close(&dev);
            continue;
        }
        printf("  [%d] %s, arch %s, %.1f GiB, %d multiprocessors, warp %d\n", i, info.name,
               info.arch, (double)info.total_memory / (1024.0 * 1024.0 * 1024.0),
               info.multiprocessors, info.warp_size);
        kp_device_close(&dev);
    }
}

static void print_modules(int kernels)
{
    size_t n = kp_module_count();
    printf("modules: %zu\n", n);
    for (size_t m = 0; m < n; m++) {
        kp_module_info info;
        if (kp_module_get_info(m, &info) != KP_OK)
            continue;
        printf("  %-10s %4zu kernels\n", info.name, info.kernel_count);
        for (size_t o = 0; o < info.code_object_count; o++) {
            kp_code_object_info co;
            if (kp_module_get_code_object(m, o, &co) == KP_OK)
                printf("      %-12s %9zu bytes  %s\n", kp_code_format_name(co.format), co.bytes, co.archs);
        }
        for (size_t k = 0; kernels && k < info.kernel_count; k++)
            printf("      %s\n", kp_module_kernel_name(m, k));
    }
}

int main(int argc, char **argv)
{
    int kernels = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kernels") == 0) {
            kernels = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "kp-info: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    printf("kernelpack %s, backend %s\n", kp_version(), kp_backend_name());
    print_devices();
    print_modules(kernels);
    return 0;
}
