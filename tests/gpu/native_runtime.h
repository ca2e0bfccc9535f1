/* The vendor runtime called directly, the way another library sharing a
 * device with kernelpack would (a stream of its own, async memset and copy):
 * the CUDA driver API or HIP, loaded with dlopen like kernelpack does. */
#ifndef KP_GPU_NATIVE_RUNTIME_H
#define KP_GPU_NATIVE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

/* Loads the runtime of kp_backend_name() and makes device `ordinal` (its
 * primary context) current on this thread. 0 on success, else prints why. */
int native_open(int ordinal);
/* Each returns 0 on success, else prints the failing call and returns 1. */
int native_stream_create(void **stream);
int native_stream_destroy(void *stream);
int native_stream_synchronize(void *stream);
int native_memset32_async(void *dst, uint32_t value, size_t count, void *stream);
int native_memcpy_d2h_async(void *dst, const void *src, size_t bytes, void *stream);

#endif
