// reduce: reductions over any set of dimensions (sum, mean, min, max,
// argmin, argmax). Floats accumulate in f32 (f64 for f64); integer sums wrap
// in the dtype's width. The row ops (softmax, norms, rope) are in rows.cu.
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

// ------------------------------------------------------------- helpers

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
// With A.group = V > 1 (the launcher's choice for sum, mean, min and max
// of 2- and 4-byte elements whose V consecutive outputs are 16 contiguous,
// aligned bytes of src and of dst, one reduced dim): each thread takes V
// outputs, one 16-byte load a reduced element, and writes them with one
// 16-byte store (V scalar stores send each 32-byte sector of dst to memory
// in V pieces: as many write transactions as reads for 16-bit sums of 8).
// One element a thread read 64-byte (16-bit) or 128-byte rows a warp and
// left H100 at 57-93 % of a copy. blockDim.y > 1 splits the reduced
// elements of a block's outputs into interleaved slices, combined through
// shared memory, so few outputs still fill the device where their partials
// would overflow the scratch area (16-bit 64x1024x4096 over dim 1 ran one
// block a multiprocessor).
// A thread's V outputs of a column run: one 16-byte store to dst, or the
// split's partials.
template <int V, typename Acc, typename Out, typename Store>
KP_DEVICE void kp_column_run_out(const Acc (&acc)[V], Out *y, Acc *part, kp_idx dst, kp_idx ov,
                                 kp_idx split, kp_idx splits, kp_idx n_red, int32_t mean,
                                 const Store &store) {
    if (splits == 1) {
        kp_vec<Out, V> out;
#pragma unroll
        for (int v = 0; v < V; v++)
            out.v[v] = store(acc[v], n_red, mean);
        *(kp_vec<Out, V> *)(y + dst) = out;
    } else {
#pragma unroll
        for (int v = 0; v < V; v++)
            part[(ov * V + v) * splits + split] = acc[v];
    }
}

