/* The internal vtable every GPU backend fills. The front-end (src/) validates
 * all arguments before calling a slot, so slots may assume valid input.
 * Each slot's type is declared once here and backends declare their
 * functions with it (static kp_backend_init_fn cuda_init;), so a prototype
 * cannot drift from the table. */
#ifndef KP_BACKEND_H
#define KP_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include "kernelpack/core.h"
#include "kernelpack/device.h"
#include "module_desc.h"

/* Native handles are opaque to the front-end: `dev` is what device_open
 * returned; stream NULL means the device's default stream. */
struct kp_device_limits;

#define KP_BACKEND_SLOTS(X)                                                                   \
    X(kp_status, init, (void))                                                                \
    X(kp_status, device_count, (int *count))                                                  \
    X(kp_status, device_open, (int ordinal, void **dev, kp_device_info *info,                 \
                               struct kp_device_limits *limits))                              \
    X(void, device_close, (void *dev))                                                        \
    X(kp_status, device_synchronize, (void *dev))                                             \
    X(kp_status, mem_alloc, (void *dev, size_t bytes, void **ptr))                            \
    X(void, mem_free, (void *dev, void *ptr))                                                 \
    X(kp_status, memcpy_h2d, (void *dev, void *stream, void *dst, const void *src, size_t n)) \
    X(kp_status, memcpy_d2h, (void *dev, void *stream, void *dst, const void *src, size_t n)) \
    X(kp_status, memcpy_d2d, (void *dev, void *stream, void *dst, const void *src, size_t n)) \
    X(kp_status, memset_d8, (void *dev, void *stream, void *dst, uint8_t value, size_t n))    \
    /* dst and src on two devices; queued on `stream` of device `dev` */                      \
    X(kp_status, memcpy_peer, (void *dev, void *stream, void *dst_dev, void *dst,            \
                               void *src_dev, const void *src, size_t n))                     \
    X(kp_status, stream_create, (void *dev, void **stream))                                   \
    X(void, stream_destroy, (void *dev, void *stream))                                        \
    X(kp_status, stream_synchronize, (void *dev, void *stream))                               \
    X(kp_status, event_create, (void *dev, void **event))                                     \
    X(void, event_destroy, (void *dev, void *event))                                          \
    X(kp_status, event_record, (void *dev, void *event, void *stream))                        \
    X(kp_status, event_synchronize, (void *dev, void *event))                                 \
    X(kp_status, event_elapsed_ms, (void *dev, void *start, void *end, float *ms))            \
    X(kp_status, module_load, (void *dev, const struct kp_code_object *code, void **module))  \
    X(void, module_unload, (void *dev, void *module))                                         \
    X(kp_status, module_function, (void *dev, void *module, const char *name, void **fn))    \
    /* what the loaded code of `fn` allows: threads per block, static shared bytes, and    \
     * the blocks of the cluster it must be launched in (1: none; grid x a multiple) */     \
    X(kp_status, function_limits, (void *dev, void *fn, int *max_threads, int *static_shared, \
                                   int *cluster_blocks))                                      \
    X(kp_status, launch, (void *dev, void *fn, const struct kp_launch_dims *dims,            \
                          void *stream, void **args))

/* Launch limits of a device (the public kp_device_info has the rest). */
struct kp_device_limits {
    unsigned max_block[3];       /* threads per block in x, y, z */
    unsigned max_grid[3];        /* blocks in x, y, z */
    size_t max_shared_bytes;     /* static + dynamic shared memory (LDS) per block */
    int fast_f64;                /* f64 arithmetic at half the f32 rate or better (0: slower or unknown) */
};

/* KP_LAUNCH_OVERLAP_PRIOR: the kernel may start while the kernel queued
 * before it on the stream still runs (CUDA's programmatic dependent launch,
 * sm_90+). It must wait (kp_wait_prior_grids() in kp_async.cuh) before it
 * reads what that kernel writes or writes anything; before then it may only
 * read memory that kernel does not write. Backends without the feature
 * launch as usual. */
#define KP_LAUNCH_OVERLAP_PRIOR 1u

struct kp_launch_dims {
    unsigned grid[3];
    unsigned block[3];
    unsigned shared_bytes;
    unsigned flags;              /* KP_LAUNCH_* */
};

#define KP_BACKEND_SLOT_TYPE(ret, name, params) typedef ret kp_backend_##name##_fn params;
KP_BACKEND_SLOTS(KP_BACKEND_SLOT_TYPE)
#undef KP_BACKEND_SLOT_TYPE

struct kp_backend {
    const char *name;
#define KP_BACKEND_SLOT_MEMBER(ret, name, params) kp_backend_##name##_fn *name;
    KP_BACKEND_SLOTS(KP_BACKEND_SLOT_MEMBER)
#undef KP_BACKEND_SLOT_MEMBER
};

/* The backend this library was built with. */
extern const struct kp_backend kp_backend_builtin;

#endif
