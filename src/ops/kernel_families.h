/* Every kernel a launcher may ask for, as a name pattern plus the suffixes
 * it comes in. Launchers build names only through kp_kernel_name(), and the
 * unit tests check every (family, suffix) against the compiled modules, so a
 * launcher cannot ask for a kernel that was not built. */
#ifndef KP_KERNEL_FAMILIES_H
#define KP_KERNEL_FAMILIES_H

#include "internal.h"
#include "kp_unary_ops.h"

enum kp_suffix_set {
    KP_SUFFIX_DTYPES,   /* f32 f64 f16 bf16 u8 u32 i64 */
    KP_SUFFIX_SIZES,    /* x8 x16 x32 x64: ops that only move bits */
    KP_SUFFIX_FLOATS,   /* f32 f64 f16 bf16: ops defined for floats only */
    KP_SUFFIX_SIGNED,   /* f32 f64 f16 bf16 i64: ops that need a sign */
    KP_SUFFIX_IDS_SIZES,  /* <ids>_<size>: u8_x8 .. i64_x64, ids of u8, u32, i64 */
    KP_SUFFIX_IDS_DTYPES, /* <ids>_<dtype>: u8_f32 .. i64_i64 */
    KP_SUFFIX_QFLOATS,    /* f32 f16 bf16: the quantized module's float operands, staged rows */
    KP_SUFFIX_F32,        /* f32: kernels built for f32 alone */
    KP_SUFFIX_HALVES,     /* f16 bf16: kernels built for the 16-bit floats alone */
    KP_SUFFIX_QFORMATS,   /* q4_0 .. iq4_xs: every GGUF block format */
    KP_SUFFIX_QUANTIZE_FORMATS, /* q4_0 q4_1 q5_0 q5_1 q8_0 q8_1: what kp_quantize writes */
    KP_SUFFIX_NONE,       /* one kernel, whatever the dtype: the pattern's %s is empty */
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
    KP_KF_COPY_STRIDED_ROWS,
    KP_KF_COPY2D,
    KP_KF_TRANSPOSE2D,
    KP_KF_BINARY_ADD,
    KP_KF_BINARY_ADD_STRIDED,
    KP_KF_BINARY_SUB,
    KP_KF_BINARY_SUB_STRIDED,
    KP_KF_BINARY_MUL,
    KP_KF_BINARY_MUL_STRIDED,
    KP_KF_BINARY_DIV,
    KP_KF_BINARY_DIV_STRIDED,
    KP_KF_BINARY_MINIMUM,
    KP_KF_BINARY_MINIMUM_STRIDED,
    KP_KF_BINARY_MAXIMUM,
    KP_KF_BINARY_MAXIMUM_STRIDED,
    KP_KF_BINARY_EQ,
    KP_KF_BINARY_EQ_STRIDED,
    KP_KF_BINARY_NE,
    KP_KF_BINARY_NE_STRIDED,
    KP_KF_BINARY_LT,
    KP_KF_BINARY_LT_STRIDED,
    KP_KF_BINARY_LE,
    KP_KF_BINARY_LE_STRIDED,
    KP_KF_BINARY_GT,
    KP_KF_BINARY_GT_STRIDED,
    KP_KF_BINARY_GE,
    KP_KF_BINARY_GE_STRIDED,
    KP_KF_WHERE_U8,
    KP_KF_WHERE_STRIDED_U8,
    KP_KF_WHERE_U32,
    KP_KF_WHERE_STRIDED_U32,
    KP_KF_WHERE_I64,
    KP_KF_WHERE_STRIDED_I64,
    /* cast: one family per source dtype, suffixed by the destination dtype */
    KP_KF_CAST_F32,
    KP_KF_CAST_F64,
    KP_KF_CAST_F16,
    KP_KF_CAST_BF16,
    KP_KF_CAST_U8,
    KP_KF_CAST_U32,
    KP_KF_CAST_I64,
    KP_KF_CAST_STRIDED_F32,
    KP_KF_CAST_STRIDED_F64,
    KP_KF_CAST_STRIDED_F16,
    KP_KF_CAST_STRIDED_BF16,
    KP_KF_CAST_STRIDED_U8,
    KP_KF_CAST_STRIDED_U32,
    KP_KF_CAST_STRIDED_I64,
    /* KP_KF_UNARY_<ID> and KP_KF_UNARY_<ID>_STRIDED for each op of kp_unary_ops.h */
#define KP_UNARY_FAMILY_IDS(ID, name, set, v32, v16, v64) \
    KP_KF_UNARY_##ID, KP_KF_UNARY_##ID##_STRIDED,
    KP_UNARY_OPS(KP_UNARY_FAMILY_IDS)
#undef KP_UNARY_FAMILY_IDS
    KP_KF_UNARY_POWF_F64MATH, /* powf_f32's stand-in where f64 is fast (kernels/unary.cu) */
    KP_KF_COPY_ROWS,
    KP_KF_ADD_ROWS,
    KP_KF_GATHER,
    KP_KF_SCATTER,
    KP_KF_SCATTER_ADD,
    KP_KF_ARGSORT_ROWS,
    KP_KF_ARGSORT_ROWS_SHORT,
    KP_KF_ARGSORT_KEYS,
    KP_KF_ARGSORT_HIST,
    KP_KF_ARGSORT_SCAN,
    KP_KF_ARGSORT_SCATTER,
    KP_KF_ARGSORT_SCATTER_FINAL,
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
    KP_KF_SOFTMAX_EXACT,
    KP_KF_SOFTMAX_STRIDED,
    KP_KF_SOFTMAX_STREAM,
    KP_KF_SOFTMAX_SPLIT,
    KP_KF_SOFTMAX_CLUSTER,
    KP_KF_SOFTMAX_STAGED,
    KP_KF_SOFTMAX_WHOLE,
    KP_KF_RMSNORM,
    KP_KF_RMSNORM_EXACT,
    KP_KF_RMSNORM_STRIDED,
    KP_KF_RMSNORM_STREAM,
    KP_KF_RMSNORM_SPLIT,
    KP_KF_RMSNORM_CLUSTER,
    KP_KF_RMSNORM_STAGED,
    KP_KF_RMSNORM_WHOLE,
    KP_KF_LAYERNORM,
    KP_KF_LAYERNORM_EXACT,
    KP_KF_LAYERNORM_STRIDED,
    KP_KF_LAYERNORM_STREAM,
    KP_KF_LAYERNORM_SPLIT,
    KP_KF_LAYERNORM_CLUSTER,
    KP_KF_LAYERNORM_STAGED,
    KP_KF_ROPE,
    /* quantized: suffixed by the block format (kp_kernel_name_qf) */
    KP_KF_DEQUANTIZE_F32,
    KP_KF_DEQUANTIZE_F16,
    KP_KF_DEQUANTIZE_BF16,
    KP_KF_QUANTIZE_F32,
    KP_KF_QUANTIZE_F16,
    KP_KF_QUANTIZE_BF16,
    KP_KF_QMATVEC_B1,
    KP_KF_QMATVEC_B2,
    KP_KF_QMATVEC_B4,
    KP_KF_QMATVEC_B8,
    KP_KF_QMATVEC_ACT,   /* suffixed by the activation dtype */
    KP_KF_QMATMUL_SMALL, /* tiles of KP_QMM_NB_SMALL batch rows */
    KP_KF_QMATMUL_LARGE, /* of KP_QMM_NB_LARGE */
    KP_KF_QMOE,
    KP_KF_QMOE_GROUP,
    KP_KF_QMOE_MM_SMALL,
    KP_KF_QMOE_MM_LARGE,
    /* spatial: im2col/col2im, pooling, upsampling */
    KP_KF_IM2COL,
    KP_KF_COL2IM,
    KP_KF_MAX_POOL2D,
    KP_KF_AVG_POOL2D,
    KP_KF_UPSAMPLE_NEAREST2D,
    KP_KF_UPSAMPLE_BILINEAR2D,
    /* conv: convolutions */
    KP_KF_CONV,
    KP_KF_CONV_TRANSPOSE,
    KP_KF_COUNT
};

