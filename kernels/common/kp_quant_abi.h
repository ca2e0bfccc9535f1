/* Parameters of the quantized kernels, shared by the launchers (C11) and
 * the kernels (CUDA/HIP C++). */
#ifndef KP_QUANT_ABI_H
#define KP_QUANT_ABI_H

#include <stdint.h>

/* Threads per block of the dequantize/get_rows and quantize kernels. */
#define KP_QUANT_BLOCK 256
/* Threads per block of the mat-vec; they work in groups of 32 (a warp on
 * NVIDIA, half a wave64 on AMD's GCN/CDNA). */
#define KP_QMV_BLOCK 128
#define KP_QMV_GROUP 32
/* Per mat-vec kernel of batch size (template) B: 32-element items of each
 * row staged per tile, and rows per thread block. */
#define KP_QMV_ITEMS(B) ((B) <= 2 ? 64 : 32)
#define KP_QMV_ROWS(B) (KP_QMV_BLOCK / KP_QMV_GROUP * ((B) <= 2 ? 2 : 4))

/* dequantize (ids_kind 0) and get_rows (1: u32 ids, 2: i64 ids): dst row r
 * = source row r, or ids[r]. Strides are in bytes for the source and in
 * elements for dst and ids. dst_dtype: 0 f32, 1 f16, 2 bf16. */
struct kp_qdequant_args {
    int64_t rows;
    int64_t cols;
    int64_t src_rows;          /* valid ids are 0 .. src_rows - 1 */
    int64_t src_row_stride;
    int64_t dst_row_stride;
    int64_t dst_col_stride;
    int64_t ids_stride;
    int32_t ids_kind;
    int32_t dst_vector;        /* 1: dst rows dense and every 8-element group 16-byte aligned */
};

/* quantize: src (rows x cols, element strides) into dst rows of blocks. */
struct kp_quantize_args {
    int64_t rows;
    int64_t cols;
    int64_t src_row_stride;
    int64_t src_col_stride;
    int64_t dst_row_stride;    /* bytes */
};

/* The mat-vec's activations after quantizing to Q8_1 (the workspace):
 * for batch row b, qs[b * cols + c] holds the int8 of element c, and
 * meta[b * cols / 32 + k] block k's binary16 scale (as an f32) with the
 * exact integer sums of its first and second 16 q. */
struct kp_qmv_meta {
    float d;
    int16_t sum_lo;
    int16_t sum_hi;
};

struct kp_qmv_act_args {
    int64_t batch;
    int64_t cols;
    int64_t x_batch_stride;    /* elements */
    int64_t x_col_stride;
};

/* The mat-vec proper: dst[b, r] = sum over c of w[r, c] * x[b, c]. Row r of
 * w starts at byte r * w_row_stride. `vector` is the width in bytes (16, 8,
 * 4 or 2) of the loads that stage weight tiles. dst_dtype as above. */
struct kp_qmv_args {
    int64_t rows;
    int64_t cols;
    int64_t batch;
    int64_t w_row_stride;
    int64_t dst_batch_stride;  /* elements */
    int64_t dst_row_stride;
    int32_t vector;
    int32_t dst_dtype;
};

#endif
