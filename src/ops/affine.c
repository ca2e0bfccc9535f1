/* kp_affine: validation and launch of the affine module. */
#include <math.h>

#include "kernel_families.h"

/* The kernels take mul/add in the dtype's compute type. */
union kp_affine_scalar {
    float f32;
    double f64;
    uint32_t u32;
    int64_t i64;
};

static kp_status to_scalar(const char *what, double v, kp_dtype dtype, union kp_affine_scalar *out)
{
    double lo = 0, hi = 0;
    switch (dtype) {
    case KP_DTYPE_F32: case KP_DTYPE_F16: case KP_DTYPE_BF16:
        out->f32 = (float)v;
        return KP_OK;
    case KP_DTYPE_F64:
        out->f64 = v;
        return KP_OK;
    case KP_DTYPE_U8: lo = 0; hi = 255; break;
    case KP_DTYPE_U32: lo = 0; hi = 4294967295.0; break;
    case KP_DTYPE_I64: lo = -9223372036854775808.0; hi = 9223372036854775807.0; break;
    default: break;
    }
    if (!(v >= lo && v <= hi && v < 9223372036854775808.0) || floor(v) != v)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_affine: %s = %g is not a whole number a %s can hold",
                       what, v, kp_dtype_name(dtype));
    if (dtype == KP_DTYPE_I64)
        out->i64 = (int64_t)v;
    else
        out->u32 = (uint32_t)v;
    return KP_OK;
}

kp_status kp_affine(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                    double mul, double add)
{
    static const char fn[] = "kp_affine";
    uint64_t n = 0, n_src = 0;
    union kp_affine_scalar m, a;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n, &n_src);
    if (st == KP_OK)
        st = kp_check_same_dtype(fn, dst, src);
    if (st == KP_OK)
        st = kp_check_same_shape(fn, dst, src);
    if (st == KP_OK)
        st = to_scalar("mul", mul, dst->dtype, &m);
    if (st == KP_OK)
        st = to_scalar("add", add, dst->dtype, &a);
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
        struct kp_launch_dims dims = kp_launch_elementwise(n, 16 / kp_dtype_size(dst->dtype));
        void *args[] = {&n, &x, &y, &m, &a};
        return kp_launch_family(stream, KP_KF_AFFINE, dst->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &src->layout};
    kp_layout_merge(2, layouts, &layout);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 2, kp_dtype_size(dst->dtype));
    void *args[] = {&n, &layout, &x, &y, &m, &a};
    return kp_launch_family(stream, KP_KF_AFFINE_STRIDED, dst->dtype, &dims, args);
}
