// spatial: im2col / col2im, max and average pooling, nearest and bilinear
// upsampling, with PyTorch's index arithmetic (see include/kernelpack/spatial.h).
// Each thread step computes a run of consecutive output elements of a row,
// rows ordered as the launcher chose (kp_spatial_abi.h) so that stores are
// contiguous in NCHW and in channels-last memory.
// Spatial sizes fit in int (the launchers check); offsets are 64-bit.
#include "kp_device.cuh"
#include "kp_spatial_abi.h"

struct kp_pos {
    int64_t n, c;
    int y, x;
};

KP_DEVICE int64_t kp_offset(const int64_t *stride, int64_t n, int64_t c, int64_t y, int64_t x) {
    return n * stride[0] + c * stride[1] + y * stride[2] + x * stride[3];
}

// Division by a divisor fixed for the kernel: a multiply and a shift for
// dividends below 2^31 with the launcher's magic numbers (uint32_t), a
// plain division for larger ones (uint64_t).
template <typename I> struct kp_divider;
template <> struct kp_divider<uint32_t> {
    uint32_t m, s;
    KP_DEVICE kp_divider(const kp_spatial_args &a, int k, int64_t) : m(a.div_mul[k]), s(a.div_shift[k]) {}
    KP_DEVICE uint32_t div(uint32_t n) const { return (__umulhi(n, m) + n) >> s; }
};
template <> struct kp_divider<uint64_t> {
    uint64_t d;
    KP_DEVICE kp_divider(const kp_spatial_args &, int, int64_t div) : d((uint64_t)div) {}
    KP_DEVICE uint64_t div(uint64_t n) const { return n / d; }
};

// 16 bytes of T, for the stores of one thread's run of outputs.
template <typename T> struct alignas(16) kp_vec16 {
    T v[16 / sizeof(T)];
};

// Walks the output in runs of 16 bytes of consecutive elements of a row:
// each thread decodes a run's position once, asks op.value() for each of
// its elements and stores them, as one 16-byte store where dst is
// contiguous along the row and aligned. Index type I: see kp_divider.
template <typename I, bool NCH, typename T, typename Op>
KP_DEVICE void kp_spatial_runs(const kp_spatial_args &a, T *dst, const Op &op) {
    const int VEC = (int)(16 / sizeof(T));
    const I runs_per_row = (I)((a.row_len + VEC - 1) / VEC);
    const I runs = (I)a.rows * runs_per_row;
    const kp_divider<I> by_run(a, 0, runs_per_row), by_d2(a, 1, a.d2), by_d1(a, 2, a.d1);
    const int64_t step = NCH ? a.dst_stride[3] : a.dst_stride[1];
    for (I run = (I)(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x); run < runs;
         run += (I)(gridDim.x * (uint64_t)blockDim.x)) {
        const I row = by_run.div(run), r01 = by_d2.div(row), r0 = by_d1.div(r01);
        const int64_t first = (int64_t)(run - row * runs_per_row) * VEC;
        const int64_t r2 = (int64_t)(row - r01 * (I)a.d2), r1 = (int64_t)(r01 - r0 * (I)a.d1);
        kp_pos p;
        p.n = (int64_t)r0;
        p.c = NCH ? r1 : first;
        p.y = (int)(NCH ? r2 : r1);
        p.x = (int)(NCH ? first : r2);
        T *out = dst + kp_offset(a.dst_stride, p.n, p.c, p.y, p.x);
        const int count = a.row_len - first < VEC ? (int)(a.row_len - first) : VEC;
        // Every element is computed (a short run repeats its last one), so
        // the work that does not depend on the element is shared by all.
        kp_vec16<T> vals;
#pragma unroll
        for (int u = 0; u < VEC; u++) {
            kp_pos q = p;
            const int e = u < count ? u : count - 1;
            if (NCH)
                q.x += e;
            else
                q.c += e;
            vals.v[u] = op.value(q);
        }
        if (count == VEC && step == 1 && ((uintptr_t)out & 15) == 0) {
            *(kp_vec16<T> *)out = vals;
        } else {
#pragma unroll
            for (int u = 0; u < VEC; u++)
                if (u < count)
                    out[u * step] = vals.v[u];
        }
    }
}

