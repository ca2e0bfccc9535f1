/* The quantized products on Q8_1 activations: kp_quantized_matvec (batch
 * 1..8) and kp_quantized_matmul (any batch: the mat-vec kernels in chunks,
 * or the tiled mat-mat), and the helpers the mixture-of-experts products
 * share with them. */
#include "kernel_families.h"
#include "kp_quant_abi.h"
#include "quantized_internal.h"

#define WORKSPACE_ALIGN 256

bool kp_qmv_plan_workspace(int64_t batch, int64_t cols, struct kp_qmv_workspace *w)
{
    uint64_t qs = (uint64_t)batch * (uint64_t)cols;
    if (qs > SIZE_MAX / 2)
        return false;
    w->qs = 0;
    w->meta = (size_t)(qs + WORKSPACE_ALIGN - 1) / WORKSPACE_ALIGN * WORKSPACE_ALIGN;
    w->total = w->meta + (size_t)batch * KP_QMV_META_STRIDE((size_t)cols / 32) *
                             sizeof(struct kp_qmv_meta);
    return true;
}

kp_status kp_qcheck_product_cols(const char *fn, const char *what, int64_t cols)
{
    if (cols > KP_QPRODUCT_MAX_COLS)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has %lld columns; at most %lld are supported",
                       fn, what, (long long)cols, (long long)KP_QPRODUCT_MAX_COLS);
    return KP_OK;
}

static kp_status workspace_size(const char *fn, int64_t batch, int64_t max_batch, int64_t cols,
                                size_t *bytes)
{
    if (!bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: bytes is NULL", fn);
    if (batch < 1 || batch > max_batch)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: batch %lld is outside 1..%lld", fn,
                       (long long)batch, (long long)max_batch);
    if (cols < 0 || cols % 32)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %lld columns are not a multiple of 32 (every format's block is)", fn,
                       (long long)cols);
    kp_status st = kp_qcheck_product_cols(fn, "a row", cols);
    if (st != KP_OK)
        return st;
    struct kp_qmv_workspace w;
    if (!kp_qmv_plan_workspace(batch, cols, &w))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows size_t", fn);
    *bytes = w.total;
    return KP_OK;
}

kp_status kp_quantized_matvec_workspace_size(int64_t batch, int64_t cols, size_t *bytes)
{
    return workspace_size("kp_quantized_matvec_workspace_size", batch, KP_QMATVEC_MAX_BATCH, cols,
                          bytes);
}

kp_status kp_quantized_matmul_workspace_size(int64_t batch, int64_t cols, size_t *bytes)
{
    return workspace_size("kp_quantized_matmul_workspace_size", batch, KP_QMATMUL_MAX_BATCH, cols,
                          bytes);
}

kp_status kp_qmv_check_workspace(const char *fn, const kp_stream *stream, kp_buffer *workspace,
                                 const struct kp_qmv_workspace *plan, const kp_tensor *x,
                                 const kp_tensor *dst, uint64_t n_dst, const kp_tensor *w_view)
{
    if (!plan->total)
        return KP_OK;
    kp_tensor ws = {workspace, KP_DTYPE_U8, {1, {(int64_t)plan->total}, {1}, 0}};
    kp_status st = KP_OK;
    if (!workspace)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                     "%s: workspace is NULL but %zu bytes are needed (see %s_workspace_size)", fn,
                     plan->total, fn);
    if (st == KP_OK)
        st = kp_check_buffer(fn, "workspace", workspace, stream->device);
    if (st == KP_OK && workspace->size < plan->total)
        st = kp_fail(KP_ERR_BUFFER_TOO_SMALL, "%s: workspace holds %zu bytes but %zu are needed", fn,
                     workspace->size, plan->total);
    if (st == KP_OK && (uintptr_t)workspace->ptr % 16)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: workspace is not 16-byte aligned", fn);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "workspace", &ws, "x", x);
    if (st == KP_OK && n_dst)
        st = kp_check_disjoint(fn, "workspace", &ws, "dst", dst);
    if (st == KP_OK)
        st = kp_check_disjoint(fn, "workspace", &ws, "w", w_view);
    return st;
}

