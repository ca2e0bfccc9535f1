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
    KP_DEVICE uint32_t div(uint32_t n) const { return kp_div_by_magic(n, m, s); }
};
template <> struct kp_divider<uint64_t> {
    uint64_t d;
    KP_DEVICE kp_divider(const kp_spatial_args &, int, int64_t div) : d((uint64_t)div) {}
    KP_DEVICE uint64_t div(uint64_t n) const { return n / d; }
};

// n / d for n < 2^31 by the launcher's magic numbers for d (slot k).
KP_DEVICE uint32_t kp_magic_div(const kp_spatial_args &a, int k, uint32_t n) {
    return kp_div_by_magic(n, a.div_mul[k], a.div_shift[k]);
}

// 16 bytes of T, for the stores of one thread's run of outputs.
// N elements of T, aligned to their size (a power of two).
template <typename T, int N> struct alignas(N * sizeof(T)) kp_run {
    T v[N];
};
template <typename T> using kp_vec16 = kp_run<T, (int)(16 / sizeof(T))>;
template <typename T> using kp_vec8 = kp_run<T, (int)(8 / sizeof(T))>;

// Elements a run has: 16 bytes' worth, but 4 for the pools' 16-bit types,
// whose fast path (kp_pool_window) needs registers per output and gets
// more threads in flight with half the outputs each, and 4 for the 1-byte
// types of the ops that sum or compare (col2im, max_pool2d), which have no
// fast path: their 16 elements a run, each computed alone and unrolled,
// made col2im_u8 and max_pool2d_u8 two fifths of the module's compile
// time. The launcher says the same (run_elements in src/ops/spatial.c).
template <typename T> constexpr int kp_run_elems() { return (int)(16 / sizeof(T)); }
template <typename T> constexpr int kp_pool_run_elems() { return sizeof(T) <= 2 ? 4 : (int)(16 / sizeof(T)); }

// Walk orders: rows of x (NCHW memory), rows of c (channels-last memory),
// or either, read from the arguments (the 64-bit bodies, for sizes past
// 2^31, which need not be fast, share one).
#define KP_WALK_NCH 0
#define KP_WALK_NHW 1
#define KP_WALK_ANY 2

// Walks the output in runs of Op::vec consecutive elements of a row (16
// bytes, or 8): each thread decodes a run's position once, asks op.value()
// for each of its elements and stores them, as one vector store where dst
// is contiguous along the row and aligned. Index type I: see kp_divider.
// Ops with a fast path for runs of NCHW rows (Op::fast) try it first:
// op.run() fills the run's first `count` elements (at least) and returns
// true where its preconditions hold (layout, alignment, window inside the
// image), else the elements are computed one by one.
template <typename I, int WALK, typename T, typename Op>
KP_DEVICE void kp_spatial_runs(const kp_spatial_args &a, T *dst, const Op &op) {
    constexpr int VEC = Op::vec;
    const bool nch = WALK == KP_WALK_ANY ? a.order == KP_SPATIAL_ROWS_NCH : WALK == KP_WALK_NCH;
    const I runs_per_row = (I)((a.row_len + VEC - 1) / VEC);
    const I runs = (I)a.rows * runs_per_row;
    const kp_divider<I> by_run(a, 0, runs_per_row), by_d2(a, 1, a.d2), by_d1(a, 2, a.d1);
    const int64_t step = nch ? a.dst_stride[3] : a.dst_stride[1];
    // (The body as a lambda: nvcc allocates fewer registers for it so, 46
    // instead of 59 for im2col_x16 on sm_90.)
    auto body = [&](I run) {
        const I row = by_run.div(run), r01 = by_d2.div(row), r0 = by_d1.div(r01);
        const int64_t first = (int64_t)(run - row * runs_per_row) * VEC;
        const int64_t r2 = (int64_t)(row - r01 * (I)a.d2), r1 = (int64_t)(r01 - r0 * (I)a.d1);
        kp_pos p;
        p.n = (int64_t)r0;
        p.c = nch ? r1 : first;
        p.y = (int)(nch ? r2 : r1);
        p.x = (int)(nch ? first : r2);
        T *out = dst + kp_offset(a.dst_stride, p.n, p.c, p.y, p.x);
        const int count = a.row_len - first < VEC ? (int)(a.row_len - first) : VEC;
        kp_run<T, VEC> vals;
        bool done = false;
        if constexpr (WALK == KP_WALK_NCH && Op::fast)
            done = op.run(p, count, vals);
        if (!done) {
            // Every element is computed (a short run repeats its last one), so
            // the work that does not depend on the element is shared by all.
#pragma unroll
            for (int u = 0; u < VEC; u++) {
                kp_pos q = p;
                const int e = u < count ? u : count - 1;
                if (nch)
                    q.x += e;
                else
                    q.c += e;
                vals.v[u] = op.value(q);
            }
        }
        if (count == VEC && step == 1 && ((uintptr_t)out & (sizeof(vals) - 1)) == 0) {
            *(kp_run<T, VEC> *)out = vals;
        } else if (sizeof(vals) == 16 && count == VEC && step == 1 && ((uintptr_t)out & 7) == 0) {
            // Rows of a multiple of 8 bytes (every other one 16-byte aligned).
            const kp_vec8<T> *half = (const kp_vec8<T> *)&vals;
            ((kp_vec8<T> *)out)[0] = half[0];
            ((kp_vec8<T> *)out)[1] = half[1];
        } else {
#pragma unroll
            for (int u = 0; u < VEC; u++)
                if (u < count)
                    out[u * step] = vals.v[u];
        }
    };
    const I stride = (I)(gridDim.x * (uint64_t)blockDim.x);
    for (I run = (I)(blockIdx.x * (uint64_t)blockDim.x + threadIdx.x); run < runs; run += stride)
        body(run);
}

