/* Layout helpers: contiguity, dimension merging, base addresses. */
#include <string.h>

#include "internal.h"

static const size_t dtype_sizes[KP_DTYPE_COUNT] = {4, 8, 2, 2, 1, 4, 8};
static const char *const dtype_names[KP_DTYPE_COUNT] = {"f32", "f64", "f16", "bf16",
                                                        "u8", "u32", "i64"};

const char *kp_dtype_name(kp_dtype dtype)
{
    return (unsigned)dtype < KP_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}

size_t kp_dtype_size(kp_dtype dtype)
{
    return (unsigned)dtype < KP_DTYPE_COUNT ? dtype_sizes[dtype] : 0;
}

kp_status kp_layout_contiguous(kp_layout *layout, int rank, const int64_t *shape)
{
    KP_CHECK_NOT_NULL(layout);
    if (rank < 0 || rank > KP_MAX_RANK)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_layout_contiguous: rank %d is outside 0..%d",
                       rank, KP_MAX_RANK);
    if (rank > 0 && !shape)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_layout_contiguous: shape is NULL");
    memset(layout, 0, sizeof(*layout));
    layout->rank = rank;
    int64_t stride = 1;
    for (int d = rank - 1; d >= 0; d--) {
        if (shape[d] < 0)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_layout_contiguous: shape[%d] = %lld is negative",
                           d, (long long)shape[d]);
        layout->shape[d] = shape[d];
        layout->strides[d] = stride;
        if (shape[d] > 1 && stride > INT64_MAX / shape[d])
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "kp_layout_contiguous: shape overflows int64");
        stride *= shape[d] > 1 ? shape[d] : 1;
    }
    return KP_OK;
}

bool kp_layout_is_contiguous(const kp_layout *l)
{
    int64_t expect = 1;
    for (int d = l->rank - 1; d >= 0; d--) {
        if (l->shape[d] == 0)
            return true;
        if (l->shape[d] != 1 && l->strides[d] != expect)
            return false;
        expect *= l->shape[d];
    }
    return true;
}

void kp_layout_merge(int count, const kp_layout *const layouts[], struct kp_strided *out)
{
    memset(out, 0, sizeof(*out));
    const kp_layout *first = layouts[0];
    int r = 0;
    for (int d = 0; d < first->rank; d++) {
        if (first->shape[d] == 1)
            continue;
        /* Merge into the previous (outer) dim when, in every operand, stepping
         * the outer dim once equals stepping the inner dim through its size. */
        bool merge = r > 0;
        for (int k = 0; merge && k < count; k++)
            merge = out->stride[k][r - 1] == layouts[k]->strides[d] * first->shape[d];
        if (merge) {
            out->shape[r - 1] *= first->shape[d];
            for (int k = 0; k < count; k++)
                out->stride[k][r - 1] = layouts[k]->strides[d];
            continue;
        }
        out->shape[r] = first->shape[d];
        for (int k = 0; k < count; k++)
            out->stride[k][r] = layouts[k]->strides[d];
        r++;
    }
    out->rank = r;
}

void *kp_tensor_base(const kp_tensor *t)
{
    return (char *)t->buffer->ptr + (size_t)t->layout.offset * kp_dtype_size(t->dtype);
}
