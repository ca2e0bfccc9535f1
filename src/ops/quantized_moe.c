/* kp_quantized_moe: the quantized products of mixture-of-experts layers,
 * each token's activations times the matrices of the k experts it was
 * routed to. */
#include "index_status.h"
#include "kernel_families.h"
#include "kp_quant_abi.h"
#include "quantized_internal.h"

/* Pairs per expert (on average) from which the experts' pairs are listed
 * and each expert's run as a mat-mat; below, a mat-vec per pair. Measured
 * on an H100 at the break-even: 16 tokens x 2 of 8 experts of 14336 x 4096
 * (4 pairs each) take 0.40-0.55 ms grouped (Q4_0, Q8_0, Q4_K, Q6_K), about
 * 0.49 ms as 32 pairs of 15 us. */
#define QMOE_GROUPED_MIN_PAIRS_PER_EXPERT 4

/* The workspace: the Q8_1 activations of up to tokens * k rows, then the
 * lists of the grouped path. */
struct moe_workspace {
    struct kp_qmv_workspace act;
    size_t group, total;
};

static bool plan_moe_workspace(int64_t tokens, int64_t k, int64_t n_experts, int64_t cols,
                               struct moe_workspace *w)
{
    if (tokens > INT32_MAX / (k ? k : 1) || n_experts > INT32_MAX / 8)
        return false;  /* the lists hold int32 pair numbers */
    if (!kp_qmv_plan_workspace(tokens * k, cols, &w->act))
        return false;
    uint64_t ints = KP_QMOE_GROUP_INTS((uint64_t)n_experts, (uint64_t)(tokens * k));
    w->group = (w->act.total + 255) / 256 * 256;
    if (w->group + ints * 4 < w->group)
        return false;
    w->total = w->group + ints * 4;
    return true;
}

kp_status kp_quantized_moe_workspace_size(int64_t tokens, int64_t k, int64_t n_experts, int64_t cols,
                                          size_t *bytes)
{
    static const char fn[] = "kp_quantized_moe_workspace_size";
    if (!bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
    if (tokens < 0 || k < 0 || n_experts < 1 || cols < 0 || cols % 32)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: tokens %lld, k %lld, %lld experts, %lld columns: tokens and k must be "
                       ">= 0, experts >= 1, columns a multiple of 32 (every format's block is)", fn,
                       (long long)tokens, (long long)k, (long long)n_experts, (long long)cols);
    kp_status st = kp_qcheck_product_cols(fn, "a row", cols);
    if (st != KP_OK)
        return st;
    struct moe_workspace w;
    if (!plan_moe_workspace(tokens, k, n_experts, cols, &w))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows", fn);
    *bytes = w.total;
    return KP_OK;
}

/* x as rows of activations: (tokens, cols), one row per token, or (tokens,
 * k, cols), one per pair, whose tokens and slots merge into one dim. */
struct moe_x {
    int64_t rows, row_stride, col_stride;
    int per_slot;
};

static kp_status moe_x_rows(const char *fn, const kp_tensor *x, int64_t tokens, int64_t k,
                            int64_t cols, struct moe_x *o)
{
    const kp_layout *l = &x->layout;
    char got[96];
    if (l->rank == 2 && l->shape[0] == tokens && l->shape[1] == cols) {
        *o = (struct moe_x){tokens, l->strides[0], l->strides[1], 0};
        return KP_OK;
    }
    if (l->rank == 3 && l->shape[0] == tokens && l->shape[1] == k && l->shape[2] == cols) {
        if (tokens > 1 && l->strides[0] != k * l->strides[1])
            return kp_fail(KP_ERR_INVALID_ARGUMENT,
                           "%s: x's token stride (%lld) must be k (%lld) times its slot stride "
                           "(%lld)", fn, (long long)l->strides[0], (long long)k,
                           (long long)l->strides[1]);
        *o = (struct moe_x){tokens * k, l->strides[1], l->strides[2], 1};
        return KP_OK;
    }
    return kp_fail(KP_ERR_INVALID_ARGUMENT,
                   "%s: x has shape %s; it must be (%lld, %lld) or (%lld, %lld, %lld)", fn,
                   kp_format_shape(got, sizeof(got), l->rank, l->shape), (long long)tokens,
                   (long long)cols, (long long)tokens, (long long)k, (long long)cols);
}