// 32-bit index and plane offsets where the launcher found them enough: the
// two walk orders compiled apart (what is constant along a row, such as
// the channel in NCHW order, is computed once a run); else 64-bit ones
// with the order read at run time.
#define KP_SPATIAL_DISPATCH(OP, T, ...)                                                          \
    do {                                                                                         \
        if (a.flags & KP_SPATIAL_SMALL) {                                                        \
            const OP<T, int> op{a, __VA_ARGS__};                                                 \
            if (a.order == KP_SPATIAL_ROWS_NCH)                                                  \
                kp_spatial_runs<uint32_t, KP_WALK_NCH>(a, dst, op);                              \
            else                                                                                 \
                kp_spatial_runs<uint32_t, KP_WALK_NHW>(a, dst, op);                              \
        } else {                                                                                 \
            kp_spatial_runs<uint64_t, KP_WALK_ANY>(a, dst, OP<T, int64_t>{a, __VA_ARGS__});      \
        }                                                                                        \
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

// ---- Fast paths for whole runs of NCHW rows (see kp_spatial_runs). They
// load each source column a run needs once, with aligned vector loads, and
// take the window or scale from the launcher's flags or a compile-time
// shape instead of per-tap index arithmetic and bounds checks; every result
// is the same as the per-element code's, bit for bit (sums in the same
// order). They are compiled for the element types kp-bench and most models
// use, the others keep the per-element code alone (a smaller module).
template <typename T> struct kp_fast_float { static constexpr bool value = false; };
template <> struct kp_fast_float<float> { static constexpr bool value = true; };
template <> struct kp_fast_float<kp_f16> { static constexpr bool value = true; };
template <> struct kp_fast_float<kp_bf16> { static constexpr bool value = true; };
template <typename T> struct kp_fast_bits { static constexpr bool value = false; };
template <> struct kp_fast_bits<uint16_t> { static constexpr bool value = true; };
template <> struct kp_fast_bits<uint32_t> { static constexpr bool value = true; };

template <typename T> KP_DEVICE uint32_t kp_bits32(T v) {
    static_assert(sizeof(T) <= 4, "elements of up to 4 bytes");
    uint32_t b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}

// The 16 bytes of elements starting s (-1, 0 or 1) elements after the
// aligned 16 bytes c, given the bits of the element before c (prev) and
// of the one after it (next).
template <typename T>
KP_DEVICE kp_vec16<T> kp_shift_run(const kp_vec16<T> &c, uint32_t prev, uint32_t next, int s) {
    static_assert(sizeof(T) <= 4, "elements of up to 4 bytes");
    constexpr int B = 8 * (int)sizeof(T);
    if (s == 0)
        return c;
    uint32_t w[4], o[4];
    memcpy(w, &c, 16);
    // s is the same for the runs of a column row, which neighbouring
    // threads mostly share: a branch, not selects.
    if (s > 0) {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if constexpr (B == 32)
                o[k] = k < 3 ? w[k + 1] : next;
            else
                o[k] = (w[k] >> B) | ((k < 3 ? w[k + 1] : next) << (32 - B));
        }
    } else {
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if constexpr (B == 32)
                o[k] = k > 0 ? w[k - 1] : prev;
            else
                o[k] = (w[k] << B) | (k > 0 ? w[k - 1] >> (32 - B) : prev);
        }
    }
    kp_vec16<T> r;
    memcpy(&r, o, 16);
    return r;
}

// The reductions of the pools' fast path: pad is what a column outside the
// image contributes, skip() what a window row outside it does.
template <typename C> struct kp_max_red {
    C pad;
    KP_DEVICE void tap(C &acc, C v) const {
        if (v > acc || kp_is_nan(v))
            acc = v;
    }
    KP_DEVICE void skip(C &) const {}
};
template <typename C> struct kp_sum_red {
    C pad;
    KP_DEVICE void tap(C &acc, C v) const { acc += v; }
    KP_DEVICE void skip(C &acc) const { acc += (C)0; }  // as the padding taps' zeros
};

// A run of VEC pooled NCHW outputs (x0 .. x0 + VEC - 1 of row y) for a
// square window of K taps at stride S with padding P and no dilation: each
// window row is loaded once for the run, its middle S * VEC columns (from
// S * x0) as S aligned 16-byte loads and the P columns before and the
// K - S - P after as elements, and every output's taps read from it in
// PyTorch's order. Columns and rows outside the image contribute red.pad
// and red.skip(); max pooling without indices takes -inf (the lowest
// value) for them, which cannot change its result, avg pooling 0, which
// its per-element code adds too. A run may be short (count < VEC) where
// the row's end is a whole 16 bytes of middle columns away: the 16-byte
// parts past the image's width are not loaded and read as pad, the
// outputs past count not stored. Returns false, having done nothing,
// unless the middle columns are aligned and each 16 bytes of them inside
// the image or past its width.
template <int K, int S, int P, typename T, typename C, int VEC, typename Red, typename Fin>
KP_DEVICE bool kp_pool_window(const kp_spatial_args &a, const T *src, const kp_pos &p,
                              const Red &red, const Fin &fin, kp_run<T, VEC> &out) {
    constexpr int MID = S * VEC, N = (VEC - 1) * S + K, EXTRA = N - MID;
    constexpr int CH = (int)(16 / sizeof(T)), CHUNKS = MID / CH;  // 16-byte loads of a row
    static_assert(CHUNKS * CH == MID, "whole 16 bytes of middle columns");
    static_assert(EXTRA >= P, "the window's columns around the middle ones");
    const int x0 = p.x, h = (int)a.h, w = (int)a.w, s2 = (int)a.src_stride[2];
    const int left = w - S * x0;  // columns from the middle ones' start to the row's end
    if (left < MID && left % CH != 0)
        return false;
    const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1] + S * x0;
    if (((uintptr_t)plane & 15) != 0)
        return false;
    kp_vec16<T> mid[K][CHUNKS];
    T extra[K][EXTRA > 0 ? EXTRA : 1];
    bool row_ok[K], col_ok[EXTRA > 0 ? EXTRA : 1];
#pragma unroll
    for (int e = 0; e < EXTRA; e++) {
        const int col = S * x0 - P + (e < P ? e : MID + e);
        col_ok[e] = col >= 0 && col < w;
    }
    // All loads first, so that they are in flight together.
#pragma unroll
    for (int i = 0; i < K; i++) {
        const int iy = S * p.y - P + i;
        row_ok[i] = (unsigned)iy < (unsigned)h;
        const T *row = plane + (row_ok[i] ? iy * s2 : 0);
        if (row_ok[i]) {
#pragma unroll
            for (int k = 0; k < CHUNKS; k++)
                if ((k + 1) * CH <= left)
                    mid[i][k] = ((const kp_vec16<T> *)row)[k];
#pragma unroll
            for (int e = 0; e < EXTRA; e++)
                if (col_ok[e])
                    extra[i][e] = row[(e < P ? e : MID + e) - P];
        }
    }
    C acc[VEC];
