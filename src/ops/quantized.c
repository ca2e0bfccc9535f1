/* The quantized module's ops: format table, argument checks and launches
 * of dequantize, quantize, get_rows and the mat-vec. */
#include <string.h>

#include "index_status.h"
#include "kernel_families.h"
#include "kp_quant_abi.h"
#include "kp_quant_blocks.h"

struct qformat_row {
    kp_qformat format;
    const char *name;
    uint32_t elems, bytes;
};

static const struct qformat_row qformats[] = {
#define KP_QFORMAT_ROW(ID, name, elems, bytes, type) {KP_QFORMAT_##ID, #name, elems, bytes},
    KP_QUANT_FORMATS(KP_QFORMAT_ROW)
#undef KP_QFORMAT_ROW
};
#define QFORMAT_COUNT (sizeof(qformats) / sizeof(qformats[0]))

/* The public values are the block header's ids. */
#define KP_QFORMAT_SAME_ID(ID, name, elems, bytes, type) \
    _Static_assert((int)KP_QFORMAT_##ID == KP_QF_##ID, "kp_qformat " #name " id");
KP_QUANT_FORMATS(KP_QFORMAT_SAME_ID)
#undef KP_QFORMAT_SAME_ID

static const struct qformat_row *find_format(kp_qformat format)
{
    for (size_t i = 0; i < QFORMAT_COUNT; i++)
        if (qformats[i].format == format)
            return &qformats[i];
    return NULL;
}

/* The kernels read fields with loads of this width. */
static uint32_t format_alignment(const struct qformat_row *f)
{
    return KP_QBLOCK_ALIGN(f->bytes);
}

kp_status kp_qformat_get_info(kp_qformat format, kp_qformat_info *info)
{
    KP_CHECK_NOT_NULL(info);
    const struct qformat_row *f = find_format(format);
    if (!f)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %d is not a kp_qformat", __func__, (int)format);
    info->name = f->name;
    info->block_elems = f->elems;
    info->block_bytes = f->bytes;
    info->alignment = format_alignment(f);
    return KP_OK;
}

size_t kp_qformat_count(void)
{
    return QFORMAT_COUNT;
}

kp_qformat kp_qformat_at(size_t index)
{
    return index < QFORMAT_COUNT ? qformats[index].format : (kp_qformat)-1;
}

kp_status kp_qmatrix_packed(kp_qmatrix *m, kp_buffer *buffer, size_t offset, kp_qformat format,
                            int64_t rows, int64_t cols)
{
    KP_CHECK_NOT_NULL(m);
    const struct qformat_row *f = find_format(format);
    if (!f)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %d is not a kp_qformat", __func__, (int)format);
    if (cols < 0 || cols % f->elems)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %lld columns are not a multiple of %s's block of %u elements", __func__,
                       (long long)cols, f->name, f->elems);
    m->buffer = buffer;
    m->offset = offset;
    m->format = format;
    m->rows = rows;
    m->cols = cols;
    m->row_stride = (size_t)(cols / f->elems) * f->bytes;
    return KP_OK;
}

/* The checks every op makes of a quantized matrix: format, shape, strides,
 * alignment and that every byte it names lies in its buffer. *view is the
 * byte range it spans, as a u8 tensor, for the overlap checks. */
