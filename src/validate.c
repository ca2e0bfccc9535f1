/* Argument checks shared by every entry point. Each returns KP_OK or records
 * a message naming the function and the argument. */
#include <stdio.h>
#include <stdlib.h>

#include "internal.h"

kp_status kp_check_stream(const char *fn, const kp_stream *stream)
{
    if (!stream)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: stream is NULL", fn);
    return KP_OK;
}

kp_status kp_check_buffer(const char *fn, const char *what, const kp_buffer *buf,
                          const kp_device *dev)
{
    if (!buf)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s buffer is NULL", fn, what);
    if (buf->device != dev)
        return kp_fail(KP_ERR_DEVICE_MISMATCH, "%s: %s buffer belongs to device %d, the stream to device %d",
                       fn, what, buf->device->info.ordinal, dev->info.ordinal);
    return KP_OK;
}

kp_status kp_check_dtype(const char *fn, const char *what, kp_dtype dtype)
{
    if ((unsigned)dtype >= KP_DTYPE_COUNT)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has invalid dtype %d", fn, what, (int)dtype);
    return KP_OK;
}

kp_status kp_check_tensor(const char *fn, const char *what, const kp_tensor *t,
                          const kp_device *dev, uint64_t *numel)
{
    if (!t)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    kp_status st = kp_check_buffer(fn, what, t->buffer, dev);
    if (st == KP_OK)
        st = kp_check_dtype(fn, what, t->dtype);
    if (st != KP_OK)
        return st;
    const kp_layout *l = &t->layout;
    if (l->rank < 0 || l->rank > KP_MAX_RANK)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has rank %d, outside 0..%d", fn, what,
                       l->rank, KP_MAX_RANK);
    if (l->offset < 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has negative offset %lld", fn, what,
                       (long long)l->offset);
    uint64_t count = 1, last = (uint64_t)l->offset;  /* element index of the last element */
    for (int d = 0; d < l->rank; d++) {
        if (l->shape[d] < 0 || l->strides[d] < 0)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has negative shape or stride in dim %d",
                           fn, what, d);
        uint64_t n = (uint64_t)l->shape[d];
        if (n && count > INT64_MAX / n)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: element count overflows", fn, what);
        count *= n;
    }
    *numel = count;
    if (count == 0)
        return KP_OK;
    for (int d = 0; d < l->rank; d++) {
        uint64_t span = (uint64_t)(l->shape[d] - 1);
        uint64_t stride = (uint64_t)l->strides[d];
        if (span && stride > (INT64_MAX - last) / span)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: shape and strides overflow", fn, what);
        last += span * stride;
    }
    size_t esize = kp_dtype_size(t->dtype);
    if (last >= t->buffer->size / esize)
        return kp_fail(KP_ERR_BUFFER_TOO_SMALL,
                       "%s: %s reaches element %llu (%s) but its buffer holds %zu bytes", fn, what,
                       (unsigned long long)last, kp_dtype_name(t->dtype), t->buffer->size);
    return KP_OK;
}

kp_status kp_check_dst_src(const char *fn, const kp_stream *stream, const kp_tensor *dst,
                           const kp_tensor *src, uint64_t *n_dst, uint64_t *n_src)
{
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, n_dst);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "src", src, stream->device, n_src);
    return st;
}

kp_status kp_check_dtype_as_src(const char *fn, const char *what, const kp_tensor *t,
                                kp_dtype src_dtype)
{
    if (t->dtype != src_dtype)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is %s but src is %s", fn, what,
                       kp_dtype_name(t->dtype), kp_dtype_name(src_dtype));
    return KP_OK;
}

kp_status kp_check_same_dtype(const char *fn, const kp_tensor *dst, const kp_tensor *src)
{
    return kp_check_dtype_as_src(fn, "dst", dst, src->dtype);
}

kp_status kp_check_same_shape(const char *fn, const kp_tensor *dst, const kp_tensor *src)
{
    return kp_check_shape_of(fn, dst, "src", src);
}

struct dim { int64_t size, stride; };

static int by_stride(const void *a, const void *b)
{
    const struct dim *x = a, *y = b;
    return (x->stride > y->stride) - (x->stride < y->stride);
}

kp_status kp_check_no_self_overlap(const char *fn, const char *what, const kp_tensor *t)
{
    /* Sufficient test: sorted by stride, each stride exceeds the span of all
     * smaller-stride dims, so distinct indices give distinct elements. */
    struct dim dims[KP_MAX_RANK];
    int n = 0;
    for (int d = 0; d < t->layout.rank; d++) {
        if (t->layout.shape[d] == 0)
            return KP_OK;
        if (t->layout.shape[d] > 1)
            dims[n++] = (struct dim){t->layout.shape[d], t->layout.strides[d]};
    }
    qsort(dims, (size_t)n, sizeof(dims[0]), by_stride);
    int64_t span = 0;  /* largest offset reachable with the dims so far */
    for (int i = 0; i < n; i++) {
        if (dims[i].stride <= span)
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: %s would write some elements more than once (stride-0 or overlapping dims)",
                           fn, what);
        span += (dims[i].size - 1) * dims[i].stride;
    }
    return KP_OK;
}