#pragma unroll
    for (int u = 0; u < VEC; u++)
        acc[u] = fin.init();
    bool inside = left >= MID;
#pragma unroll
    for (int e = 0; e < EXTRA; e++)
        inside = inside && col_ok[e];
#pragma unroll
    for (int i = 0; i < K; i++) {
        inside = inside && row_ok[i];
        if (!row_ok[i]) {
#pragma unroll
            for (int u = 0; u < VEC; u++)
                red.skip(acc[u]);
            continue;
        }
        C e_[N];  // e_[t]: column S * x0 - P + t
#pragma unroll
        for (int k = 0; k < CHUNKS; k++)
#pragma unroll
            for (int u = 0; u < CH; u++)
                e_[P + k * CH + u] = (k + 1) * CH <= left ? kp_load(mid[i][k].v[u]) : red.pad;
#pragma unroll
        for (int e = 0; e < EXTRA; e++)
            e_[e < P ? e : MID + e] = col_ok[e] ? kp_load(extra[i][e]) : red.pad;
#pragma unroll
        for (int u = 0; u < VEC; u++)
#pragma unroll
            for (int j = 0; j < K; j++)
                red.tap(acc[u], e_[S * u + j]);
    }
    if (inside) {
#pragma unroll
        for (int u = 0; u < VEC; u++)
            out.v[u] = kp_store<T>(fin.template inside<K * K>(acc[u]));
    } else {
#pragma unroll
        for (int u = 0; u < VEC; u++)
            out.v[u] = kp_store<T>(fin.edge(acc[u], S * p.y - P, S * (x0 + u) - P));
    }
    return true;
}

// The windows the launcher found to have a fast path (flags).
template <typename T, typename C, int VEC, typename Red, typename Fin>
KP_DEVICE bool kp_pool_run(const kp_spatial_args &a, const T *src, const kp_pos &p, const Red &red,
                           const Fin &fin, kp_run<T, VEC> &out) {
    // (Any count: see kp_pool_window.)
    if (!(a.flags & KP_SPATIAL_ROWS16))
        return false;
    if (a.flags & KP_SPATIAL_FAST_K2S2)
        return kp_pool_window<2, 2, 0, T, C>(a, src, p, red, fin, out);
    if (a.flags & KP_SPATIAL_FAST_K3S2P1)
        return kp_pool_window<3, 2, 1, T, C>(a, src, p, red, fin, out);
    return false;
}

// Ops are templated on O, the type of offsets inside one image plane (int
// where the launcher found every plane small enough, else int64_t): the
// plane's base is computed in 64 bits once, the taps in O.