static kp_status check_qmatrix(const char *fn, const char *what, const kp_qmatrix *m,
                               const kp_device *dev, const struct qformat_row **format,
                               kp_tensor *view)
{
    if (!m)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
    kp_status st = kp_check_buffer(fn, what, m->buffer, dev);
    if (st != KP_OK)
        return st;
    const struct qformat_row *f = find_format(m->format);
    if (!f)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has format %d, not a kp_qformat", fn, what,
                       (int)m->format);
    if (m->rows < 0 || m->cols < 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s has %lld rows and %lld columns", fn, what,
                       (long long)m->rows, (long long)m->cols);
    if (m->cols % f->elems)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s has %lld columns, not a multiple of %s's block of %u elements", fn,
                       what, (long long)m->cols, f->name, f->elems);
    uint32_t align = format_alignment(f);
    if (m->offset % align || m->row_stride % align)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s's offset (%zu) and row stride (%zu) must be multiples of %u bytes "
                       "for %s", fn, what, m->offset, m->row_stride, align, f->name);
    uint64_t blocks = (uint64_t)m->cols / f->elems;
    if (blocks > INT64_MAX / f->bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: row size overflows", fn, what);
    uint64_t row_bytes = blocks * f->bytes;
    if (m->rows > 1 && m->row_stride < row_bytes)
        return kp_fail(KP_ERR_INVALID_ARGUMENT,
                       "%s: %s's row stride of %zu bytes is less than a row's %llu bytes", fn, what,
                       m->row_stride, (unsigned long long)row_bytes);
    uint64_t span = 0;
    if (m->rows > 0 && row_bytes > 0) {
        uint64_t last = (uint64_t)(m->rows - 1);
        if (last && m->row_stride > (INT64_MAX - row_bytes) / last)
            return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s: rows and row stride overflow", fn, what);
        span = last * m->row_stride + row_bytes;
    }
    if (m->offset > m->buffer->size || span > m->buffer->size - m->offset)
        return kp_fail(KP_ERR_BUFFER_TOO_SMALL,
                       "%s: %s spans bytes %zu..%llu but its buffer holds %zu bytes", fn, what,
                       m->offset, (unsigned long long)(m->offset + span), m->buffer->size);
    kp_tensor v = {m->buffer, KP_DTYPE_U8, {1, {(int64_t)span}, {1}, (int64_t)m->offset}};
    *view = v;
    *format = f;
    return KP_OK;
}

/* kp_check_tensor for the float operands: f32, f16 or bf16. */
static kp_status check_qfloat_tensor(const char *fn, const char *what, const kp_tensor *t,
                                    const kp_device *dev, uint64_t *numel)
{
    kp_status st = kp_check_tensor(fn, what, t, dev, numel);
    if (st != KP_OK || t->dtype == KP_DTYPE_F32 || t->dtype == KP_DTYPE_F16 ||
        t->dtype == KP_DTYPE_BF16)
        return st;
    return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is %s; it must be f32, f16 or bf16", fn, what,
                   kp_dtype_name(t->dtype));
}

/* A rank-2 tensor of exactly rows x cols. */
static kp_status check_matrix_shape(const char *fn, const char *what, const kp_tensor *t,
                                    int64_t rows, int64_t cols)
{
    const kp_layout *l = &t->layout;
    if (l->rank != 2 || l->shape[0] != rows || l->shape[1] != cols)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s must have shape (%lld, %lld)", fn, what,
                       (long long)rows, (long long)cols);
    return KP_OK;
}

static int qfloat_code(kp_dtype d)
{
    return d == KP_DTYPE_F32 ? 0 : d == KP_DTYPE_F16 ? 1 : 2;
}

static enum kp_family_id dequant_family(kp_dtype d)
{
    return d == KP_DTYPE_F32 ? KP_KF_DEQUANTIZE_F32
           : d == KP_DTYPE_F16 ? KP_KF_DEQUANTIZE_F16 : KP_KF_DEQUANTIZE_BF16;
}

/* True when every 8-element group of dst's rows can be stored with
 * 16-byte accesses: dense rows, 16-byte aligned starts. */
static bool dst_vector_ok(const kp_tensor *dst)
{
    const kp_layout *l = &dst->layout;
    size_t esize = kp_dtype_size(dst->dtype);
    if (l->strides[1] != 1)
        return false;
    if ((uintptr_t)kp_tensor_base(dst) % 16)
        return false;
    return l->shape[0] <= 1 || ((uint64_t)l->strides[0] * esize) % 16 == 0;
}

static kp_status launch_dequant(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *src,
                                const kp_tensor *ids, kp_index_status *status)
{
    const kp_layout *l = &dst->layout;
    struct kp_qdequant_args a = {
        .rows = l->shape[0],
        .cols = l->shape[1],
        .src_rows = src->rows,
        .src_row_stride = (int64_t)src->row_stride,
        .dst_row_stride = l->strides[0],
        .dst_col_stride = l->strides[1],
        .ids_stride = ids ? ids->layout.strides[0] : 0,
        .ids_kind = !ids ? 0 : ids->dtype == KP_DTYPE_U32 ? 1 : 2,
        .dst_vector = dst_vector_ok(dst) ? 1 : 0,
    };
    /* groups of 8 elements, a few per thread (kp_dequant_groups) */
    uint64_t groups = (uint64_t)a.rows * (uint64_t)(a.cols / 8);
    if (groups == 0)
        return KP_OK;
    const void *x = (const char *)src->buffer->ptr + src->offset;
    void *y = kp_tensor_base(dst);
    const void *idp = ids ? kp_tensor_base(ids) : NULL;
    void *word = kp_index_status_word(status);
    struct kp_launch_dims dims = kp_launch_1d(stream->device, (groups + 3) / 4, KP_QUANT_BLOCK);
    void *args[] = {&a, &x, &y, &idp, &word};
    return kp_launch_family_qf(stream, dequant_family(dst->dtype), (int)src->format, &dims, args);
}

