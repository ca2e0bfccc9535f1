#include <stdio.h>

#include "kernel_families.h"
#include "kp_quant_blocks.h"

const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT] = {
    [KP_KF_AFFINE] = {KP_MODULE_AFFINE, "affine_%s", KP_SUFFIX_DTYPES},
    [KP_KF_AFFINE_STRIDED] = {KP_MODULE_AFFINE, "affine_strided_%s", KP_SUFFIX_DTYPES},
    [KP_KF_FILL] = {KP_MODULE_FILL, "fill_%s", KP_SUFFIX_SIZES},
    [KP_KF_FILL_STRIDED] = {KP_MODULE_FILL, "fill_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY_STRIDED] = {KP_MODULE_FILL, "copy_strided_%s", KP_SUFFIX_SIZES},
    [KP_KF_COPY_STRIDED_ROWS] = {KP_MODULE_FILL, "copy_strided_rows_%s", KP_SUFFIX_SIZES},
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
#define KP_UNARY_FAMILY_ROWS(ID, name, set, v32, v16, v64)                               \
    [KP_KF_UNARY_##ID] = {KP_MODULE_UNARY, #name "_%s", KP_SUFFIX_##set},                 \
    [KP_KF_UNARY_##ID##_STRIDED] = {KP_MODULE_UNARY, #name "_strided_%s", KP_SUFFIX_##set},
    KP_UNARY_OPS(KP_UNARY_FAMILY_ROWS)
#undef KP_UNARY_FAMILY_ROWS
    [KP_KF_UNARY_POWF_F64MATH] = {KP_MODULE_UNARY, "powf_f64math_%s", KP_SUFFIX_F32},
    [KP_KF_COPY_ROWS] = {KP_MODULE_INDEXING, "copy_rows_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_ADD_ROWS] = {KP_MODULE_INDEXING, "add_rows_%s", KP_SUFFIX_IDS_DTYPES},
    [KP_KF_GATHER] = {KP_MODULE_INDEXING, "gather_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_SCATTER] = {KP_MODULE_INDEXING, "scatter_%s", KP_SUFFIX_IDS_SIZES},
    [KP_KF_SCATTER_ADD] = {KP_MODULE_INDEXING, "scatter_add_%s", KP_SUFFIX_IDS_DTYPES},
    [KP_KF_ARGSORT_ROWS] = {KP_MODULE_SORT, "argsort_rows_%s", KP_SUFFIX_DTYPES},
    [KP_KF_ARGSORT_ROWS_SHORT] = {KP_MODULE_SORT, "argsort_rows_short_%s", KP_SUFFIX_DTYPES},
    [KP_KF_ARGSORT_KEYS] = {KP_MODULE_SORT, "argsort_keys_%s", KP_SUFFIX_DTYPES},
    [KP_KF_ARGSORT_HIST] = {KP_MODULE_SORT, "argsort_hist_%s", KP_SUFFIX_SIZES},
    [KP_KF_ARGSORT_SCAN] = {KP_MODULE_SORT, "argsort_scan%s", KP_SUFFIX_NONE},
    [KP_KF_ARGSORT_SCATTER] = {KP_MODULE_SORT, "argsort_scatter_%s", KP_SUFFIX_SIZES},
    [KP_KF_ARGSORT_SCATTER_FINAL] = {KP_MODULE_SORT, "argsort_scatter_final_%s", KP_SUFFIX_SIZES},
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
    [KP_KF_SOFTMAX] = {KP_MODULE_ROWS, "softmax_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_EXACT] = {KP_MODULE_ROWS, "softmax_exact_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_STRIDED] = {KP_MODULE_ROWS, "softmax_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_STREAM] = {KP_MODULE_ROWS, "softmax_stream_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_SPLIT] = {KP_MODULE_ROWS, "softmax_split_%s", KP_SUFFIX_FLOATS},
    [KP_KF_SOFTMAX_CLUSTER] = {KP_MODULE_ROWS, "softmax_cluster_%s", KP_SUFFIX_F32},
    [KP_KF_SOFTMAX_STAGED] = {KP_MODULE_ROWS, "softmax_staged_%s", KP_SUFFIX_QFLOATS},
    [KP_KF_SOFTMAX_WHOLE] = {KP_MODULE_ROWS, "softmax_whole_%s", KP_SUFFIX_QFLOATS},
    [KP_KF_RMSNORM] = {KP_MODULE_ROWS, "rmsnorm_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_EXACT] = {KP_MODULE_ROWS, "rmsnorm_exact_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_STRIDED] = {KP_MODULE_ROWS, "rmsnorm_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_STREAM] = {KP_MODULE_ROWS, "rmsnorm_stream_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_SPLIT] = {KP_MODULE_ROWS, "rmsnorm_split_%s", KP_SUFFIX_FLOATS},
    [KP_KF_RMSNORM_CLUSTER] = {KP_MODULE_ROWS, "rmsnorm_cluster_%s", KP_SUFFIX_F32},
    [KP_KF_RMSNORM_STAGED] = {KP_MODULE_ROWS, "rmsnorm_staged_%s", KP_SUFFIX_QFLOATS},
    [KP_KF_RMSNORM_WHOLE] = {KP_MODULE_ROWS, "rmsnorm_whole_%s", KP_SUFFIX_HALVES},
    [KP_KF_LAYERNORM] = {KP_MODULE_ROWS, "layernorm_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_EXACT] = {KP_MODULE_ROWS, "layernorm_exact_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_STRIDED] = {KP_MODULE_ROWS, "layernorm_strided_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_STREAM] = {KP_MODULE_ROWS, "layernorm_stream_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_SPLIT] = {KP_MODULE_ROWS, "layernorm_split_%s", KP_SUFFIX_FLOATS},
    [KP_KF_LAYERNORM_CLUSTER] = {KP_MODULE_ROWS, "layernorm_cluster_%s", KP_SUFFIX_F32},
    [KP_KF_LAYERNORM_STAGED] = {KP_MODULE_ROWS, "layernorm_staged_%s", KP_SUFFIX_QFLOATS},
    [KP_KF_ROPE] = {KP_MODULE_ROWS, "rope_%s", KP_SUFFIX_FLOATS},
    [KP_KF_DEQUANTIZE_F32] = {KP_MODULE_QUANTIZED, "dequantize_%s_f32", KP_SUFFIX_QFORMATS},
    [KP_KF_DEQUANTIZE_F16] = {KP_MODULE_QUANTIZED, "dequantize_%s_f16", KP_SUFFIX_QFORMATS},
    [KP_KF_DEQUANTIZE_BF16] = {KP_MODULE_QUANTIZED, "dequantize_%s_bf16", KP_SUFFIX_QFORMATS},
    [KP_KF_QUANTIZE_F32] = {KP_MODULE_QUANTIZED, "quantize_%s_f32", KP_SUFFIX_QUANTIZE_FORMATS},
    [KP_KF_QUANTIZE_F16] = {KP_MODULE_QUANTIZED, "quantize_%s_f16", KP_SUFFIX_QUANTIZE_FORMATS},
    [KP_KF_QUANTIZE_BF16] = {KP_MODULE_QUANTIZED, "quantize_%s_bf16", KP_SUFFIX_QUANTIZE_FORMATS},
    [KP_KF_QMATVEC_B1] = {KP_MODULE_QUANTIZED, "qmatvec_%s_b1", KP_SUFFIX_QFORMATS},
    [KP_KF_QMATVEC_B2] = {KP_MODULE_QUANTIZED, "qmatvec_%s_b2", KP_SUFFIX_QFORMATS},
    [KP_KF_QMATVEC_B4] = {KP_MODULE_QUANTIZED, "qmatvec_%s_b4", KP_SUFFIX_QFORMATS},
    [KP_KF_QMATVEC_B8] = {KP_MODULE_QUANTIZED, "qmatvec_%s_b8", KP_SUFFIX_QFORMATS},
    [KP_KF_QMATVEC_ACT] = {KP_MODULE_QUANTIZED, "qmatvec_act_%s", KP_SUFFIX_QFLOATS},
    [KP_KF_QMATMUL_SMALL] = {KP_MODULE_QUANTIZED, "qmatmul_%s_n16", KP_SUFFIX_QFORMATS},
    [KP_KF_QMATMUL_LARGE] = {KP_MODULE_QUANTIZED, "qmatmul_%s_n64", KP_SUFFIX_QFORMATS},
    [KP_KF_QMOE] = {KP_MODULE_QUANTIZED, "qmoe_%s", KP_SUFFIX_QFORMATS},
    [KP_KF_QMOE_GROUP] = {KP_MODULE_QUANTIZED, "qmoe_group%s", KP_SUFFIX_NONE},
    [KP_KF_QMOE_MM_SMALL] = {KP_MODULE_QUANTIZED, "qmoe_mm_%s_n16", KP_SUFFIX_QFORMATS},
    [KP_KF_QMOE_MM_LARGE] = {KP_MODULE_QUANTIZED, "qmoe_mm_%s_n64", KP_SUFFIX_QFORMATS},
    /* spatial: im2col/col2im, pooling, upsampling */
    [KP_KF_IM2COL] = {KP_MODULE_SPATIAL, "im2col_%s", KP_SUFFIX_SIZES},
    [KP_KF_COL2IM] = {KP_MODULE_SPATIAL, "col2im_%s", KP_SUFFIX_DTYPES},
    [KP_KF_MAX_POOL2D] = {KP_MODULE_SPATIAL, "max_pool2d_%s", KP_SUFFIX_DTYPES},
    [KP_KF_AVG_POOL2D] = {KP_MODULE_SPATIAL, "avg_pool2d_%s", KP_SUFFIX_FLOATS},
    [KP_KF_UPSAMPLE_NEAREST2D] = {KP_MODULE_SPATIAL, "upsample_nearest2d_%s", KP_SUFFIX_SIZES},
    [KP_KF_UPSAMPLE_BILINEAR2D] = {KP_MODULE_SPATIAL, "upsample_bilinear2d_%s", KP_SUFFIX_FLOATS},
    /* conv: convolutions */
    [KP_KF_CONV] = {KP_MODULE_CONV, "conv_%s", KP_SUFFIX_FLOATS},
    [KP_KF_CONV_TRANSPOSE] = {KP_MODULE_CONV, "conv_transpose_%s", KP_SUFFIX_FLOATS},
};

static const char *const size_suffixes[] = {"x8", "x16", "x32", "x64"};

/* The sets that hold only some of the dtypes, in kp_dtype order. */
static const kp_dtype float_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16};
static const kp_dtype qfloat_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F16, KP_DTYPE_BF16};
static const kp_dtype f32_dtypes[] = {KP_DTYPE_F32};
static const kp_dtype half_dtypes[] = {KP_DTYPE_F16, KP_DTYPE_BF16};
static const kp_dtype signed_dtypes[] = {KP_DTYPE_F32, KP_DTYPE_F64, KP_DTYPE_F16, KP_DTYPE_BF16,
                                         KP_DTYPE_I64};

#define KP_IDS_SIZES(I) I "_x8", I "_x16", I "_x32", I "_x64"
#define KP_IDS_DTYPES(I) I "_f32", I "_f64", I "_f16", I "_bf16", I "_u8", I "_u32", I "_i64"
/* Ordered ids-major: u8, u32, i64, then the sizes or dtypes in their order. */
static const char *const ids_size_suffixes[] = {KP_IDS_SIZES("u8"), KP_IDS_SIZES("u32"),
                                                KP_IDS_SIZES("i64")};
static const char *const ids_dtype_suffixes[] = {KP_IDS_DTYPES("u8"), KP_IDS_DTYPES("u32"),
                                                 KP_IDS_DTYPES("i64")};
#define KP_COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

static bool dtype_subset(enum kp_suffix_set set, const kp_dtype **dtypes, size_t *count)
{
    switch (set) {
    case KP_SUFFIX_FLOATS:
        *dtypes = float_dtypes;
        *count = KP_COUNT_OF(float_dtypes);
        return true;
    case KP_SUFFIX_QFLOATS:
        *dtypes = qfloat_dtypes;
        *count = KP_COUNT_OF(qfloat_dtypes);
        return true;
    case KP_SUFFIX_SIGNED:
        *dtypes = signed_dtypes;
        *count = KP_COUNT_OF(signed_dtypes);
        return true;
    case KP_SUFFIX_F32:
        *dtypes = f32_dtypes;
        *count = KP_COUNT_OF(f32_dtypes);
        return true;
    case KP_SUFFIX_HALVES:
        *dtypes = half_dtypes;
        *count = KP_COUNT_OF(half_dtypes);
        return true;
    default:
        return false;
    }
}

/* Kernel suffixes of the block formats, with their kp_qformat values. */
struct qformat_suffix {
    int format;
    const char *suffix;
};
#define KP_QF_SUFFIX_ROW(ID, suffix) {KP_QF_##ID, #suffix},
static const struct qformat_suffix qformat_suffixes[] = {KP_QFORMAT_SUFFIXES(KP_QF_SUFFIX_ROW)};
static const struct qformat_suffix quantize_suffixes[] = {KP_QUANTIZE_SUFFIXES(KP_QF_SUFFIX_ROW)};
#undef KP_QF_SUFFIX_ROW

/* The suffixes of a format-suffixed set, and how many. */
static const struct qformat_suffix *qformat_set(enum kp_suffix_set set, size_t *count)
{
    if (set == KP_SUFFIX_QUANTIZE_FORMATS) {
        *count = KP_COUNT_OF(quantize_suffixes);
        return quantize_suffixes;
    }
    *count = KP_COUNT_OF(qformat_suffixes);
    return qformat_suffixes;
}

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
    const kp_dtype *dtypes;
    size_t count;
    switch (set) {
    case KP_SUFFIX_DTYPES:
        return index < KP_DTYPE_COUNT ? kp_dtype_name((kp_dtype)index) : NULL;
    case KP_SUFFIX_SIZES:
        return index < KP_COUNT_OF(size_suffixes) ? size_suffixes[index] : NULL;
    case KP_SUFFIX_IDS_SIZES:
        return index < KP_COUNT_OF(ids_size_suffixes) ? ids_size_suffixes[index] : NULL;
    case KP_SUFFIX_IDS_DTYPES:
        return index < KP_COUNT_OF(ids_dtype_suffixes) ? ids_dtype_suffixes[index] : NULL;
    case KP_SUFFIX_QFORMATS:
    case KP_SUFFIX_QUANTIZE_FORMATS: {
        size_t n;
        const struct qformat_suffix *q = qformat_set(set, &n);
        return index < n ? q[index].suffix : NULL;
    }
    case KP_SUFFIX_NONE:
        return index == 0 ? "" : NULL;
    default:
        break;
    }
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
    if (set == KP_SUFFIX_NONE)
        return "";
    if (set == KP_SUFFIX_QFORMATS || set == KP_SUFFIX_QUANTIZE_FORMATS)
        return NULL;
    if (dtype_subset(set, &dtypes, &count)) {
        for (size_t i = 0; i < count; i++)
            if (dtypes[i] == dtype)
                return kp_dtype_name(dtype);
        return NULL;
    }
    return size_suffixes[size_index(dtype)];
}

const char *kp_suffix_for_ids(enum kp_suffix_set set, kp_dtype ids, kp_dtype dtype)
{
    if (set == KP_SUFFIX_IDS_SIZES)
        return ids_size_suffixes[ids_index(ids) * KP_COUNT_OF(size_suffixes) + size_index(dtype)];
    return ids_dtype_suffixes[ids_index(ids) * KP_DTYPE_COUNT + (size_t)dtype];
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

kp_status kp_family_cluster_limits(kp_device *dev, enum kp_family_id family, kp_dtype dtype, int *blocks,
                                   int *static_shared)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_kernel_name(name, family, dtype);
    if (!name[0])
        return kp_fail(KP_ERR_INTERNAL, "kernel family %s has no kernel for %s",
                       kp_kernel_families[family].pattern, kp_dtype_name(dtype));
    return kp_kernel_cluster_limits(dev, kp_kernel_families[family].module, name, blocks, static_shared);
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

void kp_kernel_name_qf(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, int format)
{
    const struct kp_kernel_family *f = &kp_kernel_families[family];
    buf[0] = '\0';
    if (f->suffixes != KP_SUFFIX_QFORMATS && f->suffixes != KP_SUFFIX_QUANTIZE_FORMATS)
        return;
    size_t n;
    const struct qformat_suffix *q = qformat_set(f->suffixes, &n);
    for (size_t i = 0; i < n; i++)
        if (q[i].format == format)
            snprintf(buf, KP_KERNEL_NAME_MAX, f->pattern, q[i].suffix);
}

static kp_status family_qf_name(char name[KP_KERNEL_NAME_MAX], enum kp_family_id family, int format)
{
    kp_kernel_name_qf(name, family, format);
    if (!name[0])
        return kp_fail(KP_ERR_INTERNAL, "kernel family %s has no kernel for format %d",
                       kp_kernel_families[family].pattern, format);
    return KP_OK;
}

kp_status kp_launch_family_qf(kp_stream *stream, enum kp_family_id family, int format,
                              const struct kp_launch_dims *dims, void **args)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_status st = family_qf_name(name, family, format);
    if (st == KP_OK)
        st = kp_launch(stream, kp_kernel_families[family].module, name, dims, args);
    return st;
}

kp_status kp_family_qf_max_threads(kp_device *dev, enum kp_family_id family, int format, int *threads)
{
    char name[KP_KERNEL_NAME_MAX];
    kp_status st = family_qf_name(name, family, format);
    if (st == KP_OK)
        st = kp_kernel_max_threads(dev, kp_kernel_families[family].module, name, threads);
    return st;
}

kp_status kp_family_qf_static_shared(kp_device *dev, enum kp_family_id family, int format, int *bytes)
{
    char name[KP_KERNEL_NAME_MAX];
    int blocks = 0;
    kp_status st = family_qf_name(name, family, format);
    if (st == KP_OK)
        st = kp_kernel_cluster_limits(dev, kp_kernel_families[family].module, name, &blocks, bytes);
    return st;
}
