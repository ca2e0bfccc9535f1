/* kp_where: validation and launch of the ternary module. */
#include "kernel_families.h"

struct where_families {
    enum kp_family_id contiguous, strided;
};

/* The kernels for a cond dtype, or NULL if cond cannot have that dtype. */
static const struct where_families *families_for(kp_dtype cond)
{
    static const struct where_families u8 = {KP_KF_WHERE_U8, KP_KF_WHERE_STRIDED_U8},
                                       u32 = {KP_KF_WHERE_U32, KP_KF_WHERE_STRIDED_U32},
                                       i64 = {KP_KF_WHERE_I64, KP_KF_WHERE_STRIDED_I64};
    switch (cond) {
    case KP_DTYPE_U8: return &u8;
    case KP_DTYPE_U32: return &u32;
    case KP_DTYPE_I64: return &i64;
    default: return NULL;
    }
}

static kp_status check_dtypes(const char *fn, const kp_tensor *dst, const kp_tensor *cond,
                              const kp_tensor *on_true, const kp_tensor *on_false)
{
    if (!families_for(cond->dtype))
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: cond is %s but must be u8, u32 or i64 (nonzero means true)", fn,
                       kp_dtype_name(cond->dtype));
    if (on_true->dtype != on_false->dtype)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: on_true is %s but on_false is %s (cast one first)",
                       fn, kp_dtype_name(on_true->dtype), kp_dtype_name(on_false->dtype));
    if (dst->dtype != on_true->dtype)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst is %s but on_true and on_false are %s", fn,
                       kp_dtype_name(dst->dtype), kp_dtype_name(on_true->dtype));
    return KP_OK;
}

kp_status kp_where(kp_stream *stream, const kp_tensor *dst, const kp_tensor *cond,
                   const kp_tensor *on_true, const kp_tensor *on_false)
{
    static const char fn[] = "kp_where";
    uint64_t n = 0, n_in = 0;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "cond", cond, stream->device, &n_in);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "on_true", on_true, stream->device, &n_in);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "on_false", on_false, stream->device, &n_in);
    if (st == KP_OK)
        st = check_dtypes(fn, dst, cond, on_true, on_false);
    if (st == KP_OK)
        st = kp_check_shape_of(fn, dst, "cond", cond);
    if (st == KP_OK)
        st = kp_check_shape_of(fn, dst, "on_true", on_true);
    if (st == KP_OK)
        st = kp_check_shape_of(fn, dst, "on_false", on_false);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap_with(fn, dst, "cond", cond, true);
    if (st == KP_OK)
        st = kp_check_no_overlap_with(fn, dst, "on_true", on_true, true);
    if (st == KP_OK)
        st = kp_check_no_overlap_with(fn, dst, "on_false", on_false, true);
    if (st != KP_OK)
        return st;

    const struct where_families *families = families_for(cond->dtype);
    void *c = kp_tensor_base(cond), *t = kp_tensor_base(on_true), *f = kp_tensor_base(on_false);
    void *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    /* Each thread step moves 16 bytes of the widest operand. */
    const size_t widest = kp_dtype_size(cond->dtype) > kp_dtype_size(dst->dtype)
                              ? kp_dtype_size(cond->dtype) : kp_dtype_size(dst->dtype);
    if (kp_layout_is_contiguous(&dst->layout) && kp_layout_is_contiguous(&cond->layout) &&
        kp_layout_is_contiguous(&on_true->layout) && kp_layout_is_contiguous(&on_false->layout)) {
        struct kp_launch_dims dims = kp_launch_elementwise(n, 16 / widest);
        void *args[] = {&n, &c, &t, &f, &y};
        return kp_launch_family(stream, families->contiguous, dst->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &cond->layout, &on_true->layout, &on_false->layout};
    kp_layout_merge(4, layouts, &layout);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 4, widest);
    void *args[] = {&n, &layout, &c, &t, &f, &y};
    return kp_launch_family(stream, families->strided, dst->dtype, &dims, args);
}