kp_status kp_dequantize(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *src)
{
    static const char fn[] = "kp_dequantize";
    kp_status st = kp_check_stream(fn, stream);
    const struct qformat_row *f = NULL;
    kp_tensor src_view;
    uint64_t n = 0;
    if (st == KP_OK)
        st = check_qmatrix(fn, "src", src, stream->device, &f, &src_view);
    if (st == KP_OK)
        st = check_qfloat_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = check_matrix_shape(fn, "dst", dst, src->rows, src->cols);
    if (st == KP_OK && n)
        st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK && n)
        st = kp_check_disjoint(fn, "dst", dst, "src", &src_view);
    if (st != KP_OK)
        return st;
    return launch_dequant(stream, dst, src, NULL, NULL);
}

kp_status kp_quantized_get_rows(kp_stream *stream, const kp_tensor *dst, const kp_qmatrix *table,
                                const kp_tensor *ids, kp_index_status *status)
{
    static const char fn[] = "kp_quantized_get_rows";
    kp_status st = kp_check_stream(fn, stream);
    const struct qformat_row *f = NULL;
    kp_tensor table_view;
    uint64_t n = 0, n_ids = 0;
    if (st == KP_OK)
        st = check_qmatrix(fn, "table", table, stream->device, &f, &table_view);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "ids", ids, stream->device, &n_ids);
    if (st == KP_OK && ids->dtype != KP_DTYPE_U32 && ids->dtype != KP_DTYPE_I64)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids are %s; they must be u32 or i64", fn,
                     kp_dtype_name(ids->dtype));
    if (st == KP_OK && ids->layout.rank != 1)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids have rank %d; they must have rank 1", fn,
                     ids->layout.rank);
    if (st == KP_OK)
        st = check_qfloat_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK)
        st = check_matrix_shape(fn, "dst", dst, ids->layout.shape[0], table->cols);
    if (st == KP_OK && status && status->device != stream->device)
        st = kp_fail(KP_ERR_DEVICE_MISMATCH, "%s: status belongs to device %d, the stream to device %d",
                     fn, status->device->info.ordinal, stream->device->info.ordinal);
    if (st == KP_OK && n)
        st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK && n)
        st = kp_check_disjoint(fn, "dst", dst, "table", &table_view);
    if (st == KP_OK && n)
        st = kp_check_disjoint(fn, "dst", dst, "ids", ids);
    if (st != KP_OK)
        return st;
    return launch_dequant(stream, dst, table, ids, status);
}

kp_status kp_quantize(kp_stream *stream, const kp_qmatrix *dst, const kp_tensor *src)
{
    static const char fn[] = "kp_quantize";
    kp_status st = kp_check_stream(fn, stream);
    const struct qformat_row *f = NULL;
    kp_tensor dst_view;
    uint64_t n = 0;
    if (st == KP_OK)
        st = check_qmatrix(fn, "dst", dst, stream->device, &f, &dst_view);
    if (st == KP_OK) {
        char name[KP_KERNEL_NAME_MAX];
        kp_kernel_name_qf(name, KP_KF_QUANTIZE_F32, (int)dst->format);
        if (!name[0])
            st = kp_fail(KP_ERR_UNSUPPORTED,
                         "%s: quantizing to %s is not supported (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, "
                         "Q8_1 are)", fn, f->name);
    }
    if (st == KP_OK)
        st = check_qfloat_tensor(fn, "src", src, stream->device, &n);
    if (st == KP_OK)
        st = check_matrix_shape(fn, "src", src, dst->rows, dst->cols);
    if (st == KP_OK && n)
        st = kp_check_disjoint(fn, "dst", &dst_view, "src", src);
    if (st != KP_OK || n == 0)
        return st;
    struct kp_quantize_args a = {
        .rows = dst->rows,
        .cols = dst->cols,
        .src_row_stride = src->layout.strides[0],
        .src_col_stride = src->layout.strides[1],
        .dst_row_stride = (int64_t)dst->row_stride,
    };
    const void *x = kp_tensor_base(src);
    void *y = (char *)dst->buffer->ptr + dst->offset;
    enum kp_family_id fam = src->dtype == KP_DTYPE_F32 ? KP_KF_QUANTIZE_F32
                            : src->dtype == KP_DTYPE_F16 ? KP_KF_QUANTIZE_F16 : KP_KF_QUANTIZE_BF16;
    struct kp_launch_dims dims = kp_launch_1d(stream->device, n / 4, KP_QUANT_BLOCK);
    void *args[] = {&a, &x, &y};
    return kp_launch_family_qf(stream, fam, (int)dst->format, &dims, args);
}

