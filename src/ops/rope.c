/* kp_rope: rotary embeddings, launched from the rows module. Every layout
 * becomes strides over the logical shape (b, h, t, d), so one kernel serves
 * the three candle layouts at any strides. */
#include <string.h>

#include "kernel_families.h"

#define ROPE_BLOCK ((unsigned)KP_ROPE_BLOCK)
#define ROPE_ROW_LANES 8u  /* threads a row at least, where it has that many steps */

static bool is_float(kp_dtype dt)
{
    return dt == KP_DTYPE_F32 || dt == KP_DTYPE_F64 || dt == KP_DTYPE_F16 || dt == KP_DTYPE_BF16;
}

static kp_status check_table(const char *fn, const char *what, const kp_tensor *t, const kp_device *dev,
                             kp_dtype dtype, int64_t b, int64_t tlen, int64_t half)
{
    uint64_t n = 0;
    kp_status st = kp_check_tensor(fn, what, t, dev, &n);
    if (st != KP_OK)
        return st;
    st = kp_check_dtype_as_src(fn, what, t, dtype);
    if (st != KP_OK)
        return st;
    const kp_layout *l = &t->layout;
    bool ok = (l->rank == 2 && l->shape[0] == tlen && l->shape[1] == half) ||
              (l->rank == 3 && l->shape[0] == b && l->shape[1] == tlen && l->shape[2] == half);
    if (!ok)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s must have shape (%lld, %lld) or (%lld, %lld, %lld)",
                       fn, what, (long long)tlen, (long long)half, (long long)b, (long long)tlen,
                       (long long)half);
    return KP_OK;
}

/* Strides of a table in (b, t, j) order; b stride 0 for a (t, d/2) table. */
static void table_strides(const kp_tensor *t, int64_t out[3])
{
    const kp_layout *l = &t->layout;
    int o = l->rank == 3 ? 0 : 1;
    out[0] = 0;
    for (int d = 0; d < l->rank; d++)
        out[d + o] = l->strides[d];
}

static bool multiples(const int64_t *strides, int n, int64_t of)
{
    for (int i = 0; i < n; i++)
        if (strides[i] % of != 0)
            return false;
    return true;
}

/* Pairs a thread step takes (kp_rope_args.pairs): 16 bytes of x (P = N / 2
 * pairs, interleaved) or of each half of x (P = N, half) with N elements in
 * 16 bytes, where x and y have contiguous, 16-byte aligned rows, the tables
 * contiguous rows aligned to P elements and d / 2 is a multiple of P; else
 * 1. */
static int32_t rope_pairs(const struct kp_rope_args *a, size_t es, const void *x, const void *y,
                          const void *c, const void *s)
{
    const int64_t n = (int64_t)(16 / es), p = a->interleaved ? n / 2 : n;
    const uintptr_t row_bytes = (uintptr_t)p * es;
    if (p <= 1 || a->half % p != 0 || a->x_stride[3] != 1 || a->y_stride[3] != 1 ||
        a->cos_stride[2] != 1 || a->sin_stride[2] != 1 || !multiples(a->x_stride, 3, n) ||
        !multiples(a->y_stride, 3, n) || !multiples(a->cos_stride, 2, p) ||
        !multiples(a->sin_stride, 2, p) || ((uintptr_t)x | (uintptr_t)y) % 16 != 0 ||
        ((uintptr_t)c | (uintptr_t)s) % row_bytes != 0)
        return 1;
    return (int32_t)p;
}

