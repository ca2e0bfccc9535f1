// conv: convolutions as tiled implicit GEMMs. Per group, a block computes a
// tile of (output channel x output pixel), KP_CONV_TILE_M (f16/bf16:
// KP_CONV_TILE_M_16) x BN; the reduction over (input channel, tap) runs in
// BK-deep steps, each staging a weight tile and an input tile gathered on
// the fly (im2col index math, zeros for taps in the padding) in shared
// memory, double-buffered through registers: the next step's global loads
// are in flight while this step multiplies. conv_transpose_* is the same
// GEMM with a gather that maps each output pixel and tap back to the input
// pixel it comes from (taps whose position is not a multiple of the stride
// read 0); the launcher uses it only where stride and dilation both exceed
// 1, and otherwise runs the transposed conv as one conv_* per output phase
// (the phases share a launch: block z runs kp_conv_launch::conv[z]). Where
// the channels per group are a multiple of the step depth, the reduction
// runs tap-major (kp_conv_tap_step): a step then lies in one tap and the
// gather checks its bounds once; otherwise in the weight's own (c, i, j)
// order. The f16/bf16 tensor-core tile has a third way for stride-1 convs
// (kp_conv_halo): it stages each 16-channel chunk of the input rows its
// pixels read once, and all taps read that halo.
//
// The multiply: a SIMT register tile on every target; f16/bf16 on NVIDIA
// sm_80+ use mma.sync tensor-core instructions instead (kp_mma.cuh).
#include "kp_device.cuh"
#include "kp_mma.cuh"
#include "kp_conv_abi.h"

// A pointer the compiler must keep as computed: stepping it by a byte
// stride then costs one 64-bit add a load, where the compiler's own
// rewriting to base + index costs a shift and two adds more.
KP_DEVICE const char *kp_conv_opaque(const char *p) {
#if !KP_HIP
    asm("" : "+l"(p));
#endif
    return p;
}

// A T at byte address p of src or the weights, which no kernel writes
// (the launcher checks dst overlaps neither): the read-only global path on
// NVIDIA, which kp_conv_opaque's pointers would otherwise lose.
template <typename T> KP_DEVICE T kp_conv_ld(const char *p) {
#if !KP_HIP
    if constexpr (sizeof(T) == 2) {
        T v;
        v.bits = __ldg((const unsigned short *)p);
        return v;
    } else {
        return __ldg((const T *)p);
    }
#else
    return *(const T *)p;
#endif
}

// Position in the reduction: k = (c * k_h + i) * k_w + j, the weight's own
// order, so a warp reading consecutive k of a weight row reads contiguous
// memory. Input loads step a cursor through consecutive k instead of
// dividing per element.
struct kp_conv_cursor {
    int32_t k, c, i, j;
    KP_DEVICE void start(const kp_conv_args &a, int32_t k0) {
        k = k0;
        c = k0 / (a.k_h * a.k_w);
        int32_t tap = k0 - c * (a.k_h * a.k_w);
        i = tap / a.k_w;
        j = tap - i * a.k_w;
    }
    KP_DEVICE void advance(const kp_conv_args &a, int32_t step) {
        k += step;
        j += step;
        while (j >= a.k_w) {
            j -= a.k_w;
            if (++i == a.k_h) {
                i = 0;
                ++c;
            }
        }
    }
};

// Tap-major reduction, k = (i * k_w + j) * c_in_group + c, for convs whose
// channels per group are a multiple of the step depth: a step then lies in
// one tap, so the input gather checks that tap's bounds once and steps
// through channels with one add per element. The step's offsets into the
// weights and src are kept up to date with adds (the same for every
// thread: uniform registers) rather than recomputed with three 64-bit
// multiplies each a step.
struct kp_conv_tap_step {
    int32_t i, j, c0;   // the step's tap and first channel
    int32_t dy, dx;     // the tap's offset in src pixels: i * dil_h, j * dil_w
    int64_t w_off;      // c0 * w_stride_c + i * w_stride_i + j * w_stride_j
    int64_t src_off;    // c0 * s_c + dy * s_h + dx * s_w
    KP_DEVICE void start() {
        i = j = c0 = dy = dx = 0;
        w_off = src_off = 0;
    }
    KP_DEVICE void advance(const kp_conv_args &a, int32_t step) {
        c0 += step;
        w_off += (int64_t)step * a.w_stride_c;
        src_off += (int64_t)step * a.src_stride[1];
        if (c0 == a.c_in_group) {
            c0 = 0;
            w_off -= (int64_t)a.c_in_group * a.w_stride_c;
            src_off -= (int64_t)a.c_in_group * a.src_stride[1];
            if (++j == a.k_w) {
                j = 0;
                ++i;
                w_off += a.w_stride_i - (int64_t)(a.k_w - 1) * a.w_stride_j;
                src_off += (int64_t)a.dil_h * a.src_stride[2] - (int64_t)dx * a.src_stride[3];
                dy += a.dil_h;
                dx = 0;
            } else {
                w_off += a.w_stride_j;
                src_off += (int64_t)a.dil_w * a.src_stride[3];
                dx += a.dil_w;
            }
        }
    }
};

