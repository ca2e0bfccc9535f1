// reduce: reductions over any set of dimensions (sum, mean, min, max,
// argmin, argmax), softmax and log_softmax, rmsnorm and layernorm over the
// last dimension, and rotary embeddings. Floats accumulate in f32 (f64 for
// f64); integer sums wrap in the dtype's width.
//
// Reductions come in four kernels per op and dtype:
//   reduce_<op>_<dt>          a group of threads (a block, or a segment of
//                             <= 32 lanes for short rows) per output, over a
//                             contiguous run with 16-byte loads; with
//                             splits > 1 several blocks share one output and
//                             write partials (the first of two passes)
//   reduce_strided_<op>_<dt>  the same over reduced dims of any strides
//   reduce_cols_<op>_<dt>     one thread per output (and split), for
//                             reductions over outer dims: neighbouring
//                             threads read neighbouring elements
//   reduce_final_<op>_<dt>    second pass: combines each output's partials
// The partials are combined in a fixed order, so results are deterministic
// (no atomics).
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

KP_DEVICE kp_idx kp_min_idx(kp_idx a, kp_idx b) { return a < b ? a : b; }

// Source and destination offsets of output o (linear over the kept dims).
KP_DEVICE void kp_kept_offsets(const kp_reduce_args &A, kp_idx o, kp_idx &src, kp_idx &dst) {
    kp_offsets2(A.kept_rank, A.kept_shape, A.kept_src_stride, A.kept_dst_stride, o, src, dst);
}

// Source offset of element r (linear over the reduced dims) of an output.
KP_DEVICE kp_idx kp_red_offset(const kp_reduce_args &A, kp_idx r) {
    if (A.red_rank == 1)
        return r * (kp_idx)A.red_stride[0];
    kp_idx off = 0;
    for (int d = A.red_rank - 1; d > 0; d--) {
        const kp_idx size = (kp_idx)A.red_shape[d];
        const kp_idx q = r / size;
        off += (r - q * size) * (kp_idx)A.red_stride[d];
        r = q;
    }
    return off + r * (kp_idx)A.red_stride[0];  // r < red_shape[0] by now
}

// How a reduced partial becomes an output element.
template <typename T> struct kp_store_sum {
    typedef T out;
    template <typename A> KP_DEVICE T operator()(A a, kp_idx n, int mean) const {
        if (mean)
            a = a / (A)n;
        return kp_store<T>((typename kp_compute<T>::type)a);
    }
};
template <typename T> struct kp_store_value {
    typedef T out;
    template <typename A> KP_DEVICE T operator()(A a, kp_idx, int) const { return kp_store<T>(a); }
};
struct kp_store_index {
    typedef uint32_t out;
    template <typename A> KP_DEVICE uint32_t operator()(kp_argval<A> a, kp_idx, int) const {
        return (uint32_t)a.i;
    }
};

// --------------------------------------------------------- reduce loops

template <typename T, typename Op>
KP_DEVICE void kp_fold(typename Op::acc &acc, const Op &op, T x, kp_idx i) {
    acc = op(acc, op.leaf((typename Op::value)kp_load(x), i));
}

// Elements [lo, hi) of a contiguous run, shared by the lanes of group g:
// a scalar head up to 16-byte alignment, then 16-byte loads U at a time (64
// or 128 bytes in flight per lane, the last step's loads predicated rather
// than one by one; each of the U loads folds into its own partial, so the
// folds form U short dependency chains instead of one long one), then a
// scalar tail.
template <typename T, typename Op>
KP_DEVICE typename Op::acc kp_reduce_run(const T *row, kp_idx lo, kp_idx hi, const kp_group &g,
                                         const Op &op) {
    constexpr int N = 16 / sizeof(T);
    constexpr int U = sizeof(T) >= 4 ? 4 : 8;
    typename Op::acc acc = op.identity(), part[U];
#pragma unroll
    for (int u = 0; u < U; u++)
        part[u] = op.identity();
    const kp_idx step = g.size;
    kp_idx head = (kp_idx)((N - ((uintptr_t)(row + lo) / sizeof(T)) % N) % N);
    if (head > hi - lo)
        head = hi - lo;
    for (kp_idx i = lo + g.lane; i < lo + head; i += step)
        kp_fold(acc, op, row[i], i);
    const kp_idx start = lo + head, nvec = (hi - start) / N;
    const kp_vec<T, N> *v = reinterpret_cast<const kp_vec<T, N> *>(row + start);
    kp_idx k = g.lane;
    for (; k < nvec; k += U * step) {
        kp_vec<T, N> q[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * step < nvec)
                q[u] = v[k + u * step];
#pragma unroll
        for (int u = 0; u < U; u++)
            if (k + u * step < nvec) {
#pragma unroll
                for (int e = 0; e < N; e++)
                    kp_fold(part[u], op, q[u].v[e], start + (k + u * step) * N + e);
            }
    }
    for (kp_idx i = start + nvec * N + g.lane; i < hi; i += step)
        kp_fold(acc, op, row[i], i);
#pragma unroll
    for (int u = 0; u < U; u++)
        acc = op(acc, part[u]);
    return acc;
}

