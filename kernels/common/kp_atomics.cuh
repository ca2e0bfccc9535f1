// Atomic read-modify-write helpers valid on both vendors. Types without a
// native atomic add (f16, bf16, u8) update their containing aligned 32-bit
// word with a compare-and-swap loop, which every CUDA and AMD GPU supports.
// That word may hold neighbouring elements (written back unchanged; a
// concurrent plain store to them makes the CAS retry) and never crosses the
// end of the mapped allocation, whose size is a whole number of pages.
#pragma once
#include "kp_device.cuh"

// Applies `f` (old bits -> new bits) atomically to the 16-bit value at p.
template <typename F> KP_DEVICE void kp_atomic_update16(uint16_t *p, F f) {
    unsigned int *word = reinterpret_cast<unsigned int *>((uintptr_t)p & ~(uintptr_t)3);
    const unsigned int shift = ((uintptr_t)p & 2u) * 8u;
    unsigned int old = *(volatile unsigned int *)word, assumed;
    do {
        assumed = old;
        const uint16_t cur = (uint16_t)(assumed >> shift);
        const unsigned int next = (assumed & ~(0xffffu << shift)) | ((unsigned int)f(cur) << shift);
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);  // compares bits, so NaN results cannot loop forever
}

// Applies `f` (old byte -> new byte) atomically to the byte at p.
template <typename F> KP_DEVICE void kp_atomic_update8(uint8_t *p, F f) {
    unsigned int *word = reinterpret_cast<unsigned int *>((uintptr_t)p & ~(uintptr_t)3);
    const unsigned int shift = ((uintptr_t)p & 3u) * 8u;
    unsigned int old = *(volatile unsigned int *)word, assumed;
    do {
        assumed = old;
        const uint8_t cur = (uint8_t)(assumed >> shift);
        const unsigned int next = (assumed & ~(0xffu << shift)) | ((unsigned int)f(cur) << shift);
        old = atomicCAS(word, assumed, next);
    } while (old != assumed);
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

// *p += v, atomically, with v in the element type's compute type. Integer
// additions wrap; 16-bit floats add in f32 and round once per update.
KP_DEVICE void kp_atomic_add(float *p, float v) { atomicAdd(p, v); }
KP_DEVICE void kp_atomic_add(double *p, double v) { atomicAdd(p, v); }
KP_DEVICE void kp_atomic_add(uint32_t *p, uint32_t v) { atomicAdd((unsigned int *)p, (unsigned int)v); }
KP_DEVICE void kp_atomic_add(int64_t *p, int64_t v) {
    atomicAdd((unsigned long long *)p, (unsigned long long)v);  // two's complement: same bits
}
KP_DEVICE void kp_atomic_add(kp_f16 *p, float v) { kp_atomic_update16(&p->bits, kp_add_f16{v}); }
KP_DEVICE void kp_atomic_add(kp_bf16 *p, float v) { kp_atomic_update16(&p->bits, kp_add_bf16{v}); }
KP_DEVICE void kp_atomic_add(uint8_t *p, uint32_t v) { kp_atomic_update8(p, kp_add_u8{v}); }

// *p = max(*p, v) for 64-bit unsigned words, skipping the atomic when a
// plain read already shows a value at least as large.
KP_DEVICE void kp_atomic_max_u64(unsigned long long *p, unsigned long long v) {
    if (*(volatile unsigned long long *)p < v)
        atomicMax(p, v);
}
