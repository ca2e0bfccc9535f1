/* Descriptors of the kernel modules embedded in the library. The build
 * (kernels/embed_module.py) generates one per kernels/<module>.cu. */
#ifndef KP_MODULE_DESC_H
#define KP_MODULE_DESC_H

#include <stddef.h>
#include "kernelpack/modules.h"
#include "kp_module_ids.h"

struct kp_code_object {
    kp_code_format format;
    const char *archs;           /* comma list: sm_80,compute_90 / gfx900,gfx90a */
    const unsigned char *data;
    size_t size;
};

struct kp_module_desc {
    const char *name;
    enum kp_module_id id;
    const struct kp_code_object *objects;
    size_t object_count;
    const char *const *kernels;  /* sorted by strcmp, read from the compiled code */
    size_t kernel_count;
    const kp_kernel_resources *resources;  /* per target, then per kernel; may be NULL */
    size_t resource_count;
};

extern const struct kp_module_desc *const kp_builtin_modules[KP_MODULE_COUNT];

#endif
