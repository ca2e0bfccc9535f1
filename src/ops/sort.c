/* kp_argsort: validation and launches of the sort module.
 *
 * Rows of up to KP_SORT_TILE keys: one launch, one block sorting one or
 * more whole rows. Longer rows: a launch sorting KP_SORT_TILE-key tiles into
 * the workspace, then one merge launch per doubling of the sorted run
 * length; the last merge writes dst. The workspace holds two (keys, indices)
 * array pairs for the ping-pong between passes. */
#include <string.h>

#include "kernel_families.h"
#include "kp_sort_abi.h"

#define SCRATCH_ALIGN 256

struct sort_shape {
    uint64_t rows, ncols;
};

/* Rows along the last dim; a rank-0 tensor is one row of one element. */
static struct sort_shape sort_shape_of(const kp_layout *l)
{
    uint64_t n = 1;
    for (int d = 0; d < l->rank; d++)
        n *= (uint64_t)l->shape[d];
    uint64_t ncols = l->rank ? (uint64_t)l->shape[l->rank - 1] : 1;
    struct sort_shape s = {ncols ? n / ncols : 0, ncols};
    return s;
}

/* Byte offsets of the scratch arrays: keys[2] then indices[2]. */
struct scratch_layout {
    size_t keys[2], idx[2], total;
};

static size_t align_up(size_t v)
{
    return (v + SCRATCH_ALIGN - 1) / SCRATCH_ALIGN * SCRATCH_ALIGN;
}

/* False if the arrays would not fit in size_t. */
static bool plan_scratch(struct sort_shape s, size_t key_size, struct scratch_layout *out)
{
    memset(out, 0, sizeof(*out));
    if (s.ncols <= KP_SORT_TILE || s.rows == 0)
        return true;
    uint64_t n = s.rows * s.ncols;
    if (n > SIZE_MAX / 64)
        return false;
    size_t keys = align_up((size_t)n * key_size), idx = align_up((size_t)n * sizeof(uint32_t));
    out->keys[0] = 0;
    out->keys[1] = keys;
    out->idx[0] = 2 * keys;
    out->idx[1] = 2 * keys + idx;
    out->total = 2 * keys + 2 * idx;
    return true;
}

kp_status kp_argsort_workspace_size(const kp_tensor *src, size_t *bytes)
{
    static const char fn[] = "kp_argsort_workspace_size";
    if (!src)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src is NULL", fn);
    if (!bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
    kp_status st = kp_check_dtype(fn, "src", src->dtype);
    if (st != KP_OK)
        return st;
    const kp_layout *l = &src->layout;
    if (l->rank < 0 || l->rank > KP_MAX_RANK)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has rank %d, outside 0..%d", fn, l->rank,
                       KP_MAX_RANK);
    uint64_t count = 1;
    for (int d = 0; d < l->rank; d++) {
        if (l->shape[d] < 0)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has negative shape in dim %d", fn, d);
        uint64_t n = (uint64_t)l->shape[d];
        if (n && count > INT64_MAX / n)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src: element count overflows", fn);
        count *= n;
    }
    struct scratch_layout scratch;
    if (!plan_scratch(sort_shape_of(l), kp_dtype_size(src->dtype), &scratch))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows size_t", fn);
    *bytes = scratch.total;
    return KP_OK;
}

static unsigned ceil_log2(uint64_t v)
{
    unsigned r = 0;
    while (r < 63 && ((uint64_t)1 << r) < v)
        r++;
    return r;
}

/* Grid of `blocks` blocks of `block` threads, capped like kp_launch_1d. */
static struct kp_launch_dims block_grid(const kp_device *dev, uint64_t blocks, unsigned block)
{
    uint64_t cap = (uint64_t)(dev->info.multiprocessors > 0 ? dev->info.multiprocessors : 1) * 32;
    if (blocks > cap)
        blocks = cap;
    struct kp_launch_dims d = {{(unsigned)(blocks ? blocks : 1), 1, 1}, {block, 1, 1}, 0};
    return d;
}

static kp_status check_workspace(const char *fn, kp_stream *stream, const kp_tensor *dst,
                                 const kp_tensor *src, kp_buffer *workspace, size_t needed,
                                 uint64_t ncols)
{
    if (!workspace)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: workspace is NULL but rows of %llu elements need %zu bytes "
                       "(see kp_argsort_workspace_size)", fn, (unsigned long long)ncols, needed);
    kp_status st = kp_check_buffer(fn, "workspace", workspace, stream->device);
    if (st != KP_OK)
        return st;
    if (workspace->size < needed)
        return kp_fail(KP_ERR_BUFFER_TOO_SMALL, "%s: workspace holds %zu bytes but %zu are needed",
                       fn, workspace->size, needed);
    if ((uintptr_t)workspace->ptr % 16)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: workspace is not 16-byte aligned", fn);
    kp_tensor ws = {workspace, KP_DTYPE_U8, {1, {(int64_t)needed}, {1}, 0}};
    st = kp_check_disjoint(fn, "workspace", &ws, "src", src);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "workspace", &ws, "dst", dst);
    return st;
}

