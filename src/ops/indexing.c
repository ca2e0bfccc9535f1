/* kp_index_select, kp_gather, kp_scatter, kp_scatter_add, kp_index_add:
 * validation, layouts and launches of the indexing module.
 *
 * Every op but the row-copy path of index_select runs one strided kernel
 * over an iteration shape (dst's for the reading ops, src's for the writing
 * ones) with four operands: dst, ids, src and the position in ids. The
 * indexed operand (src when reading, dst when writing) gets stride 0 at
 * `dim`; the kernel adds id * its real `dim` stride. Rank-1 ids of
 * index_select and index_add are broadcast: their only stride is at `dim`. */
#include <string.h>

#include "index_status.h"
#include "kernel_families.h"
#include "kp_indexing_abi.h"

enum index_op { OP_INDEX_SELECT, OP_GATHER, OP_SCATTER, OP_SCATTER_ADD, OP_INDEX_ADD };

static const char *const op_names[] = {
    [OP_INDEX_SELECT] = "kp_index_select",
    [OP_GATHER] = "kp_gather",
    [OP_SCATTER] = "kp_scatter",
    [OP_SCATTER_ADD] = "kp_scatter_add",
    [OP_INDEX_ADD] = "kp_index_add",
};

static bool reads_through_ids(enum index_op op)
{
    return op == OP_INDEX_SELECT || op == OP_GATHER;
}

static bool ids_are_rank1(enum index_op op)
{
    return op == OP_INDEX_SELECT || op == OP_INDEX_ADD;
}

static bool adds(enum index_op op)
{
    return op == OP_SCATTER_ADD || op == OP_INDEX_ADD;
}

static bool same_shape_except(const kp_layout *a, const kp_layout *b, int dim)
{
    if (a->rank != b->rank)
        return false;
    for (int d = 0; d < a->rank; d++)
        if (d != dim && a->shape[d] != b->shape[d])
            return false;
    return true;
}

/* Shape rules of each op; `full` is the tensor indexed along dim (src when
 * reading, dst when writing) and `part` the other one. */
static kp_status check_shapes(enum index_op op, const kp_tensor *dst, const kp_tensor *src,
                              const kp_tensor *ids, int dim)
{
    const char *fn = op_names[op];
    const kp_layout *full = reads_through_ids(op) ? &src->layout : &dst->layout;
    const kp_layout *part = reads_through_ids(op) ? &dst->layout : &src->layout;
    const char *full_name = reads_through_ids(op) ? "src" : "dst";
    const char *part_name = reads_through_ids(op) ? "dst" : "src";
    if (dim < 0 || dim >= full->rank)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dim %d is not a dimension of %s (rank %d)", fn,
                       dim, full_name, full->rank);
    if (part->rank != full->rank)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has rank %d but %s has rank %d", fn,
                       part_name, part->rank, full_name, full->rank);
    if (ids_are_rank1(op)) {
        if (ids->layout.rank != 1)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids must have rank 1, not %d", fn,
                           ids->layout.rank);
        if (!same_shape_except(part, full, dim) || part->shape[dim] != ids->layout.shape[0])
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: %s shape must be %s's with the ids' length %lld at dim %d", fn,
                           part_name, full_name, (long long)ids->layout.shape[0], dim);
        return KP_OK;
    }
    if (!same_shape_except(&ids->layout, full, dim))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids shape must equal %s's except at dim %d",
                       fn, full_name, dim);
    bool same = true;
    for (int d = 0; d < part->rank; d++)
        same &= part->shape[d] == ids->layout.shape[d];
    if (!same)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s and ids shapes differ", fn, part_name);
    return KP_OK;
}

/* Checks every argument; *iterations receives the element count of the
 * iteration shape (0: nothing to do). */
