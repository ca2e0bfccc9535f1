/* kp_fill, kp_copy, kp_copy2d: launches of the fill module. These only move
 * bits, so each dtype maps to the kernel for its element size. */
#include <string.h>

#include "kernel_families.h"

kp_status kp_fill(kp_stream *stream, const kp_tensor *dst, const void *value)
{
    static const char fn[] = "kp_fill";
    uint64_t n = 0;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", dst, stream->device, &n);
    if (st == KP_OK && !value)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: value is NULL", fn);
    if (st != KP_OK || n == 0)
        return st;

    uint64_t bits = 0;  /* the element, widened to the largest kernel parameter */
    memcpy(&bits, value, kp_dtype_size(dst->dtype));
    void *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    if (kp_layout_is_contiguous(&dst->layout)) {
        struct kp_launch_dims dims = kp_launch_elementwise(n, 16 / kp_dtype_size(dst->dtype));
        void *args[] = {&n, &y, &bits};
        return kp_launch_family(stream, KP_KF_FILL, dst->dtype, &dims, args);
    }
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout};
    kp_layout_merge(1, layouts, &layout);
    struct kp_launch_dims dims = kp_launch_strided(dev, &layout, 1, kp_dtype_size(dst->dtype));
    void *args[] = {&n, &layout, &y, &bits};
    return kp_launch_family(stream, KP_KF_FILL_STRIDED, dst->dtype, &dims, args);
}

static kp_status launch_copy2d(kp_stream *stream, kp_dtype dtype, void *y, uint64_t y_stride,
                               const void *x, uint64_t x_stride, uint64_t rows, uint64_t cols)
{
    struct kp_launch_dims dims = kp_launch_1d(stream->device, (cols + 3) / 4, 256);
    /* Rows go to grid.y; keep the total grid near what fills the device. */
    uint64_t per_row = dims.grid[0];
    uint64_t ry = rows < 65535 ? rows : 65535;
    uint64_t cap = (uint64_t)stream->device->info.multiprocessors * 32;
    if (ry * per_row > cap && cap / per_row >= 1)
        ry = cap / per_row;
    dims.grid[1] = (unsigned)(ry ? ry : 1);
    void *args[] = {&rows, &cols, &x, &x_stride, &y, &y_stride};
    return kp_launch_family(stream, KP_KF_COPY2D, dtype, &dims, args);
}

/* A copy that transposes the last two dims of a merged layout (rank 2, or
 * rank 3 whose first dim counts the matrices): dst contiguous along one
 * and src along the other, neither along both. */
struct transpose_plan {
    uint64_t rows, cols, y_stride, x_stride, batch, y_batch, x_batch;
};

static bool transpose_plan_of(const struct kp_strided *l, struct transpose_plan *p)
{
    if (l->rank != 2 && l->rank != 3)
        return false;
    const int a = l->rank - 2, b = l->rank - 1;  /* the two transposed dims */
    const int64_t *dst = l->stride[0], *src = l->stride[1];
    int r, c;  /* dst's contiguous dim c, src's r: y[r][c] = x[c][r] */
    if (dst[b] == 1 && src[a] == 1 && dst[a] != 1 && src[b] != 1) {
        r = a;
        c = b;
    } else if (dst[a] == 1 && src[b] == 1 && dst[b] != 1 && src[a] != 1) {
        r = b;
        c = a;
    } else {
        return false;
    }
    *p = (struct transpose_plan){(uint64_t)l->shape[r], (uint64_t)l->shape[c], (uint64_t)dst[r],
                                 (uint64_t)src[c], 1, 0, 0};
    if (l->rank == 3) {
        p->batch = (uint64_t)l->shape[0];
        p->y_batch = (uint64_t)dst[0];
        p->x_batch = (uint64_t)src[0];
    }
    return true;
}

/* The plan through shared-memory tiles (kernels/fill.cu) of
 * KP_TRANSPOSE16_ROWS x KP_TRANSPOSE16_COLS for 2-byte elements,
 * KP_TRANSPOSE32_ROWS x KP_TRANSPOSE32_COLS for 4-byte ones, else 32 x 32. */
static kp_status launch_transpose(kp_stream *stream, kp_dtype dtype, void *y, const void *x,
                                  const struct transpose_plan *p)
{
    const size_t es = kp_dtype_size(dtype);
    const uint64_t tr = es == 2 ? KP_TRANSPOSE16_ROWS : es == 4 ? KP_TRANSPOSE32_ROWS : 32;
    const uint64_t tc = es == 2 ? KP_TRANSPOSE16_COLS : es == 4 ? KP_TRANSPOSE32_COLS : 32;
    /* A block a tile, as far as the grid reaches (the kernels stride over
     * the rest): H200 (kp-bench, % of copy, f32 / f16 / bf16), from 16
     * blocks a multiprocessor to this, the transposed copy 92 / 94.5 / 94.5
     * -> 96.8 / 96.5 / 96.4, the permutes bsc>bcs 92.6 / 94.4 / 94.4 ->
     * 97.6 / 97.4 / 97.3 and nchw>nhwc 93.2 / 95.7 / 95.8 -> 99.8 / 98.8 /
     * 98.9, 8-byte elements 84 -> 88 (u8, element by element, stays at
     * 16.5); 32 a multiprocessor gained about half as much. 128 x 64 tiles
     * for 4-byte elements lost 7-20 points either way. */
    const uint64_t tiles_c = (p->cols + tc - 1) / tc, tiles_r = (p->rows + tr - 1) / tr * p->batch;
    const uint64_t gy = tiles_r < 65535 ? tiles_r : 65535;
    struct kp_launch_dims dims = {{kp_grid_blocks(tiles_c, 32), (unsigned)(gy ? gy : 1), 1}, {32, 8, 1}, 0};
    void *args[] = {(void *)&p->rows, (void *)&p->cols, &x, (void *)&p->x_stride, &y,
                    (void *)&p->y_stride, (void *)&p->batch, (void *)&p->x_batch, (void *)&p->y_batch};
    return kp_launch_family(stream, KP_KF_TRANSPOSE2D, dtype, &dims, args);
}

