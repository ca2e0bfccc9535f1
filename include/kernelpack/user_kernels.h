/* kernelpack: your own kernels, built the way kernelpack builds its own.
 *
 * `kp-build-module` (installed with the library; see the README's "Your own
 * kernels") compiles a .cu file for every GPU target of the build and writes a
 * C file defining a `const kp_module_desc`: the code object(s) and the table
 * of kernels read back from them. Link that file into your program and:
 *
 *     extern const kp_module_desc my_kernels;          // from the generated .c
 *     kp_kernel *scale;
 *     kp_device_get_kernel(dev, &my_kernels, "scale_f32", &scale);
 *     kp_launch_config cfg = {{blocks, 1, 1}, {256, 1, 1}, 0};
 *     kp_kernel_arg args[] = {kp_arg_buffer(out, 0), kp_arg_buffer(in, 0),
 *                             kp_arg_value(&alpha, sizeof(alpha)), kp_arg_value(&n, sizeof(n))};
 *     kp_kernel_launch(stream, scale, &cfg, args, 4);
 *
 * A module is loaded once per device on first use (thread-safe, like the
 * built-in modules) and stays loaded until the device is closed; kernel
 * handles stay valid as long.
 */
#ifndef KERNELPACK_USER_KERNELS_H
#define KERNELPACK_USER_KERNELS_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"
#include "device.h"
#include "modules.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- module descriptors (written by kp-build-module; the built-in modules
 * use the same structs) */

/* The layout kp-build-module writes; a descriptor of another version is
 * rejected with KP_ERR_INVALID_ARGUMENT. */
#define KP_MODULE_DESC_VERSION 1u

typedef struct kp_code_object {
    kp_code_format format;
    const char *archs;             /* "sm_80,sm_90,compute_90" or "gfx90a,gfx1030" */
    const unsigned char *data;
    size_t size;
} kp_code_object;

typedef struct kp_kernel_desc {
    const char *name;              /* the extern "C" name of the __global__ function */
    uint32_t param_count;
    const uint32_t *param_sizes;   /* bytes of each parameter, in order */
} kp_kernel_desc;

typedef struct kp_module_desc {
    uint32_t version;              /* KP_MODULE_DESC_VERSION */
    const char *name;              /* the module's name, for messages */
    const kp_code_object *objects;
    size_t object_count;
    const kp_kernel_desc *kernels; /* sorted by strcmp of name, no duplicates */
    size_t kernel_count;
    const kp_kernel_resources *resources;  /* per target, then per kernel; may be NULL */
    size_t resource_count;
} kp_module_desc;

/* ---- loading and lookup */

typedef struct kp_kernel kp_kernel;

/* Checks `module` and loads it on `device` now (otherwise the first
 * kp_device_get_kernel does). Loading again is a no-op. Fails with
 * KP_ERR_NO_CODE_FOR_ARCH, naming the device's arch and the module's
 * targets, when no code object of the module runs on the device. */
KP_API kp_status kp_device_load_user_module(kp_device *device, const kp_module_desc *module);

/* The kernel `name` of `module` on `device`, loading the module if needed.
 * *out belongs to the device: valid until kp_device_close, never freed by
 * the caller. An unknown name is KP_ERR_INVALID_ARGUMENT; the message lists
 * the module's kernels. */
KP_API kp_status kp_device_get_kernel(kp_device *device, const kp_module_desc *module,
                                      const char *name, kp_kernel **out);

/* ---- launching */

typedef struct kp_launch_config {
    unsigned grid[3];              /* blocks in x, y, z: each >= 1 */
    unsigned block[3];             /* threads per block in x, y, z: each >= 1 */
    unsigned shared_bytes;         /* dynamic shared memory (LDS) per block: on CUDA up to
                                      the device's opt-in limit (227 KB on sm_90), not
                                      only the 48 KB a kernel gets without opting in */
} kp_launch_config;

/* One kernel argument: `size` bytes at `value`, or (when `buffer` is set) the
 * device address of `buffer` plus `offset`, checked to be on the stream's
 * device and inside the buffer. Make them with kp_arg_value/kp_arg_buffer. */
typedef struct kp_kernel_arg {
    const void *value;
    size_t size;
    const kp_buffer *buffer;
    size_t offset;
} kp_kernel_arg;

static inline kp_kernel_arg kp_arg_value(const void *value, size_t size)
{
    kp_kernel_arg a = {value, size, NULL, 0};
    return a;
}

static inline kp_kernel_arg kp_arg_buffer(const kp_buffer *buffer, size_t offset)
{
    kp_kernel_arg a = {NULL, sizeof(void *), buffer, offset};
    return a;
}

/* Queues `kernel` on `stream`. Everything is checked before anything is
 * queued: the stream and kernel belong to one device (else
 * KP_ERR_DEVICE_MISMATCH); the grid and block fit the device's limits and the
 * kernel's own thread limit, and grid x is a multiple of the cluster size a
 * kernel was built with (CUDA's __cluster_dims__, sm_90+); static plus
 * dynamic shared memory fits the device; `arg_count` equals the kernel's
 * parameter count and each argument's size equals its parameter's (read
 * from the compiled code); buffer arguments are on the stream's device with
 * offset <= their size. */
KP_API kp_status kp_kernel_launch(kp_stream *stream, const kp_kernel *kernel,
                                  const kp_launch_config *config, const kp_kernel_arg *args,
                                  size_t arg_count);

/* The kernel's name and parameter count, for messages and checks. */
KP_API const char *kp_kernel_get_name(const kp_kernel *kernel);
KP_API size_t kp_kernel_get_param_count(const kp_kernel *kernel);

#ifdef __cplusplus
}
#endif
#endif