kp_status kp_argsort(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                     bool descending, kp_buffer *workspace)
{
    static const char fn[] = "kp_argsort";
    uint64_t n = 0, n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n, &n_src);
    if (st == KP_OK && dst->dtype != KP_DTYPE_U32)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst is %s; it must be u32", fn,
                     kp_dtype_name(dst->dtype));
    if (st == KP_OK)
        st = kp_check_same_shape(fn, dst, src);
    if (st != KP_OK)
        return st;
    struct sort_shape shape = sort_shape_of(&src->layout);
    if (shape.ncols > UINT32_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: rows of %llu elements exceed the u32 index range", fn,
                       (unsigned long long)shape.ncols);
    if (n == 0)
        return KP_OK;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap(fn, dst, src, false);
    struct scratch_layout scratch;
    if (st == KP_OK && !plan_scratch(shape, kp_dtype_size(src->dtype), &scratch))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows size_t", fn);
    if (st == KP_OK && scratch.total)
        st = check_workspace(fn, stream, dst, src, workspace, scratch.total, shape.ncols);
    if (st != KP_OK)
        return st;

    /* Row starts: the dims before the last, merged; columns step by the last stride. */
    int rank = src->layout.rank;
    kp_layout dst_outer = dst->layout, src_outer = src->layout;
    dst_outer.rank = src_outer.rank = rank > 0 ? rank - 1 : 0;
    const kp_layout *outers[] = {&dst_outer, &src_outer};
    struct kp_strided outer;
    kp_layout_merge(2, outers, &outer);
    struct kp_sort_rows p = {
        .rows = (int64_t)shape.rows,
        .ncols = (int64_t)shape.ncols,
        .dst_col_stride = rank > 0 ? dst->layout.strides[rank - 1] : 0,
        .src_col_stride = rank > 0 ? src->layout.strides[rank - 1] : 0,
        .seg_log2 = (int32_t)ceil_log2(shape.ncols),
        .descending = descending ? 1 : 0,
    };
    void *x = kp_tensor_base(src), *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;

    if (shape.ncols <= KP_SORT_TILE) {
        uint64_t rows_per_tile = KP_SORT_TILE >> p.seg_log2;
        struct kp_launch_dims dims =
            block_grid(dev, (shape.rows + rows_per_tile - 1) / rows_per_tile, KP_SORT_BLOCK);
        void *args[] = {&p, &outer, &x, &y};
        return kp_launch_family(stream, KP_KF_ARGSORT_ROWS, src->dtype, &dims, args);
    }

    char *base = workspace->ptr;
    void *keys[2] = {base + scratch.keys[0], base + scratch.keys[1]};
    void *idx[2] = {base + scratch.idx[0], base + scratch.idx[1]};
    uint64_t tiles = shape.rows * ((shape.ncols + KP_SORT_TILE - 1) / KP_SORT_TILE);
    struct kp_launch_dims dims = block_grid(dev, tiles, KP_SORT_BLOCK);
    void *tile_args[] = {&p, &outer, &x, &keys[0], &idx[0]};
    st = kp_launch_family(stream, KP_KF_ARGSORT_TILES, src->dtype, &dims, tile_args);

    dims = block_grid(dev, tiles, KP_SORT_BLOCK);  /* a block makes a tile of outputs at a time */
    int cur = 0;
    for (uint64_t width = KP_SORT_TILE; st == KP_OK && width < shape.ncols; width *= 2) {
        struct kp_sort_merge m = {p.rows, p.ncols, (int64_t)width, p.dst_col_stride};
        if (2 * width >= shape.ncols) {
            void *args[] = {&m, &outer, &keys[cur], &idx[cur], &y};
            st = kp_launch_family(stream, KP_KF_ARGSORT_MERGE_FINAL, src->dtype, &dims, args);
        } else {
            void *args[] = {&m, &keys[cur], &idx[cur], &keys[1 - cur], &idx[1 - cur]};
            st = kp_launch_family(stream, KP_KF_ARGSORT_MERGE, src->dtype, &dims, args);
        }
        cur = 1 - cur;
    }
    return st;
}