/* ---- mat-vec */

#define WORKSPACE_ALIGN 256

struct qmv_workspace {
    size_t qs, meta, total;  /* byte offsets of the two arrays, and the size */
};

/* The quantized activations (batch x cols int8), then their metadata
 * (batch rows of KP_QMV_META_STRIDE entries), as the kernels lay them out. */
static bool plan_workspace(int64_t batch, int64_t cols, struct qmv_workspace *w)
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
    struct qmv_workspace w;
    if (!plan_workspace(batch, cols, &w))
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
static int staging_vector(const void *w, size_t row_stride, int64_t rows)
{
    return (uintptr_t)w % 16 == 0 && (rows <= 1 || row_stride % 16 == 0) ? 16 : 2;
}

/* The products kernel for batch rows of 1..8 (the mat-vec). */
static kp_status launch_matvec(kp_stream *stream, const struct kp_qmv_args *a, int format,
                               bool after_act, void **args)
{
    int b = a->batch <= 1 ? 1 : a->batch <= 2 ? 2 : a->batch <= 4 ? 4 : 8;
    enum kp_family_id fam = b == 1 ? KP_KF_QMATVEC_B1 : b == 2 ? KP_KF_QMATVEC_B2
                            : b == 4 ? KP_KF_QMATVEC_B4 : KP_KF_QMATVEC_B8;
    uint64_t blocks = ((uint64_t)a->rows + KP_QMV_ROWS - 1) / KP_QMV_ROWS;
    if (blocks > (1u << 30))
        blocks = 1u << 30;
    /* The products kernel may start while the activation kernel runs: it
     * queues its first weight copies, then waits for the activations. */
    struct kp_launch_dims dims = {{(unsigned)blocks, 1, 1}, {KP_QMV_BLOCK, 1, 1}, 0,
                                  after_act ? KP_LAUNCH_OVERLAP_PRIOR : 0};
    return kp_launch_family_qf(stream, fam, format, &dims, args);
}

/* Batches up to this size run the mat-vec kernels, KP_QMATVEC_MAX_BATCH
 * rows a launch; larger ones the mat-mat. Measured on an H100 (kp-bench
 * qmatmul, 4096 x 4096 and 14336 x 4096, Q4_0/Q8_0/Q4_K/Q6_K): at batch 16
 * two mat-vec launches take 0.5-0.7x the mat-mat's time on 4096 rows and
 * about the same on 14336; at 64 the mat-mat is far ahead. */
#define QMV_CHUNKED_MAX_BATCH 16

/* The products kernel for larger batches (the mat-mat): a block per tile of
 * weight rows x batch rows. The large tile reuses each decoded weight for
 * 64 batch rows, but only where it still gives every multiprocessor a
 * block; otherwise the small one (32 x 16) keeps the device busy. */
