/* kernelpack: the kernel modules built into the library (introspection). */
#ifndef KERNELPACK_MODULES_H
#define KERNELPACK_MODULES_H

#include <stddef.h>
#include <stdint.h>
#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum kp_code_format {
    KP_CODE_FATBIN = 0,    /* NVIDIA fat binary: SASS per arch + PTX */
    KP_CODE_PTX,           /* NVIDIA PTX text, JIT-compiled at load */
    KP_CODE_HSACO_BUNDLE   /* AMD clang offload bundle of HSACO per gfx target */
} kp_code_format;

/* "fatbin", "ptx", "hsaco-bundle"; NULL for an unknown value. */
KP_API const char *kp_code_format_name(kp_code_format format);

typedef struct kp_module_info {
    const char *name;            /* "affine" */
    size_t kernel_count;
    size_t code_object_count;
} kp_module_info;

typedef struct kp_code_object_info {
    kp_code_format format;
    const char *archs;           /* "sm_80,sm_90,compute_90" or "gfx90a,gfx1030" */
    size_t bytes;
} kp_code_object_info;

/* What one kernel of a module needs on one target, read from the compiled
 * code object at build time (nothing is measured on a device). */
typedef struct kp_kernel_resources {
    const char *kernel;          /* "affine_f32" */
    const char *target;          /* "sm_90", "gfx90a" */
    int32_t registers;           /* per thread: registers (NVIDIA) or VGPRs (AMD) */
    int32_t sgprs;               /* per wave: SGPRs (AMD); 0 on NVIDIA */
    int32_t local_bytes;         /* per thread: stack / scratch memory, spills included */
    int32_t spill_bytes;         /* per thread: bytes of spill stores (NVIDIA: as ptxas
                                  * reports them; AMD: 4 per VGPR spilled to scratch) */
    int32_t shared_bytes;        /* per block: static shared memory (NVIDIA) / LDS (AMD) */
    int32_t max_threads;         /* per block: the most the kernel can be launched with */
    int32_t wave_size;           /* threads per warp / wavefront */
} kp_kernel_resources;

KP_API size_t kp_module_count(void);
/* Module `index` < kp_module_count(). */
KP_API kp_status kp_module_get_info(size_t index, kp_module_info *info);
KP_API kp_status kp_module_get_code_object(size_t index, size_t object, kp_code_object_info *info);
/* Name of kernel `kernel` of module `index`, or NULL if out of range. */
KP_API const char *kp_module_kernel_name(size_t index, size_t kernel);
/* Rows of module `index`'s resource table, one per kernel and compiled
 * target (none for PTX, which the driver compiles at load time). */
KP_API size_t kp_module_resource_count(size_t index);
KP_API kp_status kp_module_get_resources(size_t index, size_t row, kp_kernel_resources *out);

#ifdef __cplusplus
}
#endif
#endif