/* The grouped path's tiles of nb pairs: at most one partial tile an expert. */
static uint64_t moe_tiles(int64_t pairs, int64_t experts, int nb)
{
    return ((uint64_t)pairs + (uint64_t)nb - 1) / (uint64_t)nb + (uint64_t)experts;
}

/* The small batch tile up to 2 x its pairs per expert on average, and
 * wherever the large one's tiles would not fit the grid. (The plain
 * mat-mat's rule before its staged tiles were measured, launch_matmul in
 * quantized_products.c; not measured again for the experts' tiles.) */
static bool moe_small_tiles(int64_t pairs, int64_t experts)
{
    return pairs <= 2 * KP_QMM_NB_SMALL * experts &&
           moe_tiles(pairs, experts, KP_QMM_NB_SMALL) <= 65535;
}

/* Many pairs: qmoe_group lists each expert's pairs, then the mat-mat runs
 * each expert's tiles of them. */
static kp_status moe_grouped(kp_stream *stream, struct kp_qmoe_args *m, const struct qformat_row *f,
                             const void *wp, void *qs, void *meta, const void *ids, void *group, void *y,
                             void *word)
{
    bool small = moe_small_tiles(m->pairs, m->experts);
    int nb = small ? KP_QMM_NB_SMALL : KP_QMM_NB_LARGE;
    m->tile_batch = nb;
    enum kp_family_id fam = small ? KP_KF_QMOE_MM_SMALL : KP_KF_QMOE_MM_LARGE;
    uint64_t row_tiles = kp_qmm_row_tiles(m->mv.rows, nb);
    struct kp_launch_dims one = {{1, 1, 1}, {KP_QMOE_GROUP_BLOCK, 1, 1}, 0, 0};
    struct kp_launch_dims dims = {{(unsigned)row_tiles, (unsigned)moe_tiles(m->pairs, m->experts, nb), 1},
                                  {KP_QMM_BLOCK, 1, 1}, 0, 0};
    void *gargs[] = {m, &ids, &group, &y, &word};
    void *args[] = {m, &wp, &qs, &meta, &group, &y};
    kp_status st = kp_qmm_shared_bytes(stream->device, fam, f, nb, &dims.shared_bytes);
    if (st == KP_OK)
        st = kp_launch_family(stream, KP_KF_QMOE_GROUP, KP_DTYPE_U8, &one, gargs);
    if (st == KP_OK)
        st = kp_launch_family_qf(stream, fam, (int)f->format, &dims, args);
    return st;
}