// Folds n 16-byte loads p[0], p[step], ... (reduced elements r0, r0 +
// r_step, ...) into a thread's V accumulators, in that order. The loads run
// U ahead of the folds (a ring of U, each refilled once folded; ptxas issues
// the next U loads before folding the current U), so loads stay in flight
// while a thread folds. Loaded and then folded a group at a time, a 16-bit
// sum or max (a conversion and an op an element, twice f32's work a load)
// left its loads idle for as long as they took to arrive: H200, kp-bench,
// 16-bit sum and max over dim 1 of 64x1024x4096 and 8x4096x8192 rose from
// 86-91 to 99-104 % of copy, over dim 0 by 1-5 points; f32 unchanged. The
// steady loop has no bounds checks: the ring is filled and drained outside
// it (a form with a check at every load ran bf16 max at 47 %; another's SASS
// branched around every load).
template <int V, typename T, typename Op>
KP_DEVICE void kp_column_fold(typename Op::acc (&acc)[V], const Op &op, const kp_vec<T, V> *p, kp_idx step,
                              kp_idx n, kp_idx r0, kp_idx r_step) {
    constexpr int U = 4;
    const auto fold = [&](const kp_vec<T, V> &e, kp_idx i) {
#pragma unroll
        for (int v = 0; v < V; v++)
            kp_fold(acc[v], op, e.v[v], r0 + i * r_step);
    };
    kp_idx i = 0;
    if (n >= 2 * U) {
        kp_vec<T, V> ring[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            ring[u] = p[u * step];
        const kp_vec<T, V> *q = p + U * step;  // the next load
        for (; i + 2 * U <= n; i += U) {
#pragma unroll
            for (int u = 0; u < U; u++) {
                fold(ring[u], i + u);
                ring[u] = *q;
                q += step;
            }
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            fold(ring[u], i + u);
        i += U;
    }
#pragma unroll 4
    for (; i < n; i++)
        fold(p[i * step], i);
}

template <int V, typename T, typename Op, typename Store>
KP_DEVICE void kp_reduce_column_runs(const kp_reduce_args &A, const T *x, typename Store::out *y,
                                     typename Op::acc *part, const Op &op, const Store &store) {
    typedef typename Op::acc Acc;
    __shared__ Acc slice[V][KP_REDUCE_MAX_BLOCK];
    const kp_idx n_red = (kp_idx)A.n_red, splits = (kp_idx)A.splits, s = (kp_idx)A.red_stride[0];
    const kp_idx nv = (kp_idx)A.n_out / V;
    const unsigned cols = blockDim.x, rows = blockDim.y, tx = threadIdx.x, ty = threadIdx.y;
    const kp_idx split = blockIdx.y;
    const kp_idx lo = kp_min_idx(split * (kp_idx)A.chunk, n_red);
    const kp_idx hi = kp_min_idx(lo + (kp_idx)A.chunk, n_red);
    if (rows == 1) {  // no slices: one thread's V outputs over the whole chunk
        for (kp_idx ov = kp_thread_index(); ov < nv; ov += kp_thread_count()) {
            kp_idx src, dst;
            kp_kept_offsets(A, ov * V, src, dst);
            const T *base = x + src;
            Acc acc[V];
#pragma unroll
            for (int v = 0; v < V; v++)
                acc[v] = op.identity();
            kp_column_fold<V>(acc, op, (const kp_vec<T, V> *)(base + lo * s), s / V, hi - lo, lo, 1);
            kp_column_run_out<V>(acc, y, part, dst, ov, split, splits, n_red, A.mean, store);
        }
        return;
    }
    const int log_rows = __popc(rows - 1);  // rows is a power of two: no division
    // Uniform per block: every slice reaches the barriers.
    for (kp_idx b = blockIdx.x; b * cols < nv; b += gridDim.x) {
        const kp_idx ov = b * cols + tx;
        Acc acc[V];
#pragma unroll
        for (int v = 0; v < V; v++)
            acc[v] = op.identity();
        kp_idx src = 0, dst = 0;
        if (ov < nv) {
            kp_kept_offsets(A, ov * V, src, dst);
            const kp_idx n = lo + ty < hi ? (hi - lo - ty + rows - 1) >> log_rows : 0;
            kp_column_fold<V>(acc, op, (const kp_vec<T, V> *)(x + src + (lo + ty) * s), rows * s / V, n,
                              lo + ty, rows);
        }
        if (rows > 1) {
            __syncthreads();  // slice 0 of the last iteration has read slice[]
            if (ty > 0) {
#pragma unroll
                for (int v = 0; v < V; v++)
                    slice[v][ty * cols + tx] = acc[v];
            }
            __syncthreads();
            for (unsigned k = 1; ty == 0 && k < rows; k++) {
#pragma unroll
                for (int v = 0; v < V; v++)
                    acc[v] = op(acc[v], slice[v][k * cols + tx]);
            }
        }
        if (ov < nv && ty == 0)
            kp_column_run_out<V>(acc, y, part, dst, ov, split, splits, n_red, A.mean, store);
    }
}

// Whether an accumulator is a plain value (not an argmin/argmax pair, whose
// V copies with their 64-bit indices spill on some targets).
template <typename A> struct kp_plain_acc { static constexpr bool value = true; };
template <typename A> struct kp_plain_acc<kp_argval<A>> { static constexpr bool value = false; };

template <typename T, typename Op, typename Store>
KP_DEVICE void kp_reduce_columns(const kp_reduce_args &A, const T *x, typename Store::out *y,
                                 typename Op::acc *part, const Op &op, const Store &store) {
    if constexpr ((sizeof(T) == 2 || sizeof(T) == 4) && kp_plain_acc<typename Op::acc>::value) {
        if (A.group > 1) {
            kp_reduce_column_runs<(int)(16 / sizeof(T))>(A, x, y, part, op, store);
            return;
        }
    }
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