// Runs op over every output element in the launcher's row order (a
// template argument, so that what is constant along a row, such as the
// channel in NCHW order, is computed once a run).
template <typename I, typename T, typename Op>
KP_DEVICE void kp_spatial_walk(const kp_spatial_args &a, T *dst, const Op &op) {
    if (a.order == KP_SPATIAL_ROWS_NCH)
        kp_spatial_runs<I, true>(a, dst, op);
    else
        kp_spatial_runs<I, false>(a, dst, op);
}

// 32-bit index and plane offsets where the launcher found them enough.
#define KP_SPATIAL_DISPATCH(OP, T, ...)                                                          \
    do {                                                                                         \
        if (a.flags & KP_SPATIAL_SMALL)                                                          \
            kp_spatial_walk<uint32_t>(a, dst, OP<T, int>{a, __VA_ARGS__});                       \
        else                                                                                     \
            kp_spatial_walk<uint64_t>(a, dst, OP<T, int64_t>{a, __VA_ARGS__});                   \
    } while (0)

template <typename T> KP_DEVICE bool kp_is_nan(T v) { return v != v; }

// Compute types with a wrapping sum for the integers (col2im's u8 and u32
// sums wrap like the stored type; i64 sums in unsigned arithmetic).
template <typename T> struct kp_sum_type { typedef typename kp_compute<T>::type type; };
template <> struct kp_sum_type<int64_t> { typedef uint64_t type; };

// The smallest value of T's compute type: the max-pool start for a window
// with no element inside the image.
template <typename C> KP_DEVICE C kp_lowest();
template <> KP_DEVICE float kp_lowest<float>() { return -__int_as_float(0x7f800000); }
template <> KP_DEVICE double kp_lowest<double>() { return -__longlong_as_double(0x7ff0000000000000ll); }
template <> KP_DEVICE uint32_t kp_lowest<uint32_t>() { return 0; }
template <> KP_DEVICE int64_t kp_lowest<int64_t>() { return (int64_t)(-0x7fffffffffffffffll - 1); }

// Ops are templated on O, the type of offsets inside one image plane (int
// where the launcher found every plane small enough, else int64_t): the
// plane's base is computed in 64 bits once, the taps in O.

// ---- im2col: dst (N, C*kH*kW, H_out, W_out) from src (N, C, H, W); bits copied.
template <typename T, typename O> struct kp_im2col_op {
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE T value(const kp_pos &p) const {
        const int kh = (int)a.kernel[0], kw = (int)a.kernel[1];
        const O ck = (O)p.c, c = ck / (O)(kh * kw);
        const int tap = (int)(ck - c * (O)(kh * kw)), i = tap / kw, j = tap - i * kw;
        const int iy = p.y * (int)a.stride[0] - (int)a.padding[0] + i * (int)a.dilation[0];
        const int ix = p.x * (int)a.stride[1] - (int)a.padding[1] + j * (int)a.dilation[1];
        const bool inside = iy >= 0 && iy < a.h && ix >= 0 && ix < a.w;
        const T *plane = src + p.n * a.src_stride[0] + (int64_t)c * a.src_stride[1];
        // Padding reads the plane's first element (always there) and drops it:
        // no branch around the load, so a thread's loads issue together.
        const T v = plane[inside ? (O)iy * (O)a.src_stride[2] + (O)ix * (O)a.src_stride[3] : (O)0];
        return inside ? v : (T)0;
    }
};

// Taps of one window row: the first KP_ROW_TAPS are unrolled (predicated on
// the kernel width, uniform across the wave), the rest loop.
#define KP_ROW_TAPS 4
#define KP_FOR_EACH_TAP(j, kw, BODY)                                                             \
    do {                                                                                         \
        _Pragma("unroll") for (int j = 0; j < KP_ROW_TAPS; j++) if (j < (kw)) { BODY }           \
        for (int j = KP_ROW_TAPS; j < (kw); j++) { BODY }                                        \
    } while (0)