// A thread's weight rows: output channels m, m + STEP, ... of group g, all
// read at one depth k per step.
struct kp_conv_wrows {
    int64_t base;
    int32_t rows;   // rows of the group from m on
    KP_DEVICE void start(const kp_conv_args &a, int g, int32_t m) {
        rows = a.c_out_group - m;
        base = (int64_t)g * a.w_stride_group + (int64_t)m * a.w_stride_m;
    }
    template <int STEP, int PER, typename T>
    KP_DEVICE void load(const kp_conv_args &a, const T *w, const kp_conv_cursor &cur,
                        T (&out)[PER]) const {
        const bool in_k = cur.k < a.k_total;
        const int64_t off =
            base + cur.c * a.w_stride_c + cur.i * a.w_stride_i + cur.j * a.w_stride_j;
#pragma unroll
        for (int r = 0; r < PER; r++)
            out[r] = in_k && r * STEP < rows ? w[off + (int64_t)(r * STEP) * a.w_stride_m] : T();
    }
    // The same in tap-major order: channel c0 + dc of the step's tap.
    // Byte pointers stepped by byte strides (kp_conv_opaque).
    template <int STEP, int PER, typename T>
    KP_DEVICE void load_tap(const kp_conv_args &a, const T *w, const kp_conv_tap_step &st,
                            int32_t dc, T (&out)[PER]) const {
        const int64_t step = (int64_t)STEP * a.w_stride_m * (int64_t)sizeof(T);
        const char *p = (const char *)(w + base + st.w_off + (int64_t)dc * a.w_stride_c);
#pragma unroll
        for (int r = 0; r < PER; r++, p = kp_conv_opaque(p + step))
            out[r] = r * STEP < rows ? kp_conv_ld<T>(p) : T();
    }
    // Channels c0 + dc and c0 + dc + 1 of the step's tap at once (any step
    // that keeps w_off: kp_conv_tap_step, kp_conv_halo_step).
    template <int STEP, int PER, typename T, class Step>
    KP_DEVICE void load_tap_pair(const kp_conv_args &a, const T *w, const Step &st,
                                 int32_t dc, T (&lo)[PER], T (&hi)[PER]) const {
        const int64_t step = (int64_t)STEP * a.w_stride_m * (int64_t)sizeof(T);
        const int64_t next = a.w_stride_c * (int64_t)sizeof(T);
        const char *p = (const char *)(w + base + st.w_off + (int64_t)dc * a.w_stride_c);
#pragma unroll
        for (int r = 0; r < PER; r++, p = kp_conv_opaque(p + step)) {
            lo[r] = r * STEP < rows ? kp_conv_ld<T>(p) : T();
            hi[r] = r * STEP < rows ? kp_conv_ld<T>(p + next) : T();
        }
    }
};

// The input side of the conv gather steps through k with a cursor that
// also keeps the tap's src offset c*s_c + i*d_h*s_h + j*d_w*s_w up to date:
// a few adds per element instead of three 64-bit multiplies.
struct kp_conv_gcursor {
    int32_t k, i, j;
    int64_t off;
    KP_DEVICE void start(const kp_conv_args &a, int32_t k0) {
        kp_conv_cursor t;
        t.start(a, k0);
        k = t.k;
        i = t.i;
        j = t.j;
        off = t.c * a.src_stride[1] + (int64_t)(i * a.dil_h) * a.src_stride[2] +
              (int64_t)(j * a.dil_w) * a.src_stride[3];
    }
    KP_DEVICE void advance(const kp_conv_args &a, int32_t step) {
        k += step;
        j += step;
        off += (int64_t)step * a.dil_w * a.src_stride[3];
        while (j >= a.k_w) {
            j -= a.k_w;
            off += (int64_t)a.dil_h * a.src_stride[2] - (int64_t)(a.k_w * a.dil_w) * a.src_stride[3];
            if (++i == a.k_h) {
                i = 0;
                off += a.src_stride[1] - (int64_t)(a.k_h * a.dil_h) * a.src_stride[2];
            }
        }
    }
};

template <bool TR, typename A, typename B> struct kp_conv_pick { typedef A type; };
template <typename A, typename B> struct kp_conv_pick<false, A, B> { typedef B type; };

// Output pixel p as (n, y, x); 32-bit division where every pixel index
// fits, which is most problems (64-bit division costs several times more).
KP_DEVICE void kp_conv_split(const kp_conv_args &a, int64_t p, int64_t &n, int32_t &y, int32_t &x) {
    if (a.pixels <= INT32_MAX) {
        const uint32_t q = (uint32_t)p, w = (uint32_t)a.out_w, h = (uint32_t)a.out_h;
        const uint32_t r = q / w, nn = r / h;
        x = (int32_t)(q - r * w);
        y = (int32_t)(r - nn * h);
        n = nn;
        return;
    }
    const int64_t r = p / a.out_w;
    x = (int32_t)(p - r * a.out_w);
    n = r / a.out_h;
    y = (int32_t)(r - n * a.out_h);
}

// One GEMM column: output pixel p, gathered from src. For conv, tap (i, j)
// reads src[y*s - p + i*d]; for the transposed conv, the input pixel iy
// with iy*s = y + p - i*d, if that is a whole number in range.
template <bool TR> struct kp_conv_pixel {
    typedef typename kp_conv_pick<TR, kp_conv_cursor, kp_conv_gcursor>::type cursor;
    int64_t base;   // src offset of (n, the group's first channel)
    int32_t y0, x0;
    KP_DEVICE void start(const kp_conv_args &a, int64_t p, int g) {
        const bool valid = p < a.pixels;
        int64_t n;
        int32_t y, x;
        kp_conv_split(a, valid ? p : 0, n, y, x);
        base = n * a.src_stride[0] + (int64_t)g * a.c_in_group * a.src_stride[1];
        y0 = TR ? y + a.pad_h : y * a.stride_h - a.pad_h;
        x0 = TR ? x + a.pad_w : x * a.stride_w - a.pad_w;
        if (!TR)  // offset of the (possibly outside) position (y0, x0)
            base += (int64_t)y0 * a.src_stride[2] + (int64_t)x0 * a.src_stride[3];
        // A pixel past the end reads nothing: a row that no tap reaches
        // (every tap offset is below 2^30 in magnitude, see the launcher).
        if (!valid)
            y0 = TR ? -(1 << 30) : (1 << 30);
    }
    // PER consecutive channels c0 + dc.. of the step's tap (conv only).
    template <int PER, typename T>
    KP_DEVICE void load_tap(const kp_conv_args &a, const T *src, const kp_conv_tap_step &st,
                            int32_t dc, T (&out)[PER]) const {
        const int32_t dy = st.dy, dx = st.dx;
        const bool ok = (uint32_t)(y0 + dy) < (uint32_t)a.in_h && (uint32_t)(x0 + dx) < (uint32_t)a.in_w;
        const int64_t s1 = a.src_stride[1];
        // A byte pointer stepped by the channel stride (kp_conv_opaque).
        const char *p = (const char *)(src + base + st.src_off + (int64_t)dc * s1);
        const int64_t sb = s1 * (int64_t)sizeof(T);
#pragma unroll
        for (int r = 0; r < PER; r++, p = kp_conv_opaque(p + sb))
            out[r] = ok ? kp_conv_ld<T>(p) : T();
    }
    template <typename T>
    KP_DEVICE T load(const kp_conv_args &a, const T *src, const kp_conv_gcursor &cur) const {
        const bool ok = cur.k < a.k_total && (uint32_t)(y0 + cur.i * a.dil_h) < (uint32_t)a.in_h &&
                        (uint32_t)(x0 + cur.j * a.dil_w) < (uint32_t)a.in_w;
        return ok ? src[base + cur.off] : T();
    }
    template <typename T>
    KP_DEVICE T load(const kp_conv_args &a, const T *src, const kp_conv_cursor &cur) const {
        if (cur.k >= a.k_total)
            return T();
        // Unsigned: a negative position wraps above every in-range one.
        uint32_t ty = (uint32_t)(y0 - cur.i * a.dil_h), tx = (uint32_t)(x0 - cur.j * a.dil_w);
        uint32_t qy = ty / (uint32_t)a.stride_h, qx = tx / (uint32_t)a.stride_w;
        bool ok = ((ty | tx) >> 31) == 0 && qy * (uint32_t)a.stride_h == ty &&
                  qx * (uint32_t)a.stride_w == tx && qy < (uint32_t)a.in_h && qx < (uint32_t)a.in_w;
        if (!ok)
            return T();
        return src[base + cur.c * a.src_stride[1] + (int64_t)qy * a.src_stride[2] +
                   (int64_t)qx * a.src_stride[3]];
    }
};

