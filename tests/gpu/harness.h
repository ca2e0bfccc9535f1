/* Shared pieces of the GPU test programs: device setup (exit 77 without a
 * GPU), host-side 16-bit float conversions, random data, and tensors that
 * live in a device buffer with a host mirror. */
#ifndef KP_GPU_HARNESS_H
#define KP_GPU_HARNESS_H

#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <kernelpack/kernelpack.h>

extern kp_device *gpu_dev;
extern kp_stream *gpu_stream;

/* Opens device 0 and a stream. Returns 0, or 77 (meson's SKIP) after saying
 * why when there is no driver or no device; other failures return 1. */
int gpu_setup(void);
void gpu_teardown(void);
/* Runs a suite without forking (a GPU context does not survive fork()). */
int gpu_run_suite(Suite *s);

/* True (after printing why) when the tests that allocate gigabytes to reach
 * 64-bit indexing should not run: KP_TEST_SKIP_BIG is set, as the sanitizer
 * runs do (the same kernels run on smaller tensors), or the device has less
 * than `needed` bytes of memory. */
int gpu_skip_big(const char *test, uint64_t needed);

/* IEEE binary16 and bfloat16 <-> float, round to nearest even. */
float f16_to_f32(uint16_t h);
uint16_t f32_to_f16(float f);
float bf16_to_f32(uint16_t b);
uint16_t f32_to_bf16(float f);

/* Deterministic pseudo-random numbers (xorshift); reseed per test. */
void rng_seed(uint64_t seed);
uint64_t rng_next(void);
double rng_uniform(double lo, double hi);

/* Element i of a host array of `dtype`, as double (16-bit floats converted). */
double host_get(kp_dtype dtype, const void *base, size_t i);
/* Stores v (converted, rounded as the dtype does) into element i. */
void host_set(kp_dtype dtype, void *base, size_t i, double v);
/* Fills n elements with random values suited to the dtype. */
void host_random(kp_dtype dtype, void *base, size_t n);

/* A device buffer with a same-sized host mirror. */
struct gpu_buf {
    kp_buffer *dev;
    void *host;
    size_t bytes;
};
void gpu_buf_alloc(struct gpu_buf *b, size_t bytes);
void gpu_buf_free(struct gpu_buf *b);
void gpu_buf_upload(struct gpu_buf *b);
/* Copies the device contents back into the host mirror and waits. */
void gpu_buf_download(struct gpu_buf *b);

/* A tensor over b with the given shape and strides (NULL strides =
 * contiguous) and offset in elements. */
kp_tensor gpu_tensor(struct gpu_buf *b, kp_dtype dtype, int rank, const int64_t *shape,
                     const int64_t *strides, int64_t offset);
/* Host element offset of linear index i (row-major over t's shape). */
size_t tensor_offset(const kp_tensor *t, uint64_t i);
uint64_t tensor_numel(const kp_tensor *t);
/* Elements a buffer must hold for every element of t (offset + 1 when t is
 * empty). */
uint64_t tensor_extent(const kp_tensor *t);
/* Strides from a case table, where all zeros means contiguous: NULL then,
 * as gpu_tensor takes it. */
const int64_t *case_strides(const int64_t *strides, int rank);

#define CK_OK(call)                                                                  \
    do {                                                                             \
        kp_status st_ = (call);                                                      \
        ck_assert_msg(st_ == KP_OK, "%s -> %s: %s", #call, kp_status_string(st_),    \
                      kp_last_error_message());                                      \
    } while (0)

#endif
