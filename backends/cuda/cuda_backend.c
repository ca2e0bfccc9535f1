/* CUDA backend: the driver API, loaded from libcuda.so.1 at run time. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "cuda_driver.h"

static struct {
#define KP_CUDA_FIELD(ret, sym, field, params) ret (*field) params;
    KP_CUDA_FUNCTIONS(KP_CUDA_FIELD)
#undef KP_CUDA_FIELD
} cu;

struct cuda_device {
    CUdevice dev;
    CUcontext ctx;
    int major;                   /* compute capability */
};

/* Maps a driver error to a kernelpack status with a message naming the call. */
static kp_status cuda_fail(CUresult r, const char *call)
{
    const char *name = NULL, *text = NULL;
    if (cu.GetErrorName)
        cu.GetErrorName(r, &name);
    if (cu.GetErrorString)
        cu.GetErrorString(r, &text);
    kp_status st;
    switch (r) {
    case CUDA_ERROR_OUT_OF_MEMORY: st = KP_ERR_OUT_OF_MEMORY; break;
    case CUDA_ERROR_NO_DEVICE: case CUDA_ERROR_INVALID_DEVICE: st = KP_ERR_NO_DEVICE; break;
    case CUDA_ERROR_STUB_LIBRARY: case CUDA_ERROR_INSUFFICIENT_DRIVER: st = KP_ERR_NO_DRIVER; break;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: case CUDA_ERROR_UNSUPPORTED_PTX_VERSION: st = KP_ERR_NO_CODE_FOR_ARCH; break;
    default: st = KP_ERR_DRIVER; break;
    }
    return kp_fail(st, "CUDA %s failed: %s (%d): %s", call, name ? name : "?", r, text ? text : "");
}

#define CU_CALL(expr)                                  \
    do {                                               \
        CUresult r_ = (expr);                          \
        if (r_ != CUDA_SUCCESS) return cuda_fail(r_, #expr); \
    } while (0)

static kp_status use(void *dev)
{
    CU_CALL(cu.CtxSetCurrent(((struct cuda_device *)dev)->ctx));
    return KP_OK;
}

#define USE(dev)                       \
    do {                               \
        kp_status s_ = use(dev);       \
        if (s_ != KP_OK) return s_;    \
    } while (0)

static kp_backend_init_fn cuda_init;
static kp_status cuda_init(void)
{
    /* KP_CUDA_LIBRARY overrides the driver library (tests use it to simulate
     * a machine without a driver). */
    const char *path = getenv("KP_CUDA_LIBRARY");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return kp_fail(KP_ERR_NO_DRIVER, "cannot load the NVIDIA driver library %s: %s", path, dlerror());
#define KP_CUDA_LOAD(ret, sym, field, params)                                               \
    *(void **)&cu.field = dlsym(lib, sym);                                                  \
    if (!cu.field) {                                                                        \
        dlclose(lib);                                                                       \
        memset(&cu, 0, sizeof(cu));                                                         \
        return kp_fail(KP_ERR_NO_DRIVER, "%s lacks %s: the NVIDIA driver is too old", path, sym); \
    }
    KP_CUDA_FUNCTIONS(KP_CUDA_LOAD)
#undef KP_CUDA_LOAD
    CU_CALL(cu.Init(0));
    return KP_OK;
}

static kp_backend_device_count_fn cuda_device_count;
static kp_status cuda_device_count(int *count)
{
    CUresult r = cu.DeviceGetCount(count);
    if (r == CUDA_ERROR_NO_DEVICE) {
        *count = 0;
        return KP_OK;
    }
    if (r != CUDA_SUCCESS)
        return cuda_fail(r, "cuDeviceGetCount");
    return KP_OK;
}

static kp_backend_device_open_fn cuda_device_open;
static kp_status cuda_device_open(int ordinal, void **out, kp_device_info *info,
                                  struct kp_device_limits *limits)
{
    struct cuda_device *d = calloc(1, sizeof(*d));
    if (!d)
        return kp_fail(KP_ERR_OUT_OF_MEMORY, "out of host memory");
    CUresult r = cu.DeviceGet(&d->dev, ordinal);
    int major = 0, minor = 0;
    size_t total = 0;
    if (r == CUDA_SUCCESS) r = cu.DeviceGetName(info->name, (int)sizeof(info->name), d->dev);
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d->dev);
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d->dev);
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&info->multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, d->dev);
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&info->warp_size, CU_DEVICE_ATTRIBUTE_WARP_SIZE, d->dev);
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&info->max_threads_per_block, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, d->dev);
    for (int i = 0; i < 3; i++) {
        int block = 0, grid = 0;
        if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&block, CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X + i, d->dev);
        if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&grid, CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i, d->dev);
        limits->max_block[i] = (unsigned)block;
        limits->max_grid[i] = (unsigned)grid;
    }
    /* What a block may have once its kernel opts in (cuda_launch does), not
     * the 48 KB it gets without. */
    int shared = 0;
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, d->dev);
    limits->max_shared_bytes = (size_t)shared;
    int f32_per_f64 = 0;  /* 2 on A100, H100, H200; 32 to 64 on most others */
    if (r == CUDA_SUCCESS) r = cu.DeviceGetAttribute(&f32_per_f64, CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO, d->dev);
    limits->fast_f64 = f32_per_f64 >= 1 && f32_per_f64 <= 2;
    if (r == CUDA_SUCCESS) r = cu.DeviceTotalMem(&total, d->dev);
    if (r == CUDA_SUCCESS) r = cu.DevicePrimaryCtxRetain(&d->ctx, d->dev);
    if (r != CUDA_SUCCESS) {
        free(d);
        return cuda_fail(r, "opening the device");
    }
    info->total_memory = total;
    d->major = major;
    snprintf(info->arch, sizeof(info->arch), "sm_%d%d", major, minor);
    *out = d;
    return KP_OK;
}