kp_status kp_copy(kp_stream *stream, const kp_tensor *dst, const kp_tensor *src)
{
    static const char fn[] = "kp_copy";
    uint64_t n = 0, n_src = 0;
    kp_status st = kp_check_dst_src(fn, stream, dst, src, &n, &n_src);
    if (st == KP_OK && dst->dtype != src->dtype)
        st = kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: dst is %s but src is %s (use a cast)", fn,
                     kp_dtype_name(dst->dtype), kp_dtype_name(src->dtype));
    if (st == KP_OK)
        st = kp_check_same_shape(fn, dst, src);
    if (st != KP_OK || n == 0)
        return st;
    st = kp_check_no_self_overlap(fn, "dst", dst);
    if (st == KP_OK)
        st = kp_check_no_overlap(fn, dst, src, false);
    if (st != KP_OK)
        return st;

    void *x = kp_tensor_base(src), *y = kp_tensor_base(dst);
    kp_device *dev = stream->device;
    size_t es = kp_dtype_size(dst->dtype);
    if (kp_layout_is_contiguous(&dst->layout) && kp_layout_is_contiguous(&src->layout))
        return dev->be->memcpy_d2d(dev->native, stream->native, y, x, n * es);
    struct kp_strided layout;
    const kp_layout *layouts[] = {&dst->layout, &src->layout};
    kp_layout_merge(2, layouts, &layout);
    if (layout.rank == 2 && layout.stride[0][1] == 1 && layout.stride[1][1] == 1)
        return launch_copy2d(stream, dst->dtype, y, (uint64_t)layout.stride[0][0], x,
                             (uint64_t)layout.stride[1][0], (uint64_t)layout.shape[0],
                             (uint64_t)layout.shape[1]);
    struct transpose_plan plan;
    if (transpose_plan_of(&layout, &plan))
        return launch_transpose(stream, dst->dtype, y, x, &plan);
    /* Rows contiguous in both (rank 3+: a permutation that keeps the last
     * dim) go to a kernel with several 16-byte loads a thread in flight,
     * in a grid of a block for every few rows rather than kp_launch_strided's
     * 64 a multiprocessor: H200 (kp-bench, % of copy, f32 / f16 / bf16), the
     * permute bshd>bhsd 94 / 95 / 95 -> 97.2-97.6 for each; 128 or 256 a
     * multiprocessor gave 94.5-97.8, f32 the lower. */
    const int last = layout.rank - 1;
    const bool rows = last >= 0 && layout.stride[0][last] == 1 && layout.stride[1][last] == 1;
    struct kp_launch_dims dims = kp_launch_strided_capped(dev, &layout, 2, es, rows ? 0 : 64);
    void *args[] = {&n, &layout, &x, &y};
    return kp_launch_family(stream, rows ? KP_KF_COPY_STRIDED_ROWS : KP_KF_COPY_STRIDED, dst->dtype,
                            &dims, args);
}

kp_status kp_copy2d(kp_stream *stream, kp_dtype dtype,
                    kp_buffer *dst, size_t dst_offset, size_t dst_stride,
                    const kp_buffer *src, size_t src_offset, size_t src_stride,
                    size_t rows, size_t cols)
{
    static const char fn[] = "kp_copy2d";
    if (rows > INT64_MAX || cols > INT64_MAX || dst_stride > INT64_MAX || src_stride > INT64_MAX ||
        dst_offset > INT64_MAX || src_offset > INT64_MAX)
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: a size or stride exceeds INT64_MAX", fn);
    if (rows > 1 && (dst_stride < cols || src_stride < cols))
        return kp_fail(KP_ERR_INVALID_ARGUMENT, "%s: strides (dst %zu, src %zu) must be >= cols (%zu)",
                       fn, dst_stride, src_stride, cols);
    kp_tensor d = {dst, dtype, {2, {(int64_t)rows, (int64_t)cols}, {(int64_t)dst_stride, 1}, (int64_t)dst_offset}};
    kp_tensor s = {(kp_buffer *)src, dtype, {2, {(int64_t)rows, (int64_t)cols}, {(int64_t)src_stride, 1}, (int64_t)src_offset}};
    uint64_t n = 0;
    kp_status st = kp_check_stream(fn, stream);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "dst", &d, stream->device, &n);
    if (st == KP_OK)
        st = kp_check_tensor(fn, "src", &s, stream->device, &n);
    if (st == KP_OK && n)
        st = kp_check_no_overlap(fn, &d, &s, false);
    if (st != KP_OK || n == 0)
        return st;
    return launch_copy2d(stream, dtype, kp_tensor_base(&d), dst_stride, kp_tensor_base(&s),
                         src_stride, rows, cols);
}
