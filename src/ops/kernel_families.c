#include <stdio.h>

#include "kernel_families.h"

const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT] = {
    [KP_KF_AFFINE] = {KP_MODULE_AFFINE, "affine_%s", KP_SUFFIX_DTYPES},
    [KP_KF_AFFINE_STRIDED] = {KP_MODULE_AFFINE, "affine_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_FILL] = {KP_MODULE_FILL, "fill_%s", KP_SUFFIX_SIZES},
    [KP_KF_FILL_STRIDED] = {KP_MODULE_FILL, "fill_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY_STRIDED] = {KP_MODULE_FILL, "copy_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY2D] = {KP_MODULE_FILL, "copy2d_%s", KP_SUFFIX_SIZES},
    [KP_KF_REDUCE_SUM] = {KP_MODULE_REDUCE, "reduce_sum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_STRIDED_SUM] = {KP_MODULE_REDUCE, "reduce_strided_sum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_COLS_SUM] = {KP_MODULE_REDUCE, "reduce_cols_sum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_FINAL_SUM] = {KP_MODULE_REDUCE, "reduce_final_sum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_MAX] = {KP_MODULE_REDUCE, "reduce_max_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_STRIDED_MAX] = {KP_MODULE_REDUCE, "reduce_strided_max_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_COLS_MAX] = {KP_MODULE_REDUCE, "reduce_cols_max_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_FINAL_MAX] = {KP_MODULE_REDUCE, "reduce_final_max_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_MIN] = {KP_MODULE_REDUCE, "reduce_min_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_STRIDED_MIN] = {KP_MODULE_REDUCE, "reduce_strided_min_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_COLS_MIN] = {KP_MODULE_REDUCE, "reduce_cols_min_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_FINAL_MIN] = {KP_MODULE_REDUCE, "reduce_final_min_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_ARGMAX] = {KP_MODULE_REDUCE, "reduce_argmax_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_STRIDED_ARGMAX] = {KP_MODULE_REDUCE, "reduce_strided_argmax_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_COLS_ARGMAX] = {KP_MODULE_REDUCE, "reduce_cols_argmax_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_FINAL_ARGMAX] = {KP_MODULE_REDUCE, "reduce_final_argmax_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_ARGMIN] = {KP_MODULE_REDUCE, "reduce_argmin_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_STRIDED_ARGMIN] = {KP_MODULE_REDUCE, "reduce_strided_argmin_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_COLS_ARGMIN] = {KP_MODULE_REDUCE, "reduce_cols_argmin_%s", KP_SUFFIX_DTYPES},
    [KP_KF_REDUCE_FINAL_ARGMIN] = {KP_MODULE_REDUCE, "reduce_final_argmin_%s", KP_SUFFIX_DTYPES},
    [KP_KF_SOFTMAX] = {KP_MODULE_REDUCE, "softmax_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_STRIDED] = {KP_MODULE_REDUCE, "softmax_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM] = {KP_MODULE_REDUCE, "rmsnorm_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_STRIDED] = {KP_MODULE_REDUCE, "rmsnorm_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM] = {KP_MODULE_REDUCE, "layernorm_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_STRIDED] = {KP_MODULE_REDUCE, "layernorm_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_ROPE] = {KP_MODULE_REDUCE, "rope_%s", KP_SUFFIX_FLOATS},
};

static const char *const size_suffixes[] = {"x8", "x16", "x32", "x64"};

const char *kp_suffix(enum kp_suffix_set set, size_t index)
{
    if (set == KP_SUFFIX_DTYPES)
        return index < KP_DTYPE_COUNT ? kp_dtype_name((kp_dtype)index) : NULL;
    if (set == KP_SUFFIX_FLOATS)
        return index < 4 ? kp_dtype_name((kp_dtype)index) : NULL;  /* f32 f64 f16 bf16 come first */
    return index < 4 ? size_suffixes[index] : NULL;
}

const char *kp_suffix_for(enum kp_suffix_set set, kp_dtype dtype)
{
    if (set == KP_SUFFIX_DTYPES || set == KP_SUFFIX_FLOATS)
        return kp_dtype_name(dtype);
    switch (kp_dtype_size(dtype)) {
    case 1: return size_suffixes[0];
    case 2: return size_suffixes[1];
    case 4: return size_suffixes[2];
    default: return size_suffixes[3];
    }
}

void kp_kernel_name(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype dtype)
{
    const struct kp_kernel_family *f = &kp_kernel_families[family];
    snprintf(buf, KP_KERNEL_NAME_MAX, f->pattern, kp_suffix_for(f->suffixes, dtype));
}

kp_status kp_launch_family(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                           const struct kp_launch_dims *dims, void **args)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_kernel_name(name, family, dtype);
    return kp_launch(stream, kp_kernel_families[family].module, name, dims, args);
}