// dst offset of pixel p's (n, channel 0, y, x), or -1 past the last pixel.
KP_DEVICE int64_t kp_conv_dst_pixel(const kp_conv_args &a, int64_t p) {
    if (p >= a.pixels)
        return -1;
    int64_t n;
    int32_t y, x;
    kp_conv_split(a, p, n, y, x);
    return n * a.dst_stride[0] + (int64_t)y * a.dst_stride[2] + (int64_t)x * a.dst_stride[3];
}

// Walks a thread's output pixels in increasing order, splitting only the
// first: later ones step x and carry into y and n.
struct kp_conv_dst_walk {
    int64_t p, n;
    int32_t y, x;
    KP_DEVICE void start(const kp_conv_args &a, int64_t p0) {
        p = p0;
        kp_conv_split(a, p0 < a.pixels ? p0 : 0, n, y, x);
    }
    KP_DEVICE void advance(const kp_conv_args &a, int32_t d) {
        p += d;
        x += d;
        while (x >= a.out_w) {
            x -= a.out_w;
            if (++y == a.out_h) {
                y = 0;
                ++n;
            }
        }
    }
    // dst offset of the current pixel's channel 0, or -1 past the last pixel.
    KP_DEVICE int64_t offset(const kp_conv_args &a) const {
        return p < a.pixels ? n * a.dst_stride[0] + (int64_t)y * a.dst_stride[2] +
                                  (int64_t)x * a.dst_stride[3]
                            : -1;
    }
};

// Output channel m of group g: its dst offset past the pixel's and its bias.
template <typename T> struct kp_conv_channel {
    typedef typename kp_compute<T>::type Acc;
    int64_t off;
    Acc bias;
    bool valid;
    KP_DEVICE void start(const kp_conv_args &a, const T *b, int g, int32_t m) {
        valid = m < a.c_out_group;
        int64_t o = (int64_t)g * a.c_out_group + m;
        off = o * a.dst_stride[1];
        bias = valid && a.has_bias ? kp_load(b[o * a.bias_stride]) : Acc(0);
    }
};

// How far the SIMT tile unrolls its step: fully on NVIDIA; on AMD a full
// unroll lets the compiler hoist every shared-memory load of the step and
// spill.
constexpr int kp_conv_simt_unroll = KP_HIP ? 2 : 16;

// A thread's weight elements of the step at depth k0: depth k0 + kk of the
// rows wrows starts at, STEP rows apart.
template <typename T, bool TAPS, int STEP, int PER>
KP_DEVICE void kp_conv_fetch_a(const kp_conv_args &a, const T *w, int32_t k0, int32_t kk,
                               const kp_conv_tap_step &st, const kp_conv_wrows &wrows,
                               T (&out)[PER]) {
    if (TAPS) {
        wrows.load_tap<STEP, PER>(a, w, st, kk, out);
        return;
    }
    kp_conv_cursor ca;
    ca.start(a, k0 + kk);
    wrows.load<STEP, PER>(a, w, ca, out);
}

// A thread's input elements of the step at depth k0: PER consecutive
// depths from k0 + (t / (KP_CONV_BLOCK / STEP)) * PER of its pixel.
template <typename T, bool TR, bool TAPS, int STEP, int PER>
KP_DEVICE void kp_conv_fetch_b(const kp_conv_args &a, const T *src, int32_t k0,
                               const kp_conv_tap_step &st, const kp_conv_pixel<TR> &pixel,
                               T (&out)[PER]) {
    const int32_t kb = (int32_t)(threadIdx.x / (KP_CONV_BLOCK / STEP)) * PER;
    if (TAPS) {
        pixel.template load_tap<PER>(a, src, st, kb, out);
        return;
    }
    // Consecutive k: the cursor wraps at most once a step.
    typename kp_conv_pixel<TR>::cursor cb;
    cb.start(a, k0 + kb);
#pragma unroll
    for (int r = 0; r < PER; r++) {
        out[r] = pixel.load(a, src, cb);
        if (r + 1 < PER)
            cb.advance(a, 1);
    }
}