// ---- im2col: dst (N, C*kH*kW, H_out, W_out) from src (N, C, H, W); bits copied.
template <typename T, typename O> struct kp_im2col_op {
    static constexpr int vec = kp_run_elems<T>();
    static constexpr bool fast = sizeof(O) == 4 && kp_fast_bits<T>::value;
    const kp_spatial_args &a;
    const T *src;
    // A run of one column row: the image row's VEC columns from x0, moved
    // by the tap's offset s = j - padding (-1, 0 or 1, as the launcher's
    // KP_SPATIAL_FAST_SHIFT says) with the column before or after them.
    KP_DEVICE bool run(const kp_pos &p, int count, kp_vec16<T> &out) const {
        constexpr int VEC = (int)(16 / sizeof(T));
        const int need = KP_SPATIAL_FAST_SHIFT | KP_SPATIAL_ROWS16;
        const int x0 = p.x, w = (int)a.w;
        if ((a.flags & need) != need || count < VEC || x0 + VEC > w)
            return false;
        const int kh = (int)a.kernel[0], kw = (int)a.kernel[1];
        const int ck = (int)p.c, c = (int)kp_magic_div(a, 5, (uint32_t)ck);
        const int tap = ck - c * (kh * kw), i = (int)kp_magic_div(a, 6, (uint32_t)tap), j = tap - i * kw;
        const int iy = p.y * (int)a.stride[0] - (int)a.padding[0] + i * (int)a.dilation[0];
        if ((unsigned)iy >= (unsigned)a.h) {
            const kp_vec16<T> zero = {};
            out = zero;
            return true;
        }
        const T *row = src + p.n * a.src_stride[0] + (int64_t)c * a.src_stride[1] + iy * (int)a.src_stride[2] + x0;
        if (((uintptr_t)row & 15) != 0)
            return false;
        const int s = j - (int)a.padding[1];
        const kp_vec16<T> mid = *(const kp_vec16<T> *)row;
        const uint32_t prev = s < 0 && x0 > 0 ? kp_bits32(row[-1]) : 0;
        const uint32_t next = s > 0 && x0 + VEC < w ? kp_bits32(row[VEC]) : 0;
        out = kp_shift_run(mid, prev, next, s);
        return true;
    }
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
    return (int)kp_div_by_magic((uint32_t)u, a.div_mul[3 + d], a.div_shift[3 + d]);
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
    static constexpr int vec = sizeof(T) == 1 ? 4 : kp_run_elems<T>();
    static constexpr bool fast = sizeof(O) == 4 && kp_fast_float<T>::value;
    const kp_spatial_args &a;
    const T *src;
    // A run of an image row: per tap, the column row's VEC columns from x0
    // moved by s = padding - j (-1, 0 or 1, KP_SPATIAL_FAST_SHIFT), the
    // column before or after them read as 0 outside the columns.
    KP_DEVICE bool run(const kp_pos &p, int count, kp_vec16<T> &out) const {
        typedef typename kp_sum_type<T>::type S;
        constexpr int VEC = (int)(16 / sizeof(T));
        const int need = KP_SPATIAL_FAST_SHIFT | KP_SPATIAL_ROWS16;
        const int x0 = p.x, wo = (int)a.w_out;
        if ((a.flags & need) != need || count < VEC || x0 + VEC > wo)
            return false;
        const int kh = (int)a.kernel[0], kw = (int)a.kernel[1], pad = (int)a.padding[1];
        const int s1 = (int)a.src_stride[1], s2 = (int)a.src_stride[2];
        const T *rows = src + p.n * a.src_stride[0] + p.c * (kh * kw) * a.src_stride[1] + x0;
        if (((uintptr_t)rows & 15) != 0)
            return false;
        S acc[VEC];
#pragma unroll
        for (int u = 0; u < VEC; u++)
            acc[u] = 0;
        // Window rows G at a time: all their loads first, so that they are
        // in flight together, then the sums in PyTorch's tap order. G = 3
        // for 32-bit types; 16-bit ones take one row at a time, as more
        // would cost them occupancy (registers for 8 sums a run) than the
        // loads in flight gain (measured on H100).
        constexpr int G = sizeof(T) >= 4 ? 3 : 1;
        for (int i0 = 0; i0 < kh; i0 += G) {
            kp_vec16<T> mid[G][3];
            uint32_t prev[G][3], next[G][3];
            bool row_ok[G];
#pragma unroll
            for (int di = 0; di < G; di++) {
                int oy = 0;
                row_ok[di] = i0 + di < kh && kp_tap_source<O>(a, 0, p.y, i0 + di, (int)a.h_out, &oy);
                const T *row = rows + ((i0 + di) * kw) * s1 + oy * s2;
#pragma unroll
                for (int j = 0; j < 3; j++) {
                    if (row_ok[di] && j < kw) {
                        const T *r = row + j * s1;
                        const int s = pad - j;
                        mid[di][j] = *(const kp_vec16<T> *)r;
                        prev[di][j] = s < 0 && x0 > 0 ? kp_bits32(r[-1]) : 0;
                        next[di][j] = s > 0 && x0 + VEC < wo ? kp_bits32(r[VEC]) : 0;
                    }
                }
            }
#pragma unroll
            for (int di = 0; di < G; di++) {
                if (row_ok[di]) {
#pragma unroll
                    for (int j = 0; j < 3; j++) {
                        if (j < kw) {
                            const kp_vec16<T> v =
                                kp_shift_run(mid[di][j], prev[di][j], next[di][j], pad - j);
#pragma unroll
                            for (int u = 0; u < VEC; u++)
                                acc[u] += (S)kp_load(v.v[u]);
                        }
                    }
                } else if (i0 + di < kh) {
#pragma unroll
                    for (int u = 0; u < VEC; u++)
                        acc[u] += (S)0;  // as the row's taps without a column
                }
            }
        }
#pragma unroll
        for (int u = 0; u < VEC; u++)
            out.v[u] = kp_store<T>((typename kp_compute<T>::type)acc[u]);
        return true;
    }
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
template <typename C> struct kp_max_finish {
    KP_DEVICE C init() const { return kp_lowest<C>(); }
    template <int TAPS> KP_DEVICE C inside(C best) const { return best; }
    KP_DEVICE C edge(C best, int, int) const { return best; }
};

template <typename T, typename O, bool IDX> struct kp_max_pool_op {
    static constexpr int vec = kp_pool_run_elems<T>();
    static constexpr bool fast = !IDX && sizeof(O) == 4 && kp_fast_float<T>::value;
    const kp_spatial_args &a;
    const T *src;
    uint32_t *idx;
    KP_DEVICE bool run(const kp_pos &p, int, kp_run<T, vec> &out) const {
        typedef typename kp_compute<T>::type C;
        const kp_max_red<C> red{kp_lowest<C>()};
        return kp_pool_run<T, C>(a, src, p, red, kp_max_finish<C>(), out);
    }
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
// The average of the window starting at (hs, ws) whose taps sum to sum.
template <typename C> struct kp_avg_finish {
    const kp_spatial_args &a;
    KP_DEVICE C init() const { return (C)0; }
    // A window inside the image: both divisors are its taps.
    template <int TAPS> KP_DEVICE C inside(C sum) const { return sum / (C)TAPS; }
    KP_DEVICE C edge(C sum, int hs, int ws) const {
        const int h = (int)a.h, w = (int)a.w;
        const int he = min(hs + (int)a.kernel[0], h + (int)a.padding[0]);
        const int we = min(ws + (int)a.kernel[1], w + (int)a.padding[1]);
        const int padded = (he - hs) * (we - ws);
        const int in_image = (min(he, h) - max(hs, 0)) * (min(we, w) - max(ws, 0));
        // A window entirely in the padding averages nothing: 0.
        const bool empty = max(hs, 0) >= min(he, h) || max(ws, 0) >= min(we, w);
        const int count = (a.flags & KP_SPATIAL_COUNT_PAD) ? padded : in_image;
        return empty ? (C)0 : sum / (C)count;
    }
};

template <typename T, typename O> struct kp_avg_pool_op {
    static constexpr int vec = kp_pool_run_elems<T>();
    static constexpr bool fast = sizeof(O) == 4 && kp_fast_float<T>::value;
    const kp_spatial_args &a;
    const T *src;
    KP_DEVICE bool run(const kp_pos &p, int, kp_run<T, vec> &out) const {
        typedef typename kp_compute<T>::type C;
        const kp_sum_red<C> red{(C)0};
        return kp_pool_run<T, C>(a, src, p, red, kp_avg_finish<C>{a}, out);
    }
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_compute<T>::type C;
        const int h = (int)a.h, w = (int)a.w, kw = (int)a.kernel[1];
        const int hs = p.y * (int)a.stride[0] - (int)a.padding[0];
        const int ws = p.x * (int)a.stride[1] - (int)a.padding[1];
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
        return kp_store<T>(kp_avg_finish<C>{a}.edge(sum, hs, ws));
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
    static constexpr int vec = kp_run_elems<T>();
    static constexpr bool fast = sizeof(O) == 4 && kp_fast_bits<T>::value;
    const kp_spatial_args &a;
    const T *src;
    // Scale 1/2 (each source column twice: VEC / 2 of them from x0 / 2, one
    // 8-byte load) and 1 (a copy of VEC columns). floorf(x * scale) is
    // x / 2 and x for these x (below 2^24), and no index reaches W - 1's
    // clamp unless the loaded columns end there.
    KP_DEVICE bool run(const kp_pos &p, int count, kp_vec16<T> &out) const {
        constexpr int VEC = (int)(16 / sizeof(T));
        const int x0 = p.x, w = (int)a.w;
        if (!(a.flags & KP_SPATIAL_ROWS16) || count < VEC || a.w_out > (1 << 24))
            return false;
        const float sh = kp_resize_scale<float>(a.scale[0], a.h, a.h_out);
        const float sw = kp_resize_scale<float>(a.scale[1], a.w, a.w_out);
        const int iy = min((int)floorf((float)p.y * sh), (int)a.h - 1);
        const T *row = src + p.n * a.src_stride[0] + p.c * a.src_stride[1] + iy * (int)a.src_stride[2];
        if (sw == 0.5f) {
            row += x0 / 2;
            if (x0 / 2 + VEC / 2 > w || ((uintptr_t)row & 7) != 0)
                return false;
            const kp_vec8<T> half = *(const kp_vec8<T> *)row;
#pragma unroll
            for (int u = 0; u < VEC; u++)
                out.v[u] = half.v[u / 2];
            return true;
        }
        if (sw == 1.0f) {
            row += x0;
            if (x0 + VEC > w || ((uintptr_t)row & 15) != 0)
                return false;
            out = *(const kp_vec16<T> *)row;
            return true;
        }
        return false;
    }
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
// The bilinear sum in PyTorch's order of operations.
template <typename C> KP_DEVICE C kp_lerp2(C h0w, C h1w, C w0w, C w1w, C v00, C v01, C v10, C v11) {
    return h0w * (w0w * v00 + w1w * v01) + h1w * (w0w * v10 + w1w * v11);
}

template <typename T, typename O> struct kp_bilinear_op {
    static constexpr int vec = kp_run_elems<T>();
    static constexpr bool fast = sizeof(O) == 4 && kp_fast_float<T>::value;
    const kp_spatial_args &a;
    const T *src;
    // Scale 1/2 along x without align_corners: output x = x0 + u > 0 reads
    // source columns i0 = (x - 1) / 2 and i0 + 1 (x / 2 - 0.25 exactly in
    // f32, for x below 2^22), so the run reads columns x0 / 2 - 1 ..
    // x0 / 2 + VEC / 2 of two rows, the middle VEC / 2 as one 8-byte load.
    // x = 0 reads columns 0 and 1 (weight 0): at the row's start the
    // column before is not loaded and output 0 reads one column later.
    // Past the last column i0 + 1 is i0 (PyTorch's step 0): the column
    // after the loaded ones then repeats the last. The weights along x are
    // the ones the per-element code computes, exactly: x / 2 - 0.25 - i0 is
    // 0.75 at even x > 0, 0.25 at odd x and 0 at x = 0.
    KP_DEVICE bool run(const kp_pos &p, int count, kp_vec16<T> &out) const {
        typedef typename kp_compute<T>::type C;
        constexpr int VEC = (int)(16 / sizeof(T)), HALF = VEC / 2;
        const int x0 = p.x, w = (int)a.w, b = x0 / 2;
        static_assert(sizeof(C) == 4, "the fast path computes in f32");
        if (!(a.flags & KP_SPATIAL_ROWS16) || (a.flags & KP_SPATIAL_ALIGN_CORNERS) || count < VEC ||
            a.w_out > (1 << 22) || b + HALF > w || a.bilinear_step[1] != 0.5f)
            return false;
        // kp_bilinear_tap's half-pixel mapping, its step set by the launcher.
        kp_lerp_tap<C> ty;
        {
            const C r_half = a.bilinear_step[0] * ((C)p.y + (C)0.5) - (C)0.5;
            const C r = r_half < (C)0 ? (C)0 : r_half;
            ty.i0 = (int)r;
            ty.step = ty.i0 < a.h - 1 ? 1 : 0;
            ty.w1 = r - (C)ty.i0;
        }
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1] + b;
        const T *r0 = plane + ty.i0 * (int)a.src_stride[2];
        const T *r1 = plane + (ty.i0 + ty.step) * (int)a.src_stride[2];
        if ((((uintptr_t)r0 | (uintptr_t)r1) & 7) != 0)
            return false;
        const bool last = b + HALF == w;
        const kp_vec8<T> m0 = *(const kp_vec8<T> *)r0, m1 = *(const kp_vec8<T> *)r1;
        const int before = x0 == 0 ? 0 : -1;
        const T l0 = r0[before], l1 = r1[before];
        const T n0 = last ? m0.v[HALF - 1] : r0[HALF], n1 = last ? m1.v[HALF - 1] : r1[HALF];
        C e0[HALF + 2], e1[HALF + 2];  // columns b - 1 .. b + HALF
        e0[0] = kp_load(l0);
        e1[0] = kp_load(l1);
#pragma unroll
        for (int k = 0; k < HALF; k++) {
            e0[k + 1] = kp_load(m0.v[k]);
            e1[k + 1] = kp_load(m1.v[k]);
        }
        e0[HALF + 1] = kp_load(n0);
        e1[HALF + 1] = kp_load(n1);
        const C h0w = (C)1 - ty.w1;
#pragma unroll
        for (int u = 0; u < VEC; u++) {
            const C w1 = (u & 1) ? (C)0.25 : u == 0 && x0 == 0 ? (C)0 : (C)0.75;
            const int k = (u + 1) / 2;  // i0 - (b - 1)
            C v00 = e0[k], v01 = e0[k + 1], v10 = e1[k], v11 = e1[k + 1];
            if (u == 0 && x0 == 0) {
                v00 = e0[1];
                v01 = e0[2];
                v10 = e1[1];
                v11 = e1[2];
            }
            out.v[u] = kp_store<T>(kp_lerp2(h0w, ty.w1, (C)1 - w1, w1, v00, v01, v10, v11));
        }
        return true;
    }
    KP_DEVICE T value(const kp_pos &p) const {
        typedef typename kp_compute<T>::type C;
        const T *plane = src + p.n * a.src_stride[0] + p.c * a.src_stride[1];
        const bool align = (a.flags & KP_SPATIAL_ALIGN_CORNERS) != 0;
        const kp_lerp_tap<C> ty = kp_bilinear_tap<C>(p.y, a.h, a.h_out, a.scale[0], align);
        const kp_lerp_tap<C> tx = kp_bilinear_tap<C>(p.x, a.w, a.w_out, a.scale[1], align);
        const O y0 = (O)ty.i0 * (O)a.src_stride[2], y1 = (O)(ty.i0 + ty.step) * (O)a.src_stride[2];
        const O x0 = (O)tx.i0 * (O)a.src_stride[3], x1 = (O)(tx.i0 + tx.step) * (O)a.src_stride[3];
        const C v = kp_lerp2((C)1 - ty.w1, ty.w1, (C)1 - tx.w1, tx.w1, kp_load(plane[y0 + x0]),
                             kp_load(plane[y0 + x1]), kp_load(plane[y1 + x0]), kp_load(plane[y1 + x1]));
        return kp_store<T>(v);
    }
};

// ---- Walks of the image side (KP_SPATIAL_FAST_IM2COL3, KP_SPATIAL_FAST_PAIRS):
// item = 16 bytes of one row of an image plane, as kp_spatial_abi.h says.
// Each item loads its 16 bytes once and stores several output rows from
// them, so a thread has fewer loads and less index arithmetic per byte
// stored than with one run of one output row a step.
template <int IN, typename Item>
KP_DEVICE void kp_image_items(const kp_spatial_args &a, uint32_t rows_per_plane, const Item &item) {
    const uint32_t per_row = (uint32_t)(a.w / IN);
    const uint32_t items = (uint32_t)(a.n * a.c) * rows_per_plane * per_row;
    const uint32_t stride = gridDim.x * blockDim.x;
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < items; i += stride) {
        const uint32_t r = kp_magic_div(a, 3, i), plane = kp_magic_div(a, 4, r);
        item(plane, (int)(r - plane * rows_per_plane), (int)(i - r * per_row) * IN);
    }
}

// A 16-byte store marked streaming (evict first): im2col's columns are
// written once and read by a later kernel, if at all, after many times
// the caches' size has passed. On H100 it lifted the 16-bit 3x3 walk from
// 83 % to 86 % of a copy; ops whose runs stored so slowed down (bilinear
// upsampling by 30 points), so only that walk uses it.
template <typename T> KP_DEVICE void kp_store_streaming(T *p, const kp_vec16<T> &v) {
#if KP_HIP
    *(kp_vec16<T> *)p = v;
#else
    __stcs((uint4 *)p, *(const uint4 *)&v);
#endif
}

// im2col, 3x3 window with stride, padding and dilation 1: the item at
// image row iy, columns x0 .. x0 + IN - 1, is tap (i, j)'s column row
// y = iy + 1 - i at x0 moved by j - 1 (kp_shift_run, zeros past the
// image's edges), for the three i whose y is an output row; row 0 of
// taps i = 0 and row H - 1 of taps i = 2 read the padding and get zeros
// from the items of image rows 0 and H - 1.
template <typename T> struct kp_im2col3_item {
    const kp_spatial_args &a;
    const T *src;
    T *dst;
    KP_DEVICE void operator()(uint32_t plane, int iy, int x0) const {
        constexpr int IN = (int)(16 / sizeof(T));
        const int h = (int)a.h, w = (int)a.w;
        const T *row = src + (int64_t)plane * a.src_stride[1] + iy * (int)a.src_stride[2] + x0;
        const kp_vec16<T> mid = *(const kp_vec16<T> *)row;
        const uint32_t prev = x0 > 0 ? kp_bits32(row[-1]) : 0;
        const uint32_t next = x0 + IN < w ? kp_bits32(row[IN]) : 0;
        kp_vec16<T> v[3];
        v[0] = kp_shift_run(mid, prev, next, -1);
        v[1] = mid;
        v[2] = kp_shift_run(mid, prev, next, 1);
        const int64_t ds1 = a.dst_stride[1];
        const int ds2 = (int)a.dst_stride[2];
        T *out = dst + (int64_t)plane * 9 * ds1 + x0;
#pragma unroll
        for (int i = 0; i < 3; i++) {
            const int y = iy + 1 - i;
            if ((unsigned)y < (unsigned)h) {
#pragma unroll
                for (int j = 0; j < 3; j++)
                    kp_store_streaming(out + (3 * i + j) * ds1 + y * ds2, v[j]);
            }
        }
        const kp_vec16<T> zero = {};
        if (iy == 0) {
#pragma unroll
            for (int j = 0; j < 3; j++)
                kp_store_streaming(out + j * ds1, zero);
        }
        if (iy == h - 1) {
#pragma unroll
            for (int j = 0; j < 3; j++)
                kp_store_streaming(out + (6 + j) * ds1 + (h - 1) * ds2, zero);
        }
    }
};

// max_pool2d 3x3, stride 2, padding 1, W = 2 W_out, 16-bit types: item row
// k makes output rows 2k and 2k + 1 (if there is one), columns x0 .. x0 + 3
// (x0 = b / 2), from image rows 4k - 1 .. 4k + 3, each loaded once: its 8
// columns from b = 2 x0 as 16 bytes and the column before. The taps are
// those of kp_pool_window, in the same order; rows and the column outside
// the image are skipped or read as -inf, which cannot change a maximum.
template <typename T> struct kp_max3s2_pairs_item {
    const kp_spatial_args &a;
    const T *src;
    T *dst;
    KP_DEVICE void operator()(uint32_t plane, int k, int b) const {
        typedef typename kp_compute<T>::type C;
        static_assert(sizeof(T) == 2, "8 columns in 16 bytes");
        const kp_max_red<C> red{kp_lowest<C>()};
        const int h = (int)a.h, s2 = (int)a.src_stride[2];
        const T *base = src + (int64_t)plane * a.src_stride[1] + b;
        kp_vec16<T> mid[5];
        T before[5];
        bool ok[5];
#pragma unroll
        for (int t = 0; t < 5; t++) {
            const int iy = 4 * k - 1 + t;
            ok[t] = (unsigned)iy < (unsigned)h;
            const T *row = base + (ok[t] ? iy * s2 : 0);
            if (ok[t]) {
                mid[t] = *(const kp_vec16<T> *)row;
                before[t] = row[b > 0 ? -1 : 0];
            }
        }
        C acc0[4], acc1[4];
#pragma unroll
        for (int u = 0; u < 4; u++)
            acc0[u] = acc1[u] = red.pad;
#pragma unroll
        for (int t = 0; t < 5; t++) {
            if (!ok[t])
                continue;
            C e[9];  // columns b - 1 .. b + 7
            e[0] = b > 0 ? kp_load(before[t]) : red.pad;
#pragma unroll
            for (int u = 0; u < 8; u++)
                e[u + 1] = kp_load(mid[t].v[u]);
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int j = 0; j < 3; j++) {
                    if (t <= 2)
                        red.tap(acc0[u], e[2 * u + j]);
                    if (t >= 2)
                        red.tap(acc1[u], e[2 * u + j]);
                }
        }
        kp_vec8<T> o0, o1;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            o0.v[u] = kp_store<T>(acc0[u]);
            o1.v[u] = kp_store<T>(acc1[u]);
        }
        const int ds2 = (int)a.dst_stride[2];
        T *out = dst + (int64_t)plane * a.dst_stride[1] + 2 * k * ds2 + b / 2;
        *(kp_vec8<T> *)out = o0;
        if (2 * k + 1 < (int)a.h_out)
            *(kp_vec8<T> *)(out + ds2) = o1;
    }
};

