// rows: softmax and log_softmax, rmsnorm and layernorm over the last
// dimension, and rotary embeddings. A module of its own, apart from the
// reductions, so each loads (and compiles) in half the time. Floats
// accumulate in f32 (f64 for f64).
#include "kp_reduce.cuh"
#include "kp_elementwise.cuh"
#include "kp_rows.cuh"

// ------------------------------------------------------------- helpers

KP_DEVICE float kp_exp(float x) { return expf(x); }
KP_DEVICE double kp_exp(double x) { return exp(x); }
KP_DEVICE float kp_log(float x) { return logf(x); }
KP_DEVICE double kp_log(double x) { return log(x); }
KP_DEVICE float kp_sqrt(float x) { return sqrtf(x); }
KP_DEVICE double kp_sqrt(double x) { return sqrt(x); }

// ------------------------------------------------------------- row ops
// The row access is in kp_rows.cuh; below are the algorithms. Each one
// names the value rows are padded with (pad) and does its passes over the
// row with src.each; a slot that is not full (the row's last) is the only
// one that tests its elements.

// softmax: exp(x - max) / sum(exp(x - max)); log_softmax: (x - max) - log(sum).
// A NaN or +inf in a row makes the whole row NaN, as the formula does: the
// max ignores NaN (fmax), but exp(NaN - max) and exp(inf - inf) put a NaN
// in the sum. Padding is -inf, which adds exp(-inf) = 0 to the sum.
//
// f32 and f64 use the accurate exp, once per element (the cached slots keep
// it). 16-bit rows keep their storage form, so exp is computed twice, with
// the hardware exp2 (a few f32 ulp against a 16-bit ulp of 2^-8 or 2^-11):
// the output is 2^((x - max) log2(e) - log2(sum)), one fused multiply-add
// and one exp2 instead of a division; results below 2^-126 (bf16
// subnormals) flush to 0.
struct kp_softmax_algo {
    template <typename C> static KP_DEVICE C pad() { return kp_limits<C>::lowest(); }

    template <bool LOG, typename T, bool VEC, typename I, bool FULL, typename Src>
    KP_DEVICE void run(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src) const {
        typedef typename kp_compute<T>::type C;
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        constexpr bool lowp = sizeof(T) == 2;
        constexpr float log2e = 1.44269504f;
        // softmax keeps exp(x - max) in the cached slots where they hold C
        constexpr bool keep_exp = !LOG && Src::keeps_values;
        C m = pad<C>();
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                m = fmax(m, v[i]);
        });
        m = kp_group_reduce(g, m, kp_op_max<C>());
        C s = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++) {
                C e;
                if constexpr (lowp)
                    e = kp_fast_exp2((v[i] - m) * log2e);
                else
                    e = kp_exp(v[i] - m);
                s += e;
                if (keep_exp)
                    v[i] = e;
            }
        });
        s = kp_group_reduce(g, s, kp_op_sum<C>());
        const C log_s = kp_log(s), inv_s = C(1) / s;
        src.each([&](I k, C (&v)[N]) {
            C out[N];
#pragma unroll
            for (int i = 0; i < N; i++) {
                if constexpr (LOG)
                    out[i] = (v[i] - m) - log_s;
                else if constexpr (lowp)
                    out[i] = kp_fast_exp2(fmaf(v[i] - m, log2e, -log_s * log2e));
                else
                    out[i] = (keep_exp ? v[i] : kp_exp(v[i] - m)) * inv_s;
            }
            r.store(k, out);
        });
    }

    template <typename T, bool VEC, typename I, bool FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        if (flags & KP_ROWS_LOG)
            run<true>(r, g, src);
        else
            run<false>(r, g, src);
    }
};

// rmsnorm: x / sqrt(mean(x^2) + eps) * w. Padding is 0.
struct kp_rmsnorm_algo {
    float eps;
    template <typename C> static KP_DEVICE C pad() { return C(0); }

    template <typename T, bool VEC, typename I, bool FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        typedef typename kp_compute<T>::type C;
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        C ss = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                ss += v[i] * v[i];
        });
        ss = kp_group_reduce(g, ss, kp_op_sum<C>());
        const C inv = C(1) / kp_sqrt(ss / (C)r.cols + (C)eps);
        const bool weighted = flags & KP_ROWS_WEIGHT;
        src.each([&](I k, C (&v)[N]) {
            C w[N], out[N];
            if (weighted)
                r.load_w(k, w);
#pragma unroll
            for (int i = 0; i < N; i++)
                out[i] = weighted ? v[i] * inv * w[i] : v[i] * inv;
            r.store(k, out);
        });
    }
};

// layernorm: (x - mean) / sqrt(var + eps) * w + b, with the variance taken
// around the mean in a second pass (no cancellation from E[x^2] - E[x]^2).
// Padding is 0, which the mean ignores; the variance skips it.
struct kp_layernorm_algo {
    float eps;
    template <typename C> static KP_DEVICE C pad() { return C(0); }