// ---- the SIMT tile: each thread keeps a TM x TN register tile of output
// channels tm*TM.. and pixels tn + COLS*q, so a wave reads one broadcast
// weight column and consecutive pixels from shared memory.
template <typename T, int BN_, int BK_, int TM, int TN> struct kp_conv_simt_tile {
    typedef typename kp_compute<T>::type Acc;
    static constexpr int BM = KP_CONV_TILE_M, BN = BN_, BK = BK_;
    static constexpr int COLS = BN / TN;
    static_assert((BM / TM) * COLS == KP_CONV_BLOCK, "one register tile per thread");
    // Element r of a thread's weight loads is (row t / BK + r * A_STEP, k = t % BK);
    // of its input loads (pixel t % BN, k = (t / BN) * B_PER + r).
    static constexpr int A_STEP = KP_CONV_BLOCK / BK, A_PER = BM / A_STEP;
    static constexpr int B_STEP = KP_CONV_BLOCK / BN, B_PER = BK / B_STEP;
    static_assert(A_PER * A_STEP == BM && B_PER * B_STEP == BK, "loads cover the tile");
    struct Smem {
        Acc a[2][BK][BM + 4];   // padded: the k-major stores spread over the banks
        Acc b[2][BK][BN];
    };
    struct Stage {
        T a[A_PER], b[B_PER];
    };
    Acc acc[TM][TN];

    static KP_DEVICE int32_t a_row() { return (int32_t)(threadIdx.x / BK); }
    template <bool TR, bool TAPS>
    static KP_DEVICE void fetch(const kp_conv_args &a, const T *src, const T *w, int32_t k0,
                                const kp_conv_tap_step &st, const kp_conv_wrows &wrows,
                                const kp_conv_pixel<TR> &pixel, Stage &r) {
        kp_conv_fetch_a<T, TAPS, A_STEP, A_PER>(a, w, k0, (int32_t)(threadIdx.x % BK), st, wrows, r.a);
        kp_conv_fetch_b<T, TR, TAPS, B_STEP, B_PER>(a, src, k0, st, pixel, r.b);
    }
    KP_DEVICE void zero() {
#pragma unroll
        for (int i = 0; i < TM; i++)
#pragma unroll
            for (int j = 0; j < TN; j++)
                acc[i][j] = Acc(0);
    }
    KP_DEVICE void stash(Smem &s, int buf, const Stage &r) const {
        const int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < A_PER; i++)
            s.a[buf][t % BK][t / BK + i * A_STEP] = kp_load(r.a[i]);
#pragma unroll
        for (int i = 0; i < B_PER; i++)
            s.b[buf][(t / BN) * B_PER + i][t % BN] = kp_load(r.b[i]);
    }
    KP_DEVICE void compute(const Smem &s, int buf) {
        const int t = threadIdx.x, tm = t / COLS, tn = t % COLS;
#pragma unroll kp_conv_simt_unroll
        for (int kk = 0; kk < BK; kk++) {
            Acc av[TM], bv[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                av[i] = s.a[buf][kk][tm * TM + i];
#pragma unroll
            for (int j = 0; j < TN; j++)
                bv[j] = s.b[buf][kk][tn + j * COLS];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += av[i] * bv[j];
        }
    }
    KP_DEVICE void store(const kp_conv_args &a, const T *bias, T *dst, int g, int32_t m0,
                         int64_t p0) const {
        const int t = threadIdx.x, tm = t / COLS, tn = t % COLS;
        int64_t pix[TN];
#pragma unroll
        for (int j = 0; j < TN; j++)
            pix[j] = kp_conv_dst_pixel(a, p0 + tn + j * COLS);
#pragma unroll
        for (int i = 0; i < TM; i++) {
            kp_conv_channel<T> ch;
            ch.start(a, bias, g, m0 + tm * TM + i);
            if (!ch.valid)
                continue;
#pragma unroll
            for (int j = 0; j < TN; j++)
                if (pix[j] >= 0)
                    dst[pix[j] + ch.off] = kp_store<T>(acc[i][j] + ch.bias);
        }
    }
};

#if KP_HAS_MMA_16
// Two 16-bit outputs of one channel at dst offsets pix[0] and pix[1] (-1:
// none), as one 32-bit store where they are adjacent and aligned.
template <typename T>
KP_DEVICE void kp_conv_store_pair(T *dst, const int64_t (&pix)[2], const kp_conv_channel<T> &ch,
                                  float v0, float v1) {
    const T o0 = kp_store<T>(v0 + ch.bias), o1 = kp_store<T>(v1 + ch.bias);
    T *p = dst + pix[0] + ch.off;
    if (pix[0] >= 0 && pix[1] == pix[0] + 1 && ((uintptr_t)p & 3) == 0) {
        *(uint32_t *)p = o0.bits | (uint32_t)o1.bits << 16;
        return;
    }
    if (pix[0] >= 0)
        *p = o0;
    if (pix[1] >= 0)
        dst[pix[1] + ch.off] = o1;
}

