// Elementwise loops shared by the kernel modules: a vectorised contiguous
// path (16-byte accesses when both pointers allow it) and a strided path that
// reads shape and strides from a by-value parameter struct.
#pragma once
#include "kp_device.cuh"

template <typename T, int N> struct alignas(sizeof(T) * N) kp_vec { T v[N]; };

KP_DEVICE kp_idx kp_thread_index() { return blockIdx.x * (kp_idx)blockDim.x + threadIdx.x; }
KP_DEVICE kp_idx kp_thread_count() { return (kp_idx)gridDim.x * blockDim.x; }

template <typename A, typename B> struct kp_max_size {
    static constexpr int value = sizeof(A) > sizeof(B) ? (int)sizeof(A) : (int)sizeof(B);
};

// y[i] = f(x[i]) for i < n, both contiguous.
template <typename Tin, typename Tout, typename F>
KP_DEVICE void kp_map_contiguous(kp_idx n, const Tin *x, Tout *y, F f) {
    constexpr int N = 16 / kp_max_size<Tin, Tout>::value;
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if ((uintptr_t)x % sizeof(kp_vec<Tin, N>) == 0 && (uintptr_t)y % sizeof(kp_vec<Tout, N>) == 0) {
        const kp_idx nvec = n / N;
        const kp_vec<Tin, N> *xv = reinterpret_cast<const kp_vec<Tin, N> *>(x);
        kp_vec<Tout, N> *yv = reinterpret_cast<kp_vec<Tout, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) {
            const kp_vec<Tin, N> a = xv[i];
            kp_vec<Tout, N> b;
#pragma unroll
            for (int k = 0; k < N; k++) b.v[k] = f(a.v[k]);
            yv[i] = b;
        }
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = f(x[i]);
}

// y[i] = v for i < n, contiguous.
template <typename T>
KP_DEVICE void kp_set_contiguous(kp_idx n, T *y, T v) {
    constexpr int N = 16 / sizeof(T);
    const kp_idx tid = kp_thread_index(), step = kp_thread_count();
    kp_idx done = 0;
    if ((uintptr_t)y % sizeof(kp_vec<T, N>) == 0) {
        kp_vec<T, N> b;
#pragma unroll
        for (int k = 0; k < N; k++) b.v[k] = v;
        const kp_idx nvec = n / N;
        kp_vec<T, N> *yv = reinterpret_cast<kp_vec<T, N> *>(y);
        for (kp_idx i = tid; i < nvec; i += step) yv[i] = b;
        done = nvec * N;
    }
    for (kp_idx i = done + tid; i < n; i += step) y[i] = v;
}

// Element offsets of linear index i in the first NOPS operands of L.
template <int NOPS>
KP_DEVICE void kp_strided_offsets(const kp_strided3 &L, kp_idx i, kp_idx (&off)[NOPS]) {
#pragma unroll
    for (int k = 0; k < NOPS; k++) off[k] = 0;
    for (int d = L.rank - 1; d >= 0; d--) {
        const kp_idx size = (kp_idx)L.shape[d];
        const kp_idx q = i / size, r = i - q * size;
#pragma unroll
        for (int k = 0; k < NOPS; k++) off[k] += r * (kp_idx)L.stride[k][d];
        i = q;
    }
}

// y[off0(i)] = f(x[off1(i)]) over L's shape (operand 0 = y, 1 = x).
template <typename Tin, typename Tout, typename F>
KP_DEVICE void kp_map_strided(kp_idx n, const kp_strided3 &L, const Tin *x, Tout *y, F f) {
    for (kp_idx i = kp_thread_index(); i < n; i += kp_thread_count()) {
        kp_idx off[2];
        kp_strided_offsets<2>(L, i, off);
        y[off[0]] = f(x[off[1]]);
    }
}

// y[off0(i)] = v over L's shape.
template <typename T>
KP_DEVICE void kp_set_strided(kp_idx n, const kp_strided3 &L, T *y, T v) {
    for (kp_idx i = kp_thread_index(); i < n; i += kp_thread_count()) {
        kp_idx off[1];
        kp_strided_offsets<1>(L, i, off);
        y[off[0]] = v;
    }
}
