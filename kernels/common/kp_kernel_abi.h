/* Parameter structs passed by value from the host launchers to the kernels.
 * Plain C, included by both the library (C11) and the kernels (CUDA/HIP C++),
 * so the two sides cannot disagree on a layout. */
#ifndef KP_KERNEL_ABI_H
#define KP_KERNEL_ABI_H

#include <stdint.h>

/* Highest tensor rank a kernel handles; the public KP_MAX_RANK matches it. */
#define KP_KERNEL_MAX_RANK 8
/* Most operands one elementwise kernel iterates over (where: out, cond, t, f). */
#define KP_KERNEL_MAX_OPERANDS 4

/* Up to four operands iterated over one shape (output first). Strides are in elements and
 * non-negative (0 broadcasts); offsets are applied to the pointers on the
 * host. Dimensions are ordered outermost first, after the host merged the
 * dimensions that are contiguous in every operand. */
struct kp_strided {
    int32_t rank;
    int32_t pad_;
    int64_t shape[KP_KERNEL_MAX_RANK];
    int64_t stride[KP_KERNEL_MAX_OPERANDS][KP_KERNEL_MAX_RANK];
};

/* Elements a thread step of the contiguous map kernels takes (kp_map_lanes
 * in kp_elementwise.cuh) for input and output elements of these sizes in
 * bytes: 16 bytes of the output, at most 32 of the input. The host sizes
 * their grids by the same figure (cast). */
#define KP_MAP_LANES(in_size, out_size) \
    (16 / (out_size) < 32 / (in_size) ? 16 / (out_size) : 32 / (in_size))

/* Tiles of the transposing copies of 2- and 4-byte elements (kernels/fill.cu):
 * rows, the dim the source runs along, by columns, the one the destination
 * runs along. */
#define KP_TRANSPOSE16_ROWS 128
#define KP_TRANSPOSE16_COLS 128
#define KP_TRANSPOSE32_ROWS 64
#define KP_TRANSPOSE32_COLS 64

/* Launch limits shared by the reduce module's launchers and kernels
 * (__launch_bounds__), and the 16-byte slots of a row each thread of a row
 * kernel keeps in registers: enough for the loads in flight that memory
 * speed needs, and no more, since registers are allocated for the largest
 * path of a kernel and more would cut occupancy for every row length. */
#define KP_STRIDED_BLOCK 256     /* threads a block of the *_strided_* kernels */
#define KP_REDUCE_MAX_BLOCK 256
#define KP_ROWS_MAX_BLOCK 512
#define KP_ROWS_SPLIT_MAX_BLOCK 256  /* <op>_split: at 512, gfx900/906 spilled 16-bit softmax rows */
#define KP_ROPE_BLOCK 256
#define KP_ROW_MAX_SLOTS 4  /* 16 f32 or 32 f16/bf16 elements */
/* <op>_cluster_f32: a row per cluster of KP_ROWS_CLUSTER blocks (the
 * portable cluster size), up to KP_ROWS_CLUSTER_MAX_BLOCK threads each
 * caching KP_ROWS_CLUSTER_SLOTS slots: rows of up to 98304 f32 (8 slots
 * spilled layernorm on sm_90 under its bound of two blocks). */
#define KP_ROWS_CLUSTER 8
#define KP_ROWS_CLUSTER_MAX_BLOCK 512
#define KP_ROWS_CLUSTER_SLOTS 6
/* <op>_staged_<dtype>: the same clusters, each block staging its chunk in
 * dynamic shared memory, about KP_ROWS_STAGED_SLOTS slots a thread (more
 * where a chunk needs more than KP_ROWS_CLUSTER_MAX_BLOCK threads of them). */
#define KP_ROWS_STAGED_SLOTS 8

/* A reduction (kp_reduce) after the host ordered and merged the dimensions:
 * n_out outputs, each reducing n_red elements. Output o is the linear index
 * over the kept dims (outermost first); element r of its reduced set is the
 * linear index over the reduced dims. Strides are in elements; the kernels
 * get pointers with the offsets applied. */
