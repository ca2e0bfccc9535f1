/* kp_cast: validation and launch of the cast module. Each source dtype has a
 * kernel family whose suffix is the destination dtype. */
#include "kernel_families.h"

static const enum kp_family_id cast_contiguous[KP_DTYPE_COUNT] = {
    [KP_DTYPE_F32] = KP_KF_CAST_F32, [KP_DTYPE_F64] = KP_KF_CAST_F64,
    [KP_DTYPE_F16] = KP_KF_CAST_F16, [KP_DTYPE_BF16] = KP_KF_CAST_BF16,
    [KP_DTYPE_U8] = KP_KF_CAST_U8,   [KP_DTYPE_U32] = KP_KF_CAST_U32,
    [KP_DTYPE_I64] = KP_KF_CAST_I64,
};

static const enum kp_family_id cast_strided[KP_DTYPE_COUNT] = {
    [KP_DTYPE_F32] = KP_KF_CAST_STRIDED_F32, [KP_DTYPE_F64] = KP_KF_CAST_STRIDED_F64,
    [KP_DTYPE_F16] = KP_KF_CAST_STRIDED_F16, [KP_DTYPE_BF16] = KP_KF_CAST_STRIDED_BF16,
    [KP_DTYPE_U8] = KP_KF_CAST_STRIDED_U8,   [KP_DTYPE_U32] = KP_KF_CAST_STRIDED_U32,
    [KP_DTYPE_I64] = KP_KF_CAST_STRIDED_I64,
};

kp_status kp_cast(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src)
{
    static const char fn[] = "kp_cast";
    uint64_t n = 0, n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n, &n_src);
    if (st == KP_OK)
        st = kp_check_same_shape(fn, dst, src);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)  /* not even in place: elements of other sizes would be overwritten before being read */
        st = kp_check_no_overlap(fn, dst, src, false);
    if (st != KP_OK)
        return st;

    void *x = kp_tensor_base(src), *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    if (kp_layout_is_contiguous(&dst->layout) && kp_layout_is_contiguous(&src->layout)) {
        const unsigned lanes = KP_MAP_LANES((unsigned)kp_dtype_size(src->dtype),
                                            (unsigned)kp_dtype_size(dst->dtype));
        struct kp_launch_dims dims = kp_launch_elementwise(n, lanes);
        void *args[] = {&n, &x, &y};
        return kp_launch_family(stream, cast_contiguous[src->dtype], dst->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &src->layout};
    kp_layout_merge(2, layouts, &layout);
    const size_t widest = kp_dtype_size(src->dtype) > kp_dtype_size(dst->dtype)
                              ? kp_dtype_size(src->dtype) : kp_dtype_size(dst->dtype);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 2, widest);
    void *args[] = {&n, &layout, &x, &y};
    return kp_launch_family(stream, cast_strided[src->dtype], dst->dtype, &dims, args);
}
