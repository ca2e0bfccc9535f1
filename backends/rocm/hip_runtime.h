/* The part of the HIP runtime API kernelpack uses, declared here so the
 * library loads libamdhip64 at run time (.so.6, then .so.5) and needs no
 * HIP headers to build. Values are those of hip_runtime_api.h (ROCm 5.x/6.x). */
#ifndef KP_HIP_RUNTIME_H
#define KP_HIP_RUNTIME_H

#include <stddef.h>

typedef int hipError_t;
typedef int hipDevice_t;
typedef struct ihipModule_t *hipModule_t;
typedef struct ihipModuleSymbol_t *hipFunction_t;
typedef struct ihipStream_t *hipStream_t;
typedef struct ihipEvent_t *hipEvent_t;

enum {
    hipSuccess = 0,
    hipErrorOutOfMemory = 2,
    hipErrorInsufficientDriver = 35,
    hipErrorNoDevice = 100,
    hipErrorInvalidDevice = 101,
    hipErrorNoBinaryForGpu = 209,
};

enum {
    hipDeviceAttributeMaxBlockDimX = 26,         /* Y = 27, Z = 28 */
    hipDeviceAttributeMaxGridDimX = 29,          /* Y = 30, Z = 31 */
    hipDeviceAttributeMaxThreadsPerBlock = 56,
    hipDeviceAttributeMultiprocessorCount = 63,
    hipDeviceAttributeMaxSharedMemoryPerBlock = 74,
    hipDeviceAttributeWarpSize = 87,
};

enum {
    HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
};

#define hipStreamNonBlocking 0x1

/* hipDeviceProp_t is only read for gcnArchName, whose place differs between
 * ROCm 5 (offset 396 of 792 bytes) and ROCm 6's hipDeviceProp_tR0600; the
 * backend passes a large zeroed buffer and finds the "gfx..." string. */
#define KP_HIP_PROPS_BUFFER 8192

#define KP_HIP_FUNCTIONS(X)                                                                  \
    X(hipError_t, "hipInit", Init, (unsigned flags))                                         \
    X(const char *, "hipGetErrorName", GetErrorName, (hipError_t))                           \
    X(const char *, "hipGetErrorString", GetErrorString, (hipError_t))                       \
    X(hipError_t, "hipGetDeviceCount", GetDeviceCount, (int *))                              \
    X(hipError_t, "hipDeviceGetName", DeviceGetName, (char *, int, hipDevice_t))             \
    X(hipError_t, "hipDeviceGetAttribute", DeviceGetAttribute, (int *, int, int))           \
    X(hipError_t, "hipDeviceTotalMem", DeviceTotalMem, (size_t *, hipDevice_t))              \
    X(hipError_t, "hipSetDevice", SetDevice, (int))                                          \
    X(hipError_t, "hipDeviceSynchronize", DeviceSynchronize, (void))                         \
    X(hipError_t, "hipMalloc", Malloc, (void **, size_t))                                    \
    X(hipError_t, "hipFree", Free, (void *))                                                 \
    X(hipError_t, "hipMemcpyHtoDAsync", MemcpyHtoDAsync, (void *, const void *, size_t, hipStream_t)) \
    X(hipError_t, "hipMemcpyDtoHAsync", MemcpyDtoHAsync, (void *, const void *, size_t, hipStream_t)) \
    X(hipError_t, "hipMemcpyDtoDAsync", MemcpyDtoDAsync, (void *, const void *, size_t, hipStream_t)) \
    X(hipError_t, "hipMemcpyPeerAsync", MemcpyPeerAsync, (void *, int, const void *, int, size_t, \
                                                          hipStream_t))                       \
    X(hipError_t, "hipMemsetD8Async", MemsetD8Async, (void *, unsigned char, size_t, hipStream_t)) \
    X(hipError_t, "hipStreamCreateWithFlags", StreamCreateWithFlags, (hipStream_t *, unsigned)) \
    X(hipError_t, "hipStreamDestroy", StreamDestroy, (hipStream_t))                          \
    X(hipError_t, "hipStreamSynchronize", StreamSynchronize, (hipStream_t))                  \
    X(hipError_t, "hipEventCreate", EventCreate, (hipEvent_t *))                             \
    X(hipError_t, "hipEventDestroy", EventDestroy, (hipEvent_t))                             \
    X(hipError_t, "hipEventRecord", EventRecord, (hipEvent_t, hipStream_t))                  \
    X(hipError_t, "hipEventSynchronize", EventSynchronize, (hipEvent_t))                     \
    X(hipError_t, "hipEventElapsedTime", EventElapsedTime, (float *, hipEvent_t, hipEvent_t)) \
    X(hipError_t, "hipModuleLoadData", ModuleLoadData, (hipModule_t *, const void *))        \
    X(hipError_t, "hipModuleUnload", ModuleUnload, (hipModule_t))                            \
    X(hipError_t, "hipModuleGetFunction", ModuleGetFunction, (hipFunction_t *, hipModule_t, const char *)) \
    X(hipError_t, "hipFuncGetAttribute", FuncGetAttribute, (int *, int, hipFunction_t))      \
    X(hipError_t, "hipModuleLaunchKernel", ModuleLaunchKernel, (hipFunction_t, unsigned, unsigned, \
                                                                unsigned, unsigned, unsigned,      \
                                                                unsigned, unsigned, hipStream_t,   \
                                                                void **, void **))

#endif
