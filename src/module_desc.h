/* The kernel modules embedded in the library. The build
 * (kernels/embed_module.py) generates one kp_module_desc per
 * kernels/<module>.cu, with the structs users' modules use too
 * (include/kernelpack/user_kernels.h). */
#ifndef KP_MODULE_DESC_H
#define KP_MODULE_DESC_H

#include "kernelpack/user_kernels.h"
#include "kp_module_ids.h"

extern const struct kp_module_desc *const kp_builtin_modules[KP_MODULE_COUNT];

#endif
