// The only vendor-specific lines of the kernel sources: includes, 16-bit
// float conversions, the wave size. Everything else is shared CUDA/HIP C++.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
#define KP_HIP 1
#else
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define KP_HIP 0
#endif

#include <stdint.h>
#include "kp_kernel_abi.h"

#define KP_KERNEL extern "C" __global__
#define KP_DEVICE __device__ __forceinline__

// A kernel always launched with blocks of `threads` threads says so to AMD's
// compiler, whose default budgets registers for 1024 (gfx900/gfx906 then
// spill); nvcc's default already fits, and a bound would only change its
// choices, so NVIDIA code gets none.
#if KP_HIP
#define KP_AMD_BLOCK_BOUNDS(threads) __launch_bounds__(threads)
#else
#define KP_AMD_BLOCK_BOUNDS(threads)
#endif

// Wave (warp) size at compile time. Kernels never write 32 for it.
#if KP_HIP
#if defined(__AMDGCN_WAVEFRONT_SIZE)
#define KP_WAVE_SIZE __AMDGCN_WAVEFRONT_SIZE
#elif defined(__GFX9__) || defined(__GFX8__)
#define KP_WAVE_SIZE 64
#else
#define KP_WAVE_SIZE 32
#endif
#else
#define KP_WAVE_SIZE 32
#endif

typedef unsigned long long kp_idx;  // 64-bit element index everywhere

// Butterfly exchange: returns v from lane (lane ^ lane_mask) within segments
// of `width` lanes (a power of two <= KP_WAVE_SIZE). Every lane of the wave
// must make the same call (CUDA passes the full mask).
template <typename T> KP_DEVICE T kp_shfl_xor(T v, int lane_mask, int width) {
#if KP_HIP
    return __shfl_xor(v, lane_mask, width);
#else
    return __shfl_xor_sync(0xffffffffu, v, lane_mask, width);
#endif
}

// v of lane `src` (0 <= src < KP_WAVE_SIZE). Every lane of the wave must make
// the same call.
template <typename T> KP_DEVICE T kp_shfl(T v, int src) {
#if KP_HIP
    return __shfl(v, src, KP_WAVE_SIZE);
#else
    return __shfl_sync(0xffffffffu, v, src, KP_WAVE_SIZE);
#endif
}

// Bit l of the result: pred of lane l of this wave (higher bits 0). Every
// lane of the wave must make the same call.
KP_DEVICE uint64_t kp_ballot(bool pred) {
#if KP_HIP
    return __ballot(pred);
#else
    return __ballot_sync(0xffffffffu, pred);
#endif
}

// The lanes of this wave whose v (< 2^BITS) equals this lane's, bits as
// kp_ballot's: one ballot a bit (CUDA's __match_any_sync measured no faster
// in the radix sort). Every lane of the wave must make the same call.
template <int BITS> KP_DEVICE uint64_t kp_match_any(uint32_t v) {
    uint64_t peers = KP_WAVE_SIZE == 64 ? ~0ull : (1ull << (KP_WAVE_SIZE % 64)) - 1;
#pragma unroll
    for (int b = 0; b < BITS; b++) {
        const bool bit = (v >> b) & 1;
        const uint64_t set = kp_ballot(bit);
        peers &= bit ? set : ~set;
    }
    return peers;
}

// Orders the shared-memory accesses of a wave's lanes before it against
// those after it (lanes of a CUDA warp need not run in step).
KP_DEVICE void kp_wave_sync() {
#if KP_HIP
    __builtin_amdgcn_wave_barrier();
#else
    __syncwarp();
#endif
}

// n / d for n < 2^31 by the launcher's kp_div_magic(d) numbers.
KP_DEVICE uint32_t kp_div_by_magic(uint32_t n, uint32_t mul, uint32_t shift) {
    return (__umulhi(n, mul) + n) >> shift;
}

// 2^x by the hardware approximation (a few f32 ulp). On CUDA results below
// 2^-126 flush to 0; for math whose results are rounded to 16 bits.
KP_DEVICE float kp_fast_exp2(float x) {
#if KP_HIP
    return exp2f(x);
#else
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#endif
}

