/* ROCm backend: the HIP module API, loaded from libamdhip64 at run time. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "hip_runtime.h"

static struct {
#define KP_HIP_FIELD(ret, sym, field, params) ret (*field) params;
    KP_HIP_FUNCTIONS(KP_HIP_FIELD)
#undef KP_HIP_FIELD
    hipError_t (*GetDeviceProperties)(void *props, int device);
} hip;

struct rocm_device {
    int ordinal;
};

static kp_status hip_fail(hipError_t r, const char *call)
{
    const char *name = hip.GetErrorName ? hip.GetErrorName(r) : NULL;
    const char *text = hip.GetErrorString ? hip.GetErrorString(r) : NULL;
    kp_status st;
    switch (r) {
    case hipErrorOutOfMemory: st = KP_ERR_OUT_OF_MEMORY; break;
    case hipErrorNoDevice: case hipErrorInvalidDevice: st = KP_ERR_NO_DEVICE; break;
    case hipErrorInsufficientDriver: st = KP_ERR_NO_DRIVER; break;
    case hipErrorNoBinaryForGpu: st = KP_ERR_NO_CODE_FOR_ARCH; break;
    default: st = KP_ERR_DRIVER; break;
    }
    return kp_fail(st, "HIP %s failed: %s (%d): %s", call, name ? name : "?", r, text ? text : "");
}

#define HIP_CALL(expr)                                  \
    do {                                                \
        hipError_t r_ = (expr);                         \
        if (r_ != hipSuccess) return hip_fail(r_, #expr); \
    } while (0)

static kp_status use(void *dev)
{
    HIP_CALL(hip.SetDevice(((struct rocm_device *)dev)->ordinal));
    return KP_OK;
}

#define USE(dev)                       \
    do {                               \
        kp_status s_ = use(dev);       \
        if (s_ != KP_OK) return s_;    \
    } while (0)

static void *open_runtime(const char **used)
{
    static const char *const names[] = {"libamdhip64.so.6", "libamdhip64.so.5"};
    /* KP_HIP_LIBRARY overrides the runtime library (tests use it to simulate
     * a machine without ROCm). */
    const char *env = getenv("KP_HIP_LIBRARY");
    if (env && *env) {
        *used = env;
        return dlopen(env, RTLD_NOW | RTLD_LOCAL);
    }
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            *used = names[i];
            return lib;
        }
    }
    *used = "libamdhip64.so.6 or libamdhip64.so.5";
    return NULL;
}

static kp_backend_init_fn rocm_init;
static kp_status rocm_init(void)
{
    const char *path = NULL;
    void *lib = open_runtime(&path);
    if (!lib)
        return kp_fail(KP_ERR_NO_DRIVER, "cannot load the ROCm runtime %s: %s", path, dlerror());
#define KP_HIP_LOAD(ret, sym, field, params)                                                 \
    *(void **)&hip.field = dlsym(lib, sym);                                                  \
    if (!hip.field) {                                                                        \
        dlclose(lib);                                                                        \
        memset(&hip, 0, sizeof(hip));                                                        \
        return kp_fail(KP_ERR_NO_DRIVER, "%s lacks %s: the ROCm runtime is too old", path, sym); \
    }
    KP_HIP_FUNCTIONS(KP_HIP_LOAD)
#undef KP_HIP_LOAD
    /* ROCm 6 renamed the properties call along with its struct layout. */
    *(void **)&hip.GetDeviceProperties = dlsym(lib, "hipGetDevicePropertiesR0600");
    if (!hip.GetDeviceProperties)
        *(void **)&hip.GetDeviceProperties = dlsym(lib, "hipGetDeviceProperties");
    if (!hip.GetDeviceProperties) {
        dlclose(lib);
        memset(&hip, 0, sizeof(hip));
        return kp_fail(KP_ERR_NO_DRIVER, "%s lacks hipGetDeviceProperties", path);
    }
    hipError_t r = hip.Init(0);
    /* Without a GPU, hipInit reports no device; kp_device_count then says 0. */
    if (r != hipSuccess && r != hipErrorNoDevice && r != hipErrorInvalidDevice)
        return hip_fail(r, "hipInit");
    return KP_OK;
}

static kp_backend_device_count_fn rocm_device_count;
static kp_status rocm_device_count(int *count)
{
    hipError_t r = hip.GetDeviceCount(count);
    if (r == hipErrorNoDevice || r == hipErrorInvalidDevice) {
        *count = 0;
        return KP_OK;
    }
    if (r != hipSuccess)
        return hip_fail(r, "hipGetDeviceCount");
    return KP_OK;
}

/* Finds gcnArchName in a hipDeviceProp_t of either ABI: the only field that
 * holds a "gfx" string. */