kp_status kp_qmv_quantize_act(kp_stream *stream, const kp_tensor *x, int64_t rows, int64_t cols,
                              int64_t row_stride, int64_t col_stride, bool interleave, void *base,
                              const struct kp_qmv_workspace *plan)
{
    struct kp_qmv_act_args aa = {rows, cols, row_stride, col_stride, interleave};
    const void *xp = kp_tensor_base(x);
    void *qs = (char *)base + plan->qs, *meta = (char *)base + plan->meta;
    struct kp_launch_dims dims = kp_launch_1d(stream->device, (uint64_t)(rows * cols) / 4,
                                              KP_QUANT_BLOCK);
    void *args[] = {&aa, &xp, &qs, &meta};
    return kp_launch_family(stream, KP_KF_QMATVEC_ACT, x->dtype, &dims, args);
}

/* (batch, n) of a rank-1 (batch 1) or rank-2 operand, with its strides. */
struct qmv_operand {
    int64_t batch, n, batch_stride, stride;
};

static kp_status vector_operand(const char *fn, const char *what, const kp_tensor *t,
                                struct qmv_operand *o)
{
    const kp_layout *l = &t->layout;
    if (l->rank == 1) {
        struct qmv_operand v = {1, l->shape[0], 0, l->strides[0]};
        *o = v;
    } else if (l->rank == 2) {
        struct qmv_operand v = {l->shape[0], l->shape[1], l->strides[0], l->strides[1]};
        *o = v;
    } else {
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has rank %d; it must be 1 or 2", fn, what,
                       l->rank);
    }
    return KP_OK;
}

/* 16 when every tile start of every row is 16-byte aligned (the tiles are
 * 16-byte multiples of a row), so the kernel stages with 16-byte loads;
 * else 2. */
int kp_qmv_staging_vector(const void *w, size_t row_stride, int64_t rows)
{
    return (uintptr_t)w % 16 == 0 && (rows <= 1 || row_stride % 16 == 0) ? 16 : 2;
}

/* Whether the loaded batch-8 mat-vec kernel of `format` is the tensor-core
 * one (KP_QMV_MMA_BLOCK), which takes its activations interleaved. */
static kp_status matvec_b8_on_mma(kp_device *dev, int format, bool *mma)
{
    int threads = 0;
    kp_status st = kp_family_qf_max_threads(dev, KP_KF_QMATVEC_B8, format, &threads);
    *mma = st == KP_OK && threads == KP_QMV_MMA_BLOCK;
    return st;
}

/* The products kernel for batch rows of 1..8 (the mat-vec); mma: the
 * batch-8 kernel is the tensor-core one. */
static kp_status launch_matvec(kp_stream *stream, const struct kp_qmv_args *a, int format,
                               bool after_act, bool mma, void **args)
{
    int b = a->batch <= 1 ? 1 : a->batch <= 2 ? 2 : a->batch <= 4 ? 4 : 8;
    enum kp_family_id fam = b == 1 ? KP_KF_QMATVEC_B1 : b == 2 ? KP_KF_QMATVEC_B2
                            : b == 4 ? KP_KF_QMATVEC_B4 : KP_KF_QMATVEC_B8;
    bool on_mma = b == 8 && mma;
    int rows = on_mma ? KP_QMV_MMA_ROWS : KP_QMV_ROWS_FOR(format, b);
    uint64_t blocks = ((uint64_t)a->rows + rows - 1) / rows;
    if (blocks > (1u << 30))
        blocks = 1u << 30;
    /* The products kernel may start while the activation kernel runs: it
     * queues its first weight copies, then waits for the activations. */
    struct kp_launch_dims dims = {{(unsigned)blocks, 1, 1},
                                  {on_mma ? KP_QMV_MMA_BLOCK : KP_QMV_BLOCK, 1, 1}, 0,
                                  after_act ? KP_LAUNCH_OVERLAP_PRIOR : 0};
    return kp_launch_family_qf(stream, fam, format, &dims, args);
}