// Elements [lo, hi) of an output's reduced set, at any strides.
template <typename T, typename Op>
KP_DEVICE typename Op::acc kp_reduce_gather(const kp_reduce_args &A, const T *base, kp_idx lo,
                                            kp_idx hi, const kp_group &g, const Op &op) {
    typename Op::acc acc = op.identity();
    for (kp_idx r = lo + g.lane; r < hi; r += g.size)
        kp_fold(acc, op, base[kp_red_offset(A, r)], r);
    return acc;
}

// One group per output (blockIdx.x walks the outputs), blockIdx.y picks the
// split of the reduced set. The loop over outputs is uniform per block, and
// groups past the last output reduce the identity, so every thread reaches
// every group reduction.
template <bool CONTIG, typename T, typename Op, typename Store>
KP_DEVICE void kp_reduce_groups(const kp_reduce_args &A, const T *x, typename Store::out *y,
                                typename Op::acc *part, const Op &op, const Store &store) {
    const kp_group g = kp_group_of((unsigned)A.group);
    const kp_idx n_out = (kp_idx)A.n_out, n_red = (kp_idx)A.n_red, splits = (kp_idx)A.splits;
    const kp_idx split = blockIdx.y;
    const kp_idx lo = kp_min_idx(split * (kp_idx)A.chunk, n_red);
    const kp_idx hi = kp_min_idx(lo + (kp_idx)A.chunk, n_red);
    for (kp_idx base = (kp_idx)blockIdx.x * g.per_block; base < n_out;
         base += (kp_idx)gridDim.x * g.per_block) {
        const kp_idx o = base + g.index;
        const bool active = o < n_out;
        typename Op::acc acc = op.identity();
        kp_idx src = 0, dst = 0;
        if (active) {
            kp_kept_offsets(A, o, src, dst);
            if (CONTIG)
                acc = kp_reduce_run(x + src, lo, hi, g, op);
            else
                acc = kp_reduce_gather(A, x + src, lo, hi, g, op);
        }
        acc = kp_group_reduce(g, acc, op);
        if (active && g.lane == 0) {
            if (splits == 1)
                y[dst] = store(acc, n_red, A.mean);
            else
                part[o * splits + split] = acc;
        }
    }
}

// Second pass: output o combines part[o * splits + 0 .. splits).
template <typename Op, typename Store>
KP_DEVICE void kp_reduce_partials(const kp_reduce_args &A, const typename Op::acc *part,
                                  typename Store::out *y, const Op &op, const Store &store) {
    const kp_group g = kp_group_of((unsigned)A.group);
    const kp_idx n_out = (kp_idx)A.n_out, splits = (kp_idx)A.splits;
    for (kp_idx base = (kp_idx)blockIdx.x * g.per_block; base < n_out;
         base += (kp_idx)gridDim.x * g.per_block) {
        const kp_idx o = base + g.index;
        const bool active = o < n_out;
        typename Op::acc acc = op.identity();
        if (active)
            for (kp_idx s = g.lane; s < splits; s += g.size)
                acc = op(acc, part[o * splits + s]);
        acc = kp_group_reduce(g, acc, op);
        if (active && g.lane == 0) {
            kp_idx src, dst;
            kp_kept_offsets(A, o, src, dst);
            y[dst] = store(acc, (kp_idx)A.n_red, A.mean);
        }
    }
}