// The max_pool2d walk of KP_SPATIAL_FAST_PAIRS, or false.
template <typename T> KP_DEVICE bool kp_max_pool_pairs(const kp_spatial_args &a, const T *src, T *dst) {
    if constexpr (sizeof(T) == 2 && kp_fast_float<T>::value) {
        if ((a.flags & KP_SPATIAL_FAST_PAIRS) && ((uintptr_t)src & 15) == 0 && ((uintptr_t)dst & 7) == 0) {
            kp_image_items<8>(a, (uint32_t)(a.h_out + 1) / 2, kp_max3s2_pairs_item<T>{a, src, dst});
            return true;
        }
    }
    return false;
}

// upsample_bilinear2d by 2 along both dims without align_corners
// (KP_SPATIAL_FAST_BILINEAR2): item = G columns x0 .. x0 + G - 1 (8 bytes)
// of source row y, which make columns 2 x0 .. 2 x0 + 2G - 1 (16 bytes) of
// output rows 2y and 2y + 1 from source rows y - 1, y and y + 1 (clamped).
// Each source row is loaded once an item, and the columns beside it come
// from the neighbouring lanes, which hold the items beside it where those
// are in the same row (all but a wave's first and last lane inside a row);
// the output walk loads each source row twice per output run, plus the
// columns beside it. Weights and order of operations are the per-element
// code's: output x = 2i + 1 reads columns i and i + 1 (i again past the
// last) with weights 0.75 and 0.25, x = 2i > 0 reads i - 1 and i with 0.25
// and 0.75, x = 0 reads 0 and 1 with 1 and 0; rows likewise. K items a
// lane (see kp_image_walk below).
template <typename T, int K>
KP_DEVICE void kp_bilinear2_items(const kp_spatial_args &a, const T *src, T *dst) {
    typedef float C;
    constexpr int G = (int)(8 / sizeof(T)), W = KP_WAVE_SIZE;
    const int h = (int)a.h, w = (int)a.w, s2 = (int)a.src_stride[2];
    const uint32_t per_row = (uint32_t)(w / G);
    const uint32_t items = (uint32_t)(a.n * a.c) * (uint32_t)h * per_row;
    const uint32_t stride = gridDim.x * blockDim.x * K;
    const int lane = (int)(threadIdx.x % W);
    // A wave takes K * W consecutive items a step, lane l items l, W + l, ..:
    // stores of one wave instruction are contiguous along a row. Waves step
    // together while any lane has an item, so that all take part in the
    // exchanges; lanes past the end work on a copy of the last item.
    for (uint32_t first = (blockIdx.x * blockDim.x + threadIdx.x - lane) * K; first < items;
         first += stride) {
        bool mine[K];
        int y[K], x0[K];
        uint32_t plane[K];
        kp_vec8<T> v[K][3];
        const T *rows[K][3];  // source rows y - 1, y, y + 1 (clamped) at column x0
#pragma unroll
        for (int k = 0; k < K; k++) {
            mine[k] = first + k * W + lane < items;
            const uint32_t i = mine[k] ? first + k * W + lane : items - 1;
            const uint32_t r = kp_magic_div(a, 3, i);
            plane[k] = kp_magic_div(a, 4, r);
            y[k] = (int)(r - plane[k] * (uint32_t)h);
            x0[k] = (int)(i - r * per_row) * G;
            const T *base = src + (int64_t)plane[k] * a.src_stride[1] + x0[k];
            const int ys[3] = {y[k] > 0 ? y[k] - 1 : 0, y[k], y[k] + 1 < h ? y[k] + 1 : h - 1};
#pragma unroll
            for (int t = 0; t < 3; t++) {
                rows[k][t] = base + ys[t] * s2;
                v[k][t] = *(const kp_vec8<T> *)rows[k][t];
            }
        }
        C s[K][3][2 * G];  // each row's horizontal sums at the 2G output columns
#pragma unroll
        for (int t = 0; t < 3; t++) {
            C e[K][G + 2];  // columns x0 - 1 .. x0 + G
#pragma unroll
            for (int k = 0; k < K; k++)
#pragma unroll
                for (int j = 0; j < G; j++)
                    e[k][j + 1] = kp_load(v[k][t].v[j]);
            // The item before (k, l) is (k, l - 1), or (k - 1, W - 1) for l = 0;
            // the one after is (k, l + 1), or (k + 1, 0) for l = W - 1.
#pragma unroll
            for (int k = 0; k < K; k++) {
                const C before = k > 0 && lane == W - 1 ? e[k - 1][G] : e[k][G];
                const C after = k < K - 1 && lane == 0 ? e[k + 1][1] : e[k][1];
                e[k][0] = kp_shfl(before, (lane + W - 1) % W);
                e[k][G + 1] = kp_shfl(after, (lane + 1) % W);
            }
#pragma unroll
            for (int k = 0; k < K; k++) {
                const T *row = rows[k][t];
                // Lanes whose neighbour in the row is not in the wave's step.
                if (k == 0 && lane == 0 && x0[k] > 0)
                    e[k][0] = kp_load(row[-1]);
                if (x0[k] + G >= w)
                    e[k][G + 1] = e[k][G];
                else if (k == K - 1 && lane == W - 1)
                    e[k][G + 1] = kp_load(row[G]);
#pragma unroll
                for (int u = 0; u < 2 * G; u++) {
                    const int j = u / 2 + (u & 1);
                    C w1 = (u & 1) ? (C)0.25 : (C)0.75, v00 = e[k][j], v01 = e[k][j + 1];
                    if (u == 0 && x0[k] == 0) {
                        w1 = (C)0;
                        v00 = e[k][1];
                        v01 = e[k][2];
                    }
                    s[k][t][u] = ((C)1 - w1) * v00 + w1 * v01;
                }
            }
        }
#pragma unroll
        for (int k = 0; k < K; k++) {
            const C top1 = y[k] > 0 ? (C)0.75 : (C)0;
            kp_vec16<T> top, bottom;
#pragma unroll
            for (int u = 0; u < 2 * G; u++) {
                const C second = y[k] > 0 ? s[k][1][u] : s[k][2][u];
                top.v[u] = kp_store<T>(((C)1 - top1) * s[k][0][u] + top1 * second);
                bottom.v[u] = kp_store<T>((C)0.75 * s[k][1][u] + (C)0.25 * s[k][2][u]);
            }
            if (mine[k]) {
                T *out = dst + (int64_t)plane[k] * a.dst_stride[1] + (int64_t)(2 * y[k]) * a.dst_stride[2] +
                         2 * x0[k];
                *(kp_vec16<T> *)out = top;
                *(kp_vec16<T> *)(out + a.dst_stride[2]) = bottom;
            }
        }
    }
}

