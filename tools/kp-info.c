/* kp-info: what this kernelpack build contains and which devices it sees. */
#include <stdio.h>
#include <string.h>

#include <kernelpack/kernelpack.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: kp-info [--kernels] [--resources [--json]] [--help]\n"
               "Prints the GPU backend, the devices it finds and the kernel modules\n"
               "built into kernelpack. --kernels also lists every kernel name.\n"
               "--resources prints, per module, kernel and target, what the compiled\n"
               "code object says the kernel uses: registers (VGPRs on AMD), SGPRs,\n"
               "local/scratch bytes per thread and the spilled part of them, static\n"
               "shared memory (LDS) per block, max threads per block and wave size;\n"
               "--json prints that table as JSON instead (no device is needed).\n");
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

/* One row per module, kernel and target: a table, or JSON. */
static void print_resources(int json)
{
    if (json)
        printf("{\n  \"backend\": \"%s\",\n  \"kernels\": [", kp_backend_name());
    else
        printf("%-10s %-36s %-8s %5s %5s %7s %7s %7s %6s %4s\n", "module", "kernel", "target", "regs",
               "sgprs", "local", "spill", "shared", "threads", "wave");
    const char *sep = "\n";
    for (size_t m = 0; m < kp_module_count(); m++) {
        kp_module_info info;
        if (kp_module_get_info(m, &info) != KP_OK)
            continue;
        for (size_t r = 0; r < kp_module_resource_count(m); r++) {
            kp_kernel_resources k;
            if (kp_module_get_resources(m, r, &k) != KP_OK)
                continue;
            if (json) {
                printf("%s    {\"module\": \"%s\", \"kernel\": \"%s\", \"target\": \"%s\", "
                       "\"registers\": %d, \"sgprs\": %d, \"local_bytes\": %d, \"spill_bytes\": %d, "
                       "\"shared_bytes\": %d, \"max_threads\": %d, \"wave_size\": %d}",
                       sep, info.name, k.kernel, k.target, k.registers, k.sgprs, k.local_bytes,
                       k.spill_bytes, k.shared_bytes, k.max_threads, k.wave_size);
                sep = ",\n";
            } else {
                printf("%-10s %-36s %-8s %5d %5d %7d %7d %7d %6d %4d\n", info.name, k.kernel, k.target,
                       k.registers, k.sgprs, k.local_bytes, k.spill_bytes, k.shared_bytes,
                       k.max_threads, k.wave_size);
            }
        }
    }
    if (json)
        printf("\n  ]\n}\n");
}

int main(int argc, char **argv)
{
    int kernels = 0, resources = 0, json = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--kernels") == 0) {
            kernels = 1;
        } else if (strcmp(argv[i], "--resources") == 0) {
            resources = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "kp-info: unknown argument '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (json && !resources) {
        fprintf(stderr, "kp-info: --json goes with --resources\n");
        usage(stderr);
        return 2;
    }
    if (resources) {
        print_resources(json);
        return 0;
    }
    printf("kernelpack %s, backend %s\n", kp_version(), kp_backend_name());
    print_devices();
    print_modules(kernels);
    return 0;
}