    template <typename T, bool VEC, typename I, bool FULL, typename Src>
    KP_DEVICE void operator()(const kp_row<T, VEC, I, FULL> &r, const kp_group &g, Src &src, int flags) const {
        typedef typename kp_compute<T>::type C;
        constexpr int N = kp_row<T, VEC, I, FULL>::N;
        const kp_op_sum<C> sum_op;
        C sum = 0;
        src.each([&](I, C (&v)[N]) {
#pragma unroll
            for (int i = 0; i < N; i++)
                sum += v[i];
        });
        const C mean = kp_group_reduce(g, sum, sum_op) / (C)r.cols;
        C sq = 0;
        src.each([&](I k, C (&v)[N]) {
            const bool full = r.full(k);
#pragma unroll
            for (int i = 0; i < N; i++) {
                const C d = v[i] - mean;
                if (full || r.valid(k, i))
                    sq += d * d;
            }
        });
        const C var = kp_group_reduce(g, sq, sum_op) / (C)r.cols;
        const C inv = C(1) / kp_sqrt(var + (C)eps);
        const bool weighted = flags & KP_ROWS_WEIGHT, biased = flags & KP_ROWS_BIAS;
        src.each([&](I k, C (&v)[N]) {
            C w[N], b[N], out[N];
            if (weighted)
                r.load_w(k, w);
            if (biased)
                r.load_b(k, b);
#pragma unroll
            for (int i = 0; i < N; i++) {
                C t = (v[i] - mean) * inv;
                if (weighted)
                    t *= w[i];
                if (biased)
                    t += b[i];
                out[i] = t;
            }
            r.store(k, out);
        });
    }
};

// Row kernels per op and dtype: <op>_exact_<dt> (contiguous rows of an
// exact fit), <op>_<dt> (other contiguous rows) and <op>_strided_<dt> (any
// strides). The exact kernels are bounded to 64 registers on NVIDIA up to
// sm_90 (two blocks of KP_ROWS_MAX_BLOCK threads per multiprocessor), which
// they fit without spilling: a row of 4096 then has four blocks' loads in
// flight per multiprocessor (KP_ROWS_EXACT_MIN_BLOCKS says why sm_100+ has
// one). AMD reads the second bound as waves per execution unit, where 2
// constrains nothing.
#define KP_ROW_KERNEL(OP, NAME, T, VEC, EXACT, MIN_BLOCKS, PARAMS, ...)                      \
    KP_KERNEL void __launch_bounds__(KP_ROWS_MAX_BLOCK, MIN_BLOCKS) OP##NAME PARAMS {         \
        kp_rows<VEC, EXACT>(__VA_ARGS__);                                                     \
    }

#define KP_ROW_OP(OP, NAME, T, PARAMS, ...)                                                   \
    KP_ROW_KERNEL(OP, _exact_##NAME, T, true, true, KP_ROWS_EXACT_MIN_BLOCKS, PARAMS, __VA_ARGS__) \
    KP_ROW_KERNEL(OP, _##NAME, T, true, false, 1, PARAMS, __VA_ARGS__)                        \
    KP_ROW_KERNEL(OP, _strided_##NAME, T, false, false, 1, PARAMS, __VA_ARGS__)

#define KP_ROW_KERNELS(NAME, T)                                                               \
    KP_ROW_OP(softmax, NAME, T, (kp_rows_args a, const T *x, T *y), a, x, y, (const T *)0,    \
              (const T *)0, kp_softmax_algo())                                                \
    KP_ROW_OP(rmsnorm, NAME, T, (kp_rows_args a, const T *x, T *y, const T *w), a, x, y, w,   \
              (const T *)0, kp_rmsnorm_algo{a.eps})                                           \
    KP_ROW_OP(layernorm, NAME, T, (kp_rows_args a, const T *x, T *y, const T *w, const T *b), \
              a, x, y, w, b, kp_layernorm_algo{a.eps})

KP_FOR_EACH_FLOAT(KP_ROW_KERNELS)

// ----------------------------------------------------------------- rope
// Groups of `group` threads per row (b, h, t); lanes walk the d/2 pairs.
// No reduction, so rows need not be uniform per block. Each pair is read and
// written by one thread, so dst may be src itself.
template <typename T>
KP_DEVICE void kp_rope(const kp_rope_args &A, const T *x, const T *cs, const T *sn, T *y) {
    typedef typename kp_compute<T>::type C;
    const kp_group g = kp_group_of((unsigned)A.group);
    const kp_idx rows = (kp_idx)A.rows, half = (kp_idx)A.half;
    const kp_idx nt = (kp_idx)A.t, nh = (kp_idx)A.h;
    for (kp_idx row = (kp_idx)blockIdx.x * g.per_block + g.index; row < rows;
         row += (kp_idx)gridDim.x * g.per_block) {
        const kp_idx ti = row % nt, rest = row / nt;
        const kp_idx hi = rest % nh, bi = rest / nh;
        const T *xr = x + bi * A.x_stride[0] + hi * A.x_stride[1] + ti * A.x_stride[2];
        T *yr = y + bi * A.y_stride[0] + hi * A.y_stride[1] + ti * A.y_stride[2];
        const T *cr = cs + bi * A.cos_stride[0] + ti * A.cos_stride[1];
        const T *sr = sn + bi * A.sin_stride[0] + ti * A.sin_stride[1];
        for (kp_idx j = g.lane; j < half; j += g.size) {
            const kp_idx e1 = A.interleaved ? 2 * j : j;
            const kp_idx e2 = A.interleaved ? 2 * j + 1 : j + half;
            const C x1 = kp_load(xr[e1 * A.x_stride[3]]), x2 = kp_load(xr[e2 * A.x_stride[3]]);
            const C c = kp_load(cr[j * A.cos_stride[2]]), s = kp_load(sr[j * A.sin_stride[2]]);
            yr[e1 * A.y_stride[3]] = kp_store<T>(x1 * c - x2 * s);
            yr[e2 * A.y_stride[3]] = kp_store<T>(x1 * s + x2 * c);
        }
    }
}

#define KP_ROPE_KERNEL(NAME, T)                                                             \
    KP_KERNEL void __launch_bounds__(KP_ROPE_BLOCK)                                         \
        rope_##NAME(kp_rope_args a, const T *x, const T *cos, const T *sin, T *y) {         \
        kp_rope(a, x, cos, sin, y);                                                         \
    }

KP_FOR_EACH_FLOAT(KP_ROPE_KERNEL)
