// Matrix-instruction wrappers. NVIDIA sm_80+ has the mma.sync ones
// (KP_HAS_MMA_16: 16-bit and 8-bit integer products alike), AMD's CDNA
// targets the wave64 8-bit integer ones (KP_HAS_MFMA_I8); callers keep a
// SIMT path for every other target.
#pragma once

#include "kp_device.cuh"
#include "kp_mfma_lanes.h"

#if !KP_HIP && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define KP_HAS_MMA_16 1
#else
#define KP_HAS_MMA_16 0
#endif

#if KP_HAS_MMA_16
// D = A * B + D for one warp: A 16x16 (row), B 16x8 (col), f32 accumulators.
// Fragments as PTX defines them for m16n8k16 (g = lane / 4, t = lane % 4):
//   a[0]: A[g][2t..2t+1]   a[1]: A[g+8][2t..]   a[2]: A[g][2t+8..]   a[3]: A[g+8][2t+8..]
//   b[0]: B[2t..2t+1][g]   b[1]: B[2t+8..][g]
//   d[0..1]: D[g][2t..2t+1]   d[2..3]: D[g+8][2t..2t+1]
// Each 32-bit register holds two 16-bit elements, the lower index in the low half.
template <typename T> struct kp_mma_16;

#define KP_MMA_16(T, PTX_TYPE)                                                                   \
    template <> struct kp_mma_16<T> {                                                            \
        static KP_DEVICE void run(float d[4], const uint32_t a[4], const uint32_t b[2]) {        \
            asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX_TYPE "." PTX_TYPE ".f32 "  \
                         "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"               \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                        \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));    \
        }                                                                                        \
    };
KP_MMA_16(kp_f16, "f16")
KP_MMA_16(kp_bf16, "bf16")
#undef KP_MMA_16

// D = A * B + c for one warp with 8-bit signed integers and exact 32-bit
// sums: A 16x32 (row), B 32x8 (col), c one value added to every element.
// The fragments are the 16-bit ones above with each 32-bit register
// holding four 8-bit elements (k = 4t .. 4t+3 for register 0 of A and B,
// 16 + 4t .. for registers 2 of A and 1 of B):
//   a[0]: A[g][4t..]   a[1]: A[g+8][4t..]   a[2]: A[g][16+4t..]   a[3]: A[g+8][16+4t..]
//   b[0]: B[4t..][g]   b[1]: B[16+4t..][g]      d as for m16n8k16.
// Not volatile: a pure function of its registers, which the compiler may
// schedule around the loads and arithmetic beside it.
KP_DEVICE void kp_mma_s8_k32(int d[4], const uint32_t a[4], const uint32_t b[2], int c) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c));
}
// The same over k = 16 only: A 16x16 as a[0], a[1] above, B 16x8 as b[0].
KP_DEVICE void kp_mma_s8_k16(int d[4], uint32_t a0, uint32_t a1, uint32_t b0, int c) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
        "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%7,%7,%7};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(b0), "r"(c));
}

// The same two with c given per element of d (c[0..3] as d[0..3]).
KP_DEVICE void kp_mma_s8_k32_c(int d[4], const uint32_t a[4], const uint32_t b[2], const int c[4]) {
    asm("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11,%12,%13};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
          "r"(c[2]), "r"(c[3]));
}
KP_DEVICE void kp_mma_s8_k16_c(int d[4], uint32_t a0, uint32_t a1, uint32_t b0, const int c[4]) {
    asm("mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32 "
        "{%0,%1,%2,%3}, {%4,%5}, {%6}, {%7,%8,%9,%10};\n"
        : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
        : "r"(a0), "r"(a1), "r"(b0), "r"(c[0]), "r"(c[1]), "r"(c[2]), "r"(c[3]));
}

