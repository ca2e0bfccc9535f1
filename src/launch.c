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

unsigned kp_grid_blocks(uint64_t blocks, unsigned block)
{
    const uint64_t most = (((uint64_t)1 << 31) - 1) / block;
    return (unsigned)(blocks == 0 ? 1 : blocks < most ? blocks : most);
}

/* Blocks of 256 threads, each thread one vector, rather than kp_launch_1d's
 * capped grid-stride grid: on an H200 (kp-bench, 2^28 elements) binary ops
 * and where went from 98 to 102.5-103 % of the copy bandwidth, fill from
 * 103 to 110, casts from f16/bf16 to f32 from 91.5 to 96, affine from 93-95
 * to 100-101. My reading: blocks started in order keep the addresses in
 * flight close together, where a capped grid's threads drift apart over
 * their loops. */
struct kp_launch_dims kp_launch_elementwise(uint64_t n, unsigned lanes)
{
    enum { BLOCK = 256 };
    const uint64_t vectors = (n + lanes - 1) / lanes, blocks = (vectors + BLOCK - 1) / BLOCK;
    struct kp_launch_dims d = {{kp_grid_blocks(blocks, BLOCK), 1, 1}, {BLOCK, 1, 1}, 0};
    return d;
}

struct kp_launch_dims kp_launch_strided(const kp_device *dev, const struct kp_strided *layout,
                                        int vector_operands, size_t widest)
{
    /* At most 64 blocks a multiprocessor, rows beyond them taken in a
     * grid-stride loop. H200 (kp-bench, % of copy) from 32 to 64: broadcast
     * add (x[M, N] + b[N] / b[M, 1]) 93.9 -> 95.0 in f32, 92.3 -> 93.2 in
     * 16-bit, the permute bshd>bhsd 93.3 -> 94.6 / 94.1 -> 96.0; 128 gave
     * that permute 95.3 / 96.5 but the broadcasts back 0.5-1 point, and 8
     * vectors a thread gave the broadcasts 0.4-0.6 more but the permute's
     * 16-bit 89. No cap took the broadcasts to 89-92, one vector a thread
     * to 69-78 (see kp_launch_strided_capped for the permute). */
    return kp_launch_strided_capped(dev, layout, vector_operands, widest, 64);
}

struct kp_launch_dims kp_launch_strided_capped(const kp_device *dev, const struct kp_strided *layout,
                                               int vector_operands, size_t widest, unsigned blocks_per_sm)
{
    /* x walks the innermost dimension, y the rows (see kp_for_each_strided):
     * short rows share a block, long rows spread over several. Rows that are
     * contiguous in every operand (or, in an input, one value broadcast
     * along the row) move 16 bytes of the widest operand a thread step, and
     * each thread takes about VECTORS_PER_THREAD of them per row, so that the
     * setup of a row (its offsets, the alignment tests) is spread over
     * several. */
    enum { VECTORS_PER_THREAD = 4 };
    uint64_t inner = layout->rank > 0 ? (uint64_t)layout->shape[layout->rank - 1] : 1, rows = 1;
    for (int d = 0; d + 1 < layout->rank; d++)
        rows *= (uint64_t)layout->shape[d];
    /* As kp_rows_vectorisable(): dst's rows contiguous, each input's
     * contiguous or one value broadcast along the row. */
    bool rows_contiguous = vector_operands > 0 && layout->rank > 0 && widest > 0 && widest <= 16;
    for (int k = 0; rows_contiguous && k < vector_operands; k++) {
        const int64_t s = layout->stride[k][layout->rank - 1];
        rows_contiguous = s == 1 || (k > 0 && s == 0);
    }
    if (rows_contiguous) {
        const uint64_t lanes = 16 / widest, vectors = (inner + lanes - 1) / lanes;
        inner = (vectors + VECTORS_PER_THREAD - 1) / VECTORS_PER_THREAD;
    }
    unsigned bx = 1;
    while (bx < KP_STRIDED_BLOCK && bx < inner)
        bx *= 2;
    unsigned by = KP_STRIDED_BLOCK / bx;
    /* blocks_per_sm 0: only the grid's own limits (x threads below 2^31,
     * as kp_grid_blocks; 65535 blocks on y), rows beyond them taken in the
     * kernels' grid-stride loops. */
    const uint64_t sms = (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1);
    const uint64_t cap = blocks_per_sm ? sms * blocks_per_sm : kp_grid_blocks(UINT64_MAX, bx);
    uint64_t gx = (inner + bx - 1) / bx, gy = (rows + by - 1) / by;
    if (gx > cap)
        gx = cap;
    uint64_t gy_cap = cap / gx > 65535 ? 65535 : (cap / gx ? cap / gx : 1);
    if (gy > gy_cap)
        gy = gy_cap;
    struct kp_launch_dims d = {{(unsigned)(gx ? gx : 1), (unsigned)(gy ? gy : 1), 1}, {bx, by, 1}, 0};
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

static kp_status kernel_limits(kp_device *dev, enum kp_module_id id, const char *kernel,
                               int *max_threads, int *static_shared, int *cluster_blocks)
{
    void *fn = NULL;
    kp_status st = kp_module_function(dev, id, kernel, &fn);
    if (st == KP_OK)
        st = dev->be->function_limits(dev->native, fn, max_threads, static_shared, cluster_blocks);
    return st;
}

kp_status kp_kernel_cluster_limits(kp_device *dev, enum kp_module_id id, const char *kernel, int *blocks,
                                   int *static_shared)
{
    int max_threads = 0;
    return kernel_limits(dev, id, kernel, &max_threads, static_shared, blocks);
}

kp_status kp_kernel_max_threads(kp_device *dev, enum kp_module_id id, const char *kernel, int *threads)
{
    int blocks = 0, static_shared = 0;
    return kernel_limits(dev, id, kernel, threads, &static_shared, &blocks);
}