/* The mat-mat of tensor-core targets stages its tiles' weights in dynamic
 * shared memory (kp_qmatmul_mma.cuh); the form of other targets (dp4a, or
 * MFMA on AMD's matrix cores) holds two of the small tile's activation
 * stages statically (its large tile runs small ones), the tensor-core form
 * at most the MoE tile's list of its pairs. */
static kp_status qmm_staged(kp_device *dev, enum kp_family_id family, const struct qformat_row *f,
                            bool *staged)
{
    int static_shared = 0;
    kp_status st = kp_family_qf_static_shared(dev, family, (int)f->format, &static_shared);
    *staged = st == KP_OK && static_shared < 2 * KP_QMM_ACT_STAGE_BYTES(KP_QMM_NB_SMALL);
    return st;
}

uint64_t kp_qmm_row_tiles(int64_t rows, int nb)
{
    return ((uint64_t)rows + KP_QMM_ROWS(nb) - 1) / KP_QMM_ROWS(nb);
}

/* The mat-mat's tiles along the batch rows for the tile of nb batch rows. */
static uint64_t qmm_batch_tiles(int64_t batch, int nb)
{
    return ((uint64_t)batch + (uint64_t)nb - 1) / (uint64_t)nb;
}

/* Batches above this size always run the mat-mat. */
#define QMV_CHUNKED_MAX_BATCH 16

/* Whether a product of `batch` rows runs the mat-vec kernels,
 * KP_QMATVEC_MAX_BATCH rows a launch, rather than the mat-mat. Measured on
 * an H100 (kp-bench qmatmul, bf16, 4096 x 4096 and 14336 x 4096, Q2_K-Q8_K,
 * Q4_0, Q8_0, IQ4_XS, each path forced in turn): at batch 9, 12 and 16 the
 * staged mat-mat's small tile ran 4096 rows (128 blocks for 132
 * multiprocessors) at 0.60-1.08x the speed of two mat-vec launches, and
 * 14336 rows (448 blocks) at 0.87-1.47x, below 1 only at batch 9 for Q2_K,
 * Q4_K and IQ4_XS; at batch 24 three mat-vec launches ran at 0.76-1.12x the
 * mat-mat's speed (Q4_0, Q8_0, Q4_K, Q6_K). So batches 9-16 take the
 * mat-mat where its small tiles give every multiprocessor two blocks. The
 * mat-mat of other targets (dp4a, or MFMA on AMD's matrix cores) was not
 * measured against the mat-vec: they keep the mat-vec through batch 16. */
static kp_status runs_matvec(kp_stream *stream, const struct qformat_row *f, int64_t batch,
                             int64_t rows, bool *matvec)
{
    *matvec = batch <= KP_QMATVEC_MAX_BATCH;
    if (*matvec || batch > QMV_CHUNKED_MAX_BATCH)
        return KP_OK;
    bool staged = false;
    kp_status st = qmm_staged(stream->device, KP_KF_QMATMUL_SMALL, f, &staged);
    uint64_t blocks = kp_qmm_row_tiles(rows, KP_QMM_NB_SMALL) * qmm_batch_tiles(batch, KP_QMM_NB_SMALL);
    *matvec = !staged || blocks < 2 * (uint64_t)stream->device->info.multiprocessors;
    return st;
}

/* The products kernel for larger batches (the mat-mat): a block per tile of
 * weight rows x batch rows. The large tile (64 x 64) decodes each weight
 * once for 64 batch rows, the small one (32 x 16) for 16, in four times the
 * blocks: the large one past batch 16 wherever its tiles fill three
 * quarters of the multiprocessors or more. Measured on an H100 (as above,
 * each tile forced in turn; staged kernels): at batch 9-16 the small tile
 * was faster on both shapes; on 4096 rows (64 large tiles up to batch 64,
 * 128 at 128) the small tile ran batch 24-64 1.0-2.7x faster (IQ4_XS 0.9x
 * at 64) and the large one batch 128 1.0-1.9x faster; on 14336 rows (224
 * large tiles) the large one ran batch 24 and 32 1.05-1.40x faster for six
 * of nine formats (0.84-0.98x for Q2_K, Q4_K and Q5_K) and batch 64 and up
 * faster for all. Other targets' tiles (dp4a, or MFMA on AMD's matrix
 * cores) follow the same rule, unmeasured. The tensor-core kernels take
 * their stages as dynamic shared memory (kp_qmm_shared_bytes). */
