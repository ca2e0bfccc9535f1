// Atomic read-modify-write helpers valid on both vendors.
//
// f16 and bf16 use the hardware's 16-bit atomic add on NVIDIA (sm_70+; the
// toolkit emulates bf16 with a 16-bit CAS below sm_90). Everything else
// without a native atomic add (16-bit types on AMD, u8 everywhere) updates
// the smallest aligned container the target can compare-and-swap, but only
// while that container lies inside the operand's buffer `span`: an element
// at either end of a buffer whose size or start is not a multiple of 4 is
// updated under a module-wide lock instead, so no byte outside the buffer is
// ever read or written, even inside the allocation's slack. The containers
// chosen for the bytes of one word agree (a word that crosses the span sends
// all its bytes to the narrower path), so no two paths ever touch one byte.
#pragma once
#include "kp_device.cuh"
#include "kp_indexing_abi.h"

// Serialises the rare updates whose every container crosses the buffer.
__device__ unsigned int kp_subword_lock;

KP_DEVICE bool kp_span_holds(const kp_byte_span &span, uintptr_t begin, uintptr_t bytes) {
    return begin >= span.begin && begin + bytes <= span.end;
}

// Spins on kp_subword_lock with the acquisition and the update in the same
// branch, which keeps lanes of one wave from waiting on each other.
template <typename T, typename F> KP_DEVICE void kp_locked_update(T *p, F f) {
    for (bool done = false; !done;) {
        if (atomicCAS(&kp_subword_lock, 0u, 1u) == 0u) {
            __threadfence();
            volatile T *v = p;
            *v = f(*v);
            __threadfence();
            atomicExch(&kp_subword_lock, 0u);
            done = true;
        }
    }
}

// CAS loop applying `f` to the Bits-wide field at bit `shift` of *word (a
// W-bit unsigned type). Compares bits, so NaN results cannot loop forever.
template <typename W, typename V, typename F>
KP_DEVICE void kp_cas_field(W *word, unsigned shift, W mask, F f) {
    W old = *(volatile W *)word, assumed;
    do {
        assumed = old;
        const V cur = (V)(assumed >> shift);
        const W next = (W)((assumed & (W)~(mask << shift)) | ((W)f(cur) << shift));
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);
}

// Applies `f` (old bits -> new bits) atomically to the 16-bit value at p.
template <typename F> KP_DEVICE void kp_atomic_update16(uint16_t *p, F f, const kp_byte_span &span) {
    const uintptr_t word = (uintptr_t)p & ~(uintptr_t)3;
    if (kp_span_holds(span, word, 4))
        kp_cas_field<unsigned int, uint16_t>((unsigned int *)word, ((uintptr_t)p & 2u) * 8u, 0xffffu, f);
    else
#if KP_HIP
        kp_locked_update(p, f);
#else
        kp_cas_field<unsigned short, uint16_t>((unsigned short *)p, 0u, (unsigned short)0xffffu, f);
#endif
}

// Applies `f` (old byte -> new byte) atomically to the byte at p.
template <typename F> KP_DEVICE void kp_atomic_update8(uint8_t *p, F f, const kp_byte_span &span) {
    const uintptr_t word = (uintptr_t)p & ~(uintptr_t)3;
    if (kp_span_holds(span, word, 4))
        kp_cas_field<unsigned int, uint8_t>((unsigned int *)word, ((uintptr_t)p & 3u) * 8u, 0xffu, f);
#if !KP_HIP
    else if (kp_span_holds(span, (uintptr_t)p & ~(uintptr_t)1, 2))
        kp_cas_field<unsigned short, uint8_t>((unsigned short *)((uintptr_t)p & ~(uintptr_t)1),
                                               ((uintptr_t)p & 1u) * 8u,
                                               (unsigned short)0xffu, f);
#endif
    else
        kp_locked_update(p, f);
}

struct kp_add_f16 {
    float v;
    KP_DEVICE uint16_t operator()(uint16_t bits) const {
        return kp_f32_to_f16(kp_f16_to_f32(kp_f16{bits}) + v).bits;
    }
};
struct kp_add_bf16 {
    float v;
    KP_DEVICE uint16_t operator()(uint16_t bits) const {
        return kp_f32_to_bf16(kp_bf16_to_f32(kp_bf16{bits}) + v).bits;
    }
};
struct kp_add_u8 {
    uint32_t v;
    KP_DEVICE uint8_t operator()(uint8_t old) const { return (uint8_t)(old + v); }
};