// The image-side walk of op OP where the launcher set its flag and the
// bases are aligned (uniform over the grid); false where the kernel must
// walk the output.
template <template <typename, typename> class OP, typename T> struct kp_image_walk {
    static KP_DEVICE bool go(const kp_spatial_args &, const T *, T *) { return false; }
};
template <typename T> KP_DEVICE bool kp_bases16(const T *src, const T *dst) {
    return (((uintptr_t)src | (uintptr_t)dst) & 15) == 0;
}
template <typename T> struct kp_image_walk<kp_im2col_op, T> {
    static KP_DEVICE bool go(const kp_spatial_args &a, const T *src, T *dst) {
        if constexpr (sizeof(T) == 2 && kp_fast_bits<T>::value) {
            if ((a.flags & KP_SPATIAL_FAST_IM2COL3) && kp_bases16(src, dst)) {
                kp_image_items<(int)(16 / sizeof(T))>(a, (uint32_t)a.h, kp_im2col3_item<T>{a, src, dst});
                return true;
            }
        }
        return false;
    }
};

template <typename T> struct kp_image_walk<kp_bilinear_op, T> {
    static KP_DEVICE bool go(const kp_spatial_args &a, const T *src, T *dst) {
        if constexpr (kp_fast_float<T>::value) {
            if ((a.flags & KP_SPATIAL_FAST_BILINEAR2) &&
                (((uintptr_t)src & 7) | ((uintptr_t)dst & 15)) == 0) {
                // Two items a lane for f32 (H200: 91 -> 93 % of copy); one for
                // 16-bit types, whose two took 80 registers and lost 2 points.
                kp_bilinear2_items<T, sizeof(T) == 4 ? 2 : 1>(a, src, dst);
                return true;
            }
        }
        return false;
    }
};

