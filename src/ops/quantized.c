/* The quantized module's ops: format table, argument checks and launches
 * of dequantize, quantize and get_rows (the products are in
 * quantized_products.c and quantized_moe.c). */
#include <string.h>

#include "index_status.h"
#include "kernel_families.h"
#include "kp_quant_abi.h"
#include "kp_quant_blocks.h"
#include "quantized_internal.h"


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
kp_status kp_qcheck_matrix(const char *fn, const char *what, const kp_qmatrix *m,
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
kp_status kp_qcheck_float_tensor(const char *fn, const char *what, const kp_tensor *t,
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

int kp_qfloat_code(kp_dtype d)
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

/* True when dequantize can take whole tiles (kp_dequant_tiles): no ids,
 * src's rows back to back from a 16-byte boundary, dst dense with 16-byte
 * vectors. */
static bool dequant_tiled_ok(const kp_qmatrix *src, const kp_tensor *ids, const struct kp_qdequant_args *a)
{
    const struct qformat_row *f = find_format(src->format);
    const uint64_t row_bytes = (uint64_t)src->cols / f->elems * f->bytes;
    const uintptr_t at = (uintptr_t)src->buffer->ptr + (uintptr_t)src->offset;
    return !ids && a->dst_vector && at % 16 == 0 &&
           (a->rows <= 1 || (a->dst_row_stride == a->cols && src->row_stride == row_bytes));
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
    if (dequant_tiled_ok(src, ids, &a)) {
        /* a block a tile, every tile at once as the elementwise kernels do
         * (the kernel loops over any tiles beyond kp_grid_blocks' cap) */
        const struct qformat_row *f = find_format(src->format);
        const uint64_t tiles = ((uint64_t)a.rows * (uint64_t)a.cols + KP_DEQUANT_TILE - 1) / KP_DEQUANT_TILE;
        a.tiled = 1;
        dims.grid[0] = kp_grid_blocks(tiles, KP_QUANT_BLOCK);
        dims.shared_bytes = KP_DEQUANT_TILE_BYTES(f->elems, f->bytes);
    }
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
        st = kp_qcheck_matrix(fn, "src", src, stream->device, &f, &src_view);
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "dst", dst, stream->device, &n);
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
        st = kp_qcheck_matrix(fn, "table", table, stream->device, &f, &table_view);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "ids", ids, stream->device, &n_ids);
    if (st == KP_OK && ids->dtype != KP_DTYPE_U32 && ids->dtype != KP_DTYPE_I64)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids are %s; they must be u32 or i64", fn,
                     kp_dtype_name(ids->dtype));
    if (st == KP_OK && ids->layout.rank != 1)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: ids have rank %d; they must have rank 1", fn,
                     ids->layout.rank);
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "dst", dst, stream->device, &n);
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
        st = kp_qcheck_matrix(fn, "dst", dst, stream->device, &f, &dst_view);
    if (st == KP_OK) {
        char name[KP_KERNEL_NAME_MAX];
        kp_kernel_name_qf(name, KP_KF_QUANTIZE_F32, (int)dst->format);
        if (!name[0])
            st = kp_fail(KP_ERR_UNSUPPORTED,
                         "%s: quantizing to %s is not supported (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, "
                         "Q8_1 are)", fn, f->name);
    }
    if (st == KP_OK)
        st = kp_qcheck_float_tensor(fn, "src", src, stream->device, &n);
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

