#include <stdio.h>

#include "kernel_families.h"

const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT] = {
    [KP_KF_AFFINE] = {KP_MODULE_AFFINE, "affine_%s", KP_SUFFIX_DTYPES},
    [KP_KF_AFFINE_STRIDED] = {KP_MODULE_AFFINE, "affine_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_FILL] = {KP_MODULE_FILL, "fill_%s", KP_SUFFIX_SIZES},
    [KP_KF_FILL_STRIDED] = {KP_MODULE_FILL, "fill_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY_STRIDED] = {KP_MODULE_FILL, "copy_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY2D] = {KP_MODULE_FILL, "copy2d_%s", KP_SUFFIX_SIZES},
    [KP_KF_TRANSPOSE2D] = {KP_MODULE_FILL, "transpose2d_%s", KP_SUFFIX_SIZES},
    [KP_KF_BINARY_ADD] = {KP_MODULE_BINARY, "add_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_ADD_STRIDED] = {KP_MODULE_BINARY, "add_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_SUB] = {KP_MODULE_BINARY, "sub_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_SUB_STRIDED] = {KP_MODULE_BINARY, "sub_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MUL] = {KP_MODULE_BINARY, "mul_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MUL_STRIDED] = {KP_MODULE_BINARY, "mul_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_DIV] = {KP_MODULE_BINARY, "div_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_DIV_STRIDED] = {KP_MODULE_BINARY, "div_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MINIMUM] = {KP_MODULE_BINARY, "minimum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MINIMUM_STRIDED] = {KP_MODULE_BINARY, "minimum_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MAXIMUM] = {KP_MODULE_BINARY, "maximum_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_MAXIMUM_STRIDED] = {KP_MODULE_BINARY, "maximum_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_EQ] = {KP_MODULE_BINARY, "eq_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_EQ_STRIDED] = {KP_MODULE_BINARY, "eq_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_NE] = {KP_MODULE_BINARY, "ne_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_NE_STRIDED] = {KP_MODULE_BINARY, "ne_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_LT] = {KP_MODULE_BINARY, "lt_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_LT_STRIDED] = {KP_MODULE_BINARY, "lt_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_LE] = {KP_MODULE_BINARY, "le_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_LE_STRIDED] = {KP_MODULE_BINARY, "le_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_GT] = {KP_MODULE_BINARY, "gt_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_GT_STRIDED] = {KP_MODULE_BINARY, "gt_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_GE] = {KP_MODULE_BINARY, "ge_%s", KP_SUFFIX_DTYPES},
    [KP_KF_BINARY_GE_STRIDED] = {KP_MODULE_BINARY, "ge_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_U8] = {KP_MODULE_TERNARY, "where_u8_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_STRIDED_U8] = {KP_MODULE_TERNARY, "where_strided_u8_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_U32] = {KP_MODULE_TERNARY, "where_u32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_STRIDED_U32] = {KP_MODULE_TERNARY, "where_strided_u32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_I64] = {KP_MODULE_TERNARY, "where_i64_%s", KP_SUFFIX_DTYPES},
    [KP_KF_WHERE_STRIDED_I64] = {KP_MODULE_TERNARY, "where_strided_i64_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_F32] = {KP_MODULE_CAST, "cast_f32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_F64] = {KP_MODULE_CAST, "cast_f64_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_F16] = {KP_MODULE_CAST, "cast_f16_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_BF16] = {KP_MODULE_CAST, "cast_bf16_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_U8] = {KP_MODULE_CAST, "cast_u8_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_U32] = {KP_MODULE_CAST, "cast_u32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_I64] = {KP_MODULE_CAST, "cast_i64_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_F32] = {KP_MODULE_CAST, "cast_strided_f32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_F64] = {KP_MODULE_CAST, "cast_strided_f64_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_F16] = {KP_MODULE_CAST, "cast_strided_f16_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_BF16] = {KP_MODULE_CAST, "cast_strided_bf16_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_U8] = {KP_MODULE_CAST, "cast_strided_u8_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_U32] = {KP_MODULE_CAST, "cast_strided_u32_%s", KP_SUFFIX_DTYPES},
    [KP_KF_CAST_STRIDED_I64] = {KP_MODULE_CAST, "cast_strided_i64_%s", KP_SUFFIX_DTYPES},
    /* "<op>_%s" and "<op>_strided_%s" for each op of kp_unary_ops.h */
#define KP_UNARY_FAMILY_ROWS(ID, name, set)                                              \
    [KP_KF_UNARY_##ID] = {KP_MODULE_UNARY, #name "_%s", KP_SUFFIX_##set},                 \
    [KP_KF_UNARY_##ID##_STRIDED] = {KP_MODULE_UNARY, #name "_strided_%s", KP_SUFFIX_##set},
    KP_UNARY_OPS(KP_UNARY_FAMILY_ROWS)
#undef KP_UNARY_FAMILY_ROWS
};

static const char *const size_suffixes[] = {"x8", "x16", "x32", "x64"};

/* The sets that hold only some of the dtypes, in kp_dtype order. */
static const kp_dtype float_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
static const kp_dtype signed_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                         KP_DTYPE_I64};

static bool dtype_subset(enum kp_suffix_set set, const kp_dtype **dtypes, size_t *count)
{
    switch (set) {
    case KP_SUFFIX_FLOATS:
        *dtypes = float_dtypes;
        *count = sizeof(float_dtypes) / sizeof(float_dtypes[0]);
        return true;
    case KP_SUFFIX_SIGNED:
        *dtypes = signed_dtypes;
        *count = sizeof(signed_dtypes) / sizeof(signed_dtypes[0]);
        return true;
    default:
        return false;
    }
}

const char *kp_suffix(enum kp_suffix_set set, size_t index)
{
    const kp_dtype *dtypes;
    size_t count;
    if (set == KP_SUFFIX_DTYPES)
        return index < KP_DTYPE_COUNT ? kp_dtype_name((kp_dtype)index) : NULL;
    if (set == KP_SUFFIX_SIZES)
        return index < 4 ? size_suffixes[index] : NULL;
    if (dtype_subset(set, &dtypes, &count))
        return index < count ? kp_dtype_name(dtypes[index]) : NULL;
    return NULL;
}

const char *kp_suffix_for(enum kp_suffix_set set, kp_dtype dtype)
{
    const kp_dtype *dtypes;
    size_t count;
    if ((unsigned)dtype >= KP_DTYPE_COUNT)
        return NULL;
    if (set == KP_SUFFIX_DTYPES)
        return kp_dtype_name(dtype);
    if (dtype_subset(set, &dtypes, &count)) {
        for (size_t i = 0; i < count; i++)
            if (dtypes[i] == dtype)
                return kp_dtype_name(dtype);
        return NULL;
    }
    switch (kp_dtype_size(dtype)) {
    case 1: return size_suffixes[0];
    case 2: return size_suffixes[1];
    case 4: return size_suffixes[2];
    default: return size_suffixes[3];
    }
}

bool kp_family_supports(enum kp_family_id family, kp_dtype dtype)
{
    return kp_suffix_for(kp_kernel_families[family].suffixes, dtype) != NULL;
}

void kp_kernel_name(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype dtype)
{
    const struct kp_kernel_family *f = &kp_kernel_families[family];
    const char *suffix = kp_suffix_for(f->suffixes, dtype);
    buf[0] = '\0';
    if (suffix)
        snprintf(buf, KP_KERNEL_NAME_MAX, f->pattern, suffix);
}

kp_status kp_launch_family(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                           const struct kp_launch_dims *dims, void **args)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_kernel_name(name, family, dtype);
    if (!name[0])
        return kp_fail(KP_ERR_INTERNAL, "kernel family %s has no kernel for %s",
                       kp_kernel_families[family].pattern, kp_dtype_name(dtype));
    return kp_launch(stream, kp_kernel_families[family].module, name, dims, args);
}