kp_status kp_quantized_moe(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *experts,
                           int64_t n_experts, const kp_tensor *ids, const kp_tensor *x,
                           kp_buffer *workspace, kp_index_status *status)
{
    static const char fn[] = "kp_quantized_moe";
    kp_status st = kp_check_stream(fn, stream);
    const struct qformat_row *f = NULL;
    kp_tensor w_view;
    uint64_t n_dst = 0, n_x = 0, n_ids = 0;
    if (st == KP_OK)
        st = kp_qcheck_matrix(fn, "experts", experts, stream->device, &f, &w_view);
    if (st == KP_OK)
        st = kp_qcheck_product_cols(fn, "experts", experts->cols);
    if (st == KP_OK && (n_experts < 1 || experts->rows % n_experts))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                     "%s: experts has %lld rows, which %lld experts do not divide evenly", fn,
                     (long long)experts->rows, (long long)n_experts);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "ids", ids, stream->device, &n_ids);
    if (st == KP_OK && ids->dtype != KP_DTYPE_U32 && ids->dtype != KP_DTYPE_I64)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids are %s; they must be u32 or i64", fn,
                     kp_dtype_name(ids->dtype));
    if (st == KP_OK && ids->layout.rank != 2)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids have rank %d; they must be (tokens, k)", fn,
                     ids->layout.rank);
    if (st != KP_OK)
        return st;
    const int64_t tokens = ids->layout.shape[0], k = ids->layout.shape[1];
    const int64_t rows = experts->rows / n_experts, cols = experts->cols;
    struct moe_x xr = {0, 0, 0, 0};
    st = kp_qcheck_float_tensor(fn, "x", x, stream->device, &n_x);
    if (st == KP_OK)
        st = moe_x_rows(fn, x, tokens, k, cols, &xr);
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "dst", dst, stream->device, &n_dst);
    if (st == KP_OK) {
        int64_t shape[3] = {tokens, k, rows};
        st = kp_check_shape_is(fn, "dst", dst, 3, shape);
    }
    if (st == KP_OK && status && status->device != stream->device)
        st = kp_fail(KP_ERR_DEVICE_MISMATCH, "%s: status belongs to device %d, the stream to device %d",
                     fn, status->device->info.ordinal, stream->device->info.ordinal);
    if (st == KP_OK && n_dst)
        st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK && n_dst)
        st = kp_check_disjoint(fn, "dst", dst, "experts", &w_view);
    if (st == KP_OK && n_dst)
        st = kp_check_disjoint(fn, "dst", dst, "ids", ids);
    if (st == KP_OK && n_dst)
        st = kp_check_no_overlap_with(fn, dst, "x", x, false);
    if (st == KP_OK && moe_tiles(tokens * k, n_experts, KP_QMM_NB_LARGE) > 65535)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                     "%s: %lld pairs over %lld experts take more than 65535 tiles of %d pairs", fn,
                     (long long)(tokens * k), (long long)n_experts, KP_QMM_NB_LARGE);
    struct moe_workspace plan = {{0, 0, 0}, 0, 0};
    if (st == KP_OK && !plan_moe_workspace(tokens, k, n_experts, cols, &plan))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows", fn);
    struct kp_qmv_workspace whole = {plan.act.qs, plan.act.meta, plan.total};
    if (st == KP_OK && n_dst)
        st = kp_qmv_check_workspace(fn, stream, workspace, &whole, x, dst, n_dst, &w_view);
    if (st != KP_OK || n_dst == 0)
        return st;

    char *base = workspace->ptr;
    void *qs = base + plan.act.qs, *meta = base + plan.act.meta, *group = base + plan.group;
    if (n_x)
        st = kp_qmv_quantize_act(stream, x, xr.rows, cols, xr.row_stride, xr.col_stride, false,
                                 base, &plan.act);
    if (st != KP_OK)
        return st;
    const void *wp = (const char *)experts->buffer->ptr + experts->offset;
    struct kp_qmoe_args m = {
        .tile_batch = 0,
        .mv = {
            .rows = rows,
            .cols = cols,
            .batch = 1,
            .w_row_stride = (int64_t)experts->row_stride,
            .dst_batch_stride = 0,
            .dst_row_stride = dst->layout.strides[2],
            .vector = kp_qmv_staging_vector(wp, experts->row_stride, experts->rows),
            .dst_dtype = kp_qfloat_code(dst->dtype),
        },
        .experts = n_experts,
        .expert_stride = rows * (int64_t)experts->row_stride,
        .pairs = tokens * k,
        .k = k,
        .ids_token_stride = ids->layout.strides[0],
        .ids_slot_stride = ids->layout.strides[1],
        .dst_token_stride = dst->layout.strides[0],
        .dst_slot_stride = dst->layout.strides[1],
        .ids_kind = ids->dtype == KP_DTYPE_U32 ? 1 : 2,
        .x_per_slot = xr.per_slot,
    };
    const void *idp = kp_tensor_base(ids);
    void *y = kp_tensor_base(dst), *word = kp_index_status_word(status);
    if (m.pairs >= QMOE_GROUPED_MIN_PAIRS_PER_EXPERT * n_experts || m.pairs > 65535)
        return moe_grouped(stream, &m, f, wp, qs, meta, idp, group, y, word);
    uint64_t row_blocks = ((uint64_t)rows + KP_QMOE_ROWS - 1) / KP_QMOE_ROWS;
    if (row_blocks > (1u << 30))
        row_blocks = 1u << 30;
    /* a pair a block row; as the mat-vec, the products may start while the
     * activations are quantized, and wait for them */
    struct kp_launch_dims dims = {{(unsigned)row_blocks, (unsigned)m.pairs, 1},
                                  {KP_QMV_BLOCK, 1, 1}, 0, n_x ? KP_LAUNCH_OVERLAP_PRIOR : 0};
    void *args[] = {&m, &wp, &qs, &meta, &idp, &y, &word};
    return kp_launch_family_qf(stream, KP_KF_QMOE, (int)experts->format, &dims, args);
}