static kp_status launch_matmul(kp_stream *stream, const struct kp_qmv_args *a,
                               const struct qformat_row *f, void **args)
{
    uint64_t large_tiles =
        kp_qmm_row_tiles(a->rows, KP_QMM_NB_LARGE) * qmm_batch_tiles(a->batch, KP_QMM_NB_LARGE);
    bool small = a->batch <= KP_QMM_NB_SMALL ||
                 4 * large_tiles < 3 * (uint64_t)stream->device->info.multiprocessors;
    int nb = small ? KP_QMM_NB_SMALL : KP_QMM_NB_LARGE;
    uint64_t row_tiles = kp_qmm_row_tiles(a->rows, nb);  /* bounded by quantized_product */
    uint64_t batch_tiles = qmm_batch_tiles(a->batch, nb);
    enum kp_family_id fam = small ? KP_KF_QMATMUL_SMALL : KP_KF_QMATMUL_LARGE;
    struct kp_launch_dims dims = {{(unsigned)row_tiles, (unsigned)batch_tiles, 1},
                                  {KP_QMM_BLOCK, 1, 1}, 0, 0};
    kp_status st = kp_qmm_shared_bytes(stream->device, fam, f, nb, &dims.shared_bytes);
    if (st == KP_OK)
        st = kp_launch_family_qf(stream, fam, (int)f->format, &dims, args);
    return st;
}

kp_status kp_qmm_shared_bytes(kp_device *dev, enum kp_family_id family, const struct qformat_row *f,
                              int nb, unsigned *bytes)
{
    bool staged = false;
    kp_status st = qmm_staged(dev, family, f, &staged);
    *bytes = staged ? KP_QMM_SHARED_BYTES(f->elems, f->bytes, nb) : 0;
    return st;
}

