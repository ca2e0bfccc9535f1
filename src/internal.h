/* Private declarations shared by the front-end files. */
#ifndef KP_INTERNAL_H
#define KP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "kernelpack/kernelpack.h"
#include "backend.h"
#include "kp_kernel_abi.h"
#include "module_desc.h"

#if defined(__GNUC__)
#define KP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define KP_PRINTF(a, b)
#endif

/* ---- errors and logging (error.c) */
/* Records `status` with a formatted detail message for this thread, logs it,
 * and returns status, so callers write `return kp_fail(...)`. */
kp_status kp_fail(kp_status status, const char *fmt, ...) KP_PRINTF(2, 3);
void kp_log(kp_log_level level, const char *fmt, ...) KP_PRINTF(2, 3);

/* ---- backend (backend_select.c) */
/* The active backend after a successful one-time init, or NULL with the
 * init failure recorded as this thread's error (*status set). */
const struct kp_backend *kp_backend_get(kp_status *status);
/* Tests only: use `backend` instead of the built one (NULL restores it). */
void kp_backend_override(const struct kp_backend *backend);

/* ---- objects */
struct kp_module_slot {
    atomic_int ready;    /* 1 once module and functions are valid */
    void *module;
    void **functions;    /* one per descriptor kernel, same order */
};

/* A kernel of a user module, loaded on one device (user_modules.c). */
struct kp_kernel {
    kp_device *device;
    const kp_module_desc *module;
    const kp_kernel_desc *desc;
    void *function;
    int max_threads;     /* what the loaded code allows per block */
    int static_shared;   /* bytes of static shared memory (LDS) */
    int cluster_blocks;  /* blocks of the cluster it must be launched in (1: none) */
};

/* A user module loaded on a device; the device keeps a list of them. */
struct kp_user_module {
    const kp_module_desc *desc;
    void *module;
    struct kp_kernel *kernels;   /* one per descriptor kernel, same order */
    struct kp_user_module *next;
};

struct kp_device {
    const struct kp_backend *be;
    void *native;
    kp_device_info info;
    struct kp_device_limits limits;
    pthread_mutex_t cache_lock;  /* guards loading: built-in slots and user_modules */
    struct kp_module_slot modules[KP_MODULE_COUNT];
    struct kp_user_module *user_modules;
};

struct kp_buffer {
    kp_device *device;
    void *ptr;
    size_t size;
    bool owned;
};

struct kp_stream {
    kp_device *device;
    void *native;
    bool owned;          /* false for a wrapped native stream: never destroyed here */
    pthread_mutex_t scratch_lock;
    void *scratch;       /* KP_STREAM_SCRATCH_BYTES of device memory, or NULL until first use */
};

struct kp_event {
    kp_device *device;
    void *native;
};

/* ---- stream scratch (stream.c) */
/* Device memory an op may use between its own launches (e.g. the partial
 * results of a two-pass reduction). */
#define KP_STREAM_SCRATCH_BYTES ((size_t)1 << 20)
/* Locks the stream's scratch area for one op, allocating it on first use.
 * The op queues all its launches that use it, then releases it. Work on a
 * stream runs in queue order, so the next op's use starts after this one's
 * ends; the lock keeps two threads' launches on one stream from
 * interleaving. On failure nothing is locked. */
kp_status kp_stream_scratch_acquire(kp_stream *stream, void **scratch);
void kp_stream_scratch_release(kp_stream *stream);

/* ---- code object selection (arch_select.c) */
/* True if `obj` can run on a device whose arch string is `arch`
 * ("sm_90", "gfx90a:sramecc+:xnack-"). */
bool kp_code_object_runs_on(const struct kp_code_object *obj, const char *arch);
/* The first code object of `desc` that runs on `arch`, or NULL. */
const struct kp_code_object *kp_select_code_object(const struct kp_module_desc *desc,
                                                   const char *arch);

/* ---- module cache (module_cache.c) */
/* The function handle of `kernel` in module `id` on `dev`, loading the module
 * on first use (once per device, thread-safe). */
kp_status kp_module_function(kp_device *dev, enum kp_module_id id, const char *kernel, void **fn);
kp_status kp_module_load(kp_device *dev, enum kp_module_id id);
/* Loads the code of `desc` that runs on `dev` and resolves every kernel
 * (functions: desc->kernel_count entries); the caller holds dev->cache_lock. */
kp_status kp_module_load_code(kp_device *dev, const struct kp_module_desc *desc, void **module,
                              void **functions);
void kp_module_cache_release(kp_device *dev);
/* Index of `kernel` in desc->kernels, or -1. */
long kp_module_kernel_index(const struct kp_module_desc *desc, const char *kernel);

/* ---- user modules (user_modules.c) */
void kp_user_modules_release(kp_device *dev);

/* ---- launching (launch.c) */
/* Grid for `items` independent work items in blocks of `block` threads,
 * capped to what keeps every multiprocessor busy (grid-stride loops do the rest). */
struct kp_launch_dims kp_launch_1d(const kp_device *dev, uint64_t items, unsigned block);
/* `blocks` blocks of `block` threads, at least 1 and at most what keeps
 * grid x block below 2^31 (HIP takes the global size as 32 bits); the
 * kernels' grid-stride loops take what lies beyond. */