static void byte_range(const kp_tensor *t, uint64_t *lo, uint64_t *hi)
{
    size_t es = kp_dtype_size(t->dtype);
    uint64_t last = (uint64_t)t->layout.offset;
    for (int d = 0; d < t->layout.rank; d++)
        last += (uint64_t)(t->layout.shape[d] - 1) * (uint64_t)t->layout.strides[d];
    uint64_t base = (uint64_t)(uintptr_t)t->buffer->ptr;
    *lo = base + (uint64_t)t->layout.offset * es;
    *hi = base + (last + 1) * es;
}

static bool is_empty(const kp_tensor *t)
{
    for (int d = 0; d < t->layout.rank; d++)
        if (t->layout.shape[d] == 0)
            return true;
    return false;
}

kp_status kp_check_disjoint(const char *fn, const char *what_a, const kp_tensor *a,
                            const char *what_b, const kp_tensor *b)
{
    if (is_empty(a) || is_empty(b))
        return KP_OK;
    uint64_t alo, ahi, blo, bhi;
    byte_range(a, &alo, &ahi);
    byte_range(b, &blo, &bhi);
    if (ahi <= blo || bhi <= alo)
        return KP_OK;
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s overlaps %s", fn, what_a, what_b);
}

static bool same_view(const kp_tensor *a, const kp_tensor *b)
{
    if (kp_tensor_base(a) != kp_tensor_base(b) || a->dtype != b->dtype)
        return false;
    for (int d = 0; d < a->layout.rank; d++)
        if (a->layout.shape[d] > 1 && a->layout.strides[d] != b->layout.strides[d])
            return false;
    return true;
}

kp_status kp_check_no_overlap(const char *fn, const kp_tensor *dst, const kp_tensor *src,
                              bool same_view_ok)
{
    return kp_check_no_overlap_with(fn, dst, "src", src, same_view_ok);
}

kp_status kp_check_no_overlap_with(const char *fn, const kp_tensor *dst, const char *what,
                                   const kp_tensor *src, bool same_view_ok)
{
    uint64_t dlo, dhi, slo, shi;
    byte_range(dst, &dlo, &dhi);
    byte_range(src, &slo, &shi);
    if (dhi <= slo || shi <= dlo)
        return KP_OK;
    if (same_view_ok && same_view(dst, src))
        return KP_OK;
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst overlaps %s%s", fn, what,
                   same_view_ok ? " (only an identical view of the same dtype may be used in place)"
                                : "");
}

const char *kp_format_shape(char *buf, size_t size, int rank, const int64_t *shape)
{
    size_t used = (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && used < size; d++)
        used += (size_t)snprintf(buf + used, size - used, "%s%lld", d ? ", " : "",
                                 (long long)shape[d]);
    if (used < size)
        snprintf(buf + used, size - used, "]");
    return buf;
}

static void format_shape(const kp_layout *l, char *buf, size_t size)
{
    kp_format_shape(buf, size, l->rank, l->shape);
}

kp_status kp_check_shape_is(const char *fn, const char *what, const kp_tensor *t, int rank,
                            const int64_t *shape)
{
    bool same = t->layout.rank == rank;
    for (int d = 0; same && d < rank; d++)
        same = t->layout.shape[d] == shape[d];
    if (same)
        return KP_OK;
    kp_layout want = {.rank = rank};
    for (int d = 0; d < rank; d++)
        want.shape[d] = shape[d];
    char want_s[KP_MAX_RANK * 22 + 3], got_s[KP_MAX_RANK * 22 + 3];
    format_shape(&want, want_s, sizeof(want_s));
    format_shape(&t->layout, got_s, sizeof(got_s));
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has shape %s but must be %s", fn, what, got_s,
                   want_s);
}

kp_status kp_check_shape_of(const char *fn, const kp_tensor *dst, const char *what,
                            const kp_tensor *t)
{
    bool same = dst->layout.rank == t->layout.rank;
    for (int d = 0; same && d < dst->layout.rank; d++)
        same = dst->layout.shape[d] == t->layout.shape[d];
    if (same)
        return KP_OK;
    char want[KP_MAX_RANK * 22 + 3], got[KP_MAX_RANK * 22 + 3];
    format_shape(&dst->layout, want, sizeof(want));
    format_shape(&t->layout, got, sizeof(got));
    return kp_fail(KP_ERR_INVALID_ARGUMENT,
                   "%s: %s has shape %s but dst has %s (to broadcast, give it dst's shape "
                   "with stride 0 in the broadcast dims)",
                   fn, what, got, want);
}
