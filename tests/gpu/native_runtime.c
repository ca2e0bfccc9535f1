#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <kernelpack/kernelpack.h>
#include "native_runtime.h"

/* The few entry points used, with the vendor's signatures (int results:
 * 0 is success for both). */
static struct {
    int cuda;
    int (*stream_create)(void **stream, unsigned flags);
    int (*stream_destroy)(void *stream);
    int (*stream_synchronize)(void *stream);
    int (*memset32_async)(void *dst, uint32_t value, size_t count, void *stream);
    int (*memcpy_d2h_async)(void *dst, const void *src, size_t bytes, void *stream);
} rt;

static int check(int r, const char *call)
{
    if (r != 0)
        printf("native runtime: %s failed (%d)\n", call, r);
    return r != 0;
}

static void *sym(void *lib, const char *name, int *missing)
{
    void *p = dlsym(lib, name);
    if (!p) {
        printf("native runtime: no %s\n", name);
        *missing = 1;
    }
    return p;
}

int native_open(int ordinal)
{
    rt.cuda = strcmp(kp_backend_name(), "cuda") == 0;
    void *lib = dlopen(rt.cuda ? "libcuda.so.1" : "libamdhip64.so.6", RTLD_NOW | RTLD_LOCAL);
    if (!lib && !rt.cuda)
        lib = dlopen("libamdhip64.so.5", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        printf("native runtime: %s\n", dlerror());
        return 1;
    }
    int missing = 0;
    if (rt.cuda) {
        int (*init)(unsigned) = (int (*)(unsigned))sym(lib, "cuInit", &missing);
        int (*get)(int *, int) = (int (*)(int *, int))sym(lib, "cuDeviceGet", &missing);
        int (*retain)(void **, int) = (int (*)(void **, int))sym(lib, "cuDevicePrimaryCtxRetain", &missing);
        int (*set_current)(void *) = (int (*)(void *))sym(lib, "cuCtxSetCurrent", &missing);
        *(void **)&rt.stream_create = sym(lib, "cuStreamCreate", &missing);
        *(void **)&rt.stream_destroy = sym(lib, "cuStreamDestroy_v2", &missing);
        *(void **)&rt.stream_synchronize = sym(lib, "cuStreamSynchronize", &missing);
        *(void **)&rt.memset32_async = sym(lib, "cuMemsetD32Async", &missing);
        *(void **)&rt.memcpy_d2h_async = sym(lib, "cuMemcpyDtoHAsync_v2", &missing);
        if (missing)
            return 1;
        int dev = 0;
        void *ctx = NULL;
        return check(init(0), "cuInit") || check(get(&dev, ordinal), "cuDeviceGet") ||
               check(retain(&ctx, dev), "cuDevicePrimaryCtxRetain") ||
               check(set_current(ctx), "cuCtxSetCurrent");
    }
    int (*set_device)(int) = (int (*)(int))sym(lib, "hipSetDevice", &missing);
    *(void **)&rt.stream_create = sym(lib, "hipStreamCreateWithFlags", &missing);
    *(void **)&rt.stream_destroy = sym(lib, "hipStreamDestroy", &missing);
    *(void **)&rt.stream_synchronize = sym(lib, "hipStreamSynchronize", &missing);
    *(void **)&rt.memset32_async = sym(lib, "hipMemsetD32Async", &missing);
    *(void **)&rt.memcpy_d2h_async = sym(lib, "hipMemcpyDtoHAsync", &missing);
    if (missing)
        return 1;
    return check(set_device(ordinal), "hipSetDevice");
}

/* A blocking stream, like the CUDA/HIP runtimes' own default-flag streams. */
int native_stream_create(void **stream) { return check(rt.stream_create(stream, 0), "stream create"); }
int native_stream_destroy(void *stream) { return check(rt.stream_destroy(stream), "stream destroy"); }
int native_stream_synchronize(void *stream) { return check(rt.stream_synchronize(stream), "stream synchronize"); }

int native_memset32_async(void *dst, uint32_t value, size_t count, void *stream)
{
    return check(rt.memset32_async(dst, value, count, stream), "memset32 async");
}

int native_memcpy_d2h_async(void *dst, const void *src, size_t bytes, void *stream)
{
    /* cuMemcpyDtoHAsync takes (void *dst, CUdeviceptr src, ...), hipMemcpyDtoHAsync
     * (void *dst, void *src, ...): the same bits for a 64-bit device address */
    return check(rt.memcpy_d2h_async(dst, src, bytes, stream), "memcpy d2h async");
}
