#include <stdio.h>

#include "kernel_families.h"

const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT] = {
    [KP_KF_AFFINE] = {KP_MODULE_AFFINE, "affine_%s", KP_SUFFIX_DTYPES},
    [KP_KF_AFFINE_STRIDED] = {KP_MODULE_AFFINE, "affine_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_FILL] = {KP_MODULE_FILL, "fill_%s", KP_SUFFIX_SIZES},
    [KP_KF_FILL_STRIDED] = {KP_MODULE_FILL, "fill_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY_STRIDED] = {KP_MODULE_FILL, "copy_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY2D] = {KP_MODULE_FILL, "copy2d_%s", KP_SUFFIX_SIZES},
    [KP_KF_INDEX_SELECT] = {KP_MODULE_INDEXING, "index_select_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_GATHER] = {KP_MODULE_INDEXING, "gather_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_SCATTER] = {KP_MODULE_INDEXING, "scatter_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_SCATTER_ADD] = {KP_MODULE_INDEXING, "scatter_add_%s", KP_SUFFIX_IDS_DTYPES},
    [KP_KF_ARGSORT_ROWS] = {KP_MODULE_SORT, "argsort_rows_%s", KP_SUFFIX_DTYPES},
    [KP_KF_ARGSORT_TILES] = {KP_MODULE_SORT, "argsort_tiles_%s", KP_SUFFIX_DTYPES},
    [KP_KF_ARGSORT_MERGE] = {KP_MODULE_SORT, "argsort_merge_%s", KP_SUFFIX_SIZES},
    [KP_KF_ARGSORT_MERGE_FINAL] = {KP_MODULE_SORT, "argsort_merge_final_%s", KP_SUFFIX_SIZES},
};

static const char *const size_suffixes[] = {"x8", "x16", "x32", "x64"};

#define KP_IDS_SIZES(I) I "_x8", I "_x16", I "_x32", I "_x64"
#define KP_IDS_DTYPES(I) I "_f32", I "_f64", I "_f16", I "_bf16", I "_u8", I "_u32", I "_i64"
/* Ordered ids-major: u8, u32, i64, then the sizes or dtypes in their order. */
static const char *const ids_size_suffixes[] = {KP_IDS_SIZES("u8"), KP_IDS_SIZES("u32"),
                                                KP_IDS_SIZES("i64")};
static const char *const ids_dtype_suffixes[] = {KP_IDS_DTYPES("u8"), KP_IDS_DTYPES("u32"),
                                                 KP_IDS_DTYPES("i64")};
#define KP_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static size_t size_index(kp_dtype dtype)
{
    switch (kp_dtype_size(dtype)) {
    case 1: return 0;
    case 2: return 1;
    case 4: return 2;
    default: return 3;
    }
}

static size_t ids_index(kp_dtype ids)
{
    return ids == KP_DTYPE_U8 ? 0 : ids == KP_DTYPE_U32 ? 1 : 2;
}

const char *kp_suffix(enum kp_suffix_set set, size_t index)
{
    switch (set) {
    case KP_SUFFIX_DTYPES:
        return index < KP_DTYPE_COUNT ? kp_dtype_name((kp_dtype)index) : NULL;
    case KP_SUFFIX_SIZES:
        return index < KP_COUNT_OF(size_suffixes) ? size_suffixes[index] : NULL;
    case KP_SUFFIX_IDS_SIZES:
        return index < KP_COUNT_OF(ids_size_suffixes) ? ids_size_suffixes[index] : NULL;
    case KP_SUFFIX_IDS_DTYPES:
        return index < KP_COUNT_OF(ids_dtype_suffixes) ? ids_dtype_suffixes[index] : NULL;
    }
    return NULL;
}

const char *kp_suffix_for(enum kp_suffix_set set, kp_dtype dtype)
{
    if (set == KP_SUFFIX_DTYPES)
        return kp_dtype_name(dtype);
    return size_suffixes[size_index(dtype)];
}

const char *kp_suffix_for_ids(enum kp_suffix_set set, kp_dtype ids, kp_dtype dtype)
{
    if (set == KP_SUFFIX_IDS_SIZES)
        return ids_size_suffixes[ids_index(ids) * KP_COUNT_OF(size_suffixes) + size_index(dtype)];
    return ids_dtype_suffixes[ids_index(ids) * KP_DTYPE_COUNT + (size_t)dtype];
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

void kp_kernel_name_ids(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype ids,
                        kp_dtype dtype)
{
    const struct kp_kernel_family *f = &kp_kernel_families[family];
    snprintf(buf, KP_KERNEL_NAME_MAX, f->pattern, kp_suffix_for_ids(f->suffixes, ids, dtype));
}

kp_status kp_launch_family_ids(kp_stream *stream, enum kp_family_id family, kp_dtype ids,
                               kp_dtype dtype, const struct kp_launch_dims *dims, void **args)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_kernel_name_ids(name, family, ids, dtype);
    return kp_launch(stream, kp_kernel_families[family].module, name, dims, args);
}