// *p += v, atomically, for an element inside the buffer `span` (used by the
// sub-word types only). Integer additions wrap; 16-bit floats add in f32 and
// round once per update (the native f16/bf16 adds round the same way: f32
// holds the exact sum of two 16-bit values before rounding).
KP_DEVICE void kp_atomic_add(float *p, float v, const kp_byte_span &) { atomicAdd(p, v); }
KP_DEVICE void kp_atomic_add(double *p, double v, const kp_byte_span &) { atomicAdd(p, v); }
KP_DEVICE void kp_atomic_add(uint32_t *p, uint32_t v, const kp_byte_span &) {
    atomicAdd((unsigned int *)p, (unsigned int)v);
}
KP_DEVICE void kp_atomic_add(int64_t *p, int64_t v, const kp_byte_span &) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);  // two's complement: same bits
}
#if KP_HIP
KP_DEVICE void kp_atomic_add(kp_f16 *p, kp_f16 v, const kp_byte_span &span) {
    kp_atomic_update16(&p->bits, kp_add_f16{kp_f16_to_f32(v)}, span);
}
KP_DEVICE void kp_atomic_add(kp_bf16 *p, kp_bf16 v, const kp_byte_span &span) {
    kp_atomic_update16(&p->bits, kp_add_bf16{kp_bf16_to_f32(v)}, span);
}
#else
KP_DEVICE void kp_atomic_add(kp_f16 *p, kp_f16 v, const kp_byte_span &) {
    atomicAdd(reinterpret_cast<__half *>(p), __ushort_as_half(v.bits));
}
KP_DEVICE void kp_atomic_add(kp_bf16 *p, kp_bf16 v, const kp_byte_span &) {
    atomicAdd(reinterpret_cast<__nv_bfloat16 *>(p), __ushort_as_bfloat16(v.bits));
}
#endif
KP_DEVICE void kp_atomic_add(uint8_t *p, uint8_t v, const kp_byte_span &span) {
    kp_atomic_update8(p, kp_add_u8{v}, span);
}

// p[0] += lo and p[1] += hi for a 4-byte aligned pair of 16-bit floats, in
// one atomic (NVIDIA's f16x2 / bf16x2 add; elsewhere one CAS loop on their
// word): half the atomics of two kp_atomic_add calls, each element rounded
// as there.
#if KP_HIP
template <typename A> KP_DEVICE void kp_cas_pair(uint32_t *word, const A &lo, const A &hi) {
    kp_cas_field<unsigned int, uint32_t>(word, 0u, 0xffffffffu, [&](uint32_t w) {
        return (uint32_t)lo((uint16_t)w) | (uint32_t)hi((uint16_t)(w >> 16)) << 16;
    });
}
KP_DEVICE void kp_atomic_add_pair(kp_f16 *p, kp_f16 lo, kp_f16 hi) {
    kp_cas_pair((uint32_t *)p, kp_add_f16{kp_f16_to_f32(lo)}, kp_add_f16{kp_f16_to_f32(hi)});
}
KP_DEVICE void kp_atomic_add_pair(kp_bf16 *p, kp_bf16 lo, kp_bf16 hi) {
    kp_cas_pair((uint32_t *)p, kp_add_bf16{kp_bf16_to_f32(lo)}, kp_add_bf16{kp_bf16_to_f32(hi)});
}
#else
KP_DEVICE void kp_atomic_add_pair(kp_f16 *p, kp_f16 lo, kp_f16 hi) {
    atomicAdd(reinterpret_cast<__half2 *>(p),
              __halves2half2(__ushort_as_half(lo.bits), __ushort_as_half(hi.bits)));
}
KP_DEVICE void kp_atomic_add_pair(kp_bf16 *p, kp_bf16 lo, kp_bf16 hi) {
    atomicAdd(reinterpret_cast<__nv_bfloat162 *>(p),
              __halves2bfloat162(__ushort_as_bfloat16(lo.bits), __ushort_as_bfloat16(hi.bits)));
}
#endif

// Adds 16 bytes of values (four f32, eight f16 or bf16) at a 16-byte
// aligned p in one reduction (sm_90's vector red; each element rounds as a
// scalar atomic add does). KP_HAS_ATOMIC_ADD16 says where it exists.
#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define KP_HAS_ATOMIC_ADD16 1
template <typename T> struct kp_red16;
template <> struct kp_red16<float> {
    static KP_DEVICE void add(float *p, uint4 v) {
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(__uint_as_float(v.x)),
                     "f"(__uint_as_float(v.y)), "f"(__uint_as_float(v.z)), "f"(__uint_as_float(v.w))
                     : "memory");
    }
};
template <> struct kp_red16<kp_f16> {
    static KP_DEVICE void add(kp_f16 *p, uint4 v) {
        asm volatile("red.global.add.noftz.v4.f16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    }
};
template <> struct kp_red16<kp_bf16> {
    static KP_DEVICE void add(kp_bf16 *p, uint4 v) {
        asm volatile("red.global.add.noftz.v4.bf16x2 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x),
                     "r"(v.y), "r"(v.z), "r"(v.w)
                     : "memory");
    }
};
#else
#define KP_HAS_ATOMIC_ADD16 0
#endif

// *p = max(*p, v) for 64-bit unsigned words, skipping the atomic when a
// plain read already shows a value at least as large.
KP_DEVICE void kp_atomic_max_u64(unsigned long long *p, unsigned long long v) {
    if (*(volatile unsigned long long *)p < v)
        atomicMax(p, v);
}
