/* kp_unary: validation and launch of the unary module. */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "kernel_families.h"

struct unary_op_info {
    const char *name;
    enum kp_family_id contiguous, strided;
    /* The contiguous kernel's vectors a thread (kp_unary_ops.h): V32, V16
     * for 2-byte dtypes, V64 for 8-byte ones. */
    unsigned char v32, v16, v64;
};

/* One row per op of kp_unary_ops.h, at its public enum value. */
static const struct unary_op_info unary_ops[] = {
#define KP_UNARY_OP_ROW(ID, name, set, v32, v16, v64) \
    [KP_UNARY_##ID] = {#name, KP_KF_UNARY_##ID, KP_KF_UNARY_##ID##_STRIDED, v32, v16, v64},
    KP_UNARY_OPS(KP_UNARY_OP_ROW)
#undef KP_UNARY_OP_ROW
};
_Static_assert(sizeof(unary_ops) / sizeof(unary_ops[0]) == KP_UNARY_OP_COUNT,
               "kp_unary_ops.h and enum kp_unary_op list different ops");

const char *kp_unary_op_name(kp_unary_op op)
{
    return (unsigned)op < KP_UNARY_OP_COUNT ? unary_ops[op].name : NULL;
}

/* Vectors a thread of op's contiguous kernel for dtype (kp_unary_ops.h),
 * which lay its grid over the tensor: kp_launch_elementwise covers it once. */
static unsigned contiguous_vpt(kp_unary_op op, kp_dtype dtype)
{
    const size_t size = kp_dtype_size(dtype);
    return size == 2 ? unary_ops[op].v16 : size == 8 ? unary_ops[op].v64 : unary_ops[op].v32;
}

/* The kernels take param in the dtype's compute type; integer kernels
 * ignore it, so it stays zero. */
union kp_unary_param {
    float f32;
    double f64;
    uint32_t u32;
    int64_t i64;
};

static bool takes_param(kp_unary_op op)
{
    return op == KP_UNARY_ELU || op == KP_UNARY_POWF;
}

static kp_status to_param(const char *fn, kp_unary_op op, double v, kp_dtype dtype,
                          union kp_unary_param *out)
{
    out->i64 = 0;
    if (!takes_param(op))
        return KP_OK;
    if (dtype == KP_DTYPE_F64) {
        out->f64 = v;
        return KP_OK;
    }
    if (isfinite(v) && fabs(v) > FLT_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: param = %g is outside the range of f32, "
                       "in which %s computes %s", fn, v, kp_dtype_name(dtype), unary_ops[op].name);
    out->f32 = (float)v;
    return KP_OK;
}

static kp_status unsupported(const char *fn, kp_unary_op op, kp_dtype dtype)
{
    /* List the dtypes the op has, from its kernel family. */
    enum kp_suffix_set set = kp_kernel_families[unary_ops[op].contiguous].suffixes;
    char list[64] = "";
    size_t len = 0;
    for (size_t i = 0; kp_suffix(set, i) && len < sizeof(list); i++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", i ? ", " : "",
                                kp_suffix(set, i));
    return kp_fail(KP_ERR_UNSUPPORTED, "%s: op %s does not support %s (only %s)", fn,
                   unary_ops[op].name, kp_dtype_name(dtype), list);
}

kp_status kp_unary(kp_stream *stream, kp_unary_op op, const kp_tensor *dst,
                   const kp_tensor *src, double param)
{
    static const char fn[] = "kp_unary";
    uint64_t n = 0, n_src = 0;
    union kp_unary_param p;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK && (unsigned)op >= KP_UNARY_OP_COUNT)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: op %d is not a kp_unary_op", fn, (int)op);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "src", src, stream->device, &n_src);
    if (st == KP_OK)
        st = kp_check_same_dtype(fn, dst, src);
    if (st == KP_OK)
        st = kp_check_same_shape(fn, dst, src);
    if (st == KP_OK && !kp_family_supports(unary_ops[op].contiguous, dst->dtype))
        st = unsupported(fn, op, dst->dtype);
    if (st == KP_OK)
        st = to_param(fn, op, param, dst->dtype, &p);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap(fn, dst, src, true);
    if (st != KP_OK)
        return st;

    void *x = kp_tensor_base(src), *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    if (kp_layout_is_contiguous(&dst->layout) && kp_layout_is_contiguous(&src->layout)) {
        uint64_t lanes = 16 / kp_dtype_size(dst->dtype);
        struct kp_launch_dims dims =
            kp_launch_elementwise((n + lanes - 1) / lanes, contiguous_vpt(op, dst->dtype));
        void *args[] = {&n, &x, &y, &p};
        /* f32 powf in f64 arithmetic where that is fast (H200: 73.9 -> 83.2 %
         * of the copy bandwidth, results within 0.51 ulp; A100 reports the
         * same rate, unmeasured); elsewhere f64 runs at 1/32 to 1/64 of the
         * f32 rate, which would make it several times slower. */
        const bool f64math = op == KP_UNARY_POWF && dst->dtype == KP_DTYPE_F32 && dev->limits.fast_f64;
        return kp_launch_family(stream, f64math ? KP_KF_UNARY_POWF_F64MATH : unary_ops[op].contiguous,
                                dst->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &src->layout};
    kp_layout_merge(2, layouts, &layout);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 2, kp_dtype_size(dst->dtype));
    void *args[] = {&n, &layout, &x, &y, &p};
    return kp_launch_family(stream, unary_ops[op].strided, dst->dtype, &dims, args);
}