// ---- the tensor-core tile (16-bit inputs, NVIDIA sm_80+): 128 output
// channels x 128 pixels, so a block gathers each input element of its
// pixels once for all 128 channels. 8 warps of 32 lanes as 2 x 4, each
// owning 64 x 32 as 4 x 4 m16n8k16 products over 16-deep steps (32-deep
// ones need more than 128 registers; one block an SM measured slower).
// Shared memory keeps both operands k-contiguous in 48-byte rows: 16-byte
// aligned for ldmatrix, and any 8 consecutive rows fall in 8 different
// 16-byte bank groups.
template <typename T> struct kp_conv_mma_tile {
    static constexpr int BM = KP_CONV_TILE_M_16, BN = KP_CONV_TILE_N, BK = 16;
    static constexpr int LD = BK + 8;
    static_assert(BM * BN == KP_CONV_BLOCK * 64, "8 warps of 64 x 32");
    // Weights: a thread loads the depth pair 2 * (t % 8) of rows t / 8 +
    // A_STEP * r, stored as one word; input: pixel t % BN, depths
    // (t / BN) * B_PER.. as 16-byte stores.
    static constexpr int A_STEP = KP_CONV_BLOCK / (BK / 2), A_PER = BM / A_STEP;
    static constexpr int B_STEP = KP_CONV_BLOCK / BN, B_PER = BK / B_STEP;
    static_assert(A_PER * A_STEP == BM && B_PER % 8 == 0, "loads cover the tile");
    struct Smem {
        union {  // weights: a step's, or the halo path's two steps' (kp_conv_stash_a2)
            uint16_t a[2][BM][LD];
            uint16_t a2[2][2][BM][16];
        };
        union {  // the gathered input tiles, or the halo path's two halos
            uint16_t b[2][BN][LD];
            uint16_t halo[2][KP_CONV_HALO_PIXELS][16];
        };
    };
    struct Stage {
        T a[2][A_PER], b[B_PER];
    };
    float acc[4][4][4];

    static KP_DEVICE int32_t a_row() { return (int32_t)(threadIdx.x / (BK / 2)); }
    template <bool TR, bool TAPS>
    static KP_DEVICE void fetch(const kp_conv_args &a, const T *src, const T *w, int32_t k0,
                                const kp_conv_tap_step &st, const kp_conv_wrows &wrows,
                                const kp_conv_pixel<TR> &pixel, Stage &r) {
        const int32_t kk = (int32_t)(threadIdx.x % (BK / 2)) * 2;
        if (TAPS) {
            wrows.load_tap_pair<A_STEP, A_PER>(a, w, st, kk, r.a[0], r.a[1]);
        } else {
            kp_conv_fetch_a<T, TAPS, A_STEP, A_PER>(a, w, k0, kk, st, wrows, r.a[0]);
            kp_conv_fetch_a<T, TAPS, A_STEP, A_PER>(a, w, k0, kk + 1, st, wrows, r.a[1]);
        }
        kp_conv_fetch_b<T, TR, TAPS, B_STEP, B_PER>(a, src, k0, st, pixel, r.b);
    }
    KP_DEVICE void zero() {
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 4; j++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    acc[i][j][e] = 0.0f;
    }
    static KP_DEVICE uint32_t pack(T lo, T hi) { return lo.bits | (uint32_t)hi.bits << 16; }
    KP_DEVICE void stash(Smem &s, int buf, const Stage &r) const {
        const int t = threadIdx.x;
#pragma unroll
        for (int i = 0; i < A_PER; i++)
            *(uint32_t *)&s.a[buf][t / (BK / 2) + i * A_STEP][(t % (BK / 2)) * 2] =
                pack(r.a[0][i], r.a[1][i]);
        uint16_t *row = &s.b[buf][t % BN][(t / BN) * B_PER];
#pragma unroll
        for (int i = 0; i < B_PER; i += 8)
            *(uint4 *)(row + i) = make_uint4(pack(r.b[i], r.b[i + 1]), pack(r.b[i + 2], r.b[i + 3]),
                                             pack(r.b[i + 4], r.b[i + 5]), pack(r.b[i + 6], r.b[i + 7]));
    }
    // This lane's ldmatrix row of B fragment pair q (q < 2) of a step:
    // pixel col(q), depths kb()..kb() + 7 of the step's 16.
    static KP_DEVICE int col(int q) {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        return (warp % 4) * 32 + lane % 8 + (lane / 16) * 8 + q * 16;
    }
    static KP_DEVICE int kb() { return ((threadIdx.x % 32) / 8) % 2 * 8; }
    // This lane's ldmatrix row of the first A fragment; fragment i's is 16 i below.
    static KP_DEVICE int a_lane_row() {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        return (warp / 4) * 64 + lane % 8 + ((lane / 8) % 2) * 8;
    }
    // One step's products from this lane's weight row a0 (rows ASTRIDE
    // elements apart) and B rows b0, b1 (fragment pairs 0 and 1, see col).
    template <int ASTRIDE>
    KP_DEVICE void mma(const uint16_t *a0, const uint16_t *b0, const uint16_t *b1) {
        // ldmatrix x4 of B: matrices (n, k), (n, k + 8), (n + 8, k), (n + 8, k + 8)
        // are b[0], b[1] of fragment j and of fragment j + 1.
        uint32_t bf[4][2];
#pragma unroll
        for (int j = 0; j < 4; j += 2) {
            uint32_t r[4];
            kp_ldmatrix_x4(r, j ? b1 : b0);
            bf[j][0] = r[0];
            bf[j][1] = r[1];
            bf[j + 1][0] = r[2];
            bf[j + 1][1] = r[3];
        }
        // A fragments one at a time: fewer live registers.
#pragma unroll
        for (int i = 0; i < 4; i++) {
            uint32_t af[4];
            kp_ldmatrix_x4(af, a0 + i * 16 * ASTRIDE);
#pragma unroll
            for (int j = 0; j < 4; j++)
                kp_mma_16<T>::run(acc[i][j], af, bf[j]);
        }
    }
    KP_DEVICE void compute(const Smem &s, int buf) {
        const int lane = threadIdx.x % 32;
        mma<LD>(&s.a[buf][a_lane_row()][(lane / 16) * 8], &s.b[buf][col(0)][kb()],
                &s.b[buf][col(1)][kb()]);
    }
    KP_DEVICE void store(const kp_conv_args &a, const T *bias, T *dst, int g, int32_t m0,
                         int64_t p0) const {
        const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        const int32_t row = m0 + (warp / 4) * 64 + lane / 4;
        // This thread's pixels: col + 8j + e for j < 4, e < 2.
        kp_conv_dst_walk walk;
        walk.start(a, p0 + (warp % 4) * 32 + (lane % 4) * 2);
        int64_t pix[4][2];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                pix[j][e] = walk.offset(a);
                if (j < 3 || e == 0)
                    walk.advance(a, e ? 7 : 1);
            }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                kp_conv_channel<T> ch;
                ch.start(a, bias, g, row + i * 16 + h * 8);
                if (!ch.valid)
                    continue;
#pragma unroll
                for (int j = 0; j < 4; j++)
                    kp_conv_store_pair<T>(dst, pix[j], ch, acc[i][j][h * 2], acc[i][j][h * 2 + 1]);
            }
    }
};

// ---- the halo path of the tensor-core tile (stride 1, dilation 1, channels
// per group a multiple of 16; the launcher sets halo_w where the halo fits):
// each 16-channel chunk of the input rows that a pixel tile's taps read,
// zeros outside the image, is staged once in shared memory, pixel-major
// with the chunk's channels in one 32-byte row a pixel. Every tap's B
// fragments then come from that halo by ldmatrix at a per-tap offset,
// where the gathered tiles load each (pixel, tap) element anew.

// The reduction chunk-major, taps inner: the k_h * k_w steps of a 16-channel
// chunk share its halo. w_off is w_base + c0 * w_stride_c + i * w_stride_i
// + j * w_stride_j: it carries the weight rows' own offset, one 64-bit
// register fewer than keeping both.
struct kp_conv_halo_step {
    int32_t i, j, c0;
    int64_t w_off;
    KP_DEVICE void start(int64_t w_base) {
        i = j = c0 = 0;
        w_off = w_base;
    }
    KP_DEVICE void advance(const kp_conv_args &a, int32_t step) {
        if (++j < a.k_w) {
            w_off += a.w_stride_j;
            return;
        }
        j = 0;
        w_off -= (int64_t)(a.k_w - 1) * a.w_stride_j;
        if (++i < a.k_h) {
            w_off += a.w_stride_i;
            return;
        }
        i = 0;
        w_off += (int64_t)step * a.w_stride_c - (int64_t)(a.k_h - 1) * a.w_stride_i;
        c0 += step;
    }
};