static kp_backend_device_close_fn cuda_device_close;
static void cuda_device_close(void *dev)
{
    struct cuda_device *d = dev;
    cu.DevicePrimaryCtxRelease(d->dev);
    free(d);
}

static kp_backend_device_synchronize_fn cuda_device_synchronize;
static kp_status cuda_device_synchronize(void *dev)
{
    USE(dev);
    CU_CALL(cu.CtxSynchronize());
    return KP_OK;
}

static kp_backend_mem_alloc_fn cuda_mem_alloc;
static kp_status cuda_mem_alloc(void *dev, size_t bytes, void **ptr)
{
    USE(dev);
    CUdeviceptr p = 0;
    CU_CALL(cu.MemAlloc(&p, bytes));
    *ptr = (void *)(uintptr_t)p;
    return KP_OK;
}

static kp_backend_mem_free_fn cuda_mem_free;
static void cuda_mem_free(void *dev, void *ptr)
{
    if (use(dev) == KP_OK)
        cu.MemFree((CUdeviceptr)(uintptr_t)ptr);
}

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

static kp_backend_memcpy_h2d_fn cuda_memcpy_h2d;
static kp_status cuda_memcpy_h2d(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    CU_CALL(cu.MemcpyHtoDAsync(DPTR(dst), src, n, stream));
    return KP_OK;
}

static kp_backend_memcpy_d2h_fn cuda_memcpy_d2h;
static kp_status cuda_memcpy_d2h(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    CU_CALL(cu.MemcpyDtoHAsync(dst, DPTR(src), n, stream));
    return KP_OK;
}

static kp_backend_memcpy_d2d_fn cuda_memcpy_d2d;
static kp_status cuda_memcpy_d2d(void *dev, void *stream, void *dst, const void *src, size_t n)
{
    USE(dev);
    CU_CALL(cu.MemcpyDtoDAsync(DPTR(dst), DPTR(src), n, stream));
    return KP_OK;
}

static kp_backend_memset_d8_fn cuda_memset_d8;
static kp_status cuda_memset_d8(void *dev, void *stream, void *dst, uint8_t value, size_t n)
{
    USE(dev);
    CU_CALL(cu.MemsetD8Async(DPTR(dst), value, n, stream));
    return KP_OK;
}

static kp_backend_memcpy_peer_fn cuda_memcpy_peer;
static kp_status cuda_memcpy_peer(void *dev, void *stream, void *dst_dev, void *dst,
                                  void *src_dev, const void *src, size_t n)
{
    USE(dev);
    CU_CALL(cu.MemcpyPeerAsync(DPTR(dst), ((struct cuda_device *)dst_dev)->ctx, DPTR(src),
                               ((struct cuda_device *)src_dev)->ctx, n, stream));
    return KP_OK;
}

static kp_backend_stream_create_fn cuda_stream_create;
static kp_status cuda_stream_create(void *dev, void **stream)
{
    USE(dev);
    CU_CALL(cu.StreamCreate((CUstream *)stream, CU_STREAM_NON_BLOCKING));
    return KP_OK;
}

static kp_backend_stream_destroy_fn cuda_stream_destroy;
static void cuda_stream_destroy(void *dev, void *stream)
{
    if (use(dev) == KP_OK)
        cu.StreamDestroy(stream);
}

static kp_backend_stream_synchronize_fn cuda_stream_synchronize;
static kp_status cuda_stream_synchronize(void *dev, void *stream)
{
    USE(dev);
    CU_CALL(cu.StreamSynchronize(stream));
    return KP_OK;
}

static kp_backend_event_create_fn cuda_event_create;
static kp_status cuda_event_create(void *dev, void **event)
{
    USE(dev);
    CU_CALL(cu.EventCreate((CUevent *)event, CU_EVENT_DEFAULT));
    return KP_OK;
}

static kp_backend_event_destroy_fn cuda_event_destroy;
static void cuda_event_destroy(void *dev, void *event)
{
    if (use(dev) == KP_OK)
        cu.EventDestroy(event);
}

static kp_backend_event_record_fn cuda_event_record;
static kp_status cuda_event_record(void *dev, void *event, void *stream)
{
    USE(dev);
    CU_CALL(cu.EventRecord(event, stream));
    return KP_OK;
}

