// Elementwise loops shared by the kernel modules: a vectorised contiguous
// path (16-byte accesses when every pointer allows it) and a strided path
// that reads shape and strides from a by-value parameter struct.
//
// Contiguous loops: kp_map_contiguous (1 input), kp_zip_contiguous (2),
// kp_zip3_contiguous (3), kp_set_contiguous (none). Strided: kp_map_strided,
// kp_zip_strided, kp_zip3_strided, kp_set_strided, where operand 0 of the
// kp_strided struct is the output and operands 1.. are the inputs in order.
#pragma once
#include "kp_device.cuh"

template <typename T, int N> struct alignas(sizeof(T) * N) kp_vec { T v[N]; };

// The strided kernels run blocks of KP_STRIDED_BLOCK threads
// (kp_launch_strided).
#define KP_STRIDED_BOUNDS KP_AMD_BLOCK_BOUNDS(KP_STRIDED_BLOCK)

KP_DEVICE kp_idx kp_thread_index() { return blockIdx.x * (kp_idx)blockDim.x + threadIdx.x; }
KP_DEVICE kp_idx kp_thread_count() { return (kp_idx)gridDim.x * blockDim.x; }

template <typename... T> struct kp_max_size;
template <typename A> struct kp_max_size<A> { static constexpr int value = (int)sizeof(A); };
template <typename A, typename... R> struct kp_max_size<A, R...> {
    static constexpr int value = (int)sizeof(A) > kp_max_size<R...>::value ? (int)sizeof(A)
                                                                             : kp_max_size<R...>::value;
};

// Elements per thread step so that the widest operand moves 16 bytes.
template <typename... T> struct kp_lanes { static constexpr int value = 16 / kp_max_size<T...>::value; };

template <int N, typename T> KP_DEVICE bool kp_aligned(const T *p)
{
    return (uintptr_t)p % sizeof(kp_vec<T, N>) == 0;
}

// f applied to each element of a vector.
template <typename Tout, typename Tin, int N, typename F>
KP_DEVICE kp_vec<Tout, N> kp_map_vec(const kp_vec<Tin, N> &a, F f) {
    kp_vec<Tout, N> r;
#pragma unroll
    for (int k = 0; k < N; k++) r.v[k] = f(a.v[k]);
    return r;
}

// Elements a thread step of kp_map_contiguous takes: 16 bytes of the
// output, up to 32 bytes of the input. Narrowing casts (f32 to f16/bf16)
// store whole 16-byte vectors that way: 96-97 -> 102-103.5 % of the copy
// bandwidth on an H200, where 16 bytes of the wider input a step gave
// half-vector stores (widening casts, stores of 16 bytes either way, are
// level).
// The rule is KP_MAP_LANES (kp_kernel_abi.h), by which src/ops/cast.c
// sizes its grid.
template <typename Tin, typename Tout> struct kp_map_lanes {
    static constexpr int value = KP_MAP_LANES((int)sizeof(Tin), (int)sizeof(Tout));
};

// kp_map_contiguous's vector loop at N elements a vector: the elements it
// covered (0 where x or y is not aligned for it).
template <int U, int N, typename Tin, typename Tout, typename F>
KP_DEVICE kp_idx kp_map_vectors(kp_idx n, const Tin *x, Tout *y, F f) {
    if (!kp_aligned<N>(x) || !kp_aligned<N>(y))
        return 0;
    const kp_idx step = kp_thread_count(), nvec = n / N;
    const kp_vec<Tin, N> *xv = reinterpret_cast<const kp_vec<Tin, N> *>(x);
    kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
    kp_idx i = kp_thread_index();
    for (; i + (U - 1) * step < nvec; i += U * step) {
        kp_vec<Tin, N> a[U];
#pragma unroll
        for (int u = 0; u < U; u++) a[u] = xv[i + u * step];
#pragma unroll
        for (int u = 0; u < U; u++) yv[i + u * step] = kp_map_vec<Tout>(a[u], f);
    }
    if constexpr (U > 1)
        for (; i < nvec; i += step) yv[i] = kp_map_vec<Tout>(xv[i], f);
    return nvec * N;
}