// Quotient by a window stride: the launcher's magic numbers where O is int
// (dividends below 2^31), else a division.
template <typename O> KP_DEVICE int kp_stride_div(const kp_spatial_args &a, int d, int u);
template <> KP_DEVICE int kp_stride_div<int>(const kp_spatial_args &a, int d, int u) {
    return (int)((__umulhi((uint32_t)u, a.div_mul[3 + d]) + (uint32_t)u) >> a.div_shift[3 + d]);
}
template <> KP_DEVICE int kp_stride_div<int64_t>(const kp_spatial_args &a, int d, int u) {
    return u / (int)a.stride[d];
}

// The output position o (0 <= o < out) whose window tap t reads image
// position q along dim d (q = o * s - pad + t * dilation), and whether there
// is one.
template <typename O> KP_DEVICE bool kp_tap_source(const kp_spatial_args &a, int d, int q, int t, int out, int *o) {
    const int u = q + (int)a.padding[d] - t * (int)a.dilation[d];
    const int oo = kp_stride_div<O>(a, d, u < 0 ? 0 : u);
    *o = oo;
    return u >= 0 && oo * (int)a.stride[d] == u && oo < out;
}

// ---- col2im: dst image (N, C, H, W) = sum of the columns (N, C*kH*kW,
// H_out, W_out) that im2col would have filled from each position. Taps
// with no column load the channel's first one and add nothing.
template <typename T, typename O> struct kp_col2im_op {
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_sum_type<T>::type S;
        const int kh = (int)a.kernel[0], kw = (int)a.kernel[1];
        const T *rows = src + p.n * a.src_stride[0] + p.c * (kh * kw) * a.src_stride[1];
        S acc = 0;
        for (int i = 0; i < kh; i++) {
            int oy;
            const bool vy = kp_tap_source<O>(a, 0, p.y, i, (int)a.h_out, &oy);
            const T *row = rows + (vy ? (O)(i * kw) * (O)a.src_stride[1] + (O)oy * (O)a.src_stride[2] : (O)0);
            KP_FOR_EACH_TAP(j, kw, {
                int ox;
                const bool valid = vy && kp_tap_source<O>(a, 1, p.x, j, (int)a.w_out, &ox);
                const S v = (S)kp_load(row[valid ? (O)j * (O)a.src_stride[1] + (O)ox * (O)a.src_stride[3] : (O)0]);
                acc += valid ? v : (S)0;
            });
        }
        return kp_store<T>((typename kp_compute<T>::type)acc);
    }
};

// First window position inside the image along one dim: the window's taps
// are start + t * d; returns the first t with start + t * d >= 0.
KP_DEVICE int kp_first_tap(int start, int d) { return start >= 0 ? 0 : (-start + d - 1) / d; }

// ---- max_pool2d: PyTorch's rule, val > max || isnan(val), so the first of
// equal maxima and the last NaN win; indices (u32, when IDX) are y * W + x.
// Taps outside the image load the plane's first element and are ignored.
template <typename T, typename O, bool IDX> struct kp_max_pool_op {
    const kp_spatial_args &a;
    const T *src;
    uint32_t *idx;
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_compute<T>::type C;
        const int dh = (int)a.dilation[0], dw = (int)a.dilation[1], kw = (int)a.kernel[1];
        const int hs = p.y * (int)a.stride[0] - (int)a.padding[0];
        const int ws = p.x * (int)a.stride[1] - (int)a.padding[1];
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1];
        C best = kp_lowest<C>();
        bool found = false;
        int best_y = 0, best_x = 0;
        for (int i = 0; i < (int)a.kernel[0]; i++) {
            const int iy = hs + i * dh;
            const bool vy = (unsigned)iy < (unsigned)a.h;
            const T *row = plane + (vy ? (O)iy * (O)a.src_stride[2] : (O)0);
            KP_FOR_EACH_TAP(j, kw, {
                const int ix = ws + j * dw;
                const bool valid = vy && (unsigned)ix < (unsigned)a.w;
                const C v = kp_load(row[valid ? (O)ix * (O)a.src_stride[3] : (O)0]);
                if (valid && (!found || v > best || kp_is_nan(v))) {
                    best = v;
                    best_y = iy;
                    best_x = ix;
                    found = true;
                }
            });
        }
        if (IDX) {
            // A dilated window can miss the image entirely: PyTorch's answer.
            if (!found) {
                best_y = hs + kp_first_tap(hs, dh) * dh;
                best_x = ws + kp_first_tap(ws, dw) * dw;
            }
            idx[kp_offset(a.idx_stride, p.n, p.c, p.y, p.x)] = (uint32_t)(best_y * a.w + best_x);
        }
        return kp_store<T>(best);
    }
};