// Element offset of channels (or depths) 8 * half.. in 32-byte row px of
// the halo path's shared memory (a halo pixel, a weight row): the halves
// swap every 4 rows, so that ldmatrix's rows at any 8 consecutive rows
// fall in 8 distinct 16-byte bank groups.
KP_DEVICE int kp_conv_halo_col(int32_t px, int half) { return 8 * (half ^ ((px >> 2) & 1)); }

// One step's weights, as kp_conv_mma_tile::stash packs them, into the
// halo path's 32-byte rows a2 (rows row + A_STEP * i share row's swizzle).
template <typename T, int A_STEP, int A_PER>
KP_DEVICE void kp_conv_stash_a2(uint16_t (*a2)[16], const T (&ra)[2][A_PER]) {
    const int t = threadIdx.x, row = t / 8, word = t % 8;
    const int col = kp_conv_halo_col(row, word / 4) + 2 * (word % 4);
#pragma unroll
    for (int i = 0; i < A_PER; i++)
        *(uint32_t *)&a2[row + i * A_STEP][col] = kp_conv_mma_tile<T>::pack(ra[0][i], ra[1][i]);
}

// A tile's halo. Output pixels p0.. lie in image n0 from output row y0 on,
// and (a tile is at most 128 pixels, an image at least that, see the
// launcher) possibly in image n0 + 1 from row 0 on. The halo holds each
// image part's input rows, part rows + k_h - 1 from the part's first row
// - pad_h, one part after the other, in halo_w columns: column q is input
// column q - xb (xb: pad_w rounded up to even, so that pixel pairs start
// at an even x). Each thread fills at most one pair of adjacent halo
// pixels (h, h + 1), two channels at a time, as one 32-bit load per
// channel: the launcher takes this path only where src's rows are
// contiguous, its other strides even and its base 4-byte aligned, so a
// pair in the image is an aligned word; only the last pair of an
// odd-width row is half in it.
struct kp_conv_halo {
    const char *p;    // src bytes of the pair's first pixel, channel 0 of group g
    int32_t h;        // the pair's first halo pixel; -1: this thread fills none
    // Halo pixels of this lane's B rows (kp_conv_mma_tile::col) at tap
    // (0, 0), both below 2^16: packed, one register fewer through the loop.
    uint32_t hb;
    bool ok0, ok1;    // pixel x is in the image; so is x + 1 (then so is x)
    KP_DEVICE void start(const kp_conv_args &a, const void *src, int64_t p0, int g, int col0,
                         int col1) {
        const int32_t img = a.out_h * a.out_w;
        const int64_t n0 = p0 / img;
        const int64_t last = (p0 + KP_CONV_TILE_N < a.pixels ? p0 + KP_CONV_TILE_N : a.pixels) - 1;
        const int32_t r0 = (int32_t)(p0 - n0 * img), y0 = r0 / a.out_w;
        const int32_t r1 = (int32_t)(last - n0 * img);  // below 2 * img
        const bool two = r1 >= img;
        const int32_t rows0 = (two ? a.out_h - 1 : r1 / a.out_w) - y0 + a.k_h;
        const int32_t rows = rows0 + (two ? (r1 - img) / a.out_w + a.k_h : 0);
        const int32_t xb = (a.pad_w + 1) & ~1, half = a.halo_w / 2;
        const int32_t t = threadIdx.x, r = t / half, xp = t - r * half;
        const bool second = r >= rows0;
        const int32_t y = (second ? r - rows0 : y0 + r) - a.pad_h, x = 2 * xp - xb;
        h = t < rows * half ? r * a.halo_w + 2 * xp : -1;
        const bool yok = (uint32_t)y < (uint32_t)a.in_h;
        ok0 = yok && (uint32_t)x < (uint32_t)a.in_w;
        ok1 = yok && (uint32_t)(x + 1) < (uint32_t)a.in_w;
        p = (const char *)src + 2 * ((n0 + second) * a.src_stride[0] +
                                     (int64_t)g * a.c_in_group * a.src_stride[1] +
                                     (int64_t)y * a.src_stride[2] + x);
        const int cols[2] = {col0, col1};
        hb = 0;
#pragma unroll
        for (int q = 0; q < 2; q++) {
            // Pixels past the last read halo pixel 0; the store drops them.
            int32_t rel = r0 + cols[q];
            if (rel > r1)
                continue;
            const bool in_second = rel >= img;
            rel -= in_second ? img : 0;
            const int32_t yy = rel / a.out_w, xx = rel - yy * a.out_w;
            const int32_t row = in_second ? rows0 + yy : yy - y0;
            hb |= (uint32_t)(row * a.halo_w + xx + xb - a.pad_w) << (16 * q);
        }
    }
    KP_DEVICE int32_t base(int q) const { return (int32_t)(q ? hb >> 16 : hb & 0xffff); }
    // Channels c, c + 1 of the pair as the halo's words: pixel h's (c in the
    // low half, c + 1 in the high), then pixel h + 1's.
    KP_DEVICE void load(const kp_conv_args &a, int32_t c, uint32_t (&v)[2]) const {
        const int64_t s1 = a.src_stride[1] * 2;
        const char *q = p + c * s1;
        if (ok1) {
            const uint32_t w0 = __ldg((const unsigned *)q), w1 = __ldg((const unsigned *)(q + s1));
            v[0] = __byte_perm(w0, w1, 0x5410);
            v[1] = __byte_perm(w0, w1, 0x7632);
            return;
        }
        const uint32_t e0 = ok0 ? __ldg((const unsigned short *)q) : 0u;
        const uint32_t e1 = ok0 ? __ldg((const unsigned short *)(q + s1)) : 0u;
        v[0] = e0 | e1 << 16;
        v[1] = 0;
    }
    // Stores load's words for channel pair cp (channels 2cp, 2cp + 1 of the chunk).
    KP_DEVICE void stash(uint16_t (*halo)[16], int cp, const uint32_t (&v)[2]) const {
        *(uint32_t *)&halo[h][kp_conv_halo_col(h, cp / 4) + 2 * (cp % 4)] = v[0];
        *(uint32_t *)&halo[h + 1][kp_conv_halo_col(h + 1, cp / 4) + 2 * (cp % 4)] = v[1];
    }
};