// y[i] = f(x[i]) for i < n, both contiguous, in vectors of kp_map_lanes
// elements, or of 16 bytes of the wider type where the pointers are not
// aligned for those. With U > 1 a thread loads U vectors (a grid stride
// apart, so each load stays coalesced) before it computes and stores any:
// U times the bytes in flight.
template <int U = 1, typename Tin, typename Tout, typename F>
KP_DEVICE void kp_map_contiguous(kp_idx n, const Tin *x, Tout *y, F f) {
    constexpr int N = kp_map_lanes<Tin, Tout>::value, NW = kp_lanes<Tin, Tout>::value;
    kp_idx done = kp_map_vectors<U, N>(n, x, y, f);
    if constexpr (N != NW) {
        if (done == 0)
            done = kp_map_vectors<U, NW>(n, x, y, f);
    }
    const kp_idx step = kp_thread_count();
    for (kp_idx i = done + kp_thread_index(); i < n; i += step) y[i] = f(x[i]);
}

// y[i] = f(a[i], b[i]) for i < n, all contiguous.
template <typename Ta, typename Tb, typename Tout, typename F>
KP_DEVICE void kp_zip_contiguous(kp_idx n, const Ta *a, const Tb *b, Tout *y, F f) {
    constexpr int N = kp_lanes<Ta, Tb, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (kp_aligned<N>(a) && kp_aligned<N>(b) && kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        const kp_vec<Ta, N> *av = reinterpret_cast<const kp_vec<Ta, N> *>(a);
        const kp_vec<Tb, N> *bv = reinterpret_cast<const kp_vec<Tb, N> *>(b);
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Ta, N> p = av[i];
            const kp_vec<Tb, N> q = bv[i];
            kp_vec<Tout, N> r;
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = f(p.v[k], q.v[k]);
            yv[i] = r;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(a[i], b[i]);
}

// y[i] = f(a[i], b[i], c[i]) for i < n, all contiguous.
template <typename Ta, typename Tb, typename Tc, typename Tout, typename F>
KP_DEVICE void kp_zip3_contiguous(kp_idx n, const Ta *a, const Tb *b, const Tc *c, Tout *y, F f) {
    constexpr int N = kp_lanes<Ta, Tb, Tc, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (kp_aligned<N>(a) && kp_aligned<N>(b) && kp_aligned<N>(c) && kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        const kp_vec<Ta, N> *av = reinterpret_cast<const kp_vec<Ta, N> *>(a);
        const kp_vec<Tb, N> *bv = reinterpret_cast<const kp_vec<Tb, N> *>(b);
        const kp_vec<Tc, N> *cv = reinterpret_cast<const kp_vec<Tc, N> *>(c);
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Ta, N> p = av[i];
            const kp_vec<Tb, N> q = bv[i];
            const kp_vec<Tc, N> s = cv[i];
            kp_vec<Tout, N> r;
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = f(p.v[k], q.v[k], s.v[k]);
            yv[i] = r;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(a[i], b[i], c[i]);
}

// y[i] = v for i < n, contiguous.
template <typename T>
KP_DEVICE void kp_set_contiguous(kp_idx n, T *y, T v) {
    constexpr int N = kp_lanes<T>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (kp_aligned<N>(y)) {
        kp_vec<T, N> r;
#pragma unroll
        for (int k = 0; k < N; k++) r.v[k] = v;
        const kp_idx nvec = n / N;
        kp_vec<T, N> *yv = reinterpret_cast<kp_vec<T, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) yv[i] = r;
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = v;
}

// Element offsets of linear index i (row-major over L's shape) in the first
// NOPS operands of L. The outermost dim needs no division: i < shape[0]
// once the inner dims are taken off.
template <int NOPS>
KP_DEVICE void kp_strided_offsets(const kp_strided &L, kp_idx i, kp_idx (&off)[NOPS]) {
#pragma unroll
    for (int k = 0; k < NOPS; k++) off[k] = 0;
    for (int d = L.rank - 1; d > 0; d--) {
        const kp_idx size = (kp_idx)L.shape[d];
        const kp_idx q = i / size, r = i - q * size;
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += r * (kp_idx)L.stride[k][d];
        i = q;
    }
    if (L.rank > 0) {
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += i * (kp_idx)L.stride[k][0];
    }
}

// Offsets in two operands (strides sa, sb) of linear index q over `rank`
// dims of `shape` (outermost first). The outermost dim needs no division:
// q < shape[0] once the inner dims are taken off.
KP_DEVICE void kp_offsets2(int rank, const int64_t (&shape)[KP_KERNEL_MAX_RANK],
                           const int64_t (&sa)[KP_KERNEL_MAX_RANK],
                           const int64_t (&sb)[KP_KERNEL_MAX_RANK], kp_idx q, kp_idx &a, kp_idx &b) {
    a = 0;
    b = 0;
    for (int d = rank - 1; d > 0; d--) {
        const kp_idx size = (kp_idx)shape[d];
        const kp_idx p = q / size, i = q - p * size;
        a += i * (kp_idx)sa[d];
        b += i * (kp_idx)sb[d];
        q = p;
    }
    if (rank > 0) {
        a += q * (kp_idx)sa[0];
        b += q * (kp_idx)sb[0];
    }
}

// Strided loops walk L as rows of its innermost dimension: the threads of
// the y grid dimension pick rows (offsets computed once per row, the only
// divisions, none for a rank-2 layout), the x dimension walks along the
// row, so an innermost stride of 1 is coalesced and a broadcast (stride 0)
// costs nothing. When the output's rows are contiguous and each input's
// are too (a bias add, a copy between row-padded layouts) or broadcast
// one value along the row (x[M, N] + b[M, 1]), each row goes through a
// vectorised row loop. Correct for any grid; kp_launch_strided() on the
// host picks one that fits the shape.

// Calls row(base) with the element offsets of the start of each row that
// this thread's y index owns.
template <int NOPS, typename Row>
KP_DEVICE void kp_for_each_row(kp_idx n, const kp_strided &L, Row row) {
    const int last = L.rank - 1;
    const kp_idx inner = last >= 0 ? (kp_idx)L.shape[last] : 1;
    if (inner == 0)
        return;
    const kp_idx rows = n / inner;
    for (kp_idx r = blockIdx.y * (kp_idx)blockDim.y + threadIdx.y; r < rows;
         r += (kp_idx)gridDim.y * blockDim.y) {
        kp_idx base[NOPS];
#pragma unroll
        for (int k = 0; k < NOPS; k++) base[k] = 0;
        kp_idx q = r;
        for (int d = last - 1; d > 0; d--) {
            const kp_idx size = (kp_idx)L.shape[d], next = q / size, i = q - next * size;
#pragma unroll
            for (int k = 0; k < NOPS; k++) base[k] += i * (kp_idx)L.stride[k][d];
            q = next;
        }
        if (last > 0) {  // q < shape[0]: no division
#pragma unroll
            for (int k = 0; k < NOPS; k++) base[k] += q * (kp_idx)L.stride[k][0];
        }
        row(base);
    }
}

template <int NOPS, typename Body>
KP_DEVICE void kp_for_each_strided(kp_idx n, const kp_strided &L, Body body) {
    const int last = L.rank - 1;
    const kp_idx inner = last >= 0 ? (kp_idx)L.shape[last] : 1;
    kp_idx step[NOPS];
#pragma unroll
    for (int k = 0; k < NOPS; k++) step[k] = last >= 0 ? (kp_idx)L.stride[k][last] : 0;
    kp_for_each_row<NOPS>(n, L, [&](const kp_idx (&base)[NOPS]) {
        for (kp_idx j = blockIdx.x * (kp_idx)blockDim.x + threadIdx.x; j < inner;
             j += (kp_idx)gridDim.x * blockDim.x) {
            kp_idx off[NOPS];
#pragma unroll
            for (int k = 0; k < NOPS; k++) off[k] = base[k] + j * step[k];
            body(off);
        }
    });
}

// True when the innermost stride of each of the first NOPS operands is 1.
template <int NOPS> KP_DEVICE bool kp_rows_contiguous(const kp_strided &L) {
    if (L.rank < 1)
        return false;
    for (int k = 0; k < NOPS; k++)
        if (L.stride[k][L.rank - 1] != 1)
            return false;
    return true;
}

// True when the output's rows are contiguous and each input's are too or
// hold one value broadcast along the row (innermost stride 0, as b in
// x[M, N] + b[M, 1]): the row loops below then move 16 bytes a step.
template <int NOPS> KP_DEVICE bool kp_rows_vectorisable(const kp_strided &L) {
    if (L.rank < 1 || L.stride[0][L.rank - 1] != 1)
        return false;
    for (int k = 1; k < NOPS; k++)
        if (L.stride[k][L.rank - 1] != 1 && L.stride[k][L.rank - 1] != 0)
            return false;
    return true;
}

// One input of a row loop: contiguous elements, or one value broadcast
// along the row (read once, before the loop).
template <typename T> struct kp_row_in {
    const T *p;
    bool bcast;
    T s;
    KP_DEVICE kp_row_in(const T *p_, bool bcast_) : p(p_), bcast(bcast_), s() {
        if (bcast)
            s = p[0];
    }
    template <int N> KP_DEVICE bool aligned() const { return bcast || kp_aligned<N>(p); }
    template <int N> KP_DEVICE kp_vec<T, N> vec(kp_idx i) const {
        kp_vec<T, N> r;
        if (bcast) {
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = s;
        } else {
            r = reinterpret_cast<const kp_vec<T, N> *>(p)[i];
        }
        return r;
    }
    KP_DEVICE T at(kp_idx i) const { return bcast ? s : p[i]; }
};

// y[i] = f(x[i]) / f(a[i], b[i]) / f(a[i], b[i], c[i]) for i < n over one
// row: y contiguous, each input a kp_row_in.
template <typename Tin, typename Tout, typename F>
KP_DEVICE void kp_map_row(kp_idx n, const kp_row_in<Tin> &x, Tout *y, F f) {
    constexpr int N = kp_lanes<Tin, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (x.template aligned<N>() && kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Tin, N> a = x.template vec<N>(i);
            kp_vec<Tout, N> r;
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = f(a.v[k]);
            yv[i] = r;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(x.at(i));
}

template <typename Ta, typename Tb, typename Tout, typename F>
KP_DEVICE void kp_zip_row(kp_idx n, const kp_row_in<Ta> &a, const kp_row_in<Tb> &b, Tout *y, F f) {
    constexpr int N = kp_lanes<Ta, Tb, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (a.template aligned<N>() && b.template aligned<N>() && kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Ta, N> p = a.template vec<N>(i);
            const kp_vec<Tb, N> q = b.template vec<N>(i);
            kp_vec<Tout, N> r;
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = f(p.v[k], q.v[k]);
            yv[i] = r;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(a.at(i), b.at(i));
}

template <typename Ta, typename Tb, typename Tc, typename Tout, typename F>
KP_DEVICE void kp_zip3_row(kp_idx n, const kp_row_in<Ta> &a, const kp_row_in<Tb> &b,
                           const kp_row_in<Tc> &c, Tout *y, F f) {
    constexpr int N = kp_lanes<Ta, Tb, Tc, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if (a.template aligned<N>() && b.template aligned<N>() && c.template aligned<N>() &&
        kp_aligned<N>(y)) {
        const kp_idx nvec = n / N;
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Ta, N> p = a.template vec<N>(i);
            const kp_vec<Tb, N> q = b.template vec<N>(i);
            const kp_vec<Tc, N> s = c.template vec<N>(i);
            kp_vec<Tout, N> r;
#pragma unroll
            for (int k = 0; k < N; k++) r.v[k] = f(p.v[k], q.v[k], s.v[k]);
            yv[i] = r;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(a.at(i), b.at(i), c.at(i));
}

// Whether operand k of L broadcasts one value along each row.
KP_DEVICE bool kp_row_bcast(const kp_strided &L, int k) { return L.stride[k][L.rank - 1] == 0; }

template <typename T>
KP_DEVICE void kp_set_strided(kp_idx n, const kp_strided &L, T *y, T v) {
    if (kp_rows_contiguous<1>(L)) {
        const kp_idx inner = (kp_idx)L.shape[L.rank - 1];
        kp_for_each_row<1>(n, L, [&](const kp_idx (&b)[1]) { kp_set_contiguous(inner, y + b[0], v); });
        return;
    }
    kp_for_each_strided<1>(n, L, [&](const kp_idx (&o)[1]) { y[o[0]] = v; });
}

template <typename Tin, typename Tout, typename F>
KP_DEVICE void kp_map_strided(kp_idx n, const kp_strided &L, const Tin *x, Tout *y, F f) {
    if (kp_rows_vectorisable<2>(L)) {
        const kp_idx inner = (kp_idx)L.shape[L.rank - 1];
        const bool bx = kp_row_bcast(L, 1);
        kp_for_each_row<2>(n, L, [&](const kp_idx (&b)[2]) {
            kp_map_row(inner, kp_row_in<Tin>(x + b[1], bx), y + b[0], f);
        });
        return;
    }
    kp_for_each_strided<2>(n, L, [&](const kp_idx (&o)[2]) { y[o[0]] = f(x[o[1]]); });
}

template <typename Ta, typename Tb, typename Tout, typename F>
KP_DEVICE void kp_zip_strided(kp_idx n, const kp_strided &L, const Ta *a, const Tb *b, Tout *y, F f) {
    if (kp_rows_vectorisable<3>(L)) {
        const kp_idx inner = (kp_idx)L.shape[L.rank - 1];
        const bool ba = kp_row_bcast(L, 1), bb = kp_row_bcast(L, 2);
        kp_for_each_row<3>(n, L, [&](const kp_idx (&o)[3]) {
            kp_zip_row(inner, kp_row_in<Ta>(a + o[1], ba), kp_row_in<Tb>(b + o[2], bb), y + o[0], f);
        });
        return;
    }
    kp_for_each_strided<3>(n, L, [&](const kp_idx (&o)[3]) { y[o[0]] = f(a[o[1]], b[o[2]]); });
}

template <typename Ta, typename Tb, typename Tc, typename Tout, typename F>
KP_DEVICE void kp_zip3_strided(kp_idx n, const kp_strided &L, const Ta *a, const Tb *b, const Tc *c,
                               Tout *y, F f) {
    if (kp_rows_vectorisable<4>(L)) {
        const kp_idx inner = (kp_idx)L.shape[L.rank - 1];
        const bool ba = kp_row_bcast(L, 1), bb = kp_row_bcast(L, 2), bc = kp_row_bcast(L, 3);
        kp_for_each_row<4>(n, L, [&](const kp_idx (&o)[4]) {
            kp_zip3_row(inner, kp_row_in<Ta>(a + o[1], ba), kp_row_in<Tb>(b + o[2], bb),
                        kp_row_in<Tc>(c + o[3], bc), y + o[0], f);
        });
        return;
    }
    kp_for_each_strided<4>(n, L, [&](const kp_idx (&o)[4]) { y[o[0]] = f(a[o[1]], b[o[2]], c[o[3]]); });
}
