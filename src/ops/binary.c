/* kp_binary: validation and launch of the binary module. */
#include "kernel_families.h"

struct binary_op_info {
    const char *name;
    bool compare;                  /* dst is u8 (1 or 0) instead of the input dtype */
    enum kp_family_id contiguous;  /* lhs, rhs and dst all contiguous */
    enum kp_family_id strided;     /* any other layouts, broadcasts included */
};

static const struct binary_op_info binary_ops[KP_BINARY_OP_COUNT] = {
    [KP_BINARY_ADD] = {"add", false, KP_KF_BINARY_ADD, KP_KF_BINARY_ADD_STRIDED},
    [KP_BINARY_SUB] = {"sub", false, KP_KF_BINARY_SUB, KP_KF_BINARY_SUB_STRIDED},
    [KP_BINARY_MUL] = {"mul", false, KP_KF_BINARY_MUL, KP_KF_BINARY_MUL_STRIDED},
    [KP_BINARY_DIV] = {"div", false, KP_KF_BINARY_DIV, KP_KF_BINARY_DIV_STRIDED},
    [KP_BINARY_MINIMUM] = {"minimum", false, KP_KF_BINARY_MINIMUM, KP_KF_BINARY_MINIMUM_STRIDED},
    [KP_BINARY_MAXIMUM] = {"maximum", false, KP_KF_BINARY_MAXIMUM, KP_KF_BINARY_MAXIMUM_STRIDED},
    [KP_BINARY_EQ] = {"eq", true, KP_KF_BINARY_EQ, KP_KF_BINARY_EQ_STRIDED},
    [KP_BINARY_NE] = {"ne", true, KP_KF_BINARY_NE, KP_KF_BINARY_NE_STRIDED},
    [KP_BINARY_LT] = {"lt", true, KP_KF_BINARY_LT, KP_KF_BINARY_LT_STRIDED},
    [KP_BINARY_LE] = {"le", true, KP_KF_BINARY_LE, KP_KF_BINARY_LE_STRIDED},
    [KP_BINARY_GT] = {"gt", true, KP_KF_BINARY_GT, KP_KF_BINARY_GT_STRIDED},
    [KP_BINARY_GE] = {"ge", true, KP_KF_BINARY_GE, KP_KF_BINARY_GE_STRIDED},
};

const char *kp_binary_op_name(kp_binary_op op)
{
    return (unsigned)op < KP_BINARY_OP_COUNT ? binary_ops[op].name : NULL;
}

static kp_status check_dtypes(const char *fn, const struct binary_op_info *info,
                              const kp_tensor *dst, const kp_tensor *lhs, const kp_tensor *rhs)
{
    if (lhs->dtype != rhs->dtype)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: lhs is %s but rhs is %s (cast one first)",
                       fn, info->name, kp_dtype_name(lhs->dtype), kp_dtype_name(rhs->dtype));
    if (info->compare && dst->dtype != KP_DTYPE_U8)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s writes u8 (1 or 0) but dst is %s", fn,
                       info->name, kp_dtype_name(dst->dtype));
    if (!info->compare && dst->dtype != lhs->dtype)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s writes the inputs' dtype %s but dst is %s",
                       fn, info->name, kp_dtype_name(lhs->dtype), kp_dtype_name(dst->dtype));
    return KP_OK;
}

kp_status kp_binary(kp_stream *stream, kp_binary_op op, const kp_tensor *dst,
                    const kp_tensor *lhs, const kp_tensor *rhs)
{
    static const char fn[] = "kp_binary";
    if ((unsigned)op >= KP_BINARY_OP_COUNT)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: op %d is not a kp_binary_op", fn, (int)op);
    const struct binary_op_info *info = &binary_ops[op];
    uint64_t n = 0, n_in = 0;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "lhs", lhs, stream->device, &n_in);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "rhs", rhs, stream->device, &n_in);
    if (st == KP_OK)
        st = check_dtypes(fn, info, dst, lhs, rhs);
    if (st == KP_OK)
        st = kp_check_shape_of(fn, dst, "lhs", lhs);
    if (st == KP_OK)
        st = kp_check_shape_of(fn, dst, "rhs", rhs);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap_with(fn, dst, "lhs", lhs, true);
    if (st == KP_OK)
        st = kp_check_no_overlap_with(fn, dst, "rhs", rhs, true);
    if (st != KP_OK)
        return st;

    void *a = kp_tensor_base(lhs), *b = kp_tensor_base(rhs), *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    if (kp_layout_is_contiguous(&dst->layout) && kp_layout_is_contiguous(&lhs->layout) &&
        kp_layout_is_contiguous(&rhs->layout)) {
        /* lhs is the widest operand (comparisons write u8) */
        struct kp_launch_dims dims = kp_launch_elementwise(n, 16 / kp_dtype_size(lhs->dtype));
        void *args[] = {&n, &a, &b, &y};
        return kp_launch_family(stream, info->contiguous, lhs->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &lhs->layout, &rhs->layout};
    kp_layout_merge(3, layouts, &layout);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 3, kp_dtype_size(lhs->dtype));
    void *args[] = {&n, &layout, &a, &b, &y};
    return kp_launch_family(stream, info->strided, lhs->dtype, &dims, args);
}
