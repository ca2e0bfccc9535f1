/* The copies a measurement rotates through: how many, and allocating them.
 * A case of a few tens of megabytes fits the GPU's cache, so running it on
 * the same buffers run after run would measure the cache; each run instead
 * takes the next copy, and the copies span ROTATE_BYTES. */
#include "bench.h"

int rotation_copies(const struct bench *b, uint64_t bytes)
{
    uint64_t want = (ROTATE_BYTES + bytes - 1) / (bytes ? bytes : 1);
    uint64_t runs = (uint64_t)b->opt->warmup + (uint64_t)b->opt->iters;
    if (want > runs)
        want = runs;
    if (want < INPUT_SETS)
        want = INPUT_SETS;
    return want > MAX_ROTATION ? MAX_ROTATION : (int)want;
}

kp_status alloc_rotation(struct bench *b, int want, size_t bytes, fill_fn fill, kp_dtype dtype,
                         kp_buffer **srcs, kp_buffer **dsts, int *sets)
{
    *sets = 0;
    if (want > MAX_ROTATION)
        want = MAX_ROTATION;
    kp_status st = KP_OK;
    for (int k = 0; st == KP_OK && k < want; k++) {
        st = kp_buffer_alloc(b->dev, bytes, &srcs[k]);
        if (st == KP_OK && dsts)
            st = kp_buffer_alloc(b->dev, bytes, &dsts[k]);
        if (st == KP_OK)  /* random once, copied to the rest: new addresses are what counts */
            st = k == 0 ? fill(b, srcs[0], dtype)
                        : kp_memcpy_d2d(b->stream, srcs[k], 0, srcs[0], 0, bytes);
        if (st == KP_OK) {
            (*sets)++;
        } else if (st == KP_ERR_OUT_OF_MEMORY && k > 0) {  /* rotate through fewer */
            kp_buffer_destroy(&srcs[k]);
            if (dsts)
                kp_buffer_destroy(&dsts[k]);
            st = KP_OK;
            break;
        }
    }
    /* The copies' errors show here, as allocation errors, not in the timing. */
    return st == KP_OK ? kp_stream_synchronize(b->stream) : st;
}