// Thread block clusters (NVIDIA sm_90+): the blocks of a cluster run at the
// same time and read each other's shared memory. KP_HAS_CLUSTERS is 0 on
// every other target (AMD, older NVIDIA, PTX JIT-compiled from an older
// arch), where KP_CLUSTER_DIMS adds nothing; the host asks the loaded code
// for its cluster size before it relies on one.
#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define KP_HAS_CLUSTERS 1
#define KP_CLUSTER_DIMS(X) __cluster_dims__(X, 1, 1)
// This block's rank in its cluster.
KP_DEVICE unsigned kp_cluster_rank() {
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}
// A barrier for every thread of the cluster: shared-memory writes before it
// are seen by reads after it in every block of the cluster.
KP_DEVICE void kp_cluster_sync() {
    asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                     : "memory");
}
// p, a variable in this block's shared memory, as the same variable in the
// shared memory of block `rank` of the cluster.
template <typename T> KP_DEVICE const T *kp_cluster_map(const T *p, unsigned rank) {
    uint64_t q;
    asm volatile("mapa.u64 %0, %1, %2;" : "=l"(q) : "l"((uint64_t)p), "r"(rank));
    return (const T *)q;
}
#else
#define KP_HAS_CLUSTERS 0
#define KP_CLUSTER_DIMS(X)
#endif

// 16-bit floats travel as raw bits; math happens in f32.
struct kp_f16 { uint16_t bits; };
struct kp_bf16 { uint16_t bits; };

KP_DEVICE float kp_f16_to_f32(kp_f16 h) {
    return __half2float(__ushort_as_half(h.bits));
}
KP_DEVICE kp_f16 kp_f32_to_f16(float f) {
    kp_f16 h;
    h.bits = __half_as_ushort(__float2half_rn(f));
    return h;
}
KP_DEVICE float kp_bf16_to_f32(kp_bf16 b) {
    return __uint_as_float((uint32_t)b.bits << 16);
}
// Round to nearest even; NaN stays a (quiet) NaN, its payload not kept on
// CUDA (the hardware conversion, one instruction from sm_80 on).
KP_DEVICE kp_bf16 kp_f32_to_bf16(float f) {
#if !KP_HIP
    kp_bf16 h;
    h.bits = __bfloat16_as_ushort(__float2bfloat16_rn(f));
    return h;
#else
    uint32_t u = __float_as_uint(f);
    kp_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (uint16_t)((u >> 16) | 0x40u);
    } else {
        u += 0x7fffu + ((u >> 16) & 1u);
        b.bits = (uint16_t)(u >> 16);
    }
    return b;
#endif
}

// Load/store any element type through its compute type.
template <typename T> struct kp_compute { typedef T type; };
template <> struct kp_compute<kp_f16> { typedef float type; };
template <> struct kp_compute<kp_bf16> { typedef float type; };
template <> struct kp_compute<uint8_t> { typedef uint32_t type; };

template <typename T> KP_DEVICE typename kp_compute<T>::type kp_load(T v) { return v; }
KP_DEVICE float kp_load(kp_f16 v) { return kp_f16_to_f32(v); }
KP_DEVICE float kp_load(kp_bf16 v) { return kp_bf16_to_f32(v); }

template <typename T> KP_DEVICE T kp_store(typename kp_compute<T>::type v) { return (T)v; }
template <> KP_DEVICE kp_f16 kp_store<kp_f16>(float v) { return kp_f32_to_f16(v); }
template <> KP_DEVICE kp_bf16 kp_store<kp_bf16>(float v) { return kp_f32_to_bf16(v); }

// kp_store of two values at once: for f16 on NVIDIA sm_80+, one paired
// conversion instruction (rounding as kp_store's) instead of two (H100, f16
// dequantize of IQ4_NL 86 -> 90 % of copy; bf16 measured no faster, and
// paired in the rows kernels' stores, bf16 layernorm over rows of 4096 stayed
// at 87 %: what it lacks against f16's 94 % is elsewhere).
template <typename T> KP_DEVICE void kp_store2(float a, float b, T *out) {
    out[0] = kp_store<T>(a);
    out[1] = kp_store<T>(b);
}
#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <> KP_DEVICE void kp_store2<kp_f16>(float a, float b, kp_f16 *out) {
    const __half2 h = __floats2half2_rn(a, b);
    out[0].bits = __half_as_ushort(__low2half(h));
    out[1].bits = __half_as_ushort(__high2half(h));
}
#endif

// Expands X(suffix, type) once per element dtype.
#define KP_FOR_EACH_DTYPE(X) \
    X(f32, float)            \
    X(f64, double)           \
    X(f16, kp_f16)           \
    X(bf16, kp_bf16)         \
    X(u8, uint8_t)           \
    X(u32, uint32_t)         \
    X(i64, int64_t)

// Expands X(suffix, type) once per float dtype.
#define KP_FOR_EACH_FLOAT(X) \
    X(f32, float)            \
    X(f64, double)           \
    X(f16, kp_f16)           \
    X(bf16, kp_bf16)

// Expands X(suffix, type) once per element size (for ops that move bits).
#define KP_FOR_EACH_SIZE(X) \
    X(x8, uint8_t)          \
    X(x16, uint16_t)        \
    X(x32, uint32_t)        \
    X(x64, uint64_t)
