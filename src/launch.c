/* Launch geometry and the one path every op takes to the backend. */
#include "internal.h"

struct kp_launch_dims kp_launch_1d(const kp_device *dev, uint64_t items, unsigned block)
{
    /* Enough blocks to fill every multiprocessor several times over; the
     * kernels' grid-stride loops cover the rest. */
    uint64_t cap = (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * 32;
    uint64_t blocks = (items + block - 1) / block;
    if (blocks > cap)
        blocks = cap;
    if (blocks == 0)
        blocks = 1;
    struct kp_launch_dims d = {{(unsigned)blocks, 1, 1}, {block, 1, 1}, 0};
    return d;
}

kp_status kp_launch(kp_stream *stream, enum kp_module_id id, const char *kernel,
                    const struct kp_launch_dims *dims, void **args)
{
    kp_device *dev = stream->device;
    void *fn = NULL;
    kp_status st = kp_module_function(dev, id, kernel, &fn);
    if (st != KP_OK)
        return st;
    return dev->be->launch(dev->native, fn, dims, stream->native, args);
}
