// Asynchronous global-to-shared copies and dependent-grid control.
//
// cp.async (NVIDIA sm_80+) lets a block keep several tiles of loads in
// flight without registers to hold them: kp_async_copy16 queues a 16-byte
// copy, kp_async_commit closes a group of them, kp_async_wait<N> returns once
// at most N of this thread's groups are pending (a __syncthreads() after it
// makes every thread's copies visible). Elsewhere a copy is an ordinary load
// and store, and commit and wait do nothing.
//
// griddepcontrol (sm_90+): a kernel launched with KP_LAUNCH_OVERLAP_PRIOR may
// start before the kernel ahead of it on the stream has finished.
// kp_wait_prior_grids() returns once that kernel has finished and its writes
// are visible; kp_allow_dependent_grids() lets such a kernel behind this one
// start early. Elsewhere, and after a plain launch, both do nothing.
#pragma once

#include "kp_device.cuh"

#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KP_HAS_ASYNC_COPY 1
#else
#define KP_HAS_ASYNC_COPY 0
#endif

#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define KP_HAS_GRID_DEPENDENCY 1
#else
#define KP_HAS_GRID_DEPENDENCY 0
#endif

// 16 bytes from global `src` to shared `dst`, both 16-byte aligned.
KP_DEVICE void kp_async_copy16(void *dst, const void *src) {
#if KP_HAS_ASYNC_COPY
    const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(src) : "memory");
#else
    *(uint4 *)dst = *(const uint4 *)src;
#endif
}

// N (8 or 16) bytes, both N-byte aligned: kp_async_copy16, or an 8-byte
// copy (cp.async takes 8 only through L1, .ca).
template <int N> KP_DEVICE void kp_async_copy(void *dst, const void *src) {
    static_assert(N == 8 || N == 16, "cp.async copies 8 or 16 bytes here");
    if constexpr (N == 16) {
        kp_async_copy16(dst, src);
    } else {
#if KP_HAS_ASYNC_COPY
        const unsigned s = (unsigned)__cvta_generic_to_shared(dst);
        asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(s), "l"(src) : "memory");
#else
        *(uint2 *)dst = *(const uint2 *)src;
#endif
    }
}

KP_DEVICE void kp_async_commit() {
#if KP_HAS_ASYNC_COPY
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

template <int N> KP_DEVICE void kp_async_wait() {
#if KP_HAS_ASYNC_COPY
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

KP_DEVICE void kp_wait_prior_grids() {
#if KP_HAS_GRID_DEPENDENCY
    asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

KP_DEVICE void kp_allow_dependent_grids() {
#if KP_HAS_GRID_DEPENDENCY
    asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
