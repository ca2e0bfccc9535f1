// Reduction building blocks shared by the kernel modules: reduction
// operators (sum, min, max, argmin, argmax) with defined NaN and tie rules,
// and group/block reductions that are correct for 32- and 64-lane waves.
//
// Why these are right for wave32 and wave64
// -----------------------------------------
// * kp_segment_reduce(v, op, width) is a butterfly over segments of `width`
//   lanes: log2(width) steps of kp_shfl_xor with an explicit width. The
//   shuffle never leaves its segment, so the same code reduces a group of
//   1..32 lanes on a 32-lane wave and on a 64-lane wave (where two or more
//   segments run side by side), and a whole wave with width = KP_WAVE_SIZE.
//   After the butterfly every lane of the segment holds the result: lane i
//   computes op(v_i, v_j) while lane j computes op(v_j, v_i), which is the
//   same value because every operator here is commutative (sum, NaN-aware
//   min/max, and arg operators that order (value, index) totally).
// * kp_block_reduce first reduces each wave with width = KP_WAVE_SIZE (32 or
//   64 at compile time, never a literal 32), then lane 0 of each wave writes
//   one partial to shared memory. The array has KP_MAX_WAVES = 1024 / 32
//   slots: the most waves a block can have, reached at wave32; wave64 uses
//   half of it. After a barrier, each wave loads the partials into its first
//   `waves` lanes (identity elsewhere) and runs the butterfly again. This
//   needs waves <= KP_WAVE_SIZE, true for both sizes (32 <= 32, 16 <= 64),
//   and gives every thread the result without a third barrier.
// * Shuffles need full waves (CUDA's full mask, AMD's exec mask), so block
//   sizes are whole waves (multiples of 64, whole waves at either size, or
//   of 32 where the host knows the device's waves are 32 wide), every
//   thread of a block makes the same reduction calls (loops over rows are
//   uniform per block; threads without work contribute the identity), and
//   no reduction sits in a branch that differs between lanes.
// * A barrier before the partials are written makes back-to-back calls
//   safe: no wave overwrites a slot another wave is still reading.
#pragma once
#include "kp_device.cuh"

#define KP_MAX_BLOCK 1024
#define KP_MAX_WAVES (KP_MAX_BLOCK / 32)
static_assert(KP_MAX_WAVES <= KP_WAVE_SIZE, "the last block-reduce step holds one partial per lane");

// ---------------------------------------------------------------- limits

template <typename A> struct kp_limits;
template <> struct kp_limits<float> {
    static KP_DEVICE float lowest() { return -__int_as_float(0x7f800000); }
    static KP_DEVICE float highest() { return __int_as_float(0x7f800000); }
};
template <> struct kp_limits<double> {
    static KP_DEVICE double lowest() { return -__longlong_as_double(0x7ff0000000000000ll); }
    static KP_DEVICE double highest() { return __longlong_as_double(0x7ff0000000000000ll); }
};
template <> struct kp_limits<uint32_t> {
    static KP_DEVICE uint32_t lowest() { return 0; }
    static KP_DEVICE uint32_t highest() { return 0xffffffffu; }
};
template <> struct kp_limits<int64_t> {
    static KP_DEVICE int64_t lowest() { return (int64_t)(1ull << 63); }
    static KP_DEVICE int64_t highest() { return (int64_t)~(1ull << 63); }
};

// x != x is true only for NaN; for integers it folds to false.
template <typename A> KP_DEVICE bool kp_isnan(A x) { return x != x; }

// ------------------------------------------------------------- operators
// Each operator has: `value` (what one element is converted to), `acc`
// (the partial-result type), `identity()`,
// `leaf(value, index)` (one element as a partial) and `operator()` (combine
// two partials; commutative and associative up to float rounding).

// Accumulator of a sum: f32 for f32/f16/bf16, f64 for f64, and the integer
// dtypes' sums wrap: u8 and u32 are summed in uint32 (truncated to u8 at the
// end, which is the sum modulo 256), i64 in uint64 (two's complement wrap).
template <typename T> struct kp_sum_acc { typedef typename kp_compute<T>::type type; };
template <> struct kp_sum_acc<int64_t> { typedef uint64_t type; };

template <typename A> struct kp_op_sum {
    typedef A value;
    typedef A acc;
    KP_DEVICE A identity() const { return A(0); }
    KP_DEVICE A leaf(A v, kp_idx) const { return v; }
    KP_DEVICE A operator()(A a, A b) const { return a + b; }
};

// max and min propagate NaN: once a NaN is seen the result is NaN.
template <typename A> struct kp_op_max {
    typedef A value;
    typedef A acc;
    KP_DEVICE A identity() const { return kp_limits<A>::lowest(); }
    KP_DEVICE A leaf(A v, kp_idx) const { return v; }
    KP_DEVICE A operator()(A a, A b) const { return (a > b || kp_isnan(a)) ? a : b; }
};

