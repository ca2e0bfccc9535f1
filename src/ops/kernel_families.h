/* Every kernel a launcher may ask for, as a name pattern plus the suffixes
 * it comes in. Launchers build names only through kp_kernel_name(), and the
 * unit tests check every (family, suffix) against the compiled modules, so a
 * launcher cannot ask for a kernel that was not built. */
#ifndef KP_KERNEL_FAMILIES_H
#define KP_KERNEL_FAMILIES_H

#include "internal.h"

enum kp_suffix_set {
    KP_SUFFIX_DTYPES,   /* f32 f64 f16 bf16 u8 u32 i64 */
    KP_SUFFIX_SIZES,    /* x8 x16 x32 x64: ops that only move bits */
    KP_SUFFIX_FLOATS,   /* f32 f64 f16 bf16 */
};

struct kp_kernel_family {
    enum kp_module_id module;
    const char *pattern;          /* one %s, replaced by the suffix */
    enum kp_suffix_set suffixes;
};

enum kp_family_id {
    KP_KF_AFFINE,
    KP_KF_AFFINE_STRIDED,
    KP_KF_FILL,
    KP_KF_FILL_STRIDED,
    KP_KF_COPY_STRIDED,
    KP_KF_COPY2D,
    KP_KF_REDUCE_SUM,
    KP_KF_REDUCE_STRIDED_SUM,
    KP_KF_REDUCE_COLS_SUM,
    KP_KF_REDUCE_FINAL_SUM,
    KP_KF_REDUCE_MAX,
    KP_KF_REDUCE_STRIDED_MAX,
    KP_KF_REDUCE_COLS_MAX,
    KP_KF_REDUCE_FINAL_MAX,
    KP_KF_REDUCE_MIN,
    KP_KF_REDUCE_STRIDED_MIN,
    KP_KF_REDUCE_COLS_MIN,
    KP_KF_REDUCE_FINAL_MIN,
    KP_KF_REDUCE_ARGMAX,
    KP_KF_REDUCE_STRIDED_ARGMAX,
    KP_KF_REDUCE_COLS_ARGMAX,
    KP_KF_REDUCE_FINAL_ARGMAX,
    KP_KF_REDUCE_ARGMIN,
    KP_KF_REDUCE_STRIDED_ARGMIN,
    KP_KF_REDUCE_COLS_ARGMIN,
    KP_KF_REDUCE_FINAL_ARGMIN,
    KP_KF_SOFTMAX,
    KP_KF_SOFTMAX_STRIDED,
    KP_KF_RMSNORM,
    KP_KF_RMSNORM_STRIDED,
    KP_KF_LAYERNORM,
    KP_KF_LAYERNORM_STRIDED,
    KP_KF_ROPE,
    KP_KF_COUNT
};

extern const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT];

#define KP_KERNEL_NAME_MAX 64

/* Suffix `index` of a set, or NULL past its end. */
const char *kp_suffix(enum kp_suffix_set set, size_t index);
/* Suffix for an element of `dtype` in `set` ("bf16", or "x16"). */
const char *kp_suffix_for(enum kp_suffix_set set, kp_dtype dtype);
/* Writes the kernel name of `family` for `dtype` into buf. */
void kp_kernel_name(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype dtype);
/* kp_launch() for the kernel of `family` and `dtype`. */
kp_status kp_launch_family(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                           const struct kp_launch_dims *dims, void **args);

#endif