struct kp_reduce_args {
    int64_t n_out;
    int64_t n_red;
    int64_t splits;     /* blocks sharing one output: 1 writes dst, more write partials */
    int64_t chunk;      /* reduced elements per split */
    int32_t group;      /* threads per output: a power of two <= 32, or the block size;
                           reduce_cols_*: outputs per thread (1, or 16 bytes' worth) */
    int32_t mean;       /* sum kernels: divide the sum by n_red */
    int32_t kept_rank;
    int32_t red_rank;
    int64_t kept_shape[KP_KERNEL_MAX_RANK];
    int64_t kept_src_stride[KP_KERNEL_MAX_RANK];
    int64_t kept_dst_stride[KP_KERNEL_MAX_RANK];
    int64_t red_shape[KP_KERNEL_MAX_RANK];
    int64_t red_stride[KP_KERNEL_MAX_RANK];
};

/* Row-wise ops (softmax, norms) over the last dimension: `rows` rows of
 * `cols` elements. Row r is the linear index over the outer dims. */
struct kp_rows_args {
    int64_t rows;
    int64_t cols;
    int32_t group;      /* threads per row: a power of two <= 32, or the block size */
    int32_t cached;     /* slots each thread keeps in registers (1..KP_ROW_MAX_SLOTS); 0 streams the row */
    int32_t outer_rank;
    int32_t flags;      /* KP_ROWS_* */
    float eps;
    int32_t pad_;
    int64_t outer_shape[KP_KERNEL_MAX_RANK];
    int64_t x_outer[KP_KERNEL_MAX_RANK];
    int64_t y_outer[KP_KERNEL_MAX_RANK];
    int64_t x_inner;    /* element stride along a row */
    int64_t y_inner;
    int64_t w_stride;   /* weight and bias strides (norms) */
    int64_t b_stride;
};
#define KP_ROWS_LOG 1      /* softmax: log_softmax */
#define KP_ROWS_WEIGHT 2   /* norms: multiply by weight */
#define KP_ROWS_BIAS 4     /* layernorm: add bias */
#define KP_ROWS_SPLIT_FINAL 8  /* <op>_split: the second launch (see kernels/rows.cu) */
/* Values of the compute type each chunk of a split row leaves in the
 * stream's scratch: softmax its max and sum, rmsnorm its sum of squares,
 * layernorm its count, mean and M2 (kernels/rows.cu, src/ops/rows.c). */
#define KP_ROWS_SOFTMAX_PARTS 2
#define KP_ROWS_RMSNORM_PARTS 1
#define KP_ROWS_LAYERNORM_PARTS 3

/* Rotary embedding over x of logical shape (b, h, t, d): every layout is
 * described by strides in that order. The rotated pairs are (2j, 2j+1)
 * (interleaved) or (j, j + d/2); cos and sin are indexed (b, t, j) with a b
 * stride of 0 when the tables are shared by the batch. */
struct kp_rope_args {
    int64_t rows;       /* b * h * t */
    int64_t b, h, t, half;
    int64_t x_stride[4];
    int64_t y_stride[4];
    int64_t cos_stride[3];
    int64_t sin_stride[3];
    int32_t interleaved;
    int32_t group;      /* threads per row */
    int32_t pairs;      /* pairs a thread step: 1, or 16 bytes of each half of x
                           (interleaved: 16 bytes of x) where rope_pairs() in
                           src/ops/rope.c finds the rows aligned */
    int32_t small;      /* rows < 2^31: a row's (t, h) by div_mul/div_shift */
    uint32_t div_mul[2], div_shift[2];  /* n / t and n / h for n < 2^31
                           (kp_div_magic) */
};

/* n / d for n < 2^31 as (umulhi(n, mul) + n) >> shift (Granlund and
 * Montgomery's division by invariant integers), for 1 <= d < 2^31: the
 * launchers set mul and shift up, the kernels divide with kp_div_by_magic
 * (kp_device.cuh). */
static inline void kp_div_magic(uint32_t d, uint32_t *mul, uint32_t *shift)
{
    uint32_t s = 0;
    while (s < 31 && ((uint32_t)1 << s) < d)
        s++;
    *mul = (uint32_t)((((uint64_t)1 << 32) * (((uint64_t)1 << s) - d)) / d + 1);
    *shift = s;
}

/* Vector steps of a row (pairs > 1) a rope thread takes with all their
 * loads first: interleaved rows, and rows with more steps than a block has
 * threads; the host sizes the group for them. */
#define KP_ROPE_STEPS 2

#endif