unsigned kp_grid_blocks(uint64_t blocks, unsigned block);
/* Grid for the contiguous elementwise kernels over n elements, `lanes` of
 * them a thread (the kernel's vector: 16 bytes of the operand it sizes
 * vectors by), every thread in the grid (up to kp_grid_blocks' cap; the
 * kernels' grid-stride loops take what lies beyond). */
struct kp_launch_dims kp_launch_elementwise(uint64_t n, unsigned lanes);
/* Grid and block for a strided kernel over `layout` (rows of its innermost
 * dimension, see kp_for_each_strided in kernels/common). The kernel's first
 * `vector_operands` operands are the ones its vectorised row path reads and
 * writes (0: the kernel has no such path), and `widest` is the size in
 * bytes of the widest of their elements. */
struct kp_launch_dims kp_launch_strided(const kp_device *dev, const struct kp_strided *layout,
                                        int vector_operands, size_t widest);
/* kp_launch_strided with at most blocks_per_sm blocks a multiprocessor
 * (kp_launch_strided: 64), or with 0 as many as the grid takes. */
struct kp_launch_dims kp_launch_strided_capped(const kp_device *dev, const struct kp_strided *layout,
                                               int vector_operands, size_t widest, unsigned blocks_per_sm);
kp_status kp_launch(kp_stream *stream, enum kp_module_id id, const char *kernel,
                    const struct kp_launch_dims *dims, void **args);
/* The blocks of the cluster the loaded code of a built-in kernel must run in
 * (1: none) and its static shared memory in bytes, loading its module if
 * needed. */
kp_status kp_kernel_cluster_limits(kp_device *dev, enum kp_module_id id, const char *kernel, int *blocks,
                                   int *static_shared);
/* The most threads a block of the loaded code of a built-in kernel may have
 * (its launch bound where it was built with one), loading its module if
 * needed. */
kp_status kp_kernel_max_threads(kp_device *dev, enum kp_module_id id, const char *kernel, int *threads);

/* ---- argument checks (validate.c) */
#define KP_CHECK_NOT_NULL(p)                                                          \
    do {                                                                              \
        if (!(p)) return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", __func__, #p); \
    } while (0)

kp_status kp_check_stream(const char *fn, const kp_stream *stream);
kp_status kp_check_buffer(const char *fn, const char *what, const kp_buffer *buf,
                          const kp_device *dev);
kp_status kp_check_dtype(const char *fn, const char *what, kp_dtype dtype);
/* Checks a tensor argument fully: buffer on `dev`, dtype, rank, shape,
 * strides, no overflow, every element inside the buffer. *numel receives the
 * element count. */
kp_status kp_check_tensor(const char *fn, const char *what, const kp_tensor *t,
                          const kp_device *dev, uint64_t *numel);
/* The checks a dst/src op starts with: the stream, then dst and src as
 * tensors on its device; *n_dst and *n_src receive their element counts. */
kp_status kp_check_dst_src(const char *fn, const kp_stream *stream, const kp_tensor *dst,
                           const kp_tensor *src, uint64_t *n_dst, uint64_t *n_src);
/* Tensor argument `what` has src's dtype. */
kp_status kp_check_dtype_as_src(const char *fn, const char *what, const kp_tensor *t,
                                kp_dtype src_dtype);
/* dst and src have the same dtype. */
kp_status kp_check_same_dtype(const char *fn, const kp_tensor *dst, const kp_tensor *src);
kp_status kp_check_same_shape(const char *fn, const kp_tensor *dst, const kp_tensor *src);
/* An output must not write one element twice (no stride-0 or overlapping dims). */
kp_status kp_check_no_self_overlap(const char *fn, const char *what, const kp_tensor *t);
/* dst and src must not overlap unless they are the very same view (if allowed). */
kp_status kp_check_no_overlap(const char *fn, const kp_tensor *dst, const kp_tensor *src,
                              bool same_view_ok);
/* The same for an input named `what` ("lhs", "cond") in the message. */
kp_status kp_check_no_overlap_with(const char *fn, const kp_tensor *dst, const char *what,
                                   const kp_tensor *src, bool same_view_ok);
/* Input `what` has exactly dst's shape (rank and sizes); the message shows both. */
kp_status kp_check_shape_of(const char *fn, const kp_tensor *dst, const char *what,
                            const kp_tensor *t);
/* Writes "[2, 8, 6, 6]" into buf (size bytes at most) and returns buf: the
 * form every shape message uses. */
const char *kp_format_shape(char *buf, size_t size, int rank, const int64_t *shape);
/* Tensor `what` has exactly this rank and shape; the message shows both. */
kp_status kp_check_shape_is(const char *fn, const char *what, const kp_tensor *t, int rank,
                            const int64_t *shape);
/* The byte ranges of a and b (named what_a, what_b in the message) must not
 * overlap; an empty tensor overlaps nothing. */
kp_status kp_check_disjoint(const char *fn, const char *what_a, const kp_tensor *a,
                            const char *what_b, const kp_tensor *b);

/* ---- layouts (layout.c) */
bool kp_layout_is_contiguous(const kp_layout *l);
/* Merges the dims of `count` same-shape layouts into `out` (dims of size 1
 * dropped, neighbours merged where every operand allows). */
void kp_layout_merge(int count, const kp_layout *const layouts[], struct kp_strided *out);
/* Byte address of a tensor's first element. */
void *kp_tensor_base(const kp_tensor *t);

#endif