// One tile's reduction over halos, two steps a barrier: the steps of
// group g multiply from weight buffer g % 2 while the weights of the
// next group's steps go to the other, each loaded just before the
// product it overlaps (so only one step's are held in registers). Step s
// multiplies tap (i, j) of chunk c from halo buffer c % 2; over the
// chunk's taps 1..4, two channel pairs a tap of chunk c + 1 go to the
// other halo (the pairs rotate with the lane group: a warp's stores then
// spread over the banks). Taps 1..4: a fill then never shares a group
// with a read of the buffer it writes, chunk c - 1's last tap or chunk
// c + 1's first.
template <typename T>
KP_DEVICE void kp_conv_halo_tile(const kp_conv_args &a, const T *w, const T *bias, T *dst,
                                 typename kp_conv_mma_tile<T>::Smem &s, const kp_conv_halo &hal,
                                 int g, int32_t m0, int64_t p0) {
    typedef kp_conv_mma_tile<T> Tile;
    constexpr int BK = Tile::BK, A_STEP = Tile::A_STEP, A_PER = Tile::A_PER;
    const int32_t kk = (int32_t)(threadIdx.x % (BK / 2)) * 2, steps = a.k_total / BK;
    const int arow = Tile::a_lane_row(), acol = kp_conv_halo_col(arow, (threadIdx.x % 32) / 16);
    kp_conv_wrows wrows;
    wrows.start(a, g, m0 + Tile::a_row());
    T ra[2][A_PER];
    uint32_t v[2][2];
    Tile tile;
    tile.zero();
    kp_conv_halo_step st, cs;  // the step being fetched; the step being multiplied
    st.start(wrows.base);
    wrows.base = 0;
    cs.start(0);
    // The previous tile's last group ended with a barrier: both halos and
    // weight buffers are free. Steps 0 and 1 (every halo conv has 8 or more).
#pragma unroll
    for (int h = 0; h < 2; h++) {
        wrows.load_tap_pair<A_STEP, A_PER>(a, w, st, kk, ra[0], ra[1]);
        kp_conv_stash_a2<T, A_STEP, A_PER>(s.a2[0][h], ra);
        st.advance(a, BK);
    }
    if (hal.h >= 0) {
        // One pair at a time: all eight in flight at once measured slower.
#pragma unroll 1
        for (int cp = 0; cp < 8; cp++) {
            hal.load(a, 2 * cp, v[0]);
            hal.stash(s.halo[0], cp, v[0]);
        }
    }
    __syncthreads();
    for (int32_t s0 = 0, buf = 0; s0 < steps; s0 += 2, buf ^= 1) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            if (h == 1 && s0 + 1 == steps)
                break;
            const int32_t tap = cs.i * a.k_w + cs.j, off = cs.i * a.halo_w + cs.j;
            const int hbuf = (cs.c0 / BK) & 1, u = (tap - 1 + (int)threadIdx.x / 4) & 3;
            const bool fill = hal.h >= 0 && tap >= 1 && tap <= 4 && cs.c0 + BK < a.c_in_group;
            const bool more = s0 + h + 2 < steps;
            if (fill) {
                hal.load(a, cs.c0 + BK + 4 * u, v[0]);
                hal.load(a, cs.c0 + BK + 4 * u + 2, v[1]);
            }
            if (more) {
                wrows.load_tap_pair<A_STEP, A_PER>(a, w, st, kk, ra[0], ra[1]);
                st.advance(a, BK);
            }
            const int32_t b0 = hal.base(0) + off, b1 = hal.base(1) + off, half = Tile::kb() / 8;
            tile.template mma<16>(&s.a2[buf][h][arow][acol],
                                  &s.halo[hbuf][b0][kp_conv_halo_col(b0, half)],
                                  &s.halo[hbuf][b1][kp_conv_halo_col(b1, half)]);
            if (more)
                kp_conv_stash_a2<T, A_STEP, A_PER>(s.a2[buf ^ 1][h], ra);
            if (fill) {
                hal.stash(s.halo[hbuf ^ 1], 2 * u, v[0]);
                hal.stash(s.halo[hbuf ^ 1], 2 * u + 1, v[1]);
            }
            cs.advance(a, BK);
        }
        __syncthreads();
    }
    tile.store(a, bias, dst, g, m0, p0);
}

// The halo path's tile loop: blocks stride over (group, channel tile) on y
// and pixel tiles on x, as kp_conv_run's.
template <typename T>
KP_DEVICE void kp_conv_run_halo(const kp_conv_args &a, const T *src, const T *w, const T *bias,
                                T *dst, typename kp_conv_mma_tile<T>::Smem &s) {
    typedef kp_conv_mma_tile<T> Tile;
    static_assert(Tile::BM == KP_CONV_TILE_M_16 && Tile::BN == KP_CONV_TILE_N, "one pass a tile");
    const int64_t p_tiles = (a.pixels + Tile::BN - 1) / Tile::BN;
    const int64_t m_tiles = (int64_t)a.m_tiles * a.groups;
    for (int64_t ty = blockIdx.y; ty < m_tiles; ty += gridDim.y) {
        const int g = (int)(ty / a.m_tiles);
        const int32_t m0 = (int32_t)(ty % a.m_tiles) * Tile::BM;
        for (int64_t tx = blockIdx.x; tx < p_tiles; tx += gridDim.x) {
            kp_conv_halo hal;
            hal.start(a, src, tx * Tile::BN, g, Tile::col(0), Tile::col(1));
            kp_conv_halo_tile<T>(a, w, bias, dst, s, hal, g, m0, tx * Tile::BN);
        }
    }
}
#endif

// Output channels a block covers: 128 for 16-bit dtypes (the tensor-core
// tile's height; the 64-row SIMT tile makes two passes), 64 otherwise.
template <typename T> struct kp_conv_block_rows { static constexpr int value = KP_CONV_TILE_M; };
template <> struct kp_conv_block_rows<kp_f16> { static constexpr int value = KP_CONV_TILE_M_16; };
template <> struct kp_conv_block_rows<kp_bf16> { static constexpr int value = KP_CONV_TILE_M_16; };