static kp_status launch_matmul(kp_stream *stream, const struct kp_qmv_args *a, int format,
                               void **args)
{
    uint64_t large_tiles = ((uint64_t)a->rows + KP_QMM_ROWS(KP_QMM_NB_LARGE) - 1) /
                           KP_QMM_ROWS(KP_QMM_NB_LARGE) *
                           (((uint64_t)a->batch + KP_QMM_NB_LARGE - 1) / KP_QMM_NB_LARGE);
    bool small = a->batch <= 2 * KP_QMM_NB_SMALL ||
                 large_tiles < (uint64_t)stream->device->info.multiprocessors;
    int nb = small ? KP_QMM_NB_SMALL : KP_QMM_NB_LARGE, mr = KP_QMM_ROWS(nb);
    uint64_t row_tiles = ((uint64_t)a->rows + mr - 1) / mr;  /* bounded by quantized_product */
    uint64_t batch_tiles = ((uint64_t)a->batch + nb - 1) / nb;
    struct kp_launch_dims dims = {{(unsigned)row_tiles, (unsigned)batch_tiles, 1},
                                  {KP_QMM_BLOCK, 1, 1}, 0, 0};
    return kp_launch_family_qf(stream, small ? KP_KF_QMATMUL_SMALL : KP_KF_QMATMUL_LARGE, format,
                               &dims, args);
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
        st = check_qmatrix(fn, "w", w, stream->device, &f, &w_view);
    if (st == KP_OK)
        st = check_qfloat_tensor(fn, "x", x, stream->device, &n_x);
    if (st == KP_OK)
        st = vector_operand(fn, "x", x, &xo);
    if (st == KP_OK)
        st = check_qfloat_tensor(fn, "dst", dst, stream->device, &n_dst);
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
    struct qmv_workspace plan = {0, 0, 0};
    if (st == KP_OK && !plan_workspace(xo.batch, w->cols, &plan))
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the workspace size overflows size_t", fn);
    kp_tensor ws = {workspace, KP_DTYPE_U8, {1, {(int64_t)plan.total}, {1}, 0}};
    if (st == KP_OK && plan.total) {
        if (!workspace)
            st = kp_fail(KP_ERR_INVALID_ARGUMENT,
                         "%s: workspace is NULL but %zu bytes are needed "
                         "(see %s_workspace_size)", fn, plan.total, fn);
        if (st == KP_OK)
            st = kp_check_buffer(fn, "workspace", workspace, stream->device);
        if (st == KP_OK && workspace->size < plan.total)
            st = kp_fail(KP_ERR_BUFFER_TOO_SMALL, "%s: workspace holds %zu bytes but %zu are needed",
                         fn, workspace->size, plan.total);
        if (st == KP_OK && (uintptr_t)workspace->ptr % 16)
            st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: workspace is not 16-byte aligned", fn);
        if (st == KP_OK)
            st = kp_check_disjoint(fn, "workspace", &ws, "x", x);
        if (st == KP_OK && n_dst)
            st = kp_check_disjoint(fn, "workspace", &ws, "dst", dst);
        if (st == KP_OK)
            st = kp_check_disjoint(fn, "workspace", &ws, "w", &w_view);
    }
    if (st != KP_OK || n_dst == 0)
        return st;

    kp_device *dev = stream->device;
    char *base = workspace ? workspace->ptr : NULL;
    void *qs = base ? base + plan.qs : NULL, *meta = base ? base + plan.meta : NULL;
    if (n_x) {
        struct kp_qmv_act_args aa = {xo.batch, xo.n, xo.batch_stride, xo.stride};
        const void *xp = kp_tensor_base(x);
        struct kp_launch_dims dims = kp_launch_1d(dev, n_x / 4, KP_QUANT_BLOCK);
        void *args[] = {&aa, &xp, &qs, &meta};
        st = kp_launch_family(stream, KP_KF_QMATVEC_ACT, x->dtype, &dims, args);
        if (st != KP_OK)
            return st;
    }
    const void *wp = (const char *)w->buffer->ptr + w->offset;
    struct kp_qmv_args a = {
        .rows = w->rows,
        .cols = w->cols,
        .batch = xo.batch,
        .w_row_stride = (int64_t)w->row_stride,
        .dst_batch_stride = yo.batch_stride,
        .dst_row_stride = yo.stride,
        .vector = staging_vector(wp, w->row_stride, w->rows),
        .dst_dtype = qfloat_code(dst->dtype),
    };
    void *y = kp_tensor_base(dst);
    if (xo.batch > QMV_CHUNKED_MAX_BATCH) {
        void *args[] = {&a, &wp, &qs, &meta, &y};
        return launch_matmul(stream, &a, (int)w->format, args);
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
        st = launch_matvec(stream, &ac, (int)w->format, b0 == 0 && n_x, args);
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