// Four 8x8 matrices of 16-bit elements from shared memory: lanes 8q..8q+7
// give the 16-byte-aligned addresses of matrix q's rows; r[q] receives row
// lane / 4, elements 2 * (lane % 4) and the next, as the fragments above
// lay them out.
KP_DEVICE void kp_ldmatrix_x4(uint32_t r[4], const void *row) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}
// Two such matrices: lanes 0-7 and 8-15 give the addresses.
KP_DEVICE void kp_ldmatrix_x2(uint32_t r[2], const void *row) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(row);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr));
}

// Shared-memory loads in asm, one instruction each, for data whose words
// are used apart (some as f32): read as a plain uint4, cicc split the load
// and joined the pieces again in one of two ways that varied between
// compiles of the same source (qmoe_mm_q4_k_n16's PTX: one v4.u32, or a
// v4.f32, a u32 and a v2.u32 over the same bytes; qmatmul_q3_k_n16 too), so
// builds were not reproducible. asm leaves it no choice.
KP_DEVICE uint32_t kp_lds_u32(const void *p) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(p);
    uint32_t v;
    asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr));
    return v;
}
KP_DEVICE uint4 kp_lds_u32x4(const void *p) {
    const unsigned addr = (unsigned)__cvta_generic_to_shared(p);
    uint4 v;
    asm volatile("ld.shared.v4.u32 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr));
    return v;
}
#endif

// AMD matrix cores (CDNA: gfx908, gfx90a, gfx94x; wave64 only). The lanes'
// roles are kp_mfma_lanes.h's: lane l gives word KP_MFMA_WORD(l) of each
// 16-byte half of row / column KP_MFMA_IN(l) and gets rows
// KP_MFMA_OUT_ROW(l, 0..3) of column KP_MFMA_OUT_COL(l). CDNA1 and 2 have
// the 16 x 16 x 16 product: a half at a time, the lane's word being bytes
// 4w.. of the instruction's k. CDNA3 has only the 16 x 16 x 32 one, whose
// lane l gives k = 8w .. 8w + 7: the lane's lo and hi words go there, in A
// and B alike, so the sum still runs over every byte of the item once.
#if KP_HIP && (defined(__gfx908__) || defined(__gfx90a__))
#define KP_HAS_MFMA_I8 1
#define KP_MFMA_K32 0
#elif KP_HIP && (defined(__gfx940__) || defined(__gfx941__) || defined(__gfx942__))
#define KP_HAS_MFMA_I8 1
#define KP_MFMA_K32 1
#else
#define KP_HAS_MFMA_I8 0
#endif

#if KP_HAS_MFMA_I8
static_assert(KP_WAVE_SIZE == KP_MFMA_WAVE, "matrix cores run wave64");
typedef int kp_mfma_i32x4 __attribute__((ext_vector_type(4)));

// c + the product of one half: a and b are the lane's words of A and B.
KP_DEVICE kp_mfma_i32x4 kp_mfma_s8_k16(int a, int b, kp_mfma_i32x4 c) {
#if KP_MFMA_K32
    return __builtin_amdgcn_mfma_i32_16x16x32_i8((long)(uint32_t)a, (long)(uint32_t)b, c, 0, 0, 0);
#else
    return __builtin_amdgcn_mfma_i32_16x16x16i8(a, b, c, 0, 0, 0);
#endif
}

// c + the product over both halves (the lane's lo and hi words).
KP_DEVICE kp_mfma_i32x4 kp_mfma_s8_k32(int a_lo, int a_hi, int b_lo, int b_hi, kp_mfma_i32x4 c) {
#if KP_MFMA_K32
    const long a = (long)((uint64_t)(uint32_t)a_lo | (uint64_t)(uint32_t)a_hi << 32);
    const long b = (long)((uint64_t)(uint32_t)b_lo | (uint64_t)(uint32_t)b_hi << 32);
    return __builtin_amdgcn_mfma_i32_16x16x32_i8(a, b, c, 0, 0, 0);
#else
    const kp_mfma_i32x4 lo = __builtin_amdgcn_mfma_i32_16x16x16i8(a_lo, b_lo, c, 0, 0, 0);
    return __builtin_amdgcn_mfma_i32_16x16x16i8(a_hi, b_hi, lo, 0, 0, 0);
#endif
}
#endif