template <typename T, typename O> using kp_max_pool_idx_op = kp_max_pool_op<T, O, true>;
template <typename T, typename O> using kp_max_pool_val_op = kp_max_pool_op<T, O, false>;

// Launched with KP_SPATIAL_BLOCK threads.
#define KP_SPATIAL_BOUNDS KP_AMD_BLOCK_BOUNDS(KP_SPATIAL_BLOCK)

// src and dst never share a byte (the launchers check), nor do indices:
// __restrict__ lets the compiler schedule loads past stores, which helped
// every op but bilinear upsampling on H100 (its f32 lost 6 points of copy
// bandwidth with it; KP_NO_RESTRICT).
#define KP_RESTRICT __restrict__
#define KP_NO_RESTRICT
#define KP_SPATIAL_KERNEL(KNAME, OP, NAME, T, R)                                                 \
    KP_KERNEL KP_SPATIAL_BOUNDS void KNAME##_##NAME(kp_spatial_args a, const T *R src, T *R dst) { \
        if (!kp_image_walk<OP, T>::go(a, src, dst))                                            \
            KP_SPATIAL_DISPATCH(OP, T, src);                                                   \
    }

#define KP_IM2COL(NAME, T) KP_SPATIAL_KERNEL(im2col, kp_im2col_op, NAME, T, KP_RESTRICT)
#define KP_COL2IM(NAME, T) KP_SPATIAL_KERNEL(col2im, kp_col2im_op, NAME, T, KP_RESTRICT)
#define KP_AVG_POOL(NAME, T) KP_SPATIAL_KERNEL(avg_pool2d, kp_avg_pool_op, NAME, T, KP_RESTRICT)
#define KP_NEAREST(NAME, T) KP_SPATIAL_KERNEL(upsample_nearest2d, kp_nearest_op, NAME, T, KP_RESTRICT)
#define KP_BILINEAR(NAME, T) KP_SPATIAL_KERNEL(upsample_bilinear2d, kp_bilinear_op, NAME, T, KP_NO_RESTRICT)
#define KP_MAX_POOL(NAME, T)                                                                     \
    KP_KERNEL KP_SPATIAL_BOUNDS void max_pool2d_##NAME(                                         \
        kp_spatial_args a, const T *KP_RESTRICT src, T *KP_RESTRICT dst,                        \
        uint32_t *KP_RESTRICT idx) {                                                           \
        if (idx)                                                                               \
            KP_SPATIAL_DISPATCH(kp_max_pool_idx_op, T, src, idx);                              \
        else if (!kp_max_pool_pairs<T>(a, src, dst))                                          \
            KP_SPATIAL_DISPATCH(kp_max_pool_val_op, T, src, idx);                              \
    }

KP_FOR_EACH_SIZE(KP_IM2COL)
KP_FOR_EACH_SIZE(KP_NEAREST)
KP_FOR_EACH_DTYPE(KP_COL2IM)
KP_FOR_EACH_DTYPE(KP_MAX_POOL)
KP_FOR_EACH_FLOAT(KP_AVG_POOL)
KP_FOR_EACH_FLOAT(KP_BILINEAR)