// ---- avg_pool2d: PyTorch's window clipping and divisor.
template <typename T, typename O> struct kp_avg_pool_op {
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_compute<T>::type C;
        const int h = (int)a.h, w = (int)a.w, kw = (int)a.kernel[1];
        const int hs = p.y * (int)a.stride[0] - (int)a.padding[0];
        const int ws = p.x * (int)a.stride[1] - (int)a.padding[1];
        const int he = min(hs + (int)a.kernel[0], h + (int)a.padding[0]);
        const int we = min(ws + kw, w + (int)a.padding[1]);
        const int padded = (he - hs) * (we - ws);
        const int inside = (min(he, h) - max(hs, 0)) * (min(we, w) - max(ws, 0));
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1];
        C sum = 0;
        for (int i = 0; i < (int)a.kernel[0]; i++) {
            const int iy = hs + i;
            const bool vy = (unsigned)iy < (unsigned)h;
            const T *row = plane + (vy ? (O)iy * (O)a.src_stride[2] : (O)0);
            KP_FOR_EACH_TAP(j, kw, {
                const int ix = ws + j;
                const bool valid = vy && (unsigned)ix < (unsigned)w;
                const C v = kp_load(row[valid ? (O)ix * (O)a.src_stride[3] : (O)0]);
                sum += valid ? v : (C)0;
            });
        }
        // A window entirely in the padding averages nothing: 0.
        const bool empty = max(hs, 0) >= min(he, h) || max(ws, 0) >= min(we, w);
        const int count = (a.flags & KP_SPATIAL_COUNT_PAD) ? padded : inside;
        return kp_store<T>(empty ? (C)0 : sum / (C)count);
    }
};

// Source step per output step, as PyTorch's compute_scales_value<S>: the
// caller's 1 / scale_factor if given (scale > 0), else in / out.
template <typename S> KP_DEVICE S kp_resize_scale(double scale, int64_t in, int64_t out) {
    return scale > 0 ? (S)scale : (S)in / (S)out;
}

// ---- nearest: src index min(floor(dst * scale), in - 1) in f32, as
// PyTorch's GPU kernels compute it; bits copied.
template <typename T, typename O> struct kp_nearest_op {
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE T value(const kp_pos &p) const {
        const float sh = kp_resize_scale<float>(a.scale[0], a.h, a.h_out);
        const float sw = kp_resize_scale<float>(a.scale[1], a.w, a.w_out);
        const int iy = min((int)floorf((float)p.y * sh), (int)a.h - 1);
        const int ix = min((int)floorf((float)p.x * sw), (int)a.w - 1);
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1];
        return plane[(O)iy * (O)a.src_stride[2] + (O)ix * (O)a.src_stride[3]];
    }
};

// One dim of PyTorch's bilinear source coordinate: index i0, whether i0 + 1
// exists, and the weight of i0 + 1.
template <typename C> struct kp_lerp_tap {
    int i0, step;
    C w1;
};

template <typename C>
KP_DEVICE kp_lerp_tap<C> kp_bilinear_tap(int dst, int64_t in, int64_t out, double scale, bool align) {
    // Both of PyTorch's mappings, then a select: no branch in the element code.
    const C s_align = out > 1 ? (C)(in - 1) / (C)(out - 1) : (C)0;
    const C s_half = kp_resize_scale<C>(scale, in, out);
    const C r_half = s_half * ((C)dst + (C)0.5) - (C)0.5;
    const C r = align ? s_align * (C)dst : (r_half < (C)0 ? (C)0 : r_half);
    kp_lerp_tap<C> t;
    t.i0 = (int)r;
    t.step = t.i0 < in - 1 ? 1 : 0;
    t.w1 = r - (C)t.i0;
    return t;
}

