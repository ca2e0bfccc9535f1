/* kernelpack: devices, device memory, streams and events.
 *
 * Thread-safety: every function here may be called from any thread. A device,
 * buffer, stream or event may be shared between threads; work submitted to
 * one stream runs in submission order. Destroy functions must not race with
 * other use of the same object.
 *
 * Several devices: each opened device has its own loaded modules, buffers,
 * streams and events. An op's operands must all belong to its stream's
 * device (else KP_ERR_DEVICE_MISMATCH, nothing queued); kp_memcpy_peer
 * copies between two devices.
 *
 * Contexts: kernelpack works in each device's primary context (CUDA) or on
 * the device's ordinal (HIP), the ones the CUDA and HIP runtimes use, so
 * memory and streams of the runtime (PyTorch, cuBLAS, NCCL, ...) can be
 * shared with it: kp_buffer_wrap takes a runtime allocation, kp_stream_wrap a
 * runtime stream. Each call makes its device current on the calling thread
 * (cuCtxSetCurrent / hipSetDevice) and leaves it so. */
#ifndef KERNELPACK_DEVICE_H
#define KERNELPACK_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct kp_device kp_device;
typedef struct kp_buffer kp_buffer;
typedef struct kp_stream kp_stream;
typedef struct kp_event kp_event;

/* Number of devices. KP_ERR_NO_DRIVER without a driver library; 0 devices is
 * KP_OK with *count = 0. */
KP_API kp_status kp_device_count(int *count);

typedef struct kp_device_info {
    int ordinal;
    char name[256];
    char arch[64];              /* "sm_90", "gfx90a:sramecc+:xnack-" */
    uint64_t total_memory;      /* bytes */
    int multiprocessors;        /* SMs / CUs */
    int warp_size;              /* 32 or 64 */
    int max_threads_per_block;
} kp_device_info;

/* Opens device `ordinal` (0-based). Closing it releases what it loaded. */
KP_API kp_status kp_device_open(int ordinal, kp_device **out);
/* Closes *device (waiting for its work) and sets it to NULL; NULL is a no-op.
 * Destroy the device's buffers, streams and events first. */
KP_API void kp_device_close(kp_device **device);
KP_API kp_status kp_device_get_info(const kp_device *device, kp_device_info *info);
/* Loads a built-in kernel module (see modules.h) now instead of on first use. */
KP_API kp_status kp_device_load_module(kp_device *device, const char *module);
/* Waits until all work on the device has finished. */
KP_API kp_status kp_device_synchronize(kp_device *device);

/* Device memory. A buffer is a device pointer plus its size and device, so
 * ops can check bounds and devices. */
KP_API kp_status kp_buffer_alloc(kp_device *device, size_t bytes, kp_buffer **out);
/* Describes memory the caller allocated on `device`; kernelpack never frees it. */
KP_API kp_status kp_buffer_wrap(kp_device *device, void *device_ptr, size_t bytes, kp_buffer **out);
/* Frees (or forgets, if wrapped) *buffer and sets it to NULL; NULL is a no-op.
 * The caller ensures no queued work still uses it. */
KP_API void kp_buffer_destroy(kp_buffer **buffer);
KP_API void *kp_buffer_device_ptr(const kp_buffer *buffer);
KP_API size_t kp_buffer_size(const kp_buffer *buffer);

/* Streams: ordered queues of work on one device. A stream (created or
 * wrapped) keeps 1 MiB of device memory for the partial results of ops that
 * run in two launches (reductions split over blocks, softmax and the norms
 * of rows wider than a block takes in few rows), allocated when the first such op is
 * queued on it (an op that cannot allocate it fails with its status) and
 * freed by kp_stream_destroy. */
KP_API kp_status kp_stream_create(kp_device *device, kp_stream **out);
/* Waits for the stream, destroys it and sets *stream to NULL; NULL is a no-op. */
KP_API void kp_stream_destroy(kp_stream **stream);
KP_API kp_status kp_stream_synchronize(kp_stream *stream);
/* Describes a native stream of `device` (a CUstream or hipStream_t cast to
 * void *, e.g. PyTorch's current stream; NULL is the device's default
 * stream) as a kp_stream. kernelpack queues its work on it in order with
 * what its owner queues there, and never destroys it: kp_stream_destroy
 * waits for it and frees only kernelpack's side. The native stream must
 * belong to `device`'s context and outlive the kp_stream. */
KP_API kp_status kp_stream_wrap(kp_device *device, void *native_stream, kp_stream **out);
/* The native stream (CUstream / hipStream_t) behind a kp_stream, created or
 * wrapped, to queue other libraries' work in order with kernelpack's. NULL
 * for a NULL stream (and for a wrapped default stream). */
KP_API void *kp_stream_native_handle(const kp_stream *stream);

/* Copies and memset, queued on `stream`; offsets and sizes in bytes. Host
 * memory must stay valid until the stream has been synchronized. */
KP_API kp_status kp_memcpy_h2d(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                               const void *src, size_t bytes);
KP_API kp_status kp_memcpy_d2h(kp_stream *stream, void *dst, const kp_buffer *src,
                               size_t src_offset, size_t bytes);
KP_API kp_status kp_memcpy_d2d(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                               const kp_buffer *src, size_t src_offset, size_t bytes);
KP_API kp_status kp_memset(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                           uint8_t value, size_t bytes);
/* Copies between buffers of two devices (or one), queued on `stream`, which
 * belongs to the device of dst or of src; the driver routes it over the peer
 * link where there is one, else through the host. */
KP_API kp_status kp_memcpy_peer(kp_stream *stream, kp_buffer *dst, size_t dst_offset,
                                const kp_buffer *src, size_t src_offset, size_t bytes);

/* Events: points in a stream, for ordering and timing. */
KP_API kp_status kp_event_create(kp_device *device, kp_event **out);
KP_API void kp_event_destroy(kp_event **event);
KP_API kp_status kp_event_record(kp_event *event, kp_stream *stream);
KP_API kp_status kp_event_synchronize(kp_event *event);
/* Milliseconds between two recorded, completed events of one device. */
KP_API kp_status kp_event_elapsed_ms(const kp_event *start, const kp_event *end, float *ms);

#ifdef __cplusplus
}
#endif
#endif
