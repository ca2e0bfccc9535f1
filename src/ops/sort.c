/* kp_argsort: validation and launches of the sort module.
 *
 * Rows of up to KP_SORT_TILE keys: one launch, one block sorting one or
 * more whole rows (rows of up to 64: argsort_rows_short_<dtype>). Longer
 * rows: a radix sort of each row, 8 bits of the key a pass: a launch
 * converting the keys into the workspace and counting each tile's lowest
 * digits, then for each pass a scan of the counts and a scatter (and, but
 * for the first pass, a count first); the last scatter writes dst. The
 * workspace holds two (keys, columns) array pairs for the ping-pong between
 * passes and the counts (256 per tile). */
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

/* Byte offsets of the scratch arrays: keys[2], indices[2], then counts. */
struct scratch_layout {
    size_t keys[2], idx[2], counts, total;
};

#define RADIX_DIGITS 256

static uint64_t tiles_per_row(uint64_t ncols)
{
    return (ncols + KP_SORT_TILE - 1) / KP_SORT_TILE;
}

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
    uint64_t n = s.rows * s.ncols, counts = s.rows * tiles_per_row(s.ncols) * RADIX_DIGITS;
    if (n > SIZE_MAX / 64 || counts > SIZE_MAX / 64)
        return false;
    size_t keys = align_up((size_t)n * key_size), idx = align_up((size_t)n * sizeof(uint32_t));
    out->keys[0] = 0;
    out->keys[1] = keys;
    out->idx[0] = 2 * keys;
    out->idx[1] = 2 * keys + idx;
    out->counts = 2 * keys + 2 * idx;
    out->total = out->counts + align_up((size_t)counts * sizeof(uint32_t));
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
        /* rows padded to fewer than KP_SORT_RADIX_MIN: the bitonic kernel */
        bool radix = ((uint64_t)1 << p.seg_log2) >= KP_SORT_RADIX_MIN;
        return kp_launch_family(stream, radix ? KP_KF_ARGSORT_ROWS : KP_KF_ARGSORT_ROWS_SHORT,
                                src->dtype, &dims, args);
    }

    char *base = workspace->ptr;
    void *keys[2] = {base + scratch.keys[0], base + scratch.keys[1]};
    void *idx[2] = {base + scratch.idx[0], base + scratch.idx[1]};
    void *counts = base + scratch.counts, *no_idx = NULL;
    struct kp_launch_dims tiles = block_grid(dev, shape.rows * tiles_per_row(shape.ncols), KP_SORT_BLOCK);
    struct kp_launch_dims rows = block_grid(dev, shape.rows, KP_SORT_BLOCK);
    void *key_args[] = {&p, &outer, &x, &keys[0], &counts};
    st = kp_launch_family(stream, KP_KF_ARGSORT_KEYS, src->dtype, &tiles, key_args);
    const int passes = (int)kp_dtype_size(src->dtype);
    for (int pass = 0, cur = 0; st == KP_OK && pass < passes; pass++, cur = 1 - cur) {
        struct kp_sort_radix r = {p.rows, p.ncols, p.dst_col_stride, 8 * pass, 0};
        void **in_idx = pass ? &idx[cur] : &no_idx;  /* the first pass's items are in column order */
        if (pass) {
            void *args[] = {&r, &keys[cur], &counts};
            st = kp_launch_family(stream, KP_KF_ARGSORT_HIST, src->dtype, &tiles, args);
        }
        if (st == KP_OK) {
            void *args[] = {&r, &counts};
            st = kp_launch_family(stream, KP_KF_ARGSORT_SCAN, src->dtype, &rows, args);
        }
        if (st != KP_OK)
            break;
        if (pass + 1 == passes) {
            void *args[] = {&r, &outer, &keys[cur], in_idx, &counts, &y};
            st = kp_launch_family(stream, KP_KF_ARGSORT_SCATTER_FINAL, src->dtype, &tiles, args);
        } else {
            void *args[] = {&r, &keys[cur], in_idx, &counts, &keys[1 - cur], &idx[1 - cur]};
            st = kp_launch_family(stream, KP_KF_ARGSORT_SCATTER, src->dtype, &tiles, args);
        }
    }
    return st;
}