template <typename A> struct kp_op_min {
    typedef A value;
    typedef A acc;
    KP_DEVICE A identity() const { return kp_limits<A>::highest(); }
    KP_DEVICE A leaf(A v, kp_idx) const { return v; }
    KP_DEVICE A operator()(A a, A b) const { return (a < b || kp_isnan(a)) ? a : b; }
};

// A value and the index it was found at.
template <typename A> struct kp_argval {
    A v;
    kp_idx i;
};

template <typename A> KP_DEVICE kp_argval<A> kp_shfl_xor(kp_argval<A> a, int lane_mask, int width) {
    kp_argval<A> r;
    r.v = kp_shfl_xor(a.v, lane_mask, width);
    r.i = kp_shfl_xor(a.i, lane_mask, width);
    return r;
}

// argmax/argmin order (value, index) totally, so the result does not depend
// on the order of combination: a NaN beats every number (the first NaN
// wins), otherwise the larger (argmax) or smaller (argmin) value wins, and
// equal values go to the smaller index. The identity carries the largest
// index, so any real element beats it.
template <typename A, bool MAX> struct kp_op_arg {
    typedef A value;
    typedef kp_argval<A> acc;
    KP_DEVICE acc identity() const {
        acc r;
        r.v = MAX ? kp_limits<A>::lowest() : kp_limits<A>::highest();
        r.i = ~(kp_idx)0;
        return r;
    }
    KP_DEVICE acc leaf(A v, kp_idx i) const {
        acc r;
        r.v = v;
        r.i = i;
        return r;
    }
    KP_DEVICE bool better(const acc &a, const acc &b) const {
        const bool an = kp_isnan(a.v), bn = kp_isnan(b.v);
        if (an || bn)
            return an && (!bn || a.i < b.i);
        const bool wins = MAX ? a.v > b.v : a.v < b.v;
        return wins || (a.v == b.v && a.i < b.i);
    }
    KP_DEVICE acc operator()(acc a, acc b) const { return better(a, b) ? a : b; }
};
template <typename A> using kp_op_argmax = kp_op_arg<A, true>;
template <typename A> using kp_op_argmin = kp_op_arg<A, false>;

// ------------------------------------------------------------ reductions

// Reduces v over each segment of `width` lanes (power of two <= KP_WAVE_SIZE);
// every lane of the segment gets the result. All lanes of the wave must call.
template <typename Op>
KP_DEVICE typename Op::acc kp_segment_reduce(typename Op::acc v, const Op &op, int width) {
    for (int m = width >> 1; m > 0; m >>= 1)
        v = op(v, kp_shfl_xor(v, m, width));
    return v;
}

// Reduces v over the whole block; every thread gets the result. blockDim.x
// must be a multiple of KP_WAVE_SIZE and at most KP_MAX_BLOCK, and every
// thread of the block must call (it holds barriers).
template <typename Op>
KP_DEVICE typename Op::acc kp_block_reduce(typename Op::acc v, const Op &op) {
    typedef typename Op::acc A;
    __shared__ A partial[KP_MAX_WAVES];
    const unsigned wave = threadIdx.x / KP_WAVE_SIZE, lane = threadIdx.x % KP_WAVE_SIZE;
    const unsigned waves = blockDim.x / KP_WAVE_SIZE;
    v = kp_segment_reduce(v, op, KP_WAVE_SIZE);
    __syncthreads();  // an earlier call may still be reading partial[]
    if (lane == 0)
        partial[wave] = v;
    __syncthreads();
    v = lane < waves ? partial[lane] : op.identity();
    return kp_segment_reduce(v, op, KP_WAVE_SIZE);
}

// The threads that work on one row or output: either a power-of-two segment
// of at most 32 lanes (several per block, reduced with shuffles alone) or
// the whole block. The size is a kernel argument, the same for the whole
// block, so the choice below is uniform.
struct kp_group {
    unsigned size;       // threads per group
    unsigned lane;       // this thread's place in its group
    unsigned index;      // this thread's group within the block
    unsigned per_block;  // groups per block
};

KP_DEVICE kp_group kp_group_of(unsigned size) {
    kp_group g;
    g.size = size;
    g.lane = threadIdx.x % size;
    g.index = threadIdx.x / size;
    g.per_block = blockDim.x / size;
    return g;
}

// Reduces v over the group g; every thread of the group gets the result.
template <typename Op>
KP_DEVICE typename Op::acc kp_group_reduce(const kp_group &g, typename Op::acc v, const Op &op) {
    if (g.size == blockDim.x)
        return kp_block_reduce(v, op);
    return kp_segment_reduce(v, op, (int)g.size);
}
