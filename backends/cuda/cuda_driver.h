/* The part of the CUDA driver API kernelpack uses, declared here so the
 * library builds without CUDA headers and loads libcuda.so.1 at run time.
 * Values are those of cuda.h (CUDA 12/13); symbol names are the versioned
 * ones that cuda.h's macros select. */
#ifndef KP_CUDA_DRIVER_H
#define KP_CUDA_DRIVER_H

#include <stddef.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st *CUcontext;
typedef struct CUmod_st *CUmodule;
typedef struct CUfunc_st *CUfunction;
typedef struct CUstream_st *CUstream;
typedef struct CUevent_st *CUevent;

enum {
    CUDA_SUCCESS = 0,
    CUDA_ERROR_OUT_OF_MEMORY = 2,
    CUDA_ERROR_STUB_LIBRARY = 34,
    CUDA_ERROR_INSUFFICIENT_DRIVER = 35,
    CUDA_ERROR_NO_DEVICE = 100,
    CUDA_ERROR_INVALID_DEVICE = 101,
    CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
    CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
};

enum {
    CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
    CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,     /* _Y = 3, _Z = 4 */
    CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,      /* _Y = 6, _Z = 7 */
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
    CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
    CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
    CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
    CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
    CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
};

enum {
    CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
    CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
    CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
    CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
};

/* cuLaunchKernelEx's configuration, as cuda.h lays it out. */
enum { CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION = 6 };
typedef struct {
    int id;
    char pad[4];
    union {
        char pad[64];
        int programmaticStreamSerializationAllowed;
    } value;
} CUlaunchAttribute;
typedef struct {
    unsigned gridDimX, gridDimY, gridDimZ;
    unsigned blockDimX, blockDimY, blockDimZ;
    unsigned sharedMemBytes;
    CUstream hStream;
    CUlaunchAttribute *attrs;
    unsigned numAttrs;
} CUlaunchConfig;

#define CU_STREAM_NON_BLOCKING 0x1
#define CU_EVENT_DEFAULT 0x0

/* X(return, symbol, field, params): field is how the backend calls it. */
#define KP_CUDA_FUNCTIONS(X)                                                                  \
    X(CUresult, "cuInit", Init, (unsigned flags))                                             \
    X(CUresult, "cuGetErrorName", GetErrorName, (CUresult, const char **))                    \
    X(CUresult, "cuGetErrorString", GetErrorString, (CUresult, const char **))                \
    X(CUresult, "cuDeviceGetCount", DeviceGetCount, (int *))                                  \
    X(CUresult, "cuDeviceGet", DeviceGet, (CUdevice *, int))                                  \
    X(CUresult, "cuDeviceGetName", DeviceGetName, (char *, int, CUdevice))                    \
    X(CUresult, "cuDeviceGetAttribute", DeviceGetAttribute, (int *, int, CUdevice))           \
    X(CUresult, "cuDeviceTotalMem_v2", DeviceTotalMem, (size_t *, CUdevice))                  \
    X(CUresult, "cuDevicePrimaryCtxRetain", DevicePrimaryCtxRetain, (CUcontext *, CUdevice))  \
    X(CUresult, "cuDevicePrimaryCtxRelease_v2", DevicePrimaryCtxRelease, (CUdevice))          \
    X(CUresult, "cuCtxSetCurrent", CtxSetCurrent, (CUcontext))                                \
    X(CUresult, "cuCtxSynchronize", CtxSynchronize, (void))                                   \
    X(CUresult, "cuMemAlloc_v2", MemAlloc, (CUdeviceptr *, size_t))                           \
    X(CUresult, "cuMemFree_v2", MemFree, (CUdeviceptr))                                       \
    X(CUresult, "cuMemcpyHtoDAsync_v2", MemcpyHtoDAsync, (CUdeviceptr, const void *, size_t, CUstream)) \
    X(CUresult, "cuMemcpyDtoHAsync_v2", MemcpyDtoHAsync, (void *, CUdeviceptr, size_t, CUstream)) \
    X(CUresult, "cuMemcpyDtoDAsync_v2", MemcpyDtoDAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
    X(CUresult, "cuMemcpyPeerAsync", MemcpyPeerAsync, (CUdeviceptr, CUcontext, CUdeviceptr,   \
                                                       CUcontext, size_t, CUstream))          \
    X(CUresult, "cuMemsetD8Async", MemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream)) \
    X(CUresult, "cuStreamCreate", StreamCreate, (CUstream *, unsigned))                       \
    X(CUresult, "cuStreamDestroy_v2", StreamDestroy, (CUstream))                              \
    X(CUresult, "cuStreamSynchronize", StreamSynchronize, (CUstream))                         \
    X(CUresult, "cuEventCreate", EventCreate, (CUevent *, unsigned))                          \
    X(CUresult, "cuEventDestroy_v2", EventDestroy, (CUevent))                                 \
    X(CUresult, "cuEventRecord", EventRecord, (CUevent, CUstream))                            \
    X(CUresult, "cuEventSynchronize", EventSynchronize, (CUevent))                            \
    X(CUresult, "cuEventElapsedTime", EventElapsedTime, (float *, CUevent, CUevent))          \
    X(CUresult, "cuModuleLoadData", ModuleLoadData, (CUmodule *, const void *))               \
    X(CUresult, "cuModuleUnload", ModuleUnload, (CUmodule))                                   \
    X(CUresult, "cuModuleGetFunction", ModuleGetFunction, (CUfunction *, CUmodule, const char *)) \
    X(CUresult, "cuFuncGetAttribute", FuncGetAttribute, (int *, int, CUfunction))             \
    X(CUresult, "cuFuncSetAttribute", FuncSetAttribute, (CUfunction, int, int))               \
    X(CUresult, "cuLaunchKernel", LaunchKernel, (CUfunction, unsigned, unsigned, unsigned,    \
                                                 unsigned, unsigned, unsigned, unsigned,      \
                                                 CUstream, void **, void **))                 \
    X(CUresult, "cuLaunchKernelEx", LaunchKernelEx, (const CUlaunchConfig *, CUfunction,      \
                                                     void **, void **))

#endif