static kp_backend_event_synchronize_fn cuda_event_synchronize;
static kp_status cuda_event_synchronize(void *dev, void *event)
{
    USE(dev);
    CU_CALL(cu.EventSynchronize(event));
    return KP_OK;
}

static kp_backend_event_elapsed_ms_fn cuda_event_elapsed_ms;
static kp_status cuda_event_elapsed_ms(void *dev, void *start, void *end, float *ms)
{
    USE(dev);
    CU_CALL(cu.EventElapsedTime(ms, start, end));
    return KP_OK;
}

static kp_backend_module_load_fn cuda_module_load;
static kp_status cuda_module_load(void *dev, const struct kp_code_object *code, void **module)
{
    USE(dev);
    CU_CALL(cu.ModuleLoadData((CUmodule *)module, code->data));
    return KP_OK;
}

static kp_backend_module_unload_fn cuda_module_unload;
static void cuda_module_unload(void *dev, void *module)
{
    if (use(dev) == KP_OK)
        cu.ModuleUnload(module);
}

static kp_backend_module_function_fn cuda_module_function;
static kp_status cuda_module_function(void *dev, void *module, const char *name, void **fn)
{
    USE(dev);
    CU_CALL(cu.ModuleGetFunction((CUfunction *)fn, module, name));
    return KP_OK;
}

static kp_backend_function_limits_fn cuda_function_limits;
static kp_status cuda_function_limits(void *dev, void *fn, int *max_threads, int *static_shared,
                                     int *cluster_blocks)
{
    CU_CALL(cu.FuncGetAttribute(max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, fn));
    CU_CALL(cu.FuncGetAttribute(static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, fn));
    /* A cluster size built into the kernel (__cluster_dims__, sm_90+); the
     * attribute does not exist before sm_90, where no kernel has one. */
    *cluster_blocks = 1;
    if (((struct cuda_device *)dev)->major >= 9) {
        int width = 0;
        CU_CALL(cu.FuncGetAttribute(&width, CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH, fn));
        if (width > 1)
            *cluster_blocks = width;
    }
    return KP_OK;
}

/* Overlapping launches need sm_90, and a kernel built for it: one
 * JIT-compiled from older PTX lacks the wait for the kernel before it. */
static bool overlap_supported(void *dev, void *fn)
{
    int ptx_version = 0;
    return ((struct cuda_device *)dev)->major >= 9 &&
           cu.FuncGetAttribute(&ptx_version, CU_FUNC_ATTRIBUTE_PTX_VERSION, fn) == CUDA_SUCCESS &&
           ptx_version >= 90;
}

/* Dynamic shared memory a block gets without opting in. */
#define CUDA_DEFAULT_SHARED_BYTES (48u << 10)

static kp_backend_launch_fn cuda_launch;
static kp_status cuda_launch(void *dev, void *fn, const struct kp_launch_dims *d, void *stream, void **args)
{
    USE(dev);
    /* More than the default is refused unless the kernel allows it first;
     * the front-end checked it against the device's opt-in limit. */
    if (d->shared_bytes > CUDA_DEFAULT_SHARED_BYTES)
        CU_CALL(cu.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)d->shared_bytes));
    if ((d->flags & KP_LAUNCH_OVERLAP_PRIOR) && overlap_supported(dev, fn)) {
        CUlaunchAttribute overlap;
        memset(&overlap, 0, sizeof(overlap));
        overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        overlap.value.programmaticStreamSerializationAllowed = 1;
        const CUlaunchConfig config = {d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                                       d->block[2], d->shared_bytes, stream, &overlap, 1};
        CU_CALL(cu.LaunchKernelEx(&config, fn, args, NULL));
        return KP_OK;
    }
    CU_CALL(cu.LaunchKernel(fn, d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                            d->block[2], d->shared_bytes, stream, args, NULL));
    return KP_OK;
}

const struct kp_backend kp_backend_builtin = {
    .name = "cuda",
    .init = cuda_init,
    .device_count = cuda_device_count,
    .device_open = cuda_device_open,
    .device_close = cuda_device_close,
    .device_synchronize = cuda_device_synchronize,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .memcpy_h2d = cuda_memcpy_h2d,
    .memcpy_d2h = cuda_memcpy_d2h,
    .memcpy_d2d = cuda_memcpy_d2d,
    .memset_d8 = cuda_memset_d8,
    .memcpy_peer = cuda_memcpy_peer,
    .stream_create = cuda_stream_create,
    .stream_destroy = cuda_stream_destroy,
    .stream_synchronize = cuda_stream_synchronize,
    .event_create = cuda_event_create,
    .event_destroy = cuda_event_destroy,
    .event_record = cuda_event_record,
    .event_synchronize = cuda_event_synchronize,
    .event_elapsed_ms = cuda_event_elapsed_ms,
    .module_load = cuda_module_load,
    .module_unload = cuda_module_unload,
    .module_function = cuda_module_function,
    .function_limits = cuda_function_limits,
    .launch = cuda_launch,
};
