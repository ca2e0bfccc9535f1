/* Parameters of the quantized kernels, shared by the launchers (C11) and
 * the kernels (CUDA/HIP C++). */
#ifndef KP_QUANT_ABI_H
#define KP_QUANT_ABI_H

#include <stdint.h>

#include "kp_quant_blocks.h"

/* Threads per block of the dequantize/get_rows and quantize kernels. */
#define KP_QUANT_BLOCK 256
/* The mat-vec: a block of KP_QMV_BLOCK threads computes a few rows,
 * walking the columns in tiles of KP_QMV_ITEMS 32-element items, one per
 * thread (or twice that, two per thread: kp_qmv_ipt in quantized.cu), so
 * long rows take few sequential steps. A tile is a multiple of 16 bytes of
 * every row for every format. */
#define KP_QMV_BLOCK 64
#define KP_QMV_ITEMS KP_QMV_BLOCK
/* Weight rows a block of qmatvec_<format>_b<batch> computes, by format id
 * and batch rows. Two rows (twice
 * the blocks, fewer registers) measured faster than four on an H100
 * (kp-bench, 4096 x 14336 and 14336 x 4096, % of copy) at batch 1 for the
 * 4- and 8-bit formats with one scale per item: Q4_0 77 -> 79, Q4_1 81 ->
 * 84, Q4_K 72 -> 76-78, Q8_* +1. The other formats lost up to 11 points
 * with two (Q5_* on long rows, Q2_K, Q3_K, IQ4_* on short ones), and one
 * row a block lost almost everywhere. (At batch 8, two rows took Q8_0 and
 * Q8_1 on long rows from 48 to 57 % but spill on sm_100 and sm_120.) */
#define KP_QMV_TWO_ROWS(f)                                                               \
    ((f) == KP_QF_Q4_0 || (f) == KP_QF_Q4_1 || (f) == KP_QF_Q4_K || (f) == KP_QF_Q8_0 || \
     (f) == KP_QF_Q8_1 || (f) == KP_QF_Q8_K)
#define KP_QMV_ROWS_FOR(format, batch) ((batch) == 1 && KP_QMV_TWO_ROWS(format) ? 2 : 4)
/* qmatvec_<format>_b8 on targets with int8 tensor cores (NVIDIA sm_80+):
 * a block of KP_QMV_MMA_BLOCK threads computes KP_QMV_MMA_ROWS weight rows
 * (the M of its m16n8k32 products; the batch rows are the N), its warps
 * splitting tiles of KP_QMV_MMA_ITEMS items. It is built with that block
 * size as its launch bound, which is how the host tells it from the
 * KP_QMV_BLOCK kernel of other targets, and it reads its activations
 * interleaved (kp_qmv_act_args::interleave). */
#define KP_QMV_MMA_BLOCK 256
#define KP_QMV_MMA_ROWS 16
#define KP_QMV_MMA_ITEMS 32
/* The per-pair mixture-of-experts mat-vec (qmoe_<format>) keeps four rows
 * for every format: two took Q4_0 from 86 to 77 % of copy and Q4_K from 83
 * to 77 there (H100, 2 of 8 experts of 14336 x 4096, one token). */
#define KP_QMOE_ROWS 4

/* The mat-mat (qmatmul_<format>_n<NB>): a block of KP_QMM_BLOCK threads
 * computes a tile of KP_QMM_ROWS(NB) weight rows x NB activation rows, NB
 * KP_QMM_NB_SMALL or KP_QMM_NB_LARGE; the grid is (row tiles, batch tiles).
 * Its arguments are the mat-vec's (kp_qmv_args; `vector` tells the
 * tensor-core form whether it may stage weights in 16-byte pieces). */
#define KP_QMM_BLOCK 128
#define KP_QMM_NB_SMALL 16
#define KP_QMM_NB_LARGE 64
#define KP_QMM_ROWS(nb) ((nb) >= KP_QMM_NB_LARGE ? 64 : 32)
/* A tile walks the columns KP_QMM_ITEMS 32-element items a step. */
#define KP_QMM_ITEMS 4
/* On targets with int8 tensor cores (NVIDIA sm_80+) the mat-mat kernels
 * declare no static shared memory: they take KP_QMM_SHARED_BYTES(elems,
 * bytes, nb) dynamically (the format's block elements and bytes). There,
 * each of two stages holds a step's activations (KP_QMM_ITEMS x NB x (32
 * bytes + 8 of metadata)) and, for each of the tile's rows, a "unit" of
 * raw weight blocks: the step's blocks, or the whole super-block of the
 * 256-element formats (two steps). A unit is copied in 16-byte pieces from
 * the 16-byte boundary at or before it, so a row's share of a stage is the
 * unit plus up to 16 - (its alignment) bytes, rounded up to 16, and 16
 * more where that would put the rows' reads in the same banks. */
#define KP_QMM_UNIT_BYTES(elems, bytes) \
    ((elems) > 32 * KP_QMM_ITEMS ? (bytes) : KP_QMM_ITEMS * 32 / (elems) * (bytes))