// One thread per output (blockIdx.x, threadIdx.x walk the outputs) over the
// part of its reduced set that split blockIdx.y covers, walking it with an
// odometer. Used when outputs are closer together in memory than the
// elements of one output, so neighbouring threads read neighbouring elements.
template <typename T, typename Op, typename Store>
KP_DEVICE void kp_reduce_columns(const kp_reduce_args &A, const T *x, typename Store::out *y,
                                 typename Op::acc *part, const Op &op, const Store &store) {
    const kp_idx n_out = (kp_idx)A.n_out, n_red = (kp_idx)A.n_red, splits = (kp_idx)A.splits;
    const kp_idx split = blockIdx.y;
    const kp_idx lo = kp_min_idx(split * (kp_idx)A.chunk, n_red);
    const kp_idx hi = kp_min_idx(lo + (kp_idx)A.chunk, n_red);
    for (kp_idx o = kp_thread_index(); o < n_out; o += kp_thread_count()) {
        kp_idx src, dst;
        kp_kept_offsets(A, o, src, dst);
        const T *base = x + src;
        typename Op::acc acc = op.identity();
        if (A.red_rank <= 1) {
            const kp_idx s = A.red_rank ? (kp_idx)A.red_stride[0] : 0;
#pragma unroll 4
            for (kp_idx r = lo; r < hi; r++)
                kp_fold(acc, op, base[r * s], r);
        } else {
            kp_idx pos[KP_KERNEL_MAX_RANK];
            kp_idx off = 0, q = lo;
            for (int d = A.red_rank - 1; d >= 0; d--) {
                const kp_idx size = (kp_idx)A.red_shape[d];
                pos[d] = q % size;
                off += pos[d] * (kp_idx)A.red_stride[d];
                q /= size;
            }
            for (kp_idx r = lo; r < hi; r++) {
                kp_fold(acc, op, base[off], r);
                for (int d = A.red_rank - 1; d >= 0; d--) {
                    off += (kp_idx)A.red_stride[d];
                    if (++pos[d] < (kp_idx)A.red_shape[d])
                        break;
                    off -= (kp_idx)A.red_stride[d] * pos[d];
                    pos[d] = 0;
                }
            }
        }
        if (splits == 1)
            y[dst] = store(acc, n_red, A.mean);
        else
            part[o * splits + split] = acc;
    }
}

#define KP_REDUCE_KERNELS(OP, NAME, T, OPT, STORE)                                             \
    KP_KERNEL void __launch_bounds__(KP_REDUCE_MAX_BLOCK)                                      \
        reduce_##OP##_##NAME(kp_reduce_args a, const T *x, STORE::out *y, void *part) {       \
        kp_reduce_groups<true>(a, x, y, (OPT::acc *)part, OPT(), STORE());                     \
    }                                                                                          \
    KP_KERNEL void __launch_bounds__(KP_REDUCE_MAX_BLOCK)                                      \
        reduce_strided_##OP##_##NAME(kp_reduce_args a, const T *x, STORE::out *y, void *part) { \
        kp_reduce_groups<false>(a, x, y, (OPT::acc *)part, OPT(), STORE());                    \
    }                                                                                          \
    KP_KERNEL void __launch_bounds__(KP_REDUCE_MAX_BLOCK)                                      \
        reduce_final_##OP##_##NAME(kp_reduce_args a, const void *part, STORE::out *y) {       \
        kp_reduce_partials(a, (const OPT::acc *)part, y, OPT(), STORE());                      \
    }                                                                                          \
    KP_KERNEL void __launch_bounds__(KP_REDUCE_MAX_BLOCK)                                      \
        reduce_cols_##OP##_##NAME(kp_reduce_args a, const T *x, STORE::out *y, void *part) {  \
        kp_reduce_columns(a, x, y, (OPT::acc *)part, OPT(), STORE());                          \
    }

#define KP_REDUCE_DTYPE(NAME, T)                                                                          \
    KP_REDUCE_KERNELS(sum, NAME, T, kp_op_sum<kp_sum_acc<T>::type>, kp_store_sum<T>)                      \
    KP_REDUCE_KERNELS(max, NAME, T, kp_op_max<kp_compute<T>::type>, kp_store_value<T>)                    \
    KP_REDUCE_KERNELS(min, NAME, T, kp_op_min<kp_compute<T>::type>, kp_store_value<T>)                    \
    KP_REDUCE_KERNELS(argmax, NAME, T, kp_op_argmax<kp_compute<T>::type>, kp_store_index)                 \
    KP_REDUCE_KERNELS(argmin, NAME, T, kp_op_argmin<kp_compute<T>::type>, kp_store_index)

KP_FOR_EACH_DTYPE(KP_REDUCE_DTYPE)

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

#define KP_FOR_EACH_FLOAT(X) \
    X(f32, float)            \
    X(f64, double)           \
    X(f16, kp_f16)           \
    X(bf16, kp_bf16)

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