static kp_status check_args(enum index_op op, kp_stream *stream, const kp_tensor *dst,
                            const kp_tensor *src, const kp_tensor *ids, int dim,
                            const kp_index_status *status, uint64_t *iterations)
{
    const char *fn = op_names[op];
    uint64_t n_dst = 0, n_src = 0, n_ids = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n_dst, &n_src);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "ids", ids, stream->device, &n_ids);
    if (st == KP_OK)
        st = kp_check_same_dtype(fn, dst, src);
    if (st == KP_OK && ids->dtype != KP_DTYPE_U8 && ids->dtype != KP_DTYPE_U32 &&
        ids->dtype != KP_DTYPE_I64)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids are %s; they must be u8, u32 or i64", fn,
                     kp_dtype_name(ids->dtype));
    if (st == KP_OK)
        st = check_shapes(op, dst, src, ids, dim);
    if (st == KP_OK && status && status->device != stream->device)
        st = kp_fail(KP_ERR_DEVICE_MISMATCH, "%s: status belongs to device %d, the stream to device %d",
                     fn, status->device->info.ordinal, stream->device->info.ordinal);
    *iterations = reads_through_ids(op) ? n_dst : n_src;
    if (st != KP_OK || *iterations == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "dst", dst, "src", src);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "dst", dst, "ids", ids);
    return st;
}

/* ---- layouts of the strided path */

/* `l` iterated over `shape` (same rank) with no stride at `dim`. */
static kp_layout indexed_operand(const kp_layout *l, const kp_layout *iter, int dim)
{
    kp_layout out = *l;
    memcpy(out.shape, iter->shape, sizeof(out.shape));
    out.strides[dim] = 0;
    return out;
}

/* Rank-1 ids broadcast over `iter`: they step only along `dim`. */
static kp_layout ids_along_dim(const kp_tensor *ids, const kp_layout *iter, int dim)
{
    kp_layout out = *iter;
    memset(out.strides, 0, sizeof(out.strides));
    out.strides[dim] = ids->layout.strides[0];
    return out;
}

/* Row-major linear index in ids of each iteration element: ids have the
 * iteration shape, or (rank-1 ids) their index is the coordinate at `dim`. */
static kp_layout positions_in_ids(const kp_layout *iter, int dim, bool rank1_ids)
{
    kp_layout out = *iter;
    int64_t stride = 1;
    for (int d = iter->rank - 1; d >= 0; d--) {
        out.strides[d] = rank1_ids ? (d == dim) : stride;
        stride *= iter->shape[d];
    }
    return out;
}

/* dst's buffer, which the adding kernels' sub-word atomics stay inside. */
static struct kp_byte_span dst_span(const kp_tensor *dst)
{
    uintptr_t begin = (uintptr_t)kp_buffer_device_ptr(dst->buffer);
    struct kp_byte_span span = {begin, begin + kp_buffer_size(dst->buffer)};
    return span;
}

static kp_status launch_strided(enum index_op op, kp_stream *stream, const kp_tensor *dst,
                                const kp_tensor *src, const kp_tensor *ids, int dim,
                                kp_index_status *status, uint64_t n)
{
    bool reading = reads_through_ids(op), rank1 = ids_are_rank1(op);
    const kp_layout *iter = reading ? &dst->layout : &src->layout;
    kp_layout ops[4];
    ops[0] = reading ? dst->layout : indexed_operand(&dst->layout, iter, dim);
    ops[1] = rank1 ? ids_along_dim(ids, iter, dim) : ids->layout;
    ops[2] = reading ? indexed_operand(&src->layout, iter, dim) : src->layout;
    ops[3] = positions_in_ids(iter, dim, rank1);
    const kp_layout *layouts[] = {&ops[0], &ops[1], &ops[2], &ops[3]};
    struct kp_strided layout;
    kp_layout_merge(4, layouts, &layout);

    const kp_layout *indexed = reading ? &src->layout : &dst->layout;
    struct kp_index_dim along = {indexed->strides[dim], indexed->shape[dim]};
    void *d = kp_tensor_base(dst), *s = kp_tensor_base(src), *i = kp_tensor_base(ids);
    void *w = kp_index_status_word(status);
    struct kp_launch_dims dims = kp_launch_strided(stream->device, &layout, 0, 0);
    /* The adding kernels keep their sub-word atomics inside dst's buffer;
     * the others have no span parameter, and the driver reads only as many
     * arguments as the kernel declares. */
    struct kp_byte_span span = dst_span(dst);
    void *args[] = {&n, &layout, &along, &d, &s, &i, &w, &span};
    enum kp_family_id family = reading ? KP_KF_GATHER
                               : op == OP_SCATTER ? KP_KF_SCATTER : KP_KF_SCATTER_ADD;
    return kp_launch_family_ids(stream, family, ids->dtype, dst->dtype, &dims, args);
}