static void arch_from_props(const unsigned char *props, char *arch, size_t size)
{
    for (size_t off = 256; off + 4 < KP_HIP_PROPS_BUFFER; off += 4) {
        if (memcmp(props + off, "gfx", 3) == 0) {
            snprintf(arch, size, "%.*s", (int)(size - 1), (const char *)props + off);
            return;
        }
    }
    snprintf(arch, size, "gfx-unknown");
}

static kp_backend_device_open_fn rocm_device_open;
static kp_status rocm_device_open(int ordinal, void **out, kp_device_info *info,
                                  struct kp_device_limits *limits)
{
    unsigned char *props = calloc(1, KP_HIP_PROPS_BUFFER);
    struct rocm_device *d = calloc(1, sizeof(*d));
    if (!props || !d) {
        free(props);
        free(d);
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "out of host memory");
    }
    d->ordinal = ordinal;
    size_t total = 0;
    hipError_t r = hip.SetDevice(ordinal);
    if (r == hipSuccess) r = hip.DeviceGetName(info->name, (int)sizeof(info->name), ordinal);
    if (r == hipSuccess) r = hip.DeviceGetAttribute(&info->multiprocessors, hipDeviceAttributeMultiprocessorCount, ordinal);
    if (r == hipSuccess) r = hip.DeviceGetAttribute(&info->warp_size, hipDeviceAttributeWarpSize, ordinal);
    if (r == hipSuccess) r = hip.DeviceGetAttribute(&info->max_threads_per_block, hipDeviceAttributeMaxThreadsPerBlock, ordinal);
    for (int i = 0; i < 3; i++) {
        int block = 0, grid = 0;
        if (r == hipSuccess) r = hip.DeviceGetAttribute(&block, hipDeviceAttributeMaxBlockDimX + i, ordinal);
        if (r == hipSuccess) r = hip.DeviceGetAttribute(&grid, hipDeviceAttributeMaxGridDimX + i, ordinal);
        limits->max_block[i] = (unsigned)block;
        limits->max_grid[i] = (unsigned)grid;
    }
    int shared = 0;
    if (r == hipSuccess) r = hip.DeviceGetAttribute(&shared, hipDeviceAttributeMaxSharedMemoryPerBlock, ordinal);
    limits->max_shared_bytes = (size_t)shared;
    if (r == hipSuccess) r = hip.DeviceTotalMem(&total, ordinal);
    if (r == hipSuccess) r = hip.GetDeviceProperties(props, ordinal);
    if (r == hipSuccess)
        arch_from_props(props, info->arch, sizeof(info->arch));
    free(props);
    if (r != hipSuccess) {
        free(d);
        return hip_fail(r, "opening the device");
    }
    info->total_memory = total;
    *out = d;
    return KP_OK;
}

static kp_backend_device_close_fn rocm_device_close;
static void rocm_device_close(void *dev)
{
    free(dev);
}

static kp_backend_device_synchronize_fn rocm_device_synchronize;
static kp_status rocm_device_synchronize(void *dev)
{
    USE(dev);
    HIP_CALL(hip.DeviceSynchronize());
    return KP_OK;
}

static kp_backend_mem_alloc_fn rocm_mem_alloc;
static kp_status rocm_mem_alloc(void *dev, size_t bytes, void **ptr)
{
    USE(dev);
    HIP_CALL(hip.Malloc(ptr, bytes));
    return KP_OK;
}

static kp_backend_mem_free_fn rocm_mem_free;
static void rocm_mem_free(void *dev, void *ptr)
{
    if (use(dev) == KP_OK)
        hip.Free(ptr);
}

static kp_backend_memcpy_h2d_fn rocm_memcpy_h2d;
static kp_status rocm_memcpy_h2d(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    HIP_CALL(hip.MemcpyHtoDAsync(dst, src, n, stream));
    return KP_OK;
}

static kp_backend_memcpy_d2h_fn rocm_memcpy_d2h;
static kp_status rocm_memcpy_d2h(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    HIP_CALL(hip.MemcpyDtoHAsync(dst, src, n, stream));
    return KP_OK;
}

static kp_backend_memcpy_d2d_fn rocm_memcpy_d2d;
static kp_status rocm_memcpy_d2d(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    HIP_CALL(hip.MemcpyDtoDAsync(dst, src, n, stream));
    return KP_OK;
}

static kp_backend_memset_d8_fn rocm_memset_d8;
static kp_status rocm_memset_d8(void *dev, void *stream, void *dst, uint8_t value, size_t n)
{
    USE(dev);
    HIP_CALL(hip.MemsetD8Async(dst, value, n, stream));
    return KP_OK;
}

static kp_backend_memcpy_peer_fn rocm_memcpy_peer;
static kp_status rocm_memcpy_peer(void *dev, void *stream, void *dst_dev, void *dst,
                                  void *src_dev, const void *src, size_t n)
{
    USE(dev);
    HIP_CALL(hip.MemcpyPeerAsync(dst, ((struct rocm_device *)dst_dev)->ordinal, src,
                                 ((struct rocm_device *)src_dev)->ordinal, n, stream));
    return KP_OK;
}