kp_status kp_rope(kp_stream *stream, kp_rope_layout layout, const kp_tensor *dst, const kp_tensor *src,
                  const kp_tensor *cos_table, const kp_tensor *sin_table)
{
    static const char fn[] = "kp_rope";
    uint64_t n = 0, n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n, &n_src);
    if (st != KP_OK)
        return st;
    if ((unsigned)layout >= KP_ROPE_LAYOUT_COUNT)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: layout %d is not a kp_rope_layout", fn, (int)layout);
    if (!is_float(src->dtype))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src is %s; f32, f64, f16 or bf16 are supported", fn,
                       kp_dtype_name(src->dtype));
    st = kp_check_same_dtype(fn, dst, src);
    if (st != KP_OK)
        return st;
    const kp_layout *x = &src->layout;
    if (x->rank != 4)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: src has rank %d; it must be rank 4 (%s)", fn, x->rank,
                       layout == KP_ROPE_THD ? "b, t, h, d" : "b, h, t, d");
    st = kp_check_same_shape(fn, dst, src);
    if (st != KP_OK)
        return st;
    const bool thd = layout == KP_ROPE_THD;
    const int64_t b = x->shape[0], h = x->shape[thd ? 2 : 1], t = x->shape[thd ? 1 : 2], d = x->shape[3];
    if (d % 2 != 0)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: the last dim of src is %lld; it must be even", fn,
                       (long long)d);
    if (!cos_table || !sin_table)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, cos_table ? "sin_table" : "cos_table");
    st = check_table(fn, "cos_table", cos_table, stream->device, src->dtype, b, t, d / 2);
    if (st == KP_OK)
        st = check_table(fn, "sin_table", sin_table, stream->device, src->dtype, b, t, d / 2);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap(fn, dst, src, true);
    if (st == KP_OK && kp_check_no_overlap(fn, dst, cos_table, false) != KP_OK)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst overlaps cos_table", fn);
    if (st == KP_OK && kp_check_no_overlap(fn, dst, sin_table, false) != KP_OK)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst overlaps sin_table", fn);
    if (st != KP_OK)
        return st;

    struct kp_rope_args a;
    memset(&a, 0, sizeof(a));
    a.b = b;
    a.h = h;
    a.t = t;
    a.half = d / 2;
    a.rows = b * h * t;
    /* (b, h, t, d) order; THD sources are (b, t, h, d). */
    const int order[4] = {0, thd ? 2 : 1, thd ? 1 : 2, 3};
    for (int i = 0; i < 4; i++) {
        a.x_stride[i] = x->strides[order[i]];
        a.y_stride[i] = dst->layout.strides[order[i]];
    }
    table_strides(cos_table, a.cos_stride);
    table_strides(sin_table, a.sin_stride);
    a.interleaved = layout == KP_ROPE_INTERLEAVED;
    const void *xp = kp_tensor_base(src), *cp = kp_tensor_base(cos_table), *sp = kp_tensor_base(sin_table);
    void *yp = kp_tensor_base(dst);
    a.pairs = rope_pairs(&a, kp_dtype_size(src->dtype), xp, yp, cp, sp);
    if (a.rows < ((int64_t)1 << 31)) {
        a.small = 1;
        kp_div_magic((uint32_t)t, &a.div_mul[0], &a.div_shift[0]);
        kp_div_magic((uint32_t)h, &a.div_mul[1], &a.div_shift[1]);
    }
    /* Threads per row: enough for its steps, at most a block. Interleaved
     * vector steps (16 bytes of x, 8 of each table) go KP_ROPE_STEPS to a
     * thread where that leaves ROPE_ROW_LANES threads a row or more, so that
     * each warp access still spans whole 128-byte lines of a row. H200,
     * kp-bench, rows of 128 (b1 t4096, b32 t512): interleaved 68-74 ->
     * 91-94 % of copy. The half layouts' steps (16 bytes of each half and of
     * each table) stay one a thread: two over 8 lanes took f32 thd from 91.6
     * to 85.3, over 4 lanes (16-bit, a warp access over 8 rows' half lines)
     * 88-90 to 43-45. */
    const uint64_t steps = (uint64_t)(a.half / a.pairs);
    const uint64_t per_thread = a.pairs > 1 && a.interleaved ? KP_ROPE_STEPS : 1;
    unsigned group = 1;
    while ((group * per_thread < steps || group < ROPE_ROW_LANES) && group < steps && group < ROPE_BLOCK)
        group <<= 1;
    a.group = (int32_t)group;
    const uint64_t blocks = ((uint64_t)a.rows + ROPE_BLOCK / group - 1) / (ROPE_BLOCK / group);
    struct kp_launch_dims dims = {{kp_grid_blocks(blocks, ROPE_BLOCK), 1, 1}, {ROPE_BLOCK, 1, 1}, 0};
    void *args[] = {&a, &xp, &cp, &sp, &yp};
    return kp_launch_family(stream, KP_KF_ROPE, src->dtype, &dims, args);
}
