/* Parameters of the indexing kernels, shared by the launchers (C11) and the
 * kernels (CUDA/HIP C++). */
#ifndef KP_INDEXING_ABI_H
#define KP_INDEXING_ABI_H

#include <stdint.h>

/* The row-copy path (copy_rows_* kernels) of index_select, and of gather
 * and scatter where ids are constant along each row (an expanded column of
 * ids): dst row (o, i) = src row (o, ids[o, i]) (reading), or dst row
 * (o, ids[o, i]) = src row (o, i) (KP_INDEX_ROWS_SCATTER), where o runs over
 * the (collapsed) dims before `dim` and a row is the row_len elements after
 * `dim`, contiguous in both tensors. Strides are in elements. 2^lanes_log2
 * threads copy one row (at most 64 copying, 256 adding: see plan_rows in
 * src/ops/indexing.c); a block holds several rows where that is fewer than
 * its threads. A
 * bad id is reported at position i (index_select's rank-1 ids), or with
 * KP_INDEX_ROWS_REPORT_ROWS at the position in ids' shape of the row's
 * first element, (o * count + i) * row_len. */
#define KP_INDEX_ROWS_SCATTER 1
#define KP_INDEX_ROWS_REPORT_ROWS 2
struct kp_index_rows {
    int64_t rows;              /* outer * count */
    int64_t count;             /* ids along `dim` */
    int64_t row_len;           /* elements per row */
    int64_t dst_outer_stride;
    int64_t dst_dim_stride;    /* dst stride of `dim` */
    int64_t src_outer_stride;
    int64_t src_dim_stride;    /* src stride of `dim` */
    int64_t dim_size;          /* valid ids are 0 .. dim_size - 1 */
    int64_t ids_stride;        /* ids stride of `dim` */
    int64_t ids_outer_stride;  /* 0 for rank-1 ids */
    int32_t lanes_log2;
    int32_t flags;             /* KP_INDEX_ROWS_* */
};

/* The indexed operand of the strided indexing kernels: the element that id
 * `k` selects lies `k * dim_stride` elements after the operand's offset for
 * the current position; valid ids are 0 .. dim_size - 1. */
struct kp_index_dim {
    int64_t dim_stride;
    int64_t dim_size;
};

/* Device addresses [begin, end) of the buffer an adding kernel updates:
 * sub-word atomic updates never touch a byte outside it. */
struct kp_byte_span {
    uint64_t begin;
    uint64_t end;
};

#endif
