/* Small pieces the module tables (bench_<module>.c) would otherwise each
 * repeat: starting and ending a result, contiguous views, uploaded copies
 * of ids, freeing rotated buffers. */
#include <string.h>

#include "bench.h"

const kp_dtype float_dtypes[3] = {KP_DTYPE_F32, KP_DTYPE_F16, KP_DTYPE_BF16};

bool result_begin(struct bench *b, const struct bench_entry *e, uint64_t elements, uint64_t bytes,
                  struct result *r)
{
    memset(r, 0, sizeof(*r));
    r->op = e->op;
    memcpy(r->variant, e->variant, sizeof(r->variant));
    r->dtype = r->out_dtype = e->dtype;
    r->elements = elements;
    r->bytes = bytes;
    kp_status st = measure_copy(b, bytes, &r->copy_ms);
    if (st != KP_OK)
        result_fail(r, "copy reference", st);
    return st == KP_OK;
}

kp_status view_contiguous(kp_buffer *buf, kp_dtype dtype, int rank, const int64_t *shape, kp_tensor *t)
{
    *t = (kp_tensor){buf, dtype, {0}};
    return kp_layout_contiguous(&t->layout, rank, shape);
}

kp_status upload_copies(struct bench *b, const void *host, size_t bytes, int count, kp_buffer **bufs)
{
    kp_status st = KP_OK;
    for (int k = 0; st == KP_OK && k < count; k++) {
        st = kp_buffer_alloc(b->dev, bytes, &bufs[k]);
        if (st == KP_OK)
            st = k == 0 ? kp_memcpy_h2d(b->stream, bufs[0], 0, host, bytes)
                        : kp_memcpy_d2d(b->stream, bufs[k], 0, bufs[0], 0, bytes);
    }
    /* host may be freed once this returns */
    return st == KP_OK ? kp_stream_synchronize(b->stream) : st;
}

void time_case(struct bench *b, kp_status setup, timed_fn fn, void *ctx, struct result *r)
{
    kp_status st = setup;
    if (st != KP_OK)
        result_fail(r, "allocating", st);
    else if ((st = time_runs(b, fn, ctx, &r->ms)) != KP_OK)
        result_fail(r, NULL, st);
}

void destroy_rotation(kp_buffer **bufs)
{
    for (int k = 0; k < MAX_ROTATION; k++)
        kp_buffer_destroy(&bufs[k]);
}