/* ---- the row path: whole rows copied or added through ids */

/* Collapses dims [from, to) of `l` into one dim of *size elements and
 * *stride; false if they are not evenly strided. Size-1 dims are ignored. */
static bool collapse(const kp_layout *l, int from, int to, int64_t *size, int64_t *stride)
{
    int64_t n = 1, s = 0;
    for (int d = to - 1; d >= from; d--) {
        if (l->shape[d] == 1)
            continue;
        if (n == 1) {
            n = l->shape[d];
            s = l->strides[d];
            continue;
        }
        if (s == 0 ? l->strides[d] != 0 : l->strides[d] % s != 0 || l->strides[d] / s != n)
            return false;
        n *= l->shape[d];
    }
    *size = n;
    *stride = s;
    return true;
}

static unsigned ceil_log2(uint64_t v)
{
    unsigned r = 0;
    while (r < 63 && ((uint64_t)1 << r) < v)
        r++;
    return r;
}

/* Fills *p and returns true if dst and src have contiguous rows after `dim`
 * and collapsible dims before it: index_select and index_add, whose rank-1
 * ids pick rows, and gather, scatter and scatter_add whose ids are constant
 * along each row (stride 0 after `dim`, as torch's expand of a column of ids
 * gives: an embedding lookup or its write-back), which then copy or add rows
 * instead of elements. */
static bool plan_rows(enum index_op op, const kp_tensor *dst, const kp_tensor *src,
                      const kp_tensor *ids, int dim, struct kp_index_rows *p)
{
    int rank = dst->layout.rank;
    int64_t row_len, dst_in, src_in, outer, dst_out, src_out, outer_src, outer_ids, ids_out = 0;
    if (!collapse(&dst->layout, dim + 1, rank, &row_len, &dst_in) ||
        !collapse(&src->layout, dim + 1, rank, &row_len, &src_in) ||
        (row_len > 1 && (dst_in != 1 || src_in != 1)))
        return false;
    if (!collapse(&dst->layout, 0, dim, &outer, &dst_out) ||
        !collapse(&src->layout, 0, dim, &outer_src, &src_out))
        return false;
    const bool rank1 = ids_are_rank1(op), scatter = !reads_through_ids(op);
    if (!rank1) {
        for (int d = dim + 1; d < rank; d++)
            if (ids->layout.shape[d] > 1 && ids->layout.strides[d] != 0)
                return false;
        if (!collapse(&ids->layout, 0, dim, &outer_ids, &ids_out))
            return false;
    }
    size_t es = kp_dtype_size(dst->dtype);
    uint64_t vectors = ((uint64_t)row_len * es + 15) / 16;
    unsigned lanes_log2 = ceil_log2(vectors);
    /* Copies: at most 64 threads a row, so a block of 256 takes four rows
     * (their ids read together) and a thread several rounds of four
     * vectors. H200 (kp-bench, % of copy, f32 / f16 / bf16; from 256 lanes
     * to 64): index_select rows of 4096 92 -> 95.7 / 96.4 / 96.2, gather of
     * 4096 rows of a 32000 x 4096 table 90 / 89 / 89 -> 90-92 / 96-98 /
     * 96-98, scatter 89 / 86 / 86 -> 88-90 / 90-92 / 91-94; 32 lanes were
     * within 2 points either way, 16 lower. The adds keep 256: with 64
     * their 16-byte reductions fell from 78 to 57-61 %. */
    const unsigned most = adds(op) ? 8 : 6;
    if (lanes_log2 > most)
        lanes_log2 = most;
    /* ids run along the side that is not indexed: dst reading, src scattering */
    const kp_tensor *indexed = scatter ? dst : src, *other = scatter ? src : dst;
    const int64_t count = other->layout.shape[dim];
    *p = (struct kp_index_rows){
        .rows = outer * count,
        .count = count,
        .row_len = row_len,
        .dst_outer_stride = dst_out,
        .dst_dim_stride = dst->layout.strides[dim],
        .src_outer_stride = src_out,
        .src_dim_stride = src->layout.strides[dim],
        .dim_size = indexed->layout.shape[dim],
        .ids_stride = ids->layout.strides[rank1 ? 0 : dim],
        .ids_outer_stride = ids_out,
        .lanes_log2 = (int32_t)lanes_log2,
        .flags = (scatter ? KP_INDEX_ROWS_SCATTER : 0) | (rank1 ? 0 : KP_INDEX_ROWS_REPORT_ROWS),
    };
    return true;
}