extern const struct kp_kernel_family kp_kernel_families[KP_KF_COUNT];

#define KP_KERNEL_NAME_MAX 64

/* Suffix `index` of a set, or NULL past its end. */
const char *kp_suffix(enum kp_suffix_set set, size_t index);
/* Suffix for an element of `dtype` in `set` ("bf16", or "x16"), or NULL if
 * the set has no kernel for dtype. */
const char *kp_suffix_for(enum kp_suffix_set set, kp_dtype dtype);
/* True if `family` has a kernel for `dtype`. Launchers check this (and
 * fail with KP_ERR_UNSUPPORTED) before launching a family whose suffix set
 * does not cover every dtype. */
bool kp_family_supports(enum kp_family_id family, kp_dtype dtype);
/* Writes the kernel name of `family` for `dtype` into buf ("" if the family
 * has no kernel for dtype). */
void kp_kernel_name(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype dtype);
/* kp_launch() for the kernel of `family` and `dtype`; KP_ERR_INTERNAL if the
 * family has no kernel for dtype. */
kp_status kp_launch_family(kp_stream *stream, enum kp_family_id family, kp_dtype dtype,
                           const struct kp_launch_dims *dims, void **args);
/* kp_kernel_cluster_limits() for the kernel of `family` and `dtype`. */
kp_status kp_family_cluster_limits(kp_device *dev, enum kp_family_id family, kp_dtype dtype, int *blocks,
                                   int *static_shared);

/* The same for the *_IDS_* sets, whose kernels also depend on the dtype of
 * the ids (u8, u32 or i64). */
const char *kp_suffix_for_ids(enum kp_suffix_set set, kp_dtype ids, kp_dtype dtype);
void kp_kernel_name_ids(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, kp_dtype ids,
                        kp_dtype dtype);
kp_status kp_launch_family_ids(kp_stream *stream, enum kp_family_id family, kp_dtype ids,
                               kp_dtype dtype, const struct kp_launch_dims *dims, void **args);

/* The same for the format-suffixed sets (KP_SUFFIX_QFORMATS,
 * KP_SUFFIX_QUANTIZE_FORMATS); `format` is a kp_qformat value. The name is
 * "" if the set has no kernel for the format. */
void kp_kernel_name_qf(char buf[KP_KERNEL_NAME_MAX], enum kp_family_id family, int format);
kp_status kp_launch_family_qf(kp_stream *stream, enum kp_family_id family, int format,
                              const struct kp_launch_dims *dims, void **args);
/* kp_kernel_max_threads() for the kernel of `family` and `format`. */
kp_status kp_family_qf_max_threads(kp_device *dev, enum kp_family_id family, int format, int *threads);
/* The static shared memory in bytes of the loaded kernel of `family` and
 * `format`, loading its module if needed. */
kp_status kp_family_qf_static_shared(kp_device *dev, enum kp_family_id family, int format, int *bytes);

#endif