#define KP_QMM_ALIGN16(u) ((u) % 16 == 0 ? 16 : (u) % 8 == 0 ? 8 : (u) % 4 == 0 ? 4 : 2)
#define KP_QMM_WINDOW(u) (((u) + 16 - KP_QMM_ALIGN16(u) + 15) / 16 * 16)
#define KP_QMM_PITCH(u) (KP_QMM_WINDOW(u) + (KP_QMM_WINDOW(u) / 4 % 8 == 4 ? 0 : 16))
#define KP_QMM_ACT_STAGE_BYTES(nb) (KP_QMM_ITEMS * (nb) * 40)
#define KP_QMM_SHARED_BYTES(elems, bytes, nb) \
    (2 * (KP_QMM_ACT_STAGE_BYTES(nb) + KP_QMM_ROWS(nb) * KP_QMM_PITCH(KP_QMM_UNIT_BYTES(elems, bytes))))

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
    int32_t tiled;             /* 1: kp_dequant_tiles (no ids; src and dst dense, 16-byte aligned) */
    int32_t reserved;
};

/* kp_dequant_tiles: a block dequantizes KP_DEQUANT_TILE consecutive
 * elements at a time (a whole number of blocks of every format, a multiple
 * of 16 bytes of each), their quantized bytes first copied into dynamic
 * shared memory of KP_DEQUANT_TILE_BYTES(elems, bytes). */
#define KP_DEQUANT_TILE (KP_QUANT_BLOCK * 32)
#define KP_DEQUANT_TILE_BYTES(elems, bytes) (KP_DEQUANT_TILE / (elems) * (bytes))

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
 * meta[b * KP_QMV_META_STRIDE(cols / 32) + k] block k's binary16 scale (as
 * an f32) with the exact integer sums of its first and second 16 q. The
 * stride is even so every batch row's metadata starts 16-byte aligned. */
#define KP_QMV_META_STRIDE(blocks) (((blocks) + 1) / 2 * 2)
struct kp_qmv_meta {
    float d;
    int16_t sum_lo;
    int16_t sum_hi;
};

/* With `interleave`, the batch rows are taken in chunks of 8 (the mat-vec
 * launches), and a chunk of 5..8 rows (nb), which the tensor-core batch-8
 * kernel reads, is laid out for it by groups of KP_QMV_ACT_GROUP items (r
 * items in the last group, r = the rest): within the chunk's share of qs,
 * group G starts at byte G * nb * 32 * KP_QMV_ACT_GROUP, and in it lane
 * 4g + t of a warp (chunk row g, t = 0..3) finds its B fragment of item j
 * of the group at (4g + t) * 8r + 8j: elements 4t..4t+3, then
 * 16+4t..16+4t+3 of the item in row g, so a lane's share of a group is one
 * run. Within the chunk's share of meta, group G starts at entry G * nb *
 * KP_QMV_ACT_GROUP, and row g's entry for item j is at g * r + j. The
 * chunk's shares begin where its first row's would without interleaving;
 * smaller chunks are not interleaved. */
#define KP_QMV_ACT_GROUP 4
struct kp_qmv_act_args {
    int64_t batch;
    int64_t cols;
    int64_t x_batch_stride;    /* elements */
    int64_t x_col_stride;
    int64_t interleave;
};

/* The mat-vec proper: dst[b, r] = sum over c of w[r, c] * x[b, c]. Row r of
 * w starts at byte r * w_row_stride. `vector` is 16 when w and its row
 * stride are 16-byte aligned, so tiles are staged with 16-byte loads, else 2.
 * dst_dtype as above. */
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

/* Mixture-of-experts products: pair p = t * k + j (token t, slot j)
 * multiplies expert ids[t, j] (rows x cols, `mv` describing one expert:
 * batch 1) by the activations' row p (x_per_slot) or t into dst[t, j, :].
 * ids_kind: 1 u32, 2 i64. Strides in elements, expert_stride in bytes.
 * qmoe_<format> runs a pair a block row; for many pairs, qmoe_group lists
 * the pairs of each expert (KP_QMOE_GROUP_INTS(experts, pairs) int32 in the
 * workspace: counts, cursors, starts, tile starts of tile_batch pairs, the
 * list) and qmoe_mm_<format>_n<NB> runs the mat-mat on each expert's pairs,
 * NB = tile_batch (KP_QMM_NB_SMALL or KP_QMM_NB_LARGE). */
#define KP_QMOE_GROUP_BLOCK 1024
#define KP_QMOE_GROUP_INTS(experts, pairs) (4 * (experts) + 2 + (pairs))
struct kp_qmoe_args {
    struct kp_qmv_args mv;
    int64_t experts;
    int64_t expert_stride;
    int64_t pairs;
    int64_t k;
    int64_t ids_token_stride;
    int64_t ids_slot_stride;
    int64_t dst_token_stride;
    int64_t dst_slot_stride;
    int32_t ids_kind;
    int32_t x_per_slot;
    int64_t tile_batch;
};

#endif