static kp_status launch_rows(enum index_op op, kp_stream *stream, const kp_tensor *dst,
                             const kp_tensor *src, const kp_tensor *ids, kp_index_status *status,
                             struct kp_index_rows *p)
{
    const unsigned block = 256;
    uint64_t rows_per_block = block >> p->lanes_log2;
    uint64_t blocks = ((uint64_t)p->rows + rows_per_block - 1) / rows_per_block;
    struct kp_launch_dims dims = kp_launch_1d(stream->device, blocks * block, block);
    void *d = kp_tensor_base(dst), *s = kp_tensor_base(src), *i = kp_tensor_base(ids);
    void *w = kp_index_status_word(status);
    struct kp_byte_span span = dst_span(dst);  /* add_rows only, as in launch_strided */
    void *args[] = {p, &d, &s, &i, &w, &span};
    return kp_launch_family_ids(stream, adds(op) ? KP_KF_ADD_ROWS : KP_KF_COPY_ROWS, ids->dtype,
                                dst->dtype, &dims, args);
}

/* ---- entry points */

static kp_status run(enum index_op op, kp_stream *stream, const kp_tensor *dst,
                     const kp_tensor *src, const kp_tensor *ids, int dim, kp_index_status *status)
{
    uint64_t n = 0;
    kp_status st = check_args(op, stream, dst, src, ids, dim, status, &n);
    if (st != KP_OK || n == 0)
        return st;
    struct kp_index_rows rows;
    if (plan_rows(op, dst, src, ids, dim, &rows))
        return launch_rows(op, stream, dst, src, ids, status, &rows);
    return launch_strided(op, stream, dst, src, ids, dim, status, n);
}

kp_status kp_index_select(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                          const kp_tensor *ids, int dim, kp_index_status *status)
{
    return run(OP_INDEX_SELECT, stream, dst, src, ids, dim, status);
}

kp_status kp_gather(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                    const kp_tensor *ids, int dim, kp_index_status *status)
{
    return run(OP_GATHER, stream, dst, src, ids, dim, status);
}

kp_status kp_scatter(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                     const kp_tensor *ids, int dim, kp_index_status *status)
{
    return run(OP_SCATTER, stream, dst, src, ids, dim, status);
}

kp_status kp_scatter_add(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                         const kp_tensor *ids, int dim, kp_index_status *status)
{
    return run(OP_SCATTER_ADD, stream, dst, src, ids, dim, status);
}

kp_status kp_index_add(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src,
                       const kp_tensor *ids, int dim, kp_index_status *status)
{
    return run(OP_INDEX_ADD, stream, dst, src, ids, dim, status);
}