static kp_status quantized_product(const char *fn, int64_t max_batch, kp_stream *stream,
                                   const kp_tensor *dst, const kp_qmatrix *w, const kp_tensor *x,
                                   kp_buffer *workspace)
{
    kp_status st = kp_check_stream(fn, stream);
    const struct qformat_row *f = NULL;
    kp_tensor w_view;
    uint64_t n_dst = 0, n_x = 0;
    struct qmv_operand xo = {0, 0, 0, 0}, yo = {0, 0, 0, 0};
    if (st == KP_OK)
        st = kp_qcheck_matrix(fn, "w", w, stream->device, &f, &w_view);
    if (st == KP_OK)
        st = kp_qcheck_product_cols(fn, "w", w->cols);
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "x", x, stream->device, &n_x);
    if (st == KP_OK)
        st = vector_operand(fn, "x", x, &xo);
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "dst", dst, stream->device, &n_dst);
    if (st == KP_OK)
        st = vector_operand(fn, "dst", dst, &yo);
    if (st == KP_OK && (xo.n != w->cols || yo.n != w->rows || xo.batch != yo.batch))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                     "%s: x (%lld x %lld) and dst (%lld x %lld) do not fit w (%lld rows x %lld "
                     "columns)", fn, (long long)xo.batch, (long long)xo.n, (long long)yo.batch,
                     (long long)yo.n, (long long)w->rows, (long long)w->cols);
    if (st == KP_OK && (xo.batch < 1 || xo.batch > max_batch))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: batch %lld is outside 1..%lld", fn,
                     (long long)xo.batch, (long long)max_batch);
    /* the mat-mat's grid: row tiles in x, at most 2^31 - 1 */
    if (st == KP_OK && xo.batch > KP_QMATVEC_MAX_BATCH && w->rows / 32 >= INT32_MAX)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: w has %lld rows; at most %lld are supported",
                     fn, (long long)w->rows, (long long)INT32_MAX * 32);
    if (st == KP_OK && n_dst)
        st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK && n_dst)
        st = kp_check_disjoint(fn, "dst", dst, "w", &w_view);
    if (st == KP_OK && n_dst)
        st = kp_check_no_overlap_with(fn, dst, "x", x, false);
    struct kp_qmv_workspace plan = {0, 0, 0};
    if (st == KP_OK && !kp_qmv_plan_workspace(xo.batch, w->cols, &plan))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows size_t", fn);
    if (st == KP_OK)
        st = kp_qmv_check_workspace(fn, stream, workspace, &plan, x, dst, n_dst, &w_view);
    if (st != KP_OK || n_dst == 0)
        return st;

    char *base = workspace ? workspace->ptr : NULL;
    void *qs = base ? base + plan.qs : NULL, *meta = base ? base + plan.meta : NULL;
    /* Batches of 5..16 run the batch-8 kernel on at least one chunk: which
     * kind is loaded decides the activations' layout. */
    bool chunked = false, mma = false;
    st = runs_matvec(stream, f, xo.batch, w->rows, &chunked);
    if (st == KP_OK && chunked && xo.batch > KP_QMATVEC_MAX_BATCH / 2)
        st = matvec_b8_on_mma(stream->device, (int)w->format, &mma);
    if (st == KP_OK && n_x)
        st = kp_qmv_quantize_act(stream, x, xo.batch, xo.n, xo.batch_stride, xo.stride, mma, base,
                                 &plan);
    if (st != KP_OK)
        return st;
    const void *wp = (const char *)w->buffer->ptr + w->offset;
    struct kp_qmv_args a = {
        .rows = w->rows,
        .cols = w->cols,
        .batch = xo.batch,
        .w_row_stride = (int64_t)w->row_stride,
        .dst_batch_stride = yo.batch_stride,
        .dst_row_stride = yo.stride,
        .vector = kp_qmv_staging_vector(wp, w->row_stride, w->rows),
        .dst_dtype = kp_qfloat_code(dst->dtype),
    };
    void *y = kp_tensor_base(dst);
    if (!chunked) {
        void *args[] = {&a, &wp, &qs, &meta, &y};
        return launch_matmul(stream, &a, f, args);
    }
    /* the mat-vec, KP_QMATVEC_MAX_BATCH batch rows a launch */
    size_t meta_row = KP_QMV_META_STRIDE((size_t)w->cols / 32) * sizeof(struct kp_qmv_meta);
    for (int64_t b0 = 0; st == KP_OK && b0 < xo.batch; b0 += KP_QMATVEC_MAX_BATCH) {
        struct kp_qmv_args ac = a;
        ac.batch = xo.batch - b0 < KP_QMATVEC_MAX_BATCH ? xo.batch - b0 : KP_QMATVEC_MAX_BATCH;
        void *qs_c = qs ? (char *)qs + b0 * w->cols : NULL;
        void *meta_c = meta ? (char *)meta + (size_t)b0 * meta_row : NULL;
        void *y_c = (char *)y + b0 * yo.batch_stride * (int64_t)kp_dtype_size(dst->dtype);
        void *args[] = {&ac, &wp, &qs_c, &meta_c, &y_c};
        st = launch_matvec(stream, &ac, (int)w->format, b0 == 0 && n_x, mma, args);
    }
    return st;
}

kp_status kp_quantized_matvec(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *w,
                              const kp_tensor *x, kp_buffer *workspace)
{
    return quantized_product("kp_quantized_matvec", KP_QMATVEC_MAX_BATCH, stream, dst, w, x,
                             workspace);
}

kp_status kp_quantized_matmul(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *w,
                              const kp_tensor *x, kp_buffer *workspace)
{
    return quantized_product("kp_quantized_matmul", KP_QMATMUL_MAX_BATCH, stream, dst, w, x,
                             workspace);
}