// ---- bilinear (PyTorch's upsample_bilinear2d, its weights and order of
// operations). Equal sizes, which PyTorch copies, go to the nearest kernel.
template <typename T, typename O> struct kp_bilinear_op {
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_compute<T>::type C;
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1];
        const bool align = (a.flags & KP_SPATIAL_ALIGN_CORNERS) != 0;
        const kp_lerp_tap<C> ty = kp_bilinear_tap<C>(p.y, a.h, a.h_out, a.scale[0], align);
        const kp_lerp_tap<C> tx = kp_bilinear_tap<C>(p.x, a.w, a.w_out, a.scale[1], align);
        const O y0 = (O)ty.i0 * (O)a.src_stride[2], y1 = (O)(ty.i0 + ty.step) * (O)a.src_stride[2];
        const O x0 = (O)tx.i0 * (O)a.src_stride[3], x1 = (O)(tx.i0 + tx.step) * (O)a.src_stride[3];
        const C h0w = (C)1 - ty.w1, w0w = (C)1 - tx.w1;
        const C v = h0w * (w0w * kp_load(plane[y0 + x0]) + tx.w1 * kp_load(plane[y0 + x1])) +
                    ty.w1 * (w0w * kp_load(plane[y1 + x0]) + tx.w1 * kp_load(plane[y1 + x1]));
        return kp_store<T>(v);
    }
};

template <typename T, typename O> using kp_max_pool_idx_op = kp_max_pool_op<T, O, true>;
template <typename T, typename O> using kp_max_pool_val_op = kp_max_pool_op<T, O, false>;

// Launched with KP_SPATIAL_BLOCK threads. Saying so lets AMD's compiler use
// the registers that block size leaves (its default assumes 1024 threads);
// nvcc's default already does, and the bound only changes its choices.
#if KP_HIP
#define KP_SPATIAL_BOUNDS __launch_bounds__(KP_SPATIAL_BLOCK)
#else
#define KP_SPATIAL_BOUNDS
#endif

#define KP_SPATIAL_KERNEL(KNAME, OP, NAME, T)                                                    \
    KP_KERNEL KP_SPATIAL_BOUNDS void KNAME##_##NAME(kp_spatial_args a, const T *src, T *dst) { \
        KP_SPATIAL_DISPATCH(OP, T, src);                                                       \
    }

#define KP_IM2COL(NAME, T) KP_SPATIAL_KERNEL(im2col, kp_im2col_op, NAME, T)
#define KP_COL2IM(NAME, T) KP_SPATIAL_KERNEL(col2im, kp_col2im_op, NAME, T)
#define KP_AVG_POOL(NAME, T) KP_SPATIAL_KERNEL(avg_pool2d, kp_avg_pool_op, NAME, T)
#define KP_NEAREST(NAME, T) KP_SPATIAL_KERNEL(upsample_nearest2d, kp_nearest_op, NAME, T)
#define KP_BILINEAR(NAME, T) KP_SPATIAL_KERNEL(upsample_bilinear2d, kp_bilinear_op, NAME, T)
#define KP_MAX_POOL(NAME, T)                                                                     \
    KP_KERNEL KP_SPATIAL_BOUNDS void max_pool2d_##NAME(                                         \
        kp_spatial_args a, const T *src, T *dst, uint32_t *idx) {                              \
        if (idx)                                                                               \
            KP_SPATIAL_DISPATCH(kp_max_pool_idx_op, T, src, idx);                              \
        else                                                                                   \
            KP_SPATIAL_DISPATCH(kp_max_pool_val_op, T, src, idx);                              \
    }

KP_FOR_EACH_SIZE(KP_IM2COL)
KP_FOR_EACH_SIZE(KP_NEAREST)
KP_FOR_EACH_DTYPE(KP_COL2IM)
KP_FOR_EACH_DTYPE(KP_MAX_POOL)
KP_FOR_EACH_FLOAT(KP_AVG_POOL)
KP_FOR_EACH_FLOAT(KP_BILINEAR)