static kp_backend_stream_create_fn rocm_stream_create;
static kp_status rocm_stream_create(void *dev, void **stream)
{
    USE(dev);
    HIP_CALL(hip.StreamCreateWithFlags((hipStream_t *)stream, hipStreamNonBlocking));
    return KP_OK;
}

static kp_backend_stream_destroy_fn rocm_stream_destroy;
static void rocm_stream_destroy(void *dev, void *stream)
{
    if (use(dev) == KP_OK)
        hip.StreamDestroy(stream);
}

static kp_backend_stream_synchronize_fn rocm_stream_synchronize;
static kp_status rocm_stream_synchronize(void *dev, void *stream)
{
    USE(dev);
    HIP_CALL(hip.StreamSynchronize(stream));
    return KP_OK;
}

static kp_backend_event_create_fn rocm_event_create;
static kp_status rocm_event_create(void *dev, void **event)
{
    USE(dev);
    HIP_CALL(hip.EventCreate((hipEvent_t *)event));
    return KP_OK;
}

static kp_backend_event_destroy_fn rocm_event_destroy;
static void rocm_event_destroy(void *dev, void *event)
{
    if (use(dev) == KP_OK)
        hip.EventDestroy(event);
}

static kp_backend_event_record_fn rocm_event_record;
static kp_status rocm_event_record(void *dev, void *event, void *stream)
{
    USE(dev);
    HIP_CALL(hip.EventRecord(event, stream));
    return KP_OK;
}

static kp_backend_event_synchronize_fn rocm_event_synchronize;
static kp_status rocm_event_synchronize(void *dev, void *event)
{
    USE(dev);
    HIP_CALL(hip.EventSynchronize(event));
    return KP_OK;
}

static kp_backend_event_elapsed_ms_fn rocm_event_elapsed_ms;
static kp_status rocm_event_elapsed_ms(void *dev, void *start, void *end, float *ms)
{
    USE(dev);
    HIP_CALL(hip.EventElapsedTime(ms, start, end));
    return KP_OK;
}

static kp_backend_module_load_fn rocm_module_load;
static kp_status rocm_module_load(void *dev, const struct kp_code_object *code, void **module)
{
    USE(dev);
    HIP_CALL(hip.ModuleLoadData((hipModule_t *)module, code->data));
    return KP_OK;
}

static kp_backend_module_unload_fn rocm_module_unload;
static void rocm_module_unload(void *dev, void *module)
{
    if (use(dev) == KP_OK)
        hip.ModuleUnload(module);
}

static kp_backend_module_function_fn rocm_module_function;
static kp_status rocm_module_function(void *dev, void *module, const char *name, void **fn)
{
    USE(dev);
    HIP_CALL(hip.ModuleGetFunction((hipFunction_t *)fn, module, name));
    return KP_OK;
}

static kp_backend_function_limits_fn rocm_function_limits;
static kp_status rocm_function_limits(void *dev, void *fn, int *max_threads, int *static_shared,
                                     int *cluster_blocks)
{
    USE(dev);
    HIP_CALL(hip.FuncGetAttribute(max_threads, HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    HIP_CALL(hip.FuncGetAttribute(static_shared, HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    *cluster_blocks = 1;  /* AMD GPUs have no thread block clusters */
    return KP_OK;
}

static kp_backend_launch_fn rocm_launch;
static kp_status rocm_launch(void *dev, void *fn, const struct kp_launch_dims *d, void *stream, void **args)
{
    USE(dev);
    HIP_CALL(hip.ModuleLaunchKernel(fn, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                                    d->block[2], d->shared_bytes, stream, args, NULL));
    return KP_OK;
}

const struct kp_backend kp_backend_builtin = {
    .name = "rocm",
    .init = rocm_init,
    .device_count = rocm_device_count,
    .device_open = rocm_device_open,
    .device_close = rocm_device_close,
    .device_synchronize = rocm_device_synchronize,
    .mem_alloc = rocm_mem_alloc,
    .mem_free = rocm_mem_free,
    .memcpy_h2d = rocm_memcpy_h2d,
    .memcpy_d2h = rocm_memcpy_d2h,
    .memcpy_d2d = rocm_memcpy_d2d,
    .memset_d8 = rocm_memset_d8,
    .memcpy_peer = rocm_memcpy_peer,
    .stream_create = rocm_stream_create,
    .stream_destroy = rocm_stream_destroy,
    .stream_synchronize = rocm_stream_synchronize,
    .event_create = rocm_event_create,
    .event_destroy = rocm_event_destroy,
    .event_record = rocm_event_record,
    .event_synchronize = rocm_event_synchronize,
    .event_elapsed_ms = rocm_event_elapsed_ms,
    .module_load = rocm_module_load,
    .module_unload = rocm_module_unload,
    .module_function = rocm_module_function,
    .function_limits = rocm_function_limits,
    .launch = rocm_launch,
};