// One tile's reduction and store: the double-buffered loop (one barrier a
// step: step s reads buffer s % 2 while the registers holding step s + 1
// go to the other).
template <typename T, bool TR, bool TAPS, class Tile>
KP_DEVICE void kp_conv_tile(const kp_conv_args &a, const T *src, const T *w, const T *bias, T *dst,
                            typename Tile::Smem &s, const kp_conv_pixel<TR> &pixel, int g,
                            int32_t m0, int64_t p0) {
    constexpr int BK = Tile::BK;
    kp_conv_wrows wrows;
    wrows.start(a, g, m0 + Tile::a_row());
    typename Tile::Stage r;
    Tile tile;
    tile.zero();
    kp_conv_tap_step tap;  // the tap-major position of the step being fetched
    tap.start();
    Tile::template fetch<TR, TAPS>(a, src, w, 0, tap, wrows, pixel, r);
    __syncthreads();  // the previous tile's readers of buffer 0 are done
    tile.stash(s, 0, r);
    __syncthreads();
    for (int32_t k0 = 0, buf = 0; k0 < a.k_total; k0 += BK, buf ^= 1) {
        const bool more = k0 < a.k_total - BK;
        if (more) {
            if (TAPS)
                tap.advance(a, BK);
            Tile::template fetch<TR, TAPS>(a, src, w, k0 + BK, tap, wrows, pixel, r);
        }
        tile.compute(s, buf);
        if (more)
            tile.stash(s, buf ^ 1, r);
        __syncthreads();
    }
    tile.store(a, bias, dst, g, m0, p0);
}

// The tile loop shared by both tiles: blocks stride over (group, channel
// tile) on y and pixel tiles on x. A block's channel tile is ROWS high;
// a shorter Tile covers it in passes.
template <typename T, bool TR, bool TAPS, class Tile>
KP_DEVICE void kp_conv_run(const kp_conv_args &a, const T *src, const T *w, const T *bias, T *dst,
                           typename Tile::Smem &s) {
    constexpr int ROWS = kp_conv_block_rows<T>::value, BM = Tile::BM, BN = Tile::BN;
    static_assert(ROWS % BM == 0, "whole passes");
    const int64_t p_tiles = (a.pixels + BN - 1) / BN;
    const int64_t m_tiles = (int64_t)a.m_tiles * a.groups;
    for (int64_t ty = blockIdx.y; ty < m_tiles; ty += gridDim.y) {
        const int g = (int)(ty / a.m_tiles);
        for (int64_t tx = blockIdx.x; tx < p_tiles; tx += gridDim.x) {
            const int64_t p0 = tx * BN;
            kp_conv_pixel<TR> pixel;
            pixel.start(a, p0 + threadIdx.x % BN, g);
            for (int32_t m0 = (int32_t)(ty % a.m_tiles) * ROWS, pass = 0;
                 pass < ROWS / BM && m0 < a.c_out_group; pass++, m0 += BM)
                kp_conv_tile<T, TR, TAPS, Tile>(a, src, w, bias, dst, s, pixel, g, m0, p0);
        }
    }
}

// The tile each dtype uses on this target. SIMT steps are 8 deep: deeper
// ones hold more loads in flight than 128 registers (two blocks an SM) fit.
template <typename T, bool TR> struct kp_conv_tile_for {
    typedef kp_conv_simt_tile<T, KP_CONV_TILE_N, 8, 8, 4> type;
};
template <bool TR> struct kp_conv_tile_for<double, TR> {
    typedef kp_conv_simt_tile<double, KP_CONV_TILE_N_F64, 8, 4, 4> type;
};
#if KP_HAS_MMA_16
template <bool TR> struct kp_conv_tile_for<kp_f16, TR> {
    typedef kp_conv_mma_tile<kp_f16> type;
};
template <bool TR> struct kp_conv_tile_for<kp_bf16, TR> {
    typedef kp_conv_mma_tile<kp_bf16> type;
};
#endif

template <typename T, bool TR>
KP_DEVICE void kp_conv_kernel(const kp_conv_launch &args, const T *src, const T *w, const T *bias,
                              T *dst) {
    typedef typename kp_conv_tile_for<T, TR>::type Tile;
    __shared__ __align__(16) typename Tile::Smem smem;
    // A transposed conv's output phase z (a plain conv: z = 0). The
    // transposed gather runs one conv.
    const kp_conv_args &a = args.conv[TR ? 0 : blockIdx.z];
    w += a.w_offset;
    dst += a.dst_offset;
#if KP_HAS_MMA_16
    if constexpr (!TR && sizeof(T) == 2) {
        if (a.halo_w) {
            kp_conv_run_halo<T>(a, src, w, bias, dst, smem);
            return;
        }
    }
#endif
    if (!TR && a.k_total > 0 && a.c_in_group % Tile::BK == 0)
        kp_conv_run<T, TR, true, Tile>(a, src, w, bias, dst, smem);
    else
        kp_conv_run<T, TR, false, Tile>(a, src, w, bias, dst, smem);
}

// Two blocks an SM (at most 128 registers a thread) where the tiles fit
// in that without spilling; one where the compiler needs a few more:
// NVIDIA sm_75 and sm_100+, AMD gfx900/gfx906 (no accumulation registers).
#if !KP_HIP && defined(__CUDA_ARCH__) && (__CUDA_ARCH__ < 800 || __CUDA_ARCH__ >= 1000)
#define KP_CONV_MIN_BLOCKS 1
#elif KP_HIP && (defined(__gfx900__) || defined(__gfx906__))
#define KP_CONV_MIN_BLOCKS 1
#else
#define KP_CONV_MIN_BLOCKS 2
#endif

// conv_<dtype> and conv_transpose_<dtype>: src, weight, bias (NULL when
// has_bias is 0), dst, with their offsets applied.
#define KP_CONV(NAME, T)                                                                     \
    KP_KERNEL __launch_bounds__(KP_CONV_BLOCK, KP_CONV_MIN_BLOCKS) void conv_##NAME(            \
        kp_conv_launch a, const T *src, const T *weight, const T *bias, T *dst) {            \
        kp_conv_kernel<T, false>(a, src, weight, bias, dst);                                  \
    }                                                                                        \
    KP_KERNEL __launch_bounds__(KP_CONV_BLOCK, KP_CONV_MIN_BLOCKS) void conv_transpose_##NAME(  \
        kp_conv_launch a, const T *src, const T *weight, const T *bias, T *dst) {            \
        kp_conv_kernel<T, true>(a, src, weight, bias, dst);                                   \
    }

KP_CONV(f32, float)
KP_CONV(f64, double)
KP_CONV(f16, kp_f16)
KP_CONV(bf16, kp_bf16)
